// N-queens: the Cilk source (queens.c), its channel-flow lowering and its oneTBB versions.
#pragma once

#include "common/workload.hpp"

#include <chanflow/cilk_runtime.hpp>

#include <cstdint>

namespace chanflow::workloads {

inline constexpr std::uint32_t kQueensMax = 18;  // QUEENS_MAX (queens_board.h)
/// queens.c's QUEENS_SERIAL_ROWS: the base case counts the last rows serially (workloads/README.md).
inline constexpr std::uint32_t kQueensSerialRows = 6;

/// queens_board.h's board: the column of the queen in each row placed so far.
struct QueensBoard {
  signed char col[kQueensMax];
};

struct QueensFrame {
  chanflow_task task;
  std::uint32_t n, row;
  QueensBoard b;
  char pad[6];
};

struct QueensCont {
  chanflow_frame frame;
  std::uint64_t count[kQueensMax];
  std::uint32_t n, pad;
};

struct QueensResult {
  std::uint64_t value = 0;
  RunStats stats;
};

/// The graph of queens.cl for an n×n board (a task stack and a continuation stack), built once;
/// run() counts the solutions as often as asked, the last `serial_rows` rows serially in each
/// work-item, reusing the graph's channels, levels and kernels.
class QueensCilk {
 public:
  QueensCilk(const Runtime& runtime, std::uint32_t n, const RunSettings& options = {},
             std::uint32_t serial_rows = kQueensSerialRows);
  QueensResult run(SchedulingPolicy& policy, const RunOptions& run_options = {});
  Graph& graph() noexcept { return graph_; }
  /// run()'s parts, for a run that drives the graph itself (across devices, say): the root task
  /// (the empty board) placed, and the count once the run has ended.
  void seed();
  std::uint64_t result() const;

 private:
  const Runtime& runtime_;
  std::uint32_t n_;
  RunSettings settings_;  ///< as given, the device filling in what was left to it
  Graph graph_;
  ChannelStackNode& tasks_;
  SvmBuffer result_;
};

/// Builds the graph of queens.cl and counts the solutions of the n×n board once.
QueensResult queens_cilk(const Runtime& runtime, std::uint32_t n, SchedulingPolicy& policy,
                         const RunSettings& options = {}, const RunOptions& run_options = {},
                         std::uint32_t serial_rows = kQueensSerialRows);

/// oneTBB task_group, a task per safe column (queens.c's granularity, its base case included).
std::uint64_t queens_tbb_fine(std::uint32_t n);
/// The same for the first kQueensTbbTaskRows rows; below them queens.c's serial elision.
std::uint64_t queens_tbb_cutoff(std::uint32_t n);
/// Rows that spawn in queens_tbb_cutoff: 3 rows make about n³/2 (~1,000 at n = 13) tasks of
/// a few hundred µs each: enough to balance any CPU's cores, few enough that spawning is noise.
inline constexpr std::uint32_t kQueensTbbTaskRows = 3;

/// queens.c compiled by chanflowc (the generated graph of queens_compiled.cpp), run on `runtime`.
QueensResult queens_compiled(const Runtime& runtime, std::uint32_t n, const RunSettings& settings);

/// Solutions of the n×n board (OEIS A000170) for n = 1..18: checks the serial elision.
std::uint64_t queens_known(std::uint32_t n);

}  // namespace chanflow::workloads

extern "C" {  // queens.c's serial elision
int queens_solutions(int n);
int queens(int n, int row, chanflow::workloads::QueensBoard b);
int queens_safe(const chanflow::workloads::QueensBoard* b, int row, int col);
int queens_complete(int n, int row, chanflow::workloads::QueensBoard b);
}
