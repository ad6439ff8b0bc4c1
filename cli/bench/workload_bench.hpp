// `chanflow bench`: every workload × size × implementation, medians of several repetitions, each
// run checked; a table with chanflow's ratios to the baselines, JSON, and a chart.
#pragma once

#include "common/workload.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace chanflow::bench {

struct WorkloadBenchOptions {
  std::vector<std::string> workloads;  ///< empty: all
  std::string sizes = "default";       ///< "default" (thesis Table 4-3), "scaling" or "gpu"
  unsigned reps = 5;                   ///< timed repetitions per implementation (after a checked warm-up)
  std::uint64_t seed = 0;              ///< inputs are drawn from it
  RunSettings settings;
  /// Implementations to run (those a workload lacks are skipped); empty: every one, or for the
  /// gpu sizes each workload's gpu_impls().
  std::vector<std::string> impls;
  /// With RunSettings::devices (a device set's spec): how many of those devices each run across
  /// devices takes, the first so many; empty: 1, 2, 4, ... and all of them.
  std::vector<unsigned> device_counts;
  /// Called with every row so far after each row is measured (the command rewrites its JSON then,
  /// so a run cut short, by a time limit say, keeps what it measured).
  std::function<void(const nlohmann::json& rows)> on_row;
};

/// Runs the benchmark, prints the tables to `table` and progress to stderr; returns one JSON row
/// per workload × size × implementation, and with RunSettings::devices, for each implementation
/// that runs across devices, a row more per device count (its `devices` field: how many).
nlohmann::json run_workload_bench(const Runtime& rt, const WorkloadBenchOptions& options, std::FILE* table);

/// Draws median time against size per workload and implementation (log axes) from a benchmark
/// JSON file into a PNG, with python3-matplotlib; throws with what is missing if it cannot.
void plot_bench(const std::string& json_path, const std::string& png_path);

}  // namespace chanflow::bench
