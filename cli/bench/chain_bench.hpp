// `chanflow bench chain`: what a level costs when each level's tasks are made only by the level
// before: chains of tasks, `width` at once, under each scheduler the device holds.
#pragma once

#include "chanflow/opencl.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace chanflow::bench {

struct ChainBenchOptions {
  std::vector<std::uint32_t> widths = {1, 32, 1024, 32768};  ///< chains at once: CEs a level
  /// Levels per run; the time a level adds is the slope between the shortest and the longest.
  std::vector<std::uint32_t> depths = {100, 1000};
  std::vector<std::string> schedulers = {"rounds", "device"};  ///< those the device cannot hold are said and left out
  unsigned reps = 5;
  std::uint32_t wg_size = 0;  ///< 0: the device's
  /// CEs the channel holds; 0: four levels' worth, and at least 2^16. A channel that holds a few
  /// levels is freed as the run goes (between rounds, or inside a device-scheduler launch).
  std::uint32_t capacity = 0;
  /// Non-empty: the last run at the greatest depth of each scheduler and width writes its
  /// Chrome-trace timeline (under the device scheduler, every batch on its work-group's row) to
  /// `<trace>-<scheduler>-<width>.json`.
  std::string trace;
};

/// Prints the tables to `table` and returns the JSON result rows; every run's count of tasks is
/// checked before its time is kept.
nlohmann::json run_chain_bench(const Runtime& runtime, const ChainBenchOptions& options, std::FILE* table);

}  // namespace chanflow::bench
