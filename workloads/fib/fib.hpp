// Fibonacci: the Cilk source (fib.c), its channel-flow lowerings and its oneTBB versions.
#pragma once

#include "common/workload.hpp"
#include "fib/fib_types.h"

#include <chanflow/cilk_runtime.hpp>

#include <cstdint>

extern "C" long fib(long n);  // fib.c's serial elision

namespace chanflow::workloads {

/// The thesis' Figure 4-5: one channel, one kernel node feeding it; every base case adds 1 to
/// a 32-bit counter.
struct FibObj {
  std::uint32_t n;
};

struct FibArgs {
  std::uint32_t* result;  // an SVM pointer: __global uint* on the device
};

/// The Cilk lowering (Figures 4-9, 4-10): a task frame and its continuation frame (fib_types.h,
/// which the kernels build too).
using ::FibCont;
using ::FibFrame;

struct FibResult {
  std::uint64_t value = 0;
  RunStats stats;
};

/// Builds the graph of Figure 4-4 and runs fib(n).
FibResult fib_naive(const Runtime& runtime, std::uint32_t n, SchedulingPolicy& policy,
                    const RunOptions& options = {}, std::uint32_t capacity = 1u << 20, std::uint32_t wg_size = 64);

/// The Figure 4-10 graph (a task stack and a continuation stack), built once; run() computes
/// fib(n) on it as often as asked, reusing its channels, levels and kernels (a run no deeper than
/// an earlier one allocates nothing).
class FibCilk {
 public:
  explicit FibCilk(const Runtime& runtime, const RunSettings& options = {});
  FibResult run(std::uint32_t n, SchedulingPolicy& policy, const RunOptions& run_options = {});
  Graph& graph() noexcept { return graph_; }
  /// run()'s parts, for a run that drives the graph itself (across devices, say): the root task
  /// of fib(n) placed, and its result once the run has ended.
  void seed(std::uint32_t n);
  std::uint64_t result() const;

 private:
  const Runtime& runtime_;
  RunSettings settings_;  ///< as given, the device filling in what was left to it
  Graph graph_;
  ChannelStackNode& tasks_;
  ChannelStackNode& conts_;
  SvmBuffer result_;
};

/// Builds the Figure 4-10 graph and runs fib(n) once (FibCilk to run it again).
FibResult fib_cilk(const Runtime& runtime, std::uint32_t n, SchedulingPolicy& policy, const RunSettings& options = {},
                   const RunOptions& run_options = {});

/// fib.c compiled by chanflowc (the generated graph of fib_compiled.cpp), run on `runtime`.
FibResult fib_compiled(const Runtime& runtime, std::uint32_t n, const RunSettings& settings);
/// One call of fib.c's compiled fib on the devices cilk::use named last (across devices:
/// CompiledAcrossDevices), its value.
std::uint64_t fib_compiled_call(std::uint32_t n);

/// oneTBB task_group, a task per call (fib.c's granularity).
std::uint64_t fib_tbb_fine(std::uint32_t n);
/// The same above kFibTbbCutoff; below it fib.c's serial elision.
std::uint64_t fib_tbb_cutoff(std::uint32_t n);
/// Calls at or below this n run serially in fib_tbb_cutoff: fib(20) is ~20,000 calls, about
/// 50 µs on this project's 2-core VM, well above oneTBB's per-task cost (~0.1-1 µs), while
/// fib(24), the default size, still makes hundreds of tasks for 2 cores to share.
inline constexpr std::uint32_t kFibTbbCutoff = 20;

/// fib(n) by iteration: an independent check of the elision.
std::uint64_t fib_serial(std::uint32_t n);

}  // namespace chanflow::workloads
