// `chanflow bench graph`: the naive Fibonacci flow graph against oneTBB (one task per call, and
// with a sequential cutoff) and serial recursion.
#pragma once

#include "chanflow/opencl.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>

namespace chanflow::bench {

struct GraphBenchOptions {
  std::uint32_t from = 20;
  std::uint32_t to = 30;
  unsigned reps = 5;
  std::uint32_t wg_size = 64;
};

/// Runs every size and implementation, prints a table to `table`, returns the result rows.
/// Every result is checked against the serial reference; a wrong one is reported, never timed.
nlohmann::json run_graph_bench(const Runtime& runtime, const GraphBenchOptions& options, std::FILE* table);

}  // namespace chanflow::bench
