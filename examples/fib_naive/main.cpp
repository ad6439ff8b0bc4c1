// fib_naive N [--device D] [--trace FILE] [--dot FILE]: the thesis' Figure 4-5 on an OpenCL
// device, checked against a serial loop, with the run's statistics.
#include "fib/fib.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  using namespace chanflow;
  std::uint32_t n = 24;
  DeviceSelection device;
  RunOptions options;
  std::string dot;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) device.spec = argv[++i];
    else if (a == "--trace" && i + 1 < argc) options.trace_path = argv[++i];
    else if (a == "--dot" && i + 1 < argc) dot = argv[++i];
    else n = static_cast<std::uint32_t>(std::stoul(a));
  }
  try {
    const Runtime rt(device);
    Greedy policy;
    const auto r = workloads::fib_naive(rt, n, policy, options);
    const auto expected = workloads::fib_serial(n);
    fmt::print("fib({}) = {} on {}\n", n, r.value, rt.caps().name);
    fmt::print("{} rounds, {} dispatches, {} CEs ({:.1f} per dispatch), {:.2f} ms, device idle on the aggregator {:.0f}%\n",
               r.stats.rounds, r.stats.dispatches, r.stats.ces, r.stats.mean_ces_per_dispatch(), r.stats.wall_ms,
               100 * r.stats.device_idle_on_aggregator);
    if (r.value != expected) {
      fmt::print(stderr, "error: expected {}\n", expected);
      return 1;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "fib_naive: {}\n", e.what());
    return 1;
  }
  return 0;
}
