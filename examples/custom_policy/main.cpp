// A user-defined scheduling policy: dispatch batches of at most `cap` CEs, preferring the channel
// with the most ready work. Runs the Figure 4-5 Fibonacci graph under Greedy and under it, checks
// both against the serial answer, and prints what changed (rounds, dispatches, batch sizes).
#include "fib/fib.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace {

using namespace chanflow;

// Smaller dispatches keep fewer CEs in flight per round (less channel space needed at once) at
// the price of more rounds, each costing the aggregator a turn.
class CappedBatches final : public SchedulingPolicy {
 public:
  explicit CappedBatches(std::uint64_t cap) : cap_(cap) {}
  std::string name() const override { return fmt::format("capped-batches({})", cap_); }

  void decide(const GraphView& view, std::vector<Dispatch>& out) override {
    const ChannelView* best = nullptr;
    for (const auto& c : view.channels)
      if (c.predicate && (!best || c.ready > best->ready)) best = &c;
    if (best) out.push_back({best->id, std::min(best->admissible, cap_)});
  }

 private:
  std::uint64_t cap_;
};

void report(const workloads::FibResult& r) {
  fmt::print("  {:<22} fib = {:<8} {:>4} rounds {:>5} dispatches {:>9.1f} CEs/dispatch {:>8.2f} ms\n", r.stats.policy,
             r.value, r.stats.rounds, r.stats.dispatches, r.stats.mean_ces_per_dispatch(), r.stats.wall_ms);
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint32_t n = argc > 1 ? static_cast<std::uint32_t>(std::stoul(argv[1])) : 24;
  try {
    const Runtime rt;
    fmt::print("fib({}) on {}\n", n, rt.caps().name);
    Greedy greedy;
    CappedBatches capped(4096);
    const auto a = workloads::fib_naive(rt, n, greedy);
    const auto b = workloads::fib_naive(rt, n, capped);
    report(a);
    report(b);
    const auto expected = workloads::fib_serial(n);
    if (a.value != expected || b.value != expected) {
      fmt::print(stderr, "error: expected {}\n", expected);
      return 1;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "custom_policy: {}\n", e.what());
    return 1;
  }
  return 0;
}
