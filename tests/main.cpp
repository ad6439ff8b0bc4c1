// doctest's main for all chanflow suites. The suite gpu_only checks paths that only a GPU takes
// (the collective scan, idle work-groups leaving, PTX's ordering and float atomics, the device
// clock): each of its cases fails where the device lacks its path, so on a CPU device the suite
// is left out unless a command line names it (cmake/pack-gpu.sh's run-gpu.sh runs it on the GPU).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "test_support.hpp"

#include <cstdio>
#include <exception>
#include <string_view>

namespace {

bool names_gpu_only(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]).find("gpu_only") != std::string_view::npos) return true;
  return false;
}

bool filters_by_suite(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg.starts_with("--test-suite=") || arg.starts_with("-ts=")) return true;
  }
  return false;
}

bool on_a_cpu() {
  try {
    return (chanflow::test::runtime().caps().type & CL_DEVICE_TYPE_CPU) != 0;
  } catch (const std::exception&) {
    return false;  // no device: every case says so when it runs
  }
}

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context;
  if (!names_gpu_only(argc, argv) && on_a_cpu()) {
    context.addFilter("test-suite-exclude", "gpu_only");
    if (!filters_by_suite(argc, argv))
      std::fprintf(stderr, "chanflow_tests: the suite gpu_only is left out on a CPU device (--test-suite=gpu_only runs it)\n");
  }
  context.applyCommandLine(argc, argv);
  return context.run();
}
