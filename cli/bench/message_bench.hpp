// `chanflow bench messages`, under mpirun with two ranks or more: CEs from a kernel on rank 0 to a
// kernel on rank 1 through a channel whose consumer is the other rank (ranks/remote_channel.hpp),
// and the transport alone carrying the same CEs from the host (a work-group's worth a call),
// against Open MPI's own rate for the same bytes in messages of the batch size and in one message
// per CE, measured in the same run. Every CE is checked where it arrives (each number once, every
// word right).
#pragma once

#include "chanflow/opencl.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace chanflow::bench {

struct MessageBenchOptions {
  std::vector<std::uint32_t> ce_bytes = {32, 128};  ///< message sizes (bytes)
  std::uint64_t total_mib = 64;                      ///< bytes each row moves (MiB)
  std::vector<std::uint32_t> batch_kib = {64};       ///< the transport's batch sizes (KiB)
  std::uint32_t per_send = 256;  ///< the transport alone: messages handed over at once (a work-group's CEs)
  std::uint32_t chunk = 65536;   ///< through channels: CEs the producing kernel makes a launch
  std::uint32_t window = 64;                         ///< MPI sends in flight for the MPI rows
  unsigned reps = 3;
};

/// Every rank of the job calls it; rank 0 prints the table to `table` and returns the rows (others
/// return none). Throws RankError outside an MPI job of two ranks or more.
nlohmann::json run_message_bench(const Runtime& rt, const MessageBenchOptions& options, std::FILE* table);

}  // namespace chanflow::bench
