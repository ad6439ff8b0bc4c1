// `chanflow bench yield`: Cilk Fibonacci across per-level capacities (thesis Figure 4-16).
#pragma once

#include "chanflow/opencl.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace chanflow::bench {

struct YieldBenchOptions {
  std::vector<std::uint32_t> sizes = {24, 30};
  std::vector<std::uint32_t> groups = {1, 4, 16, 64, 256};  ///< capacity per level, in work-groups' requests
  std::vector<std::uint32_t> memory_sizes = {20, 25, 30, 32};
  unsigned reps = 3;
  std::uint32_t wg_size = 64;
  /// How bounded runs dispatch: "claimed" or "planned" device sweeps, "host" (host-sized
  /// dispatches of each level), "all" (claimed only on CPU devices), or "auto" (what
  /// GraphOptions::device_sweeps = Auto picks for the device).
  std::string dispatch = "auto";
};

/// Prints the tables to `table` and returns the JSON result rows; every result is checked.
nlohmann::json run_yield_bench(const Runtime& runtime, const YieldBenchOptions& options, std::FILE* table);

}  // namespace chanflow::bench
