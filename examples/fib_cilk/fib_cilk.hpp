// Cilk Fibonacci on levelized channel stacks with wavefront-yield emulation (thesis 4.3-4.4).
#pragma once

#include "chanflow/chanflow.hpp"

#include <cstdint>

namespace chanflow::examples {

struct FibFrame {
  chanflow_task task;
  std::uint32_t n;
  std::uint32_t pad;
};

struct FibCont {
  chanflow_frame frame;
  std::uint64_t x, y;
};

struct FibCilkOptions {
  std::uint32_t capacity_per_level = 1u << 16;  ///< per level, for both stacks
  std::uint32_t wg_size = 64;
  /// Create every level the run can reach (fib(n) recurses n - 2 deep) before it starts, so a
  /// timed run does not pay for allocating levels; otherwise levels grow on demand.
  bool preallocate_levels = false;
  Sweeps device_sweeps = Sweeps::Auto;  ///< GraphOptions::device_sweeps
  std::uint32_t sweep_groups = 0;  ///< GraphOptions::sweep_groups
  bool sweep_room_check = true;    ///< GraphOptions::sweep_room_check
};

struct FibCilkResult {
  std::uint64_t value = 0;
  RunStats stats;
};

/// Builds the Figure 4-10 graph (a task stack and a continuation stack) and runs fib(n).
FibCilkResult fib_cilk(const Runtime& runtime, std::uint32_t n, SchedulingPolicy& policy,
                       const FibCilkOptions& options = {}, const RunOptions& run_options = {});

}  // namespace chanflow::examples
