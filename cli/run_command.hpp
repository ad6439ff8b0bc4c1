// `chanflow run <workload> <size>`: one implementation of one workload, checked, with its time
// and (for chanflow) the run's statistics.
#pragma once

#include "common/workload.hpp"

#include <cstdint>
#include <cstdio>
#include <string>

namespace chanflow::workloads {

struct RunRequest {
  std::string workload;
  std::uint64_t size = 0;
  std::string impl = "chanflow";
  RunSettings settings;
  std::uint64_t seed = 0;
  std::string device;  ///< DeviceSelection::spec
  /// Runs of the same instance: the first builds chanflow's graph, later ones reuse it (each
  /// checked and its time printed; the statistics are the last run's).
  unsigned reps = 1;
};

/// Checks the size, runs, prints to `out`; returns the exit status (1 if the result was wrong).
int run_workload(const RunRequest& request, std::FILE* out);

/// A seed for fresh inputs when the user gives none (printed, so a run can be repeated).
std::uint64_t fresh_seed();

}  // namespace chanflow::workloads
