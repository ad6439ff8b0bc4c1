// Sort (cilksort): the Cilk source (sort.c), its channel-flow lowering and its baselines.
#pragma once

#include "common/workload.hpp"
#include "sort/sort_types.h"

#include <cstdint>

extern "C" {  // sort.c's serial elision
void cilksort(unsigned* data, unsigned* tmp, long n);
void cilkmerge(const unsigned* a, long na, const unsigned* b, long nb, unsigned* dest);
void sort_insertion(unsigned* a, long n);
void sort_merge_serially(const unsigned* a, long na, const unsigned* b, long nb, unsigned* dest);
long sort_lower_bound(const unsigned* b, long n, unsigned key);
}

namespace chanflow::workloads {

inline constexpr std::uint32_t kSortBase = 64;    // sort.c's SORT_BASE
inline constexpr std::uint32_t kMergeBase = 256;  // sort.c's MERGE_BASE

struct SortResult {
  RunStats stats;
};

/// Builds the graph of sort.cl and sorts data[0 .. n) (SVM, with tmp as scratch) in place.
SortResult sort_cilk(const Runtime& runtime, const SvmBuffer& data, const SvmBuffer& tmp, std::uint64_t n,
                     SchedulingPolicy& policy, const CilkOptions& options = {}, const RunOptions& run_options = {},
                     SortArgs bases = {kSortBase, kMergeBase});

/// oneTBB task_group, a task wherever sort.c spawns (its base cases included).
void sort_tbb_fine(std::uint32_t* data, std::uint32_t* tmp, std::uint64_t n);
/// The same down to kSortTbbCutoff keys (sorts and merges), sort.c's serial elision below.
void sort_tbb_cutoff(std::uint32_t* data, std::uint32_t* tmp, std::uint64_t n);
/// Keys below which sort_tbb_cutoff runs serially: 16,384 keys take ~0.5 ms to sort, far
/// above oneTBB's per-task cost, and 1,000,000 keys still make ~250 tasks per phase.
inline constexpr std::uint64_t kSortTbbCutoff = 16384;

}  // namespace chanflow::workloads
