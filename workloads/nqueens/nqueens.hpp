// N-queens on bitmasks (GTaP's formulation): the Cilk source (nqueens.c), its channel-flow
// lowering (nqueens.cl) and its oneTBB versions; workload `nqueens` beside the array-board `queens`.
#pragma once

#include "common/workload.hpp"

#include <chanflow/cilk_runtime.hpp>

#include <cstdint>

namespace chanflow::workloads {

inline constexpr std::uint32_t kNQueensMax = 18;  // NQUEENS_MAX (nqueens_serial.h)
/// nqueens.c's NQUEENS_SPAWN_ROWS: GTaP's cut-off depth, the rows that spawn.
inline constexpr std::uint32_t kNQueensSpawnRows = 7;
/// Rows that spawn in nqueens_tbb_cutoff (as queens' kQueensTbbTaskRows: ~n³/2 tasks).
inline constexpr std::uint32_t kNQueensTbbTaskRows = 3;

struct NQueensFrame {
  chanflow_task task;
  std::uint32_t n, row, cols, left, right, pad;
};

struct NQueensCont {
  chanflow_frame frame;
  std::uint64_t count[kNQueensMax];
  std::uint32_t n, pad;
};

struct NQueensResult {
  std::uint64_t value = 0;
  RunStats stats;
};

/// The graph of nqueens.cl for an n×n board, built once; run() counts the solutions as often as
/// asked (the rows from `spawn_rows` down serially in each work-item).
class NQueensCilk {
 public:
  NQueensCilk(const Runtime& runtime, std::uint32_t n, const RunSettings& options = {},
              std::uint32_t spawn_rows = kNQueensSpawnRows);
  NQueensResult run(SchedulingPolicy& policy, const RunOptions& run_options = {});
  Graph& graph() noexcept { return graph_; }
  /// run()'s parts, for a run that drives the graph itself (across devices, say): the root task
  /// (the empty board) placed, and the count once the run has ended.
  void seed();
  std::uint64_t result() const;

 private:
  const Runtime& runtime_;
  std::uint32_t n_;
  RunSettings settings_;
  Graph graph_;
  ChannelStackNode& tasks_;
  SvmBuffer result_;
};

/// oneTBB task_group, a task per open column in the rows nqueens.c spawns in.
std::uint64_t nqueens_tbb_fine(std::uint32_t n);
/// The same for the first kNQueensTbbTaskRows rows; below them nqueens.c's serial completion.
std::uint64_t nqueens_tbb_cutoff(std::uint32_t n);
/// nqueens.c compiled by chanflowc (its generated graph), run on `runtime`.
NQueensResult nqueens_compiled(const Runtime& runtime, std::uint32_t n, const RunSettings& settings);

}  // namespace chanflow::workloads

extern "C" {  // nqueens.c's serial elision
int nqueens_solutions(int n);
int nqueens(int n, int row, unsigned cols, unsigned left, unsigned right);
unsigned nqueens_open(int n, unsigned cols, unsigned left, unsigned right);
int nqueens_complete(int n, int row, unsigned cols, unsigned left, unsigned right);
}
