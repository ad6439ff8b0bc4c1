// The OpenCL runtime layer: device discovery and choice, capability probe, errors by name.
#include "chanflow/opencl.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

using namespace chanflow;
using chanflow::test::runtime;

TEST_SUITE("opencl") {

TEST_CASE("OpenCL: an SVM buffer dropped while a queued copy still writes it is freed after the copy (AddressSanitizer: tests/sanitize.sh)") {
  // Without an enqueued free, the copy below would write freed memory (AddressSanitizer reports
  // it in tests/sanitize.sh). The copy's source stays alive; its destination is dropped at once.
  std::vector<std::uint64_t> host(4096, 7);
  {
    chanflow::test::QueueStall stall(runtime(), std::chrono::milliseconds(100));
    SvmBuffer dst(runtime(), host.size() * sizeof(std::uint64_t));
    runtime().svm_write_async(dst.get(), host.data(), host.size() * sizeof(std::uint64_t));
  }  // dst is gone; the copy has not run yet
  runtime().finish();
  SvmBuffer check_buffer(runtime(), 64);
  runtime().svm_fill_zero(check_buffer.get(), 64);  // the queue still works
  std::vector<std::uint8_t> back(64, 0xff);
  runtime().svm_read(back.data(), check_buffer.get(), back.size());
  CHECK(std::all_of(back.begin(), back.end(), [](std::uint8_t b) { return b == 0; }));
}

TEST_CASE("OpenCL: a blocking copy comes after what the queue holds, also where a CPU device copies in place") {
  // On a CPU device with fine-grain SVM a blocking copy is a plain copy once the queue has
  // finished (opencl.cpp, svm_in_place): it must not overtake the copies queued before it.
  constexpr std::size_t kWords = 4096;
  constexpr std::size_t kBytes = kWords * sizeof(std::uint32_t);
  const std::vector<std::uint32_t> first(kWords, 0x1111u), second(kWords, 0x2222u);
  std::vector<std::uint32_t> back(kWords, 0), early(kWords, 0);
  SvmBuffer buffer(runtime(), kBytes);
  {
    chanflow::test::QueueStall stall(runtime(), std::chrono::milliseconds(50));
    runtime().svm_write_async(buffer.get(), first.data(), kBytes);  // behind the stall
    runtime().svm_read(back.data(), buffer.get(), kBytes);          // after the write
    CHECK(back == first);
  }
  {
    chanflow::test::QueueStall stall(runtime(), std::chrono::milliseconds(50));
    runtime().svm_read_async(early.data(), buffer.get(), kBytes);  // behind the stall: reads `first`
    runtime().svm_write(buffer.get(), second.data(), kBytes);      // after the read
    CHECK(early == first);
    runtime().svm_read(back.data(), buffer.get(), kBytes);
    CHECK(back == second);
  }
}

TEST_CASE("OpenCL: status codes are named") {
  CHECK(cl_error_name(CL_SUCCESS) == "CL_SUCCESS");
  CHECK(cl_error_name(CL_OUT_OF_RESOURCES) == "CL_OUT_OF_RESOURCES");
  CHECK(cl_error_name(CL_BUILD_PROGRAM_FAILURE) == "CL_BUILD_PROGRAM_FAILURE");
  CHECK(cl_error_name(CL_INVALID_KERNEL_ARGS) == "CL_INVALID_KERNEL_ARGS");
  CHECK(cl_error_name(-12345) == "CL_-12345");
  const OpenCLError e("clFoo", CL_INVALID_VALUE);
  CHECK(std::string(e.what()) == "clFoo failed: CL_INVALID_VALUE (-30)");
}

TEST_CASE("OpenCL: the probe finds a usable device and describes it") {
  const auto devices = list_devices();
  REQUIRE_FALSE(devices.empty());
  const auto& caps = runtime().caps();
  CHECK_FALSE(caps.name.empty());
  CHECK(caps.address_bits == 64);
  CHECK(caps.svm_coarse);
  CHECK(caps.int64_atomics);
  CHECK(caps.max_work_group_size >= 64);
  CHECK(caps.preferred_work_group_multiple >= 1);
  CHECK(caps.missing_requirements().empty());
}

TEST_CASE("OpenCL: devices are chosen by index or by a name substring") {
  const auto devices = list_devices();
  const Runtime by_index(DeviceSelection{std::to_string(devices.back().index)});
  CHECK(by_index.caps().name == devices.back().name);
  const Runtime by_name(DeviceSelection{devices.front().name.substr(0, 6)});
  CHECK(by_name.caps().name.find(devices.front().name.substr(0, 6)) != std::string::npos);
  CHECK_THROWS_WITH_AS(Runtime(DeviceSelection{"no-such-device-xyz"}),
                       doctest::Contains("no OpenCL device matches 'no-such-device-xyz'"), DeviceNotFound);
  CHECK_THROWS_WITH_AS(Runtime(DeviceSelection{"999"}), doctest::Contains("out of range"), DeviceNotFound);
}

TEST_CASE("OpenCL: a failed build names the code and carries the compiler's log") {
  try {
    runtime().build({"__kernel void broken(__global int* p) { p[0] = undeclared_name; }"}, "");
    FAIL("the build should have failed");
  } catch (const OpenCLError& e) {
    CHECK(e.code() == CL_BUILD_PROGRAM_FAILURE);
    CHECK(std::string(e.what()).find("CL_BUILD_PROGRAM_FAILURE") != std::string::npos);
    CHECK(e.build_log().find("undeclared_name") != std::string::npos);
  }
}

TEST_CASE("OpenCL: a runtime knows the builds it did; notes of GPU builds go where the environment says") {
  const std::string source = "__kernel void noted(__global int* p) { p[0] = 7; }";
  {
    const chanflow::test::FreshBuildNotes notes;  // as on a machine that never built it
    CHECK_FALSE(runtime().built_before({source}, "-DNOTED_ONCE"));
    runtime().build({source}, "-DNOTED_ONCE");
    CHECK(runtime().built_before({source}, "-DNOTED_ONCE"));
    CHECK_FALSE(runtime().built_before({source}, "-DNOTED_TWICE"));  // the options are part of a build
  }

  const char* saved = std::getenv("CHANFLOW_CACHE_DIR");
  const std::string restore = saved ? saved : "";
  ::setenv("CHANFLOW_CACHE_DIR", "/tmp/chanflow-notes", 1);
  CHECK(build_notes_dir() == "/tmp/chanflow-notes");
  ::setenv("CHANFLOW_CACHE_DIR", "off", 1);
  CHECK(build_notes_dir().empty());
  ::unsetenv("CHANFLOW_CACHE_DIR");
  if (const char* home = std::getenv("HOME"); home && *home && !std::getenv("XDG_CACHE_HOME"))
    CHECK(build_notes_dir() == std::string(home) + "/.cache/chanflow");
  if (saved) ::setenv("CHANFLOW_CACHE_DIR", restore.c_str(), 1);
}

TEST_CASE("OpenCL: an unknown kernel name is reported with the name") {
  const auto program = runtime().build({"__kernel void present(__global int* p) { p[0] = 1; }"}, "");
  CHECK_THROWS_WITH_AS(runtime().kernel(program, "absent"), doctest::Contains("'absent'"), OpenCLError);
}

TEST_CASE("OpenCL: SVM round-trips through a kernel") {
  const Runtime& rt = runtime();
  const auto program = rt.build({"__kernel void twice(__global int* p) { p[get_global_id(0)] *= 2; }"}, "");
  const auto k = rt.kernel(program, "twice");
  SvmBuffer buf(rt, 256 * sizeof(int));
  std::vector<int> in(256), out(256);
  for (int i = 0; i < 256; ++i) in[i] = i;
  rt.svm_write(buf.get(), in.data(), 256 * sizeof(int));
  set_arg_svm(k, 0, buf.get());
  launch(rt, k, 256, 64);
  rt.svm_read(out.data(), buf.get(), 256 * sizeof(int));
  for (int i = 0; i < 256; ++i) CHECK(out[i] == 2 * i);
}

}  // TEST_SUITE
