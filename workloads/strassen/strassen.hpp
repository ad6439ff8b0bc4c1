// Strassen's matrix multiplication: the Cilk source (strassen.c, compiled twice: float and
// double), its channel-flow lowering and its baselines.
#pragma once

#include "common/workload.hpp"
#include "strassen/strassen_types.h"

#include <cstdint>

extern "C" {  // strassen.c's serial elisions (CMake renames each precision's symbols)
void strassen_f32(long n, const float* A, long as, const float* B, long bs, float* C, long cs);
void strassen_base_f32(long n, const float* A, long as, const float* B, long bs, float* C, long cs);
void strassen_add_f32(long n, const float* X, long xs, const float* Y, long ys, float s, float* Z);
void strassen_multiply_f32(long n, const float* A, const float* B, float* C);
void strassen_f64(long n, const double* A, long as, const double* B, long bs, double* C, long cs);
void strassen_base_f64(long n, const double* A, long as, const double* B, long bs, double* C, long cs);
void strassen_add_f64(long n, const double* X, long xs, const double* Y, long ys, double s, double* Z);
void strassen_multiply_f64(long n, const double* A, const double* B, double* C);
}

namespace chanflow::workloads {

/// strassen.c's STRASSEN_BASE: the order multiplied by the definition (workloads/README.md).
inline constexpr std::uint32_t kStrassenBase = 64;
/// Order at or below which strassen_tbb_cutoff runs strassen.c's elision: 128 is ~0.3 ms of
/// work, far above oneTBB's per-task cost; 512 still makes 7 + 49 = 56 tasks.
inline constexpr std::uint64_t kStrassenTbbCutoff = 128;

enum class Precision { F32, F64 };

/// The bound the result is checked against, as a multiple of max|A| max|B|: Higham's worst
/// case for Strassen over base cases of order `base` (Theorem 23.3; strassen_workload.cpp).
double strassen_error_bound(std::uint64_t n, std::uint32_t base, double unit_roundoff);

/// Bytes of scratch the chanflow run allocates for order n (per-level pools of frame scratch,
/// at most `capacity` frames per level), so a size can be refused before it runs.
std::uint64_t strassen_scratch_bytes(std::uint64_t n, Precision precision, std::uint32_t capacity,
                                     std::uint32_t base = kStrassenBase);

/// How the seven products reach the quadrants: added atomically into the parent's product as
/// each completes (the thesis' scheme, impl chanflow), or combined after the sync as strassen.c
/// does (impl chanflow-join).
enum class StrassenCombine { Atomic, Join };

/// The stacks a graph for order n takes (RunSettings::for_device sizes its levels by it).
StackFootprint strassen_footprint(std::uint64_t n);

/// Which products a graph computes (StrassenArgs): of the 7^depth at that depth, [first, last),
/// their contributions added into c (StrassenCombine::Atomic only). The default is the whole.
struct StrassenShare {
  std::uint32_t depth = 0;
  std::uint32_t first = 0;
  std::uint32_t last = 1;
};

/// The graph of strassen.cl for c = a·b with n×n matrices (SVM, row stride n, of float or
/// double as `precision` says), built once; run() multiplies what a and b hold, as often as
/// asked, reusing the graph's channels, levels, scratch pools and kernels.
class StrassenCilk {
 public:
  StrassenCilk(const Runtime& runtime, const SvmBuffer& a, const SvmBuffer& b, const SvmBuffer& c, std::uint64_t n,
               Precision precision, const RunSettings& options = {}, StrassenCombine combine = StrassenCombine::Atomic,
               std::uint32_t base = kStrassenBase, DataTasks data = DataTasks::ForDevice, StrassenShare share = {});
  RunStats run(SchedulingPolicy& policy, const RunOptions& run_options = {});
  Graph& graph() noexcept { return graph_; }

 private:
  Graph graph_;
  ChannelStackNode* tasks_ = nullptr;
};

/// Builds the graph of strassen.cl and computes c = a·b once.
RunStats strassen_cilk(const Runtime& runtime, const SvmBuffer& a, const SvmBuffer& b, const SvmBuffer& c,
                       std::uint64_t n, Precision precision, SchedulingPolicy& policy, const RunSettings& options = {},
                       const RunOptions& run_options = {}, StrassenCombine combine = StrassenCombine::Atomic,
                       std::uint32_t base = kStrassenBase, DataTasks data = DataTasks::ForDevice);

/// strassen.c with REAL float compiled by chanflowc (strassen_compiled.cpp): c = a·b once, on
/// `runtime` with `settings`, whose heap_bytes must hold the temporaries:
/// strassen_compiled_heap_bytes(n) does in the worst case. `capacity_asked`: settings.capacity is
/// the user's, exactly what a level holds; else the hand-built graph's sizing, which a compiled
/// level exceeds where one work-group's request needs more (its loops spawn up to 32 leaves).
RunStats strassen_compiled(const Runtime& runtime, const SvmBuffer& a, const SvmBuffer& b, const SvmBuffer& c,
                           std::uint64_t n, const RunSettings& settings, bool capacity_asked);
std::uint64_t strassen_compiled_heap_bytes(std::uint64_t n);

/// oneTBB task_group, a task per product (strassen.c's recursion, its base cases included).
template <class Real>
void strassen_tbb_fine(std::uint64_t n, const Real* a, const Real* b, Real* c);
/// The same down to kStrassenTbbCutoff, strassen.c's elision below.
template <class Real>
void strassen_tbb_cutoff(std::uint64_t n, const Real* a, const Real* b, Real* c);
/// Serial cache-blocked multiplication by the definition (the GEMM reference time).
template <class Real>
void gemm_blocked(std::uint64_t n, const Real* a, const Real* b, Real* c);
/// The reference: c = a·b by the definition in a wider type (double for float, long double for
/// double), in bands of rows on the host's cores, each row summed in the serial order.
template <class Real, class Wide>
void gemm_reference(std::uint64_t n, const Real* a, const Real* b, Wide* c);

}  // namespace chanflow::workloads
