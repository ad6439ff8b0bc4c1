// The `chanflow` command line: list devices, run benchmark programs.
#include "../bench/bench_common.hpp"
#include "../bench/channels/channel_bench.hpp"
#include "../bench/graph/graph_bench.hpp"
#include "../bench/launch/launch_bench.hpp"
#include "../bench/yield/yield_bench.hpp"
#include "../soak/soak.hpp"
#include "fib_cilk/fib_cilk.hpp"
#include "fib_naive/fib_naive.hpp"
#include "chanflow/channel.hpp"
#include "chanflow/opencl.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <tuple>

namespace {

using namespace chanflow;

std::string yes_no(bool b) { return b ? "yes" : "no"; }

std::string mib(std::uint64_t bytes) { return fmt::format("{:.0f} MiB", bytes / 1048576.0); }

int list_devices_command() {
  const auto devices = list_devices();
  for (const auto& d : devices) {
    fmt::print("[{}] {}\n", d.index, d.name);
    fmt::print("    platform:            {}\n", d.platform);
    fmt::print("    type / vendor:       {} / {}\n", d.type_name(), d.vendor);
    fmt::print("    version:             {} ({}), driver {}\n", d.version, d.opencl_c_version, d.driver_version);
    fmt::print("    compute units:       {}\n", d.compute_units);
    fmt::print("    work-group size:     max {}, preferred multiple {}\n", d.max_work_group_size,
               d.preferred_work_group_multiple);
    fmt::print("    memory:              global {}, local {} KiB\n", mib(d.global_mem_bytes), d.local_mem_bytes / 1024);
    fmt::print("    SVM:                 coarse {}, fine buffer {}, fine system {}, atomics {}\n",
               yes_no(d.svm_coarse), yes_no(d.svm_fine_buffer), yes_no(d.svm_fine_system), yes_no(d.svm_atomics));
    fmt::print("    64-bit atomics:      {}\n", yes_no(d.int64_atomics));
    fmt::print("    sub-groups:          {}\n", yes_no(d.subgroups));
    fmt::print("    work-group scan:     advertised {}, builds under CL2.0 {}\n", yes_no(d.work_group_collectives),
               yes_no(d.work_group_scan_builds));
    const auto missing = d.missing_requirements();
    fmt::print("    usable by chanflow:  {}\n",
               missing.empty() ? std::string("yes") : "no (lacks " + fmt::format("{}", fmt::join(missing, ", ")) + ")");
  }
  return 0;
}

// Checked before a run starts: the result must fit the type the workload computes it in, and
// the run must not exceed the work the user allows (2·fib(n) − 1 tasks; fib-cilk 100 would
// otherwise run for ever).
void check_fib_size(const char* workload, std::uint32_t n, unsigned result_bits, double max_tasks) {
  const double limit = std::ldexp(1.0, static_cast<int>(result_bits));
  double fib = 0, next = 1;  // fib(i), fib(i + 1)
  std::uint32_t i = 0;
  for (; i < n && next < limit; ++i) std::tie(fib, next) = std::pair(next, fib + next);
  if (i < n || fib >= limit)
    throw std::invalid_argument(fmt::format("{} {}: fib({}) does not fit the {}-bit result this workload computes "
                                            "(n may be at most {})",
                                            workload, n, n, result_bits, i));
  const double tasks = 2 * fib - 1;
  if (tasks > max_tasks)
    throw std::invalid_argument(fmt::format("{} {} would run {:.3g} tasks (2·fib(n) − 1), more than --max-tasks "
                                            "({:.3g}); raise it to run this size",
                                            workload, n, tasks, max_tasks));
}

void write_json(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", path));
  out << j.dump(2) << '\n';
  if (!out) throw std::runtime_error(fmt::format("error writing '{}'", path));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"chanflow: fine-grain task parallelism through channels on OpenCL devices"};
  app.require_subcommand(1);
  std::string device;
  app.add_option("--device", device,
                 "OpenCL device: index from `chanflow devices` or a name substring "
                 "(default: $CHANFLOW_DEVICE, else PoCL's CPU device)");

  auto* devices_cmd = app.add_subcommand("devices", "list every OpenCL device and its capabilities");

  auto* bench_cmd = app.add_subcommand("bench", "benchmark programs (each result checked before it is timed)");
  bench_cmd->require_subcommand(1);
  auto* bench_channels = bench_cmd->add_subcommand("channels", "CE throughput: leader-level vs per-work-item vs TBB queue");
  bench::ChannelBenchOptions channel_opts;
  std::string json_path;
  bench_channels->add_option("--json", json_path, "also write the results as JSON to this file");
  bench_channels->add_option("--ces", channel_opts.ces, "CEs per repetition (multiple of 64)")->capture_default_str();
  bench_channels->add_option("--reps", channel_opts.reps, "timed repetitions")->capture_default_str()->check(CLI::PositiveNumber);
  bench_channels->add_option("--wg", channel_opts.wg_sizes, "work-group sizes, comma-separated")->delimiter(',')->capture_default_str();
  bench_channels->add_option("--ce-bytes", channel_opts.ce_bytes, "CE sizes in bytes, comma-separated")->delimiter(',')->capture_default_str();

  auto* bench_graph = bench_cmd->add_subcommand("graph", "naive Fibonacci flow graph vs oneTBB task_group vs serial");
  bench::GraphBenchOptions graph_opts;
  bench_graph->add_option("--json", json_path, "also write the results as JSON to this file");
  bench_graph->add_option("--from", graph_opts.from, "smallest n")->capture_default_str();
  bench_graph->add_option("--to", graph_opts.to, "largest n")->capture_default_str();
  bench_graph->add_option("--reps", graph_opts.reps, "timed repetitions")->capture_default_str()->check(CLI::PositiveNumber);
  bench_graph->add_option("--wg", graph_opts.wg_size, "work-group size")->capture_default_str();

  auto* bench_yield = bench_cmd->add_subcommand("yield", "Cilk Fibonacci across per-level capacities (bounded memory)");
  bench::YieldBenchOptions yield_opts;
  bench_yield->add_option("--json", json_path, "also write the results as JSON to this file");
  bench_yield->add_option("--sizes", yield_opts.sizes, "n for the capacity sweep")->delimiter(',')->capture_default_str();
  bench_yield->add_option("--groups", yield_opts.groups, "capacities per level, in work-groups' requests")
      ->delimiter(',')->capture_default_str();
  bench_yield->add_option("--memory-sizes", yield_opts.memory_sizes, "n for the memory table")
      ->delimiter(',')->capture_default_str();
  bench_yield->add_option("--reps", yield_opts.reps, "timed repetitions")->capture_default_str()->check(CLI::PositiveNumber);
  bench_yield->add_option("--wg", yield_opts.wg_size, "work-group size")->capture_default_str();
  bench_yield->add_option("--dispatch", yield_opts.dispatch,
                          "how bounded runs dispatch: claimed or planned device sweeps, host-sized ranges (host), "
                          "all three (claimed on CPU devices only), or auto (the device's default)")
      ->check(CLI::IsMember({"auto", "claimed", "planned", "host", "all"}))->capture_default_str();

  auto* bench_launch = bench_cmd->add_subcommand(
      "launch", "what a kernel launch costs against the SVM pointers named in its exec info");
  bench::LaunchBenchOptions launch_opts;
  bench_launch->add_option("--json", json_path, "also write the results as JSON to this file");
  bench_launch->add_option("--svm-pointers", launch_opts.svm_pointers, "exec-info list lengths, comma-separated")
      ->delimiter(',')->capture_default_str();
  bench_launch->add_option("--launches", launch_opts.launches, "launches per repetition")
      ->capture_default_str()->check(CLI::PositiveNumber);
  bench_launch->add_option("--reps", launch_opts.reps, "timed repetitions")->capture_default_str()->check(CLI::PositiveNumber);

  auto* soak_cmd = app.add_subcommand("soak", "long randomized runs, every result checked (exit 1 on any failure)");
  soak_cmd->require_subcommand(1);
  auto* soak_channels = soak_cmd->add_subcommand("channels", "CE trees through single channels under contention");
  soak::ChannelSoakOptions channel_soak;
  soak_channels->add_option("--ces", channel_soak.ces, "CEs in all")->capture_default_str();
  soak_channels->add_option("--seed", channel_soak.seed, "seed for the configurations")->capture_default_str();
  soak_channels->add_option("--json", json_path, "also write the results as JSON to this file");

  auto* soak_graphs = soak_cmd->add_subcommand("graphs", "random graphs, policies, capacities and dispatch modes");
  soak::GraphSoakOptions graph_soak;
  soak_graphs->add_option("--configs", graph_soak.configs, "configurations to run")->capture_default_str();
  soak_graphs->add_option("--seed", graph_soak.seed, "seed for the configurations")->capture_default_str();
  soak_graphs->add_option("--first", graph_soak.first, "index of the first configuration")->capture_default_str();
  soak_graphs->add_option("--timeout", graph_soak.timeout_s, "seconds one configuration may take before it counts as a hang")
      ->capture_default_str();
  soak_graphs->add_option("--json", json_path, "also write the results as JSON to this file");

  auto* run_cmd = app.add_subcommand("run", "run a workload on the device and check it against a serial reference");
  run_cmd->require_subcommand(1);
  auto* run_fib_naive = run_cmd->add_subcommand("fib-naive", "the thesis' Figure 4-5 flow graph: fib(N)");
  std::uint32_t fib_n = 24, capacity = 1u << 22, wg_size = 64;
  std::string policy_name = "greedy", trace_path;
  run_fib_naive->add_option("n", fib_n, "N")->capture_default_str();
  run_fib_naive->add_option("--policy", policy_name, "greedy or levelized")
      ->check(CLI::IsMember({"greedy", "levelized"}))->capture_default_str();
  run_fib_naive->add_option("--capacity", capacity, "channel capacity in CEs")->capture_default_str();
  run_fib_naive->add_option("--wg", wg_size, "work-group size")->capture_default_str();
  run_fib_naive->add_option("--trace", trace_path, "write a Chrome-trace JSON of the dispatches (open in Perfetto)");

  auto* run_fib_cilk = run_cmd->add_subcommand("fib-cilk", "Cilk Fibonacci on levelized channel stacks with yield: fib(N)");
  std::uint32_t cilk_capacity = 1u << 16;
  std::string cilk_policy = "levelized";
  run_fib_cilk->add_option("n", fib_n, "N")->capture_default_str();
  run_fib_cilk->add_option("--policy", cilk_policy, "levelized or greedy")
      ->check(CLI::IsMember({"greedy", "levelized"}))->capture_default_str();
  run_fib_cilk->add_option("--capacity", cilk_capacity, "CEs per stack level")->capture_default_str();
  run_fib_cilk->add_option("--wg", wg_size, "work-group size")->capture_default_str();
  run_fib_cilk->add_option("--trace", trace_path, "write a Chrome-trace JSON of the dispatches (open in Perfetto)");
  std::string dispatch = "auto";
  run_fib_cilk->add_option("--dispatch", dispatch,
                           "claimed device sweeps (CPU devices), planned device sweeps, host-sized dispatches of "
                           "each level (host), or auto: claimed on CPU devices, planned elsewhere")
      ->check(CLI::IsMember({"auto", "claimed", "planned", "host"}))->capture_default_str();
  double max_tasks = 4294967296.0;
  for (auto* cmd : {run_fib_naive, run_fib_cilk, bench_graph, bench_yield})
    cmd->add_option("--max-tasks", max_tasks, "refuse sizes that would run more tasks than this")->capture_default_str();
  std::uint32_t sweep_groups = 0;
  run_fib_cilk->add_option("--sweep-groups", sweep_groups, "work-groups per device sweep (0: chosen per round)")
      ->capture_default_str();

  CLI11_PARSE(app, argc, argv);

  try {
    if (*devices_cmd) return list_devices_command();
    // The benchmarks' sizes are checked as the runs' are, before anything starts.
    if (*bench_graph)
      for (std::uint32_t n = graph_opts.from; n <= graph_opts.to; ++n) check_fib_size("bench graph: fib-naive", n, 32, max_tasks);
    if (*bench_yield)
      for (const auto* list : {&yield_opts.sizes, &yield_opts.memory_sizes})
        for (std::uint32_t n : *list) check_fib_size("bench yield: fib-cilk", n, 64, max_tasks);
    if (*bench_channels || *bench_graph || *bench_yield || *bench_launch) {
      const Runtime rt(DeviceSelection{device, /*profiling=*/false});
      const char* name = *bench_channels ? "channels" : *bench_graph ? "graph" : *bench_yield ? "yield" : "launch";
      const auto rows = *bench_channels ? bench::run_channel_bench(rt, channel_opts, stdout)
                        : *bench_graph  ? bench::run_graph_bench(rt, graph_opts, stdout)
                        : *bench_yield  ? bench::run_yield_bench(rt, yield_opts, stdout)
                                        : bench::run_launch_bench(rt, launch_opts, stdout);
      if (!json_path.empty()) {
        write_json(json_path, {{"machine", bench::machine_info()}, {"device", rt.caps().name},
                               {"benchmark", name}, {"results", rows}});
        fmt::print("wrote {}\n", json_path);
      }
      for (const auto& r : rows)
        if (!r["correct"].get<bool>()) {
          fmt::print(stderr, "error: a result was wrong, lost or duplicated (see the table)\n");
          return 1;
        }
      return 0;
    }
    if (*soak_channels || *soak_graphs) {
      const Runtime rt(DeviceSelection{device, /*profiling=*/false});
      const char* name = *soak_channels ? "channels" : "graphs";
      const auto result = *soak_channels ? soak::run_channel_soak(rt, channel_soak, stdout)
                                         : soak::run_graph_soak(rt, graph_soak, stdout);
      if (!json_path.empty()) {
        write_json(json_path, {{"machine", bench::machine_info()}, {"device", rt.caps().name}, {"soak", name},
                               {"result", result}});
        fmt::print("wrote {}\n", json_path);
      }
      const auto& t = result["totals"];
      const bool passed = *soak_channels ? t["lost"] == 0 && t["duplicated"] == 0 && t["bad_payloads"] == 0
                                         : t["failed"] == 0;
      return passed ? 0 : 1;
    }
    if (*run_fib_cilk) {
      check_fib_size("fib-cilk", fib_n, 64, max_tasks);
      const Runtime rt(DeviceSelection{device, /*profiling=*/!trace_path.empty()});
      Greedy greedy;
      Levelized levelized;
      SchedulingPolicy& policy = cilk_policy == "greedy" ? static_cast<SchedulingPolicy&>(greedy) : levelized;
      const auto r = examples::fib_cilk(rt, fib_n, policy, {.capacity_per_level = cilk_capacity, .wg_size = wg_size, .device_sweeps = sweeps_from_string(dispatch), .sweep_groups = sweep_groups},
                                        {.trace_path = trace_path});
      const auto expected = examples::fib_serial(fib_n);
      const auto& st = r.stats;
      fmt::print("fib({}) = {} on {} ({})\n", fib_n, r.value, rt.caps().name, r.value == expected ? "correct" : "WRONG");
      fmt::print("policy {}: {:.3f} ms, {} rounds, {} dispatches ({} device sweeps), {} CEs, depth {}\n", st.policy,
                 st.wall_ms, st.rounds, st.dispatches, st.sweeps, st.ces, st.max_level);
      fmt::print("yields {} ({} after the continuation), restarts {} in {} dispatches\n", st.yields, st.partial_yields,
                 st.restarts, st.restart_dispatches);
      fmt::print("memory: peak live {} bytes, channels allocated {} bytes; device idle on the aggregator {:.1f}%\n",
                 st.peak_live_bytes, st.peak_channel_bytes, 100 * st.device_idle_on_aggregator);
      fmt::print("time: aggregator {:.3f} ms, device {:.3f} ms (of which the host spent {:.3f} ms enqueueing)\n",
                 st.aggregator_ms, st.device_ms, st.enqueue_ms);
      if (!trace_path.empty()) fmt::print("wrote {}\n", trace_path);
      return r.value == expected ? 0 : 1;
    }
    if (*run_fib_naive) {
      check_fib_size("fib-naive", fib_n, 32, max_tasks);  // the result is counted in a uint
      const Runtime rt(DeviceSelection{device, /*profiling=*/!trace_path.empty()});
      Greedy greedy;
      Levelized levelized;
      SchedulingPolicy& policy = policy_name == "levelized" ? static_cast<SchedulingPolicy&>(levelized) : greedy;
      const auto r = examples::fib_naive(rt, fib_n, policy, {.trace_path = trace_path}, capacity, wg_size);
      const auto expected = examples::fib_serial(fib_n);
      const auto& st = r.stats;
      fmt::print("fib({}) = {} on {} ({})\n", fib_n, r.value, rt.caps().name, r.value == expected ? "correct" : "WRONG");
      fmt::print("policy {}: {:.3f} ms, {} rounds, {} dispatches, {} CEs ({:.1f} per dispatch)\n", st.policy,
                 st.wall_ms, st.rounds, st.dispatches, st.ces, st.mean_ces_per_dispatch());
      fmt::print("aggregator {:.3f} ms, device {:.3f} ms, device idle on the aggregator {:.1f}%\n", st.aggregator_ms,
                 st.device_ms, 100 * st.device_idle_on_aggregator);
      for (const auto& [name, ces] : st.ces_per_channel) fmt::print("  channel {}: {} CEs\n", name, ces);
      if (!trace_path.empty()) fmt::print("wrote {}\n", trace_path);
      return r.value == expected ? 0 : 1;
    }
  } catch (const OpenCLError& e) {
    fmt::print(stderr, "chanflow: OpenCL error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "chanflow: {}\n", e.what());
    return 1;
  }
  return 0;
}
