// Cilk Fibonacci with bounded channel stacks: wall time, yields, restarts and memory against the
// per-level capacity, and the unbounded help-first run for contrast.
#include "yield_bench.hpp"

#include "../bench_common.hpp"
#include "fib_cilk/fib_cilk.hpp"
#include "fib_naive/fib_naive.hpp"

#include <fmt/format.h>

namespace chanflow::bench {

namespace {

constexpr std::uint32_t kUnbounded = 1u << 20;  // per level: holds fib(32)'s widest level

struct Measured {
  Summary ms;
  RunStats stats;  // of the last repetition
  bool correct = true;
};

Measured measure(const Runtime& rt, std::uint32_t n, SchedulingPolicy& policy, std::uint32_t capacity,
                 std::uint32_t wg, unsigned reps, bool sweeps) {
  Measured m;
  const examples::FibCilkOptions o{
      .capacity_per_level = capacity, .wg_size = wg, .preallocate_levels = true,
      .device_sweeps = sweeps ? Sweeps::On : Sweeps::Off};
  const auto expected = examples::fib_serial(n);
  m.correct = examples::fib_cilk(rt, n, policy, o).value == expected;  // warm-up and check
  std::vector<double> samples;
  for (unsigned i = 0; m.correct && i < reps; ++i) {
    auto r = examples::fib_cilk(rt, n, policy, o);
    m.correct &= r.value == expected;
    samples.push_back(r.stats.wall_ms);
    m.stats = std::move(r.stats);
  }
  m.ms = summarize(samples);
  return m;
}

}  // namespace

nlohmann::json run_yield_bench(const Runtime& rt, const YieldBenchOptions& o, std::FILE* table) {
  nlohmann::json results = nlohmann::json::array();
  Levelized levelized;
  Greedy greedy;
  const std::uint32_t wg = o.wg_size;
  auto row = [&](std::uint32_t n, const std::string& impl, std::uint32_t capacity, const Measured& m, double base_ms,
                 bool sweeps = true) {
    const auto& s = m.stats;
    const std::string label = fmt::format("{} {} {}", impl, s.policy, sweeps ? "sweep" : "host");
    const std::uint64_t tasks = 3 * examples::fib_serial(n) - 2;  // calls plus continuations
    fmt::print(table, "{:>4} {:<34} {:>9} {:>10.2f} {:>7} {:>7} {:>8} {:>8} {:>11} {:>12} {:>8} {:>6} {:>4}\n", n, label,
               capacity == kUnbounded ? std::string("unbounded") : std::to_string(capacity), m.ms.median, s.rounds,
               s.dispatches, s.yields, s.restarts, s.peak_live_bytes, s.peak_channel_bytes,
               base_ms > 0 ? fmt::format("{:+.0f}%", 100 * (m.ms.median / base_ms - 1)) : std::string("-"),
               fmt::format("{:.0f}%", 100 * s.device_idle_on_aggregator), m.correct ? "yes" : "NO");
    std::fflush(table);
    results.push_back({{"workload", "fib-cilk"}, {"size", n}, {"impl", impl}, {"policy", s.policy}, {"capacity", capacity},
                       {"dispatch", sweeps ? "sweep" : "host"}, {"wg_size", wg}, {"threads", nullptr}, {"reps", o.reps},
                       {"median_ms", m.ms.median}, {"min_ms", m.ms.min}, {"max_ms", m.ms.max}, {"correct", m.correct},
                       {"tasks", tasks}, {"dispatches", s.dispatches}, {"sweeps", s.sweeps}, {"rounds", s.rounds},
                       {"device_idle_on_aggregator", s.device_idle_on_aggregator}, {"yields", s.yields},
                       {"restarts", s.restarts}, {"peak_channel_bytes", s.peak_channel_bytes},
                       {"peak_live_bytes", s.peak_live_bytes}, {"max_level", s.max_level},
                       {"overhead_vs_unbounded", base_ms > 0 ? nlohmann::json(m.ms.median / base_ms - 1) : nullptr}});
  };
  auto header = [&](const char* title) {
    fmt::print(table, "{}\n{:>4} {:<34} {:>9} {:>10} {:>7} {:>7} {:>8} {:>8} {:>11} {:>12} {:>8} {:>6} {:>4}\n", title, "n",
               "impl policy dispatch", "cap/level", "median ms", "rounds", "disp", "yields", "restarts", "live bytes",
               "alloc bytes", "overhead", "idle", "ok");
  };

  fmt::print(table, "Cilk Fibonacci on {} ({}), work-group {}, median of {}\n", rt.caps().name, rt.caps().platform,
             wg, o.reps);
  // Device sweeps run where they are supported (CPU devices, see GraphOptions::device_sweeps);
  // elsewhere every run uses host-sized dispatches.
  const bool sweeps = (rt.caps().type & CL_DEVICE_TYPE_CPU) != 0;
  header("-- time against capacity per level (overhead relative to the faster unbounded run of the same policy)");
  for (std::uint32_t n : o.sizes) {
    for (SchedulingPolicy* policy : {static_cast<SchedulingPolicy*>(&levelized), static_cast<SchedulingPolicy*>(&greedy)}) {
      // The baseline is the better of the two unbounded ways to run: device sweeps, or one
      // host-sized dispatch per level (what an unbounded breadth-first run needs).
      const auto host_base = measure(rt, n, *policy, kUnbounded, wg, o.reps, false);
      const auto sweep_base = sweeps ? measure(rt, n, *policy, kUnbounded, wg, o.reps, true) : host_base;
      const double base = std::min(sweep_base.ms.median, host_base.ms.median);
      for (std::uint32_t groups : o.groups) {
        const std::uint32_t capacity = 2 * wg * groups;  // a work-group asks for 2 CEs per item
        row(n, "chanflow", capacity, measure(rt, n, *policy, capacity, wg, o.reps, sweeps), base, sweeps);
        if (o.host_rows && sweeps)
          row(n, "chanflow", capacity, measure(rt, n, *policy, capacity, wg, o.reps, false), base, false);
      }
      const std::string unbounded = policy == &greedy ? "chanflow-unbounded" : "chanflow";
      if (sweeps) row(n, unbounded, kUnbounded, sweep_base, base, true);
      row(n, unbounded, kUnbounded, host_base, base, false);
    }
  }
  header("-- memory: fixed capacity per level (16 work-groups' requests, levelized) vs unbounded help-first (greedy)");
  for (std::uint32_t n : o.memory_sizes) {
    row(n, "chanflow", 32 * wg, measure(rt, n, levelized, 32 * wg, wg, 1, sweeps), 0, sweeps);
    row(n, "chanflow-unbounded", kUnbounded, measure(rt, n, greedy, kUnbounded, wg, 1, false), 0, false);
  }
  return results;
}

}  // namespace chanflow::bench
