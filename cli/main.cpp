// The `chanflow` command line: list devices, run and benchmark the workloads, the runtime's
// microbenchmarks, the soaks.
#include "bench/chain_bench.hpp"
#include "bench/channel_bench.hpp"
#include "bench/launch_bench.hpp"
#include "bench/transfer_bench.hpp"
#ifdef CHANFLOW_WITH_RANKS
#include "bench/message_bench.hpp"
#endif
#include "bench/workload_bench.hpp"
#include "bench/yield_bench.hpp"
#include "soak/soak.hpp"
#include "chanflow/channel.hpp"
#include "common/bench_common.hpp"
#include "run_cilk_file.hpp"
#include "run_command.hpp"
#include "flag_checks.hpp"
#include "run_flags.hpp"
#include "chanflow/device_set.hpp"
#include "chanflow/opencl.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <string_view>
#include <cstdio>
#include <filesystem>
#include <fstream>

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
    fmt::print("    double precision:    {}\n", yes_no(d.fp64));
    fmt::print("    float atomic add:    float {}, double {}\n",
               d.fp32_atomic_add ? "native (cl_ext_float_atomics)" : "compare-and-swap loop",
               d.fp64_atomic_add ? "native (cl_ext_float_atomics)" : d.fp64 ? "compare-and-swap loop" : "none");
    fmt::print("    sub-groups:          {}\n", yes_no(d.subgroups));
    fmt::print("    work-group scan:     advertised {}, builds under CL2.0 {}\n", yes_no(d.work_group_collectives),
               yes_no(d.work_group_scan_builds));
    fmt::print("    order across groups: {}\n", to_string(device_order(d)));
    const auto missing = d.missing_requirements();
    fmt::print("    usable by chanflow:  {}\n",
               missing.empty() ? std::string("yes") : "no (lacks " + fmt::format("{}", fmt::join(missing, ", ")) + ")");
    const auto across = multi_device_missing(d);
    fmt::print("    across devices:      {}\n",
               across.empty() ? std::string("yes") : "no (lacks " + fmt::format("{}", fmt::join(across, ", ")) + ")");
  }
  // Which devices one run may span (--devices), platform by platform.
  const auto groups = device_groups(devices);
  if (!groups.empty()) fmt::print("\ndevices that can run together (--devices; all: the first GPU platform's, else PoCL's):\n");
  for (const auto& g : groups) fmt::print("    {}: {}\n", g.platform, fmt::join(g.indices, ", "));
  if (const auto hint = unregistered_driver_hint(devices)) fmt::print("\n{}\n", *hint);
  return 0;
}

// A file is written whole or not at all: beside, then renamed over `path` (a run killed while
// writing leaves the last complete file); anything else (/dev/stdout) directly.
void write_json(const std::string& path, const nlohmann::json& j) {
  namespace fs = std::filesystem;
  const bool direct = fs::exists(path) && !fs::is_regular_file(path);
  const std::string target = direct ? path : path + ".writing";
  {
    std::ofstream out(target);
    if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", target));
    out << j.dump(2) << '\n';
    if (!out) throw std::runtime_error(fmt::format("error writing '{}'", target));
  }
  if (!direct) fs::rename(target, path);
}

// A benchmark's exit status: 1 if any row was wrong or could not run (the table says which).
int bench_status(const nlohmann::json& rows) {
  unsigned wrong = 0, failed = 0;
  for (const auto& r : rows)
    if (!r["correct"].get<bool>()) ++(r.contains("error") ? failed : wrong);
  if (failed)
    fmt::print(stderr, "error: {} run(s) failed before a result (the table says 'failed', the error is above)\n", failed);
  if (wrong) fmt::print(stderr, "error: a result was wrong, lost or duplicated (see the table)\n");
  return failed || wrong ? 1 : 0;
}

constexpr const char* kCommands[] = {"devices", "run", "bench", "soak"};

// The command a line names: its first word that is neither an option nor --device's value.
std::optional<std::string> command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--device") ++i;
    else if (!a.starts_with("-")) return std::string(a);
  }
  return std::nullopt;
}

// An unknown or missing command, said before CLI11 answers "A subcommand is required".
std::optional<int> refuse_command(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h") return std::nullopt;
  const auto word = command_word(argc, argv);
  const std::string commands = "devices, run, bench or soak (chanflow --help says what each does)";
  if (!word) {
    fmt::print(stderr, "chanflow: a command is required: {}\n", commands);
    return 2;
  }
  if (std::find(std::begin(kCommands), std::end(kCommands), *word) != std::end(kCommands)) return std::nullopt;
  fmt::print(stderr, "chanflow: unknown command '{}'; the commands are {}\n", *word, commands);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (workloads::is_cilk_file_run(argc, argv)) return workloads::run_cilk_file(argc, argv);
  if (const auto refused = refuse_command(argc, argv)) return *refused;
  CLI::App app{"chanflow: fine-grain task parallelism through channels on OpenCL devices"};
  app.require_subcommand(1);
  std::string device;
  app.add_option("--device", device,
                 "OpenCL device: index from `chanflow devices` or a name substring "
                 "(default: $CHANFLOW_DEVICE, else PoCL's CPU device); before or after the subcommand");
  app.fallthrough();  // subcommands (made below, inheriting it) pass --device up to here

  auto* devices_cmd = app.add_subcommand("devices", "list every OpenCL device and its capabilities");
  std::string json_path;

  auto* bench_cmd = app.add_subcommand(
      "bench", "the workloads against serial and oneTBB (each result checked before it is timed), or a "
               "microbenchmark of the runtime");
  bench_cmd->require_subcommand(0, 1);
  bench::WorkloadBenchOptions workload_bench;
  std::string plot_path;
  std::optional<std::uint64_t> seed;
  std::vector<std::string> workload_names;
  for (const auto* w : workloads::all_workloads()) workload_names.emplace_back(w->name());
  bench_cmd->add_option("--workloads", workload_bench.workloads,
                        fmt::format("comma-separated, of: {} (default: all)", fmt::join(workload_names, ", ")))
      ->delimiter(',');
  bench_cmd->add_option("--sizes", workload_bench.sizes,
                        "default (thesis Table 4-3), scaling (larger sizes too, to see how cost grows) or gpu (sizes "
                        "that fill a GPU, against tbb-cutoff and the GPU libraries), or sizes of your own for every "
                        "workload chosen (comma-separated: --workloads strassen --sizes 1024,2048)")
      ->capture_default_str();
  bench_cmd->add_option("--impls", workload_bench.impls, "implementations to run, comma-separated (default: all; for "
                        "--sizes gpu: tbb-cutoff (fib: tbb-fine too), chanflow's graphs, hand-built and compiled, "
                        "and the GPU libraries)")
      ->delimiter(',');
  bench_cmd->add_option("--reps", workload_bench.reps, "timed repetitions per implementation")
      ->capture_default_str()->check(cli::at_least_one());
  bench_cmd->add_option("--device-counts", workload_bench.device_counts,
                        "with --devices: how many of its devices each run across devices takes, comma-separated "
                        "(default: 1, 2, 4, ... and all); each beside the run on one device")
      ->delimiter(',');
  bench_cmd->add_option("--json", json_path, "also write the results as JSON to this file");
  bench_cmd->add_option("--plot", plot_path, "draw time against size into this PNG (python3-matplotlib)");
  bench_cmd->add_option("--seed", seed, "seed for the inputs (default: a fresh one, printed)");
  auto* bench_channels = bench_cmd->add_subcommand("channels", "CE throughput: leader-level vs per-work-item vs TBB queue");
  bench::ChannelBenchOptions channel_opts;
  bench_channels->add_option("--json", json_path, "also write the results as JSON to this file");
  bench_channels->add_option("--ces", channel_opts.ces, "CEs per repetition (multiple of 64)")->capture_default_str();
  bench_channels->add_option("--reps", channel_opts.reps, "timed repetitions")->capture_default_str()->check(cli::at_least_one());
  bench_channels->add_option("--wg", channel_opts.wg_sizes, "work-group sizes, comma-separated")->delimiter(',')->capture_default_str();
  bench_channels->add_option("--ce-bytes", channel_opts.ce_bytes, "CE sizes in bytes, comma-separated")->delimiter(',')->capture_default_str();

  auto* bench_yield = bench_cmd->add_subcommand("yield", "Cilk Fibonacci across per-level capacities (bounded memory)");
  bench::YieldBenchOptions yield_opts;
  bench_yield->add_option("--json", json_path, "also write the results as JSON to this file");
  bench_yield->add_option("--sizes", yield_opts.sizes, "n for the capacity sweep")->delimiter(',')->capture_default_str();
  bench_yield->add_option("--groups", yield_opts.groups, "capacities per level, in work-groups' requests")
      ->delimiter(',')->capture_default_str();
  bench_yield->add_option("--memory-sizes", yield_opts.memory_sizes, "n for the memory table")
      ->delimiter(',')->capture_default_str();
  bench_yield->add_option("--reps", yield_opts.reps, "timed repetitions")->capture_default_str()->check(cli::at_least_one());
  bench_yield->add_option("--wg", yield_opts.wg_size, "work-group size")->capture_default_str();
  bench_yield->add_option("--dispatch", yield_opts.dispatch,
                          "how bounded runs dispatch: claimed or planned device sweeps, host-sized ranges (host), "
                          "all three (claimed where the device orders stores at device scope), or auto (the device's default)")
      ->check(CLI::IsMember({"auto", "claimed", "planned", "host", "all"}))->capture_default_str();

  auto* bench_launch = bench_cmd->add_subcommand(
      "launch", "what a kernel launch costs against the SVM pointers named in its exec info");
  bench::LaunchBenchOptions launch_opts;
  bench_launch->add_option("--json", json_path, "also write the results as JSON to this file");
  bench_launch->add_option("--svm-pointers", launch_opts.svm_pointers, "exec-info list lengths, comma-separated")
      ->delimiter(',')->capture_default_str();
  bench_launch->add_option("--launches", launch_opts.launches, "launches per repetition")
      ->capture_default_str()->check(cli::at_least_one());
  bench_launch->add_option("--reps", launch_opts.reps, "timed repetitions")->capture_default_str()->check(cli::at_least_one());
  bench_launch->add_option("--alloc-mib", launch_opts.alloc_mib, "SVM allocation sizes (MiB) for the memory table, comma-separated")
      ->delimiter(',')->capture_default_str();
  bench_launch->add_option("--copy-bytes", launch_opts.copy_bytes,
                           "sizes (bytes) of the SVM pieces the copy table reads back, comma-separated")
      ->delimiter(',')->capture_default_str();
  bench_launch->add_option("--copy-pieces", launch_opts.copy_pieces, "pieces the copy table reads back")
      ->capture_default_str()->check(cli::at_least_one());

  auto* bench_transfers = bench_cmd->add_subcommand(
      "transfers", "copies between the host and the device: pageable or pinned host memory, each way and both at once");
  bench::TransferBenchOptions transfer_opts;
  bench_transfers->add_option("--json", json_path, "also write the results as JSON to this file");
  bench_transfers->add_option("--mib", transfer_opts.mib, "copy sizes (MiB), comma-separated")
      ->delimiter(',')->capture_default_str()->check(CLI::Range(1u, 16384u));
  bench_transfers->add_option("--reps", transfer_opts.reps, "timed repetitions")->capture_default_str()->check(cli::at_least_one());

#ifdef CHANFLOW_WITH_RANKS
  auto* bench_messages = bench_cmd->add_subcommand(
      "messages", "under mpirun -np 2: the transport between ranks, small messages packed into batches, against MPI's own "
                  "rate for the batches' size and for one message per CE");
  bench::MessageBenchOptions message_opts;
  bench_messages->add_option("--json", json_path, "also write the results as JSON to this file (rank 0)");
  bench_messages->add_option("--ce-bytes", message_opts.ce_bytes, "CE sizes (bytes, multiples of 8), comma-separated")
      ->delimiter(',')->capture_default_str()->check(CLI::Range(8u, 1u << 16));
  bench_messages->add_option("--chunk", message_opts.chunk, "CEs the producing kernel makes a launch")
      ->capture_default_str()->check(CLI::Range(64u, 1u << 24));
  bench_messages->add_option("--batch-kib", message_opts.batch_kib, "the transport's batch sizes (KiB), comma-separated")
      ->delimiter(',')->capture_default_str()->check(CLI::Range(1u, 1u << 16));
  bench_messages->add_option("--mib", message_opts.total_mib, "MiB each row moves")->capture_default_str()->check(cli::at_least_one());
  bench_messages->add_option("--per-send", message_opts.per_send,
                             "messages handed to the transport at once (1: a call per message)")
      ->capture_default_str()->check(cli::at_least_one());
  bench_messages->add_option("--window", message_opts.window, "MPI sends in flight for the MPI rows")
      ->capture_default_str()->check(cli::at_least_one());
  bench_messages->add_option("--reps", message_opts.reps, "timed repetitions (the median is reported)")
      ->capture_default_str()->check(cli::at_least_one());
#endif

  auto* bench_chain = bench_cmd->add_subcommand(
      "chain", "what a level costs when each level's tasks are made by the level before: chains of tasks, per width and scheduler");
  bench::ChainBenchOptions chain_opts;
  bench_chain->add_option("--json", json_path, "also write the results as JSON to this file");
  bench_chain->add_option("--widths", chain_opts.widths, "chains at once (CEs a level), comma-separated")
      ->delimiter(',')->capture_default_str()->check(CLI::Range(1u, 1u << 24));
  bench_chain->add_option("--depths", chain_opts.depths,
                          "levels per run, comma-separated: a level's time is the slope between the least and the most")
      ->delimiter(',')->capture_default_str()->check(CLI::Range(1u, 1u << 24));
  bench_chain->add_option("--schedulers", chain_opts.schedulers, "rounds, device or both, comma-separated")
      ->delimiter(',')->capture_default_str()->check(CLI::IsMember({"rounds", "device"}));
  bench_chain->add_option("--reps", chain_opts.reps, "timed repetitions")->capture_default_str()->check(cli::at_least_one());
  bench_chain->add_option("--wg", chain_opts.wg_size, "work-group size (0: the device's)")->capture_default_str();
  bench_chain->add_option("--capacity", chain_opts.capacity,
                          "CEs the channel holds (0: four levels' worth, at least 65536)")->capture_default_str();
  bench_chain->add_option("--trace", chain_opts.trace,
                          "write the timeline of the last run at the greatest depth to TRACE-<scheduler>-<width>.json");

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
  soak_graphs->add_option_function<std::string>(
         "--scheduler", [&graph_soak](const std::string& where) { graph_soak.scheduler = scheduler_from_string(where); },
         "every configuration's scheduler: device, rounds or auto (the default; CHANFLOW_SCHEDULER decides for it)")
      ->check(CLI::IsMember({"auto", "device", "rounds"}));
  soak_graphs->add_option("--json", json_path, "also write the results as JSON to this file");
  auto* soak_compiled =
      soak_cmd->add_subcommand("compiled", "Cilk programs compiled with chanflowc against their serial elisions, under "
                                           "random capacities, work-group sizes, policies and dispatch modes");
  soak::CompiledSoakOptions compiled_soak;
  soak_compiled->add_option("programs", compiled_soak.manifest,
                            "the program list: a line per program, its path (relative to the list) and its arguments")
      ->required();
  soak_compiled->add_option("--configs", compiled_soak.configs, "runs in all")->capture_default_str();
  soak_compiled->add_option("--seed", compiled_soak.seed, "seed for the configurations")->capture_default_str();
  soak_compiled->add_option("--first", compiled_soak.first, "index of the first configuration")->capture_default_str();
  soak_compiled->add_option("--timeout", compiled_soak.timeout_s, "seconds one run may take before it counts as a hang")
      ->capture_default_str();
  soak_compiled->add_option("--most-devices", compiled_soak.most_devices,
                            "a quarter of the runs go across 2 to this many devices (CHANFLOW_DEVICES=0-K; PoCL "
                            "makes them with POCL_DEVICES); 1: none")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  soak_compiled->add_option("--scheduler", compiled_soak.scheduler,
                            "every run's scheduler: device, rounds or auto (the default: rounds on CPU devices)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "device", "rounds"}));
  soak_compiled->add_option("--json", json_path, "also write the results as JSON to this file");

  auto* run_cmd = app.add_subcommand("run", "run a workload and check it against its serial reference (chanflow run "
                                            "WORKLOAD SIZE), or a Cilk program (chanflow run FILE.c -- ARGS)");
  workloads::RunRequest run;
  run_cmd->add_option("workload", run.workload, fmt::format("{}", fmt::join(workload_names, ", ")))->required();
  // The other form, a Cilk program's files, is parsed apart (run_cilk_file.cpp); its help is shown here too.
  run_cmd->footer([] { return "\nThe other form of run: a Cilk program, compiled by chanflowc (cached) and run\n" +
                              workloads::cilk_file_help(); });
  std::int64_t run_size = 0;  // signed, so that a negative size is refused, not wrapped
  run_cmd->add_option("size", run_size, "the workload's size (fib: n; queens: board size)")->required();
  std::string impls_by_workload;
  for (const auto* w : workloads::all_workloads())
    impls_by_workload += fmt::format("; {}: {}", w->name(), fmt::join(w->impls(), ", "));
  run_cmd->add_option("--impl", run.impl, "which implementation (serial is the reference; tbb-fine and tbb-cutoff "
                                          "oneTBB's; chanflow... chanflow's graphs)" + impls_by_workload)
      ->capture_default_str();
  run_cmd->add_option("--seed", seed, "seed for the inputs (default: a fresh one, printed)");
  run_cmd->add_option("--trace", run.settings.trace_path,
                      "write a Chrome-trace JSON of the dispatches (open in Perfetto); with --devices, one per device "
                      "(t.json: t.device0.json, t.device1.json, ...)");
  run_cmd->add_option("--reps", run.reps, "runs of the same inputs: the first builds chanflow's graph, later ones reuse it")
      ->capture_default_str()->check(cli::at_least_one());
  // How chanflow runs: the same flags for `run` and `bench` (and `run FILE.c`).
  cli::add_run_flags(*run_cmd, run.settings);
  cli::add_run_flags(*bench_cmd, workload_bench.settings);

  CLI11_PARSE(app, argc, argv);

  try {
    if (*devices_cmd) return list_devices_command();
    // The benchmarks' sizes are checked as the runs' are, before anything starts.
    if (*bench_yield)
      for (const auto* list : {&yield_opts.sizes, &yield_opts.memory_sizes})
        for (std::uint32_t n : *list) workloads::find_workload("fib").check_size(n, {}, {});
#ifdef CHANFLOW_WITH_RANKS
    if (*bench_messages) {
      const Runtime rt(DeviceSelection{device, /*profiling=*/false});
      const auto rows = bench::run_message_bench(rt, message_opts, stdout);
      if (!json_path.empty() && !rows.empty()) {
        write_json(json_path, {{"machine", bench::machine_info()}, {"benchmark", "messages"}, {"results", rows}});
        fmt::print("wrote {}\n", json_path);
      }
      return bench_status(rows);
    }
#endif
    if (*bench_channels || *bench_yield || *bench_launch || *bench_transfers || *bench_chain) {
      const Runtime rt(DeviceSelection{device, /*profiling=*/*bench_chain && !chain_opts.trace.empty()});
      const char* name = *bench_channels ? "channels"
                         : *bench_yield  ? "yield"
                         : *bench_launch ? "launch"
                         : *bench_chain  ? "chain"
                                         : "transfers";
      auto rows = *bench_channels    ? bench::run_channel_bench(rt, channel_opts, stdout)
                  : *bench_yield     ? bench::run_yield_bench(rt, yield_opts, stdout)
                  : *bench_chain     ? bench::run_chain_bench(rt, chain_opts, stdout)
                  : *bench_transfers ? bench::run_transfer_bench(rt, transfer_opts, stdout)
                                     : bench::run_launch_bench(rt, launch_opts, stdout);
      if (*bench_launch) {
        for (auto& row : bench::run_memory_bench(rt, launch_opts, stdout)) rows.push_back(std::move(row));
        for (auto& row : bench::run_copy_bench(rt, launch_opts, stdout)) rows.push_back(std::move(row));
      }
      if (!json_path.empty()) {
        write_json(json_path, {{"machine", bench::machine_info()}, {"device", rt.caps().name},
                               {"benchmark", name}, {"results", rows}});
        fmt::print("wrote {}\n", json_path);
      }
      return bench_status(rows);
    }
    if (*soak_compiled) {
      const auto result = soak::run_compiled_soak(compiled_soak, stdout);
      if (!json_path.empty()) {
        write_json(json_path, {{"machine", bench::machine_info()}, {"soak", "compiled"}, {"result", result}});
        fmt::print("wrote {}\n", json_path);
      }
      return result["totals"]["failed"] == 0 ? 0 : 1;
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
    if (*run_cmd) {
      if (run_size < 0)
        throw std::invalid_argument(fmt::format("{} {}: a size cannot be negative", run.workload, run_size));
      run.size = static_cast<std::uint64_t>(run_size);
      run.seed = seed ? *seed : workloads::fresh_seed();
      run.device = device;
      return workloads::run_workload(run, stdout);
    }
    if (*bench_cmd) {
      workload_bench.seed = seed ? *seed : workloads::fresh_seed();
      // Across devices: the one-device rows run on the first device named.
      if (const std::string& spec = workload_bench.settings.devices; !spec.empty()) {
        if (!device.empty())
          throw std::invalid_argument("--device and --devices both given: --devices names every device of the bench");
        device = std::to_string(choose_devices(spec, list_devices()).front().index);
      }
      const Runtime rt(DeviceSelection{device, /*profiling=*/false});
      const std::string path = json_path.empty() && !plot_path.empty() ? plot_path + ".json" : json_path;
      const nlohmann::json machine = bench::machine_info();
      auto document = [&](const nlohmann::json& rows) {
        return nlohmann::json{{"machine", machine}, {"device", rt.caps().name}, {"benchmark", "workloads"},
                              {"sizes", workload_bench.sizes}, {"seed", workload_bench.seed}, {"results", rows}};
      };
      if (!path.empty())  // rewritten after every row: a run cut short keeps its rows ("partial": true)
        workload_bench.on_row = [&](const nlohmann::json& rows) {
          auto d = document(rows);
          d["partial"] = true;
          write_json(path, d);
        };
      const auto rows = bench::run_workload_bench(rt, workload_bench, stdout);
      if (!path.empty()) {
        write_json(path, document(rows));
        fmt::print("wrote {}\n", path);
        if (!plot_path.empty()) {
          bench::plot_bench(path, plot_path);
          fmt::print("wrote {}\n", plot_path);
        }
      }
      return bench_status(rows);
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
