// `chanflow bench channels`: channel CE throughput against the per-work-item baseline and TBB.
#pragma once

#include "chanflow/opencl.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace chanflow::bench {

struct ChannelBenchOptions {
  std::uint32_t ces = 1u << 20;  ///< CEs produced and consumed per repetition
  unsigned reps = 5;
  std::vector<std::uint32_t> wg_sizes = {32, 64, 128, 256};
  std::vector<std::uint32_t> ce_bytes = {4, 16, 64};
};

/// Runs every variant, prints a table to `table` and returns the JSON result rows.
/// Lost and duplicated CEs are counted in every row (and make the command exit non-zero).
nlohmann::json run_channel_bench(const Runtime& runtime, const ChannelBenchOptions& options,
                                 std::FILE* table);

}  // namespace chanflow::bench
