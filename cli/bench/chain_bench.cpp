// Chains of tasks in one channel (chain_bench.cl): the run's time against its depth, per width and
// scheduler, and the slope, which is the latency of a level from its publish to the next level's
// start.
#include "chain_bench.hpp"

#include "chanflow/chanflow.hpp"
#include "chanflow_cli_sources.hpp"
#include "common/bench_common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <numeric>
#include <stdexcept>

namespace chanflow::bench {

namespace {

struct ChainTask {
  std::uint32_t left;
  std::uint32_t pad;
};
struct ChainArgs {
  std::uint64_t* counts;  // an SVM pointer: __global ulong* on the device
};
constexpr std::uint32_t kCounters = 4096;  // chain_bench.cl's CHAIN_COUNTERS

// The graph, built once per scheduler and width and run at every depth.
class Chain {
 public:
  Chain(const Runtime& rt, const RunSettings& settings)
      : rt_(rt),
        graph_(rt, settings.graph_options()),
        tasks_((graph_.add_source(std::string(cli_cl::chain_bench_cl())),
                graph_.channel<ChainTask>("chain_tasks", settings.capacity))),
        counts_(rt, kCounters * sizeof(std::uint64_t)) {
    auto& link = graph_.kernel<ChainTask>("chain", "chain_link");
    make_edge(tasks_, link);
    make_edge(link, tasks_, Spawns{.max_per_item = 1});
    link.set_args(ChainArgs{static_cast<std::uint64_t*>(counts_.get())}).uses(counts_);
  }

  // `width` chains of `depth` levels below their first task: the tasks counted, and the stats.
  std::uint64_t run(std::uint32_t width, std::uint32_t depth, SchedulingPolicy& policy, RunStats& stats,
                    const std::string& trace_path = {}) {
    rt_.svm_fill_zero(counts_.get(), counts_.size());
    for (std::uint32_t i = 0; i < width; ++i) tasks_.push(ChainTask{depth, 0});
    stats = graph_.run(policy, RunOptions{.trace_path = trace_path});
    std::vector<std::uint64_t> counts(kCounters);
    rt_.svm_read(counts.data(), counts_.get(), counts_.size());
    return std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
  }

 private:
  const Runtime& rt_;
  Graph graph_;
  ChannelNode& tasks_;
  SvmBuffer counts_;
};

}  // namespace

nlohmann::json run_chain_bench(const Runtime& rt, const ChainBenchOptions& o, std::FILE* table) {
  if (o.depths.size() < 2) throw std::invalid_argument("--depths: two or more, the time a level adds being the slope between them");
  const auto [shortest, longest] = std::minmax_element(o.depths.begin(), o.depths.end());
  if (*shortest == *longest) throw std::invalid_argument("--depths: two different depths are needed");
  nlohmann::json results = nlohmann::json::array();
  Levelized policy;
  fmt::print(table, "chains of tasks on {} ({}), median of {}: a level's tasks made only by the level before\n",
             rt.caps().name, rt.caps().platform, o.reps);
  // Under the device scheduler, what its work-groups counted in the last run: batches, CEs a
  // batch, polls that took nothing, and the work-groups' time inside batches, summed (where the
  // device has a clock).
  fmt::print(table, "{:<9} {:>7} {:>9} {:>7} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9} {:>10} {:>12} {:>4}\n", "scheduler",
             "width", "capacity", "depth", "median ms", "min ms", "max ms", "rounds", "batches", "CEs/batch", "empty polls",
             "in batch ms", "ok");
  struct Slope {
    std::string scheduler;
    std::uint32_t width;
    double us_per_level, tasks_per_s;
  };
  std::vector<Slope> slopes;
  for (const std::string& name : o.schedulers) {
    const Scheduler scheduler = scheduler_from_string(name);
    if (scheduler == Scheduler::Device && !device_scheduler_holds(rt.caps())) {
      fmt::print(table, "{:<9} (not on {}: the device scheduler needs device-scope ordering)\n", name, rt.caps().name);
      continue;
    }
    for (const std::uint32_t width : o.widths) {
      const std::uint32_t capacity = o.capacity ? o.capacity : std::bit_ceil(std::max<std::uint32_t>(4 * width, 1u << 16));
      if (capacity < 2 * width)
        throw std::invalid_argument(fmt::format("--capacity {}: two levels of {} chains need {}", capacity, width, 2 * width));
      const RunSettings settings = RunSettings{.capacity = capacity,
                                               .wg_size = o.wg_size,
                                               .scheduler = scheduler}
                                       .for_device(rt.caps());
      Chain chain(rt, settings);
      RunStats stats;
      const std::uint64_t want_first = std::uint64_t{width} * (*shortest + 1);
      bool correct = chain.run(width, *shortest, policy, stats) == want_first;  // builds its kernels
      std::vector<Summary> medians;
      for (const std::uint32_t depth : o.depths) {
        const std::uint64_t want = std::uint64_t{width} * (depth + 1);
        std::vector<double> samples;
        for (unsigned rep = 0; correct && rep < o.reps; ++rep) {
          const bool traced = !o.trace.empty() && depth == *longest && rep + 1 == o.reps;
          correct = chain.run(width, depth, policy, stats,
                              traced ? fmt::format("{}-{}-{}.json", o.trace, name, width) : std::string()) == want;
          samples.push_back(stats.wall_ms);
        }
        const Summary s = summarize(samples);
        medians.push_back(s);
        const auto& d = stats.device_scheduler;
        double in_batch_ms = 0;
        for (const auto& [node, ms] : d.busy_ms_per_node) in_batch_ms += ms;
        const bool on_device = stats.scheduler == "device";
        const auto or_dash = [&](auto value, const char* format) {
          return on_device ? fmt::format(fmt::runtime(format), value) : std::string("-");
        };
        fmt::print(table, "{:<9} {:>7} {:>9} {:>7} {:>10.3f} {:>10.3f} {:>10.3f} {:>9} {:>9} {:>9} {:>10} {:>12} {:>4}\n",
                   stats.scheduler, width, capacity, depth, s.median, s.min, s.max, stats.rounds, or_dash(d.batches, "{}"),
                   or_dash(d.batches ? double(stats.ces) / d.batches : 0.0, "{:.1f}"), or_dash(d.empty_polls, "{}"),
                   on_device && !d.busy_ms_per_node.empty() ? fmt::format("{:.3f}", in_batch_ms) : std::string("-"),
                   correct ? "yes" : "NO");
        std::fflush(table);
        results.push_back({{"benchmark", "chain"}, {"scheduler", stats.scheduler}, {"width", width}, {"capacity", capacity}, {"depth", depth},
                           {"reps", o.reps}, {"median_ms", s.median}, {"min_ms", s.min}, {"max_ms", s.max},
                           {"rounds", stats.rounds}, {"dispatches", stats.dispatches}, {"tasks", want},
                           {"batches", d.batches}, {"empty_polls", d.empty_polls}, {"polls_lost", d.polls_lost},
                           {"polls_no_room", d.polls_no_room}, {"naps", d.naps}, {"in_batch_ms", in_batch_ms},
                           {"correct", correct}});
        if (!correct) break;
      }
      if (!correct) continue;
      const auto at = [&](auto it) { return medians[static_cast<std::size_t>(it - o.depths.begin())].median; };
      const double us = 1000.0 * (at(longest) - at(shortest)) / (*longest - *shortest);
      const double per_s = static_cast<double>(width) * (*longest + 1) / (at(longest) / 1000.0);
      slopes.push_back({stats.scheduler, width, us, per_s});
      results.push_back({{"benchmark", "chain-slope"}, {"scheduler", stats.scheduler}, {"width", width},
                         {"us_per_level", us}, {"tasks_per_s", per_s}, {"correct", true}});
    }
  }
  fmt::print(table, "\nwhat a level adds (the slope between depths {} and {}), and tasks a second at depth {}\n", *shortest,
             *longest, *longest);
  fmt::print(table, "{:<9} {:>7} {:>12} {:>14}\n", "scheduler", "width", "µs a level", "M tasks/s");
  for (const Slope& s : slopes)
    fmt::print(table, "{:<9} {:>7} {:>12.2f} {:>14.2f}\n", s.scheduler, s.width, s.us_per_level, s.tasks_per_s / 1e6);
  return results;
}

}  // namespace chanflow::bench
