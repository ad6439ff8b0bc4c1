// Sort (cilksort): the Cilk source (sort.c), its channel-flow lowering and its baselines.
#pragma once

#include "common/workload.hpp"
#include "sort/sort_types.h"

#include <cstdint>
#include <type_traits>

static_assert(std::is_same_v<std::uint64_t, unsigned long>, "sort.c's 64-bit build uses unsigned long keys");

extern "C" {  // sort.c's serial elisions: 32-bit keys, and 64-bit keys (CMake renames those)
void cilksort(unsigned* data, unsigned* tmp, long n);
void cilkmerge(const unsigned* a, long na, const unsigned* b, long nb, unsigned* dest);
void sort_insertion(unsigned* a, long n);
void sort_merge_serially(const unsigned* a, long na, const unsigned* b, long nb, unsigned* dest);
long sort_lower_bound(const unsigned* b, long n, unsigned key);
void cilksort_u64(unsigned long* data, unsigned long* tmp, long n);  // SORT_KEY=unsigned long: uint64_t here
void cilkmerge_u64(const unsigned long* a, long na, const unsigned long* b, long nb, unsigned long* dest);
void sort_insertion_u64(unsigned long* a, long n);
void sort_merge_serially_u64(const unsigned long* a, long na, const unsigned long* b, long nb, unsigned long* dest);
long sort_lower_bound_u64(const unsigned long* b, long n, unsigned long key);
}

namespace chanflow::workloads {

inline constexpr std::uint32_t kSortBase = 64;    // sort.c's SORT_BASE
inline constexpr std::uint32_t kMergeBase = 256;  // sort.c's MERGE_BASE
/// On a GPU, sorts of at most this many keys and merges of at most kBlockMerge are work-group
/// tasks (sort.cl: a bitonic sort in local memory, a merge path).
inline constexpr std::uint32_t kBlockSort = 2048;
inline constexpr std::uint32_t kBlockMerge = 8192;
/// On a GPU a large merge splits by its outputs into this many parts at once, not sort.c's two
/// halves around a pivot: the split tree between a merge and its work-group tasks is 3× shallower,
/// and each level of it is a batch on the critical path (H100, sort 2^24: a top-level merge took
/// 12 levels of ~37 µs each).
inline constexpr std::uint32_t kMergeSplitGpu = 8;


/// The stacks a sort of n keys takes (RunSettings::for_device sizes its levels by it).
StackFootprint sort_footprint(std::uint64_t n);

struct SortResult {
  RunStats stats;
};

/// The graph of sort.cl over data[0 .. n) (SVM, with tmp as scratch; keys `key_bytes`, 4 or 8,
/// wide), built once; run() sorts whatever data holds in place, as often as asked, reusing the
/// graph's channels, levels and kernels.
class SortCilk {
 public:
  SortCilk(const Runtime& runtime, const SvmBuffer& data, const SvmBuffer& tmp, std::uint64_t n,
           const RunSettings& options = {}, SortArgs bases = {kSortBase, kMergeBase}, std::uint32_t key_bytes = 4,
           DataTasks where = DataTasks::ForDevice);
  SortResult run(SchedulingPolicy& policy, const RunOptions& run_options = {});
  Graph& graph() noexcept { return graph_; }
  /// Places the root of a sort of data[0 .. n) (n at most the graph's), for a run of graph().
  void seed_sort(std::uint64_t n);
  /// Places the root of a merge of the sorted a[0 .. na) and b[0 .. nb) into dest[0 .. na + nb),
  /// all within this graph's data and tmp, for a run of graph(): several may run at once.
  void seed_merge(const void* a, std::uint64_t na, const void* b, std::uint64_t nb, void* dest);

 private:
  const SvmBuffer& data_;
  const SvmBuffer& tmp_;
  std::uint64_t n_;
  Graph graph_;
  ChannelStackNode* sorts_ = nullptr;
  ChannelStackNode* merges_ = nullptr;
};

/// Builds the graph of sort.cl and sorts data[0 .. n) in place once.
SortResult sort_cilk(const Runtime& runtime, const SvmBuffer& data, const SvmBuffer& tmp, std::uint64_t n,
                     SchedulingPolicy& policy, const RunSettings& options = {}, const RunOptions& run_options = {},
                     SortArgs bases = {kSortBase, kMergeBase}, std::uint32_t key_bytes = 4,
                     DataTasks where = DataTasks::ForDevice);

/// sort.c (32-bit keys) compiled by chanflowc (sort_compiled.cpp): sorts data[0 .. n) in place
/// once, on `runtime` with `settings`.
RunStats sort_compiled(const Runtime& runtime, const SvmBuffer& data, const SvmBuffer& tmp, std::uint64_t n,
                       const RunSettings& settings);

/// oneTBB task_group, a task wherever sort.c spawns (its base cases included). Key: uint32_t or
/// uint64_t.
template <class Key>
void sort_tbb_fine(Key* data, Key* tmp, std::uint64_t n);
/// The same down to kSortTbbCutoff keys (sorts and merges), sort.c's serial elision below.
template <class Key>
void sort_tbb_cutoff(Key* data, Key* tmp, std::uint64_t n);
/// sort.c's cilksort (its serial elision) for either key width.
void sort_serial(std::uint32_t* data, std::uint32_t* tmp, std::uint64_t n);
void sort_serial(std::uint64_t* data, std::uint64_t* tmp, std::uint64_t n);
/// Keys below which sort_tbb_cutoff runs serially: 16,384 keys take ~0.5 ms to sort, far
/// above oneTBB's per-task cost, and 1,000,000 keys still make ~250 tasks per phase.
inline constexpr std::uint64_t kSortTbbCutoff = 16384;

}  // namespace chanflow::workloads
