// Device-scope ordering between the work-groups of one launch (channels/cl/order.cl): a release
// store and an acquire load that carry a work-group's plain stores to another work-group, on the
// devices that have them. The stress test fails without them on a GPU (run it with
// CHANFLOW_BUILD_OPTIONS=-DCHANFLOW_ORDER_UNFENCED to see).
#include "chanflow/chanflow.hpp"
#include "chanflow_tests_sources.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <array>

using namespace chanflow;
using chanflow::test::runtime;

namespace {

// Producers write a message of 8 words and release a flag; consumers in other work-groups acquire
// the flag and read the words, counting any read stale (the order test kernels). Every message
// must arrive whole, and some must be passed at all.
void messages_arrive_whole() {
  const auto program = build_channel_program(runtime(), tests_cl::order_test_kernels_cl(), {.wg_size = 64});
  cl::Kernel kernel = runtime().kernel(program, "order_message_pass");
  // Groups that fit on the device at once (two a compute unit), so producers and consumers
  // overlap; a consumer whose producer is not running yet gives up after `spins` loads.
  const std::uint32_t groups = 2 * std::max(2u, runtime().caps().compute_units), pairs = groups / 2;
  constexpr std::uint32_t kRounds = 64, kItems = 64, kWords = 8, kSpins = 1u << 20;  // kWords: ORDER_WORDS
  SvmBuffer messages(runtime(), std::size_t{kRounds} * pairs * kItems * kWords * sizeof(std::uint64_t));
  SvmBuffer flags(runtime(), std::size_t{kRounds} * pairs * kItems * sizeof(std::uint64_t));
  SvmBuffer counts(runtime(), 4 * sizeof(std::uint32_t));
  std::array<std::uint32_t, 4> total{};
  for (int rep = 0; rep < 8; ++rep) {
    runtime().svm_fill_zero(messages.get(), messages.size());
    runtime().svm_fill_zero(flags.get(), flags.size());
    runtime().svm_fill_zero(counts.get(), counts.size());
    set_arg_svm(kernel, 0, messages.get());
    set_arg_svm(kernel, 1, flags.get());
    set_arg_svm(kernel, 2, counts.get());
    set_arg(kernel, 3, cl_uint{kRounds});
    set_arg(kernel, 4, cl_uint{kSpins});
    launch(runtime(), kernel, std::size_t{groups} * kItems, kItems, false);
    std::array<std::uint32_t, 4> c{};
    runtime().svm_read(c.data(), counts.get(), sizeof c);
    for (std::size_t i = 0; i < c.size(); ++i) total[i] += c[i];
  }
  CAPTURE(total[1]);
  CAPTURE(total[2]);
  CHECK(total[0] == 0);  // no word read stale after its message's flag was seen
  CHECK(total[1] > 0);   // and messages were passed, not only given up on
}

}  // namespace

TEST_SUITE("order") {

TEST_CASE("Order: the device's ordering is named, and a device without one is told apart") {
  const DeviceOrder order = device_order(runtime().caps());
  const std::string named = to_string(order);
  CAPTURE(named);
  const DeviceCaps& caps = runtime().caps();
  if ((caps.type & CL_DEVICE_TYPE_GPU) && caps.vendor.find("NVIDIA") != std::string::npos) {
    CHECK(caps.nv_compute_major > 0);  // read from the device (cl_nv_device_attribute_query)
    CHECK(order == (caps.nv_compute_major >= 7 ? DeviceOrder::Ptx : DeviceOrder::None));
  }
  DeviceCaps gpu;
  gpu.type = CL_DEVICE_TYPE_GPU;
  gpu.vendor = "NVIDIA Corporation";
  gpu.nv_compute_major = 9;  // an H100
  CHECK(device_order(gpu) == DeviceOrder::Ptx);
  gpu.nv_compute_major = 6;  // a Pascal GPU: no .acquire/.release in its PTX
  CHECK(device_order(gpu) == DeviceOrder::None);
  gpu.nv_compute_major = 9;
  gpu.vendor = "Advanced Micro Devices, Inc.";
  CHECK(device_order(gpu) == DeviceOrder::None);
  CHECK(std::string(to_string(DeviceOrder::None)) == "none");
}

TEST_CASE("Order: messages passed between the work-groups of one launch arrive whole") {
  if (device_order(runtime().caps()) == DeviceOrder::None) {
    MESSAGE("no device-scope order on '" << runtime().caps().name << "': nothing to test");
    return;
  }
  messages_arrive_whole();
}

}  // TEST_SUITE

TEST_SUITE("gpu_only") {

TEST_CASE("GPU only: PTX release and acquire carry a work-group's stores whole to another work-group") {
  // The fences matter here, not on x86-64 (TSO orders stores anyway): with them dropped
  // (CHANFLOW_BUILD_OPTIONS=-DCHANFLOW_ORDER_UNFENCED) an H200 reads stale words.
  CAPTURE(runtime().caps().name);
  REQUIRE(device_order(runtime().caps()) == DeviceOrder::Ptx);
  messages_arrive_whole();
}

}  // TEST_SUITE
