// A user-defined device policy: OpenCL C that the device scheduler compiles into its kernel and
// asks, for every channel holding ready CEs, how much it wants that channel's next batch. This one
// prefers the shallowest level of the recursion (breadth first, the reverse of Levelized) and,
// at one level, the fuller channel. Runs Cilk Fibonacci under Levelized and under it on the device
// scheduler, checks both against the serial answer, and prints what the scheduler did. On a device
// without device-scope ordering (DeviceOrder::None) the device scheduler is refused, and the policy's
// host form (Levelized's, here) runs in rounds instead.
#include "fib/fib.hpp"

#include <fmt/format.h>

#include <string>

namespace {

using namespace chanflow;

constexpr const char* kShallowFirst = R"CL(
int chanflow_user_policy_score(const chanflow_policy_view* v) {
  if (!v->in_stack) return 1;
  /* Shallow levels first; the level's fullness (up to a work-group's worth) breaks ties. */
  return (int)((64u - min(v->level, 63u)) * 512u + (uint)min(v->ready, (ulong)min(v->group_ces, 511u)));
}
)CL";

void report(const workloads::FibResult& r) {
  const auto& d = r.stats.device_scheduler;
  fmt::print("  {:<14} {:<7} fib = {:<8} {:>3} launches {:>7} batches {:>9} empty polls {:>8.2f} ms\n", r.stats.policy,
             r.stats.scheduler, r.value, d.launches, d.batches, d.empty_polls, r.stats.wall_ms);
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint32_t n = argc > 1 ? static_cast<std::uint32_t>(std::stoul(argv[1])) : 24;
  try {
    const Runtime rt;
    const bool on_device = device_scheduler_holds(rt.caps());
    fmt::print("fib({}) on {} ({} scheduler)\n", n, rt.caps().name, on_device ? "device" : "rounds");
    const RunSettings settings{.capacity = 1u << 12, .wg_size = 64,
                               .scheduler = on_device ? Scheduler::Device : Scheduler::Rounds};
    Levelized levelized;
    DevicePolicy shallow("shallow-first", kShallowFirst,
                         [](const GraphView& view, std::vector<Dispatch>& out) { Levelized().decide(view, out); });
    const auto a = workloads::fib_cilk(rt, n, levelized, settings);
    const auto b = workloads::fib_cilk(rt, n, shallow, settings);
    report(a);
    report(b);
    const auto expected = workloads::fib_serial(n);
    if (a.value != expected || b.value != expected) {
      fmt::print(stderr, "error: expected {}\n", expected);
      return 1;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "device_policy: {}\n", e.what());
    return 1;
  }
  return 0;
}
