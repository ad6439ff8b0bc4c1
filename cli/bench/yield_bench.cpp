// Cilk Fibonacci with bounded channel stacks: wall time, yields, restarts and memory against the
// per-level capacity, and the unbounded help-first run for contrast.
#include "yield_bench.hpp"

#include "common/bench_common.hpp"
#include "fib/fib.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace chanflow::bench {

namespace {

constexpr std::uint32_t kUnbounded = 1u << 20;  // per level: holds fib(32)'s widest level

struct Measured {
  Summary ms;
  RunStats stats;  // of the last repetition
  bool correct = true;
};

Measured measure(const Runtime& rt, std::uint32_t n, SchedulingPolicy& policy, std::uint32_t capacity,
                 std::uint32_t wg, unsigned reps, Sweeps dispatch) {
  Measured m;
  const RunSettings o{
      .capacity = capacity, .wg_size = wg, .dispatch = dispatch, .preallocate_levels = true};
  const auto expected = workloads::fib_serial(n);
  m.correct = workloads::fib_cilk(rt, n, policy, o).value == expected;  // warm-up and check
  std::vector<double> samples;
  for (unsigned i = 0; m.correct && i < reps; ++i) {
    auto r = workloads::fib_cilk(rt, n, policy, o);
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
                 Sweeps dispatch) {
    const auto& s = m.stats;
    const std::string label = fmt::format("{} {} {}", impl, s.policy, to_string(dispatch));
    const std::uint64_t tasks = 3 * workloads::fib_serial(n) - 2;  // calls plus continuations
    fmt::print(table, "{:>4} {:<34} {:>9} {:>10.2f} {:>7} {:>7} {:>8} {:>8} {:>11} {:>12} {:>8} {:>6} {:>4}\n", n, label,
               capacity == kUnbounded ? std::string("unbounded") : std::to_string(capacity), m.ms.median, s.rounds,
               s.dispatches, s.yields, s.restarts, s.peak_live_bytes, s.peak_channel_bytes,
               base_ms > 0 ? fmt::format("{:+.0f}%", 100 * (m.ms.median / base_ms - 1)) : std::string("-"),
               fmt::format("{:.0f}%", 100 * s.device_idle_on_aggregator), m.correct ? "yes" : "NO");
    std::fflush(table);
    results.push_back({{"workload", "fib-cilk"}, {"size", n}, {"impl", impl}, {"policy", s.policy}, {"capacity", capacity},
                       {"dispatch", to_string(dispatch)}, {"wg_size", wg}, {"threads", nullptr}, {"reps", o.reps},
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
  const bool claimable = claimed_sweeps_hold(rt.caps());
  std::vector<Sweeps> modes;
  if (o.dispatch == "all") {
    if (claimable) modes.push_back(Sweeps::Claimed);
    modes.insert(modes.end(), {Sweeps::Planned, Sweeps::Off});
  } else if (o.dispatch == "auto") {
    modes.push_back(claimable ? Sweeps::Claimed : Sweeps::Planned);
  } else {
    modes.push_back(sweeps_from_string(o.dispatch));
  }
  const Sweeps memory_mode = modes.front();
  header("-- time against capacity per level (overhead relative to the fastest unbounded run of the same policy)");
  for (std::uint32_t n : o.sizes) {
    for (SchedulingPolicy* policy : {static_cast<SchedulingPolicy*>(&levelized), static_cast<SchedulingPolicy*>(&greedy)}) {
      // The baseline is the best of the unbounded ways to run: one host-sized dispatch per level
      // (what an unbounded breadth-first run needs), and each sweep kind that is timed.
      std::vector<std::pair<Sweeps, Measured>> bases;
      if (std::find(modes.begin(), modes.end(), Sweeps::Off) == modes.end())
        bases.emplace_back(Sweeps::Off, measure(rt, n, *policy, kUnbounded, wg, o.reps, Sweeps::Off));
      for (Sweeps mode : modes) bases.emplace_back(mode, measure(rt, n, *policy, kUnbounded, wg, o.reps, mode));
      double base = bases.front().second.ms.median;
      for (const auto& b : bases) base = std::min(base, b.second.ms.median);
      for (std::uint32_t groups : o.groups) {
        const std::uint32_t capacity = 2 * wg * groups;  // a work-group asks for 2 CEs per item
        for (Sweeps mode : modes) row(n, "chanflow", capacity, measure(rt, n, *policy, capacity, wg, o.reps, mode), base, mode);
      }
      const std::string unbounded = policy == &greedy ? "chanflow-unbounded" : "chanflow";
      for (const auto& [mode, m] : bases) row(n, unbounded, kUnbounded, m, base, mode);
    }
  }
  header("-- memory: fixed capacity per level (16 work-groups' requests, levelized) vs unbounded help-first (greedy)");
  for (std::uint32_t n : o.memory_sizes) {
    row(n, "chanflow", 32 * wg, measure(rt, n, levelized, 32 * wg, wg, 1, memory_mode), 0, memory_mode);
    row(n, "chanflow-unbounded", kUnbounded, measure(rt, n, greedy, kUnbounded, wg, 1, Sweeps::Off), 0, Sweeps::Off);
  }
  return results;
}

}  // namespace chanflow::bench
