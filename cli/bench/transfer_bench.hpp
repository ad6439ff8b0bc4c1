// `chanflow bench transfers`: what moving data between the host and a device costs, the path
// every byte a run across devices moves takes (each device has a context of its own, so data
// between two devices is staged through the host). Per size: host memory that is pageable (a
// std::vector), pinned by the same context, or pinned by another context of the same device (as
// a staging buffer shared by several devices' contexts is for all but one); to the device, to the
// host, and both at once (two queues); and the time of one small copy.
#pragma once

#include "chanflow/opencl.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace chanflow::bench {

struct TransferBenchOptions {
  std::vector<std::uint32_t> mib = {1, 64, 512};  ///< copy sizes (MiB)
  unsigned reps = 5;
};

/// Prints a table to `table` and returns the JSON rows; every copy's bytes are checked once per
/// size and kind of memory (a row is wrong if any byte came back changed).
nlohmann::json run_transfer_bench(const Runtime& runtime, const TransferBenchOptions& options, std::FILE* table);

}  // namespace chanflow::bench
