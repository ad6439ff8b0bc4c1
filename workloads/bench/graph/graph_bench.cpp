// Naive Fibonacci three ways at the same task granularity (one task per call): the Figure 4-5
// channel-flow graph on the OpenCL device, oneTBB task_group, and serial recursion.
#include "graph_bench.hpp"

#include "../bench_common.hpp"
#include "fib_naive/fib_naive.hpp"

#include <fmt/format.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

namespace chanflow::bench {

namespace {

std::uint64_t fib_recursive(std::uint32_t n) { return n <= 2 ? 1 : fib_recursive(n - 1) + fib_recursive(n - 2); }

// oneTBB task_group, one task per call down to `cutoff`, serial recursion below it: cutoff 2
// is "one task per call" (tbb-fine), kCutoff the usual CPU practice (tbb-cutoff).
constexpr std::uint32_t kCutoff = 16;
std::uint64_t fib_task_group(std::uint32_t n, std::uint32_t cutoff) {
  if (n <= cutoff) return fib_recursive(n);
  std::uint64_t a = 0, b = 0;
  tbb::task_group g;
  g.run([&] { a = fib_task_group(n - 1, cutoff); });
  g.run([&] { b = fib_task_group(n - 2, cutoff); });
  g.wait();
  return a + b;
}

struct Row {
  std::string impl;
  int threads = 1;
  Summary ms;
  bool correct = true;
  std::uint64_t dispatches = 0;
  double idle = 0;
};

template <class F>
Row time_host(const std::string& impl, int threads, unsigned reps, std::uint64_t expected, F&& f) {
  Row r{impl, threads};
  r.correct = f() == expected;  // checked (and warmed up) before anything is timed
  std::vector<double> samples;
  for (unsigned i = 0; r.correct && i < reps; ++i) {
    const auto start = Clock::now();
    const auto value = f();
    samples.push_back(ms_since(start));
    r.correct &= value == expected;
  }
  r.ms = summarize(samples);
  return r;
}

}  // namespace

nlohmann::json run_graph_bench(const Runtime& rt, const GraphBenchOptions& o, std::FILE* table) {
  nlohmann::json results = nlohmann::json::array();
  const int threads = tbb::this_task_arena::max_concurrency();
  fmt::print(table, "fib-naive: chanflow on {} vs oneTBB task_group ({} threads) vs serial, median of {}\n",
             rt.caps().name, threads, o.reps);
  fmt::print(table, "{:>4} {:<10} {:>11} {:>10} {:>10} {:>11} {:>9} {:>8}\n", "n", "impl", "median ms", "tasks",
             "M tasks/s", "dispatches", "dev idle", "correct");
  Greedy greedy;
  for (std::uint32_t n = o.from; n <= o.to; ++n) {
    const std::uint64_t expected = examples::fib_serial(n);
    const std::uint64_t tasks = 2 * expected - 1;
    std::vector<Row> rows;

    Row chan{"chanflow", 0};
    std::vector<double> samples;
    double idle = 0;
    auto run_once = [&] {
      const auto start = Clock::now();
      const auto r = examples::fib_naive(rt, n, greedy, {}, 1u << 22, o.wg_size);
      return std::make_pair(ms_since(start), r);
    };
    chan.correct = run_once().second.value == expected;  // warm-up and check
    for (unsigned i = 0; chan.correct && i < o.reps; ++i) {
      const auto [ms, r] = run_once();
      chan.correct &= r.value == expected;
      samples.push_back(r.stats.wall_ms);  // the run itself, not the graph's construction
      chan.dispatches = r.stats.dispatches;
      idle += r.stats.device_idle_on_aggregator;
      (void)ms;
    }
    chan.ms = summarize(samples);
    chan.idle = samples.empty() ? 0 : idle / samples.size();
    rows.push_back(chan);
    rows.push_back(time_host("tbb-fine", threads, o.reps, expected, [n] { return fib_task_group(n, 2); }));
    rows.push_back(time_host("tbb-cutoff", threads, o.reps, expected, [n] { return fib_task_group(n, kCutoff); }));
    rows.push_back(time_host("serial", 1, o.reps, expected, [n] { return fib_recursive(n); }));

    for (const auto& r : rows) {
      fmt::print(table, "{:>4} {:<10} {:>11.3f} {:>10} {:>10.2f} {:>11} {:>9} {:>8}\n", n, r.impl, r.ms.median, tasks,
                 r.ms.median > 0 ? tasks / (r.ms.median * 1e3) : 0.0,
                 r.impl == "chanflow" ? std::to_string(r.dispatches) : "-",
                 r.impl == "chanflow" ? fmt::format("{:.0f}%", 100 * r.idle) : "-", r.correct ? "yes" : "NO");
      nlohmann::json j{{"workload", "fib-naive"}, {"size", n},           {"impl", r.impl},
                       {"threads", r.threads},    {"reps", o.reps},      {"median_ms", r.ms.median},
                       {"min_ms", r.ms.min},      {"max_ms", r.ms.max},  {"correct", r.correct},
                       {"tasks", tasks}};
      if (r.impl == "tbb-cutoff") j["cutoff"] = kCutoff;
      if (r.impl == "chanflow") {
        j["dispatches"] = r.dispatches;
        j["device_idle_on_aggregator"] = r.idle;
        j["wg_size"] = o.wg_size;
      } else {
        j["dispatches"] = nullptr;
        j["device_idle_on_aggregator"] = nullptr;
      }
      results.push_back(j);
    }
    std::fflush(table);
  }
  return results;
}

}  // namespace chanflow::bench
