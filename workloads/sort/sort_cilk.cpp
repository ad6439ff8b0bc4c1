// Builds and runs the cilksort flow graph of sort.cl.
#include "sort.hpp"

#include "chanflow_workloads_sources.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

namespace chanflow::workloads {

namespace {

GraphOptions checked_graph_options(const RunSettings& options, const DeviceCaps& caps, std::uint32_t key_bytes) {
  if (key_bytes != 4 && key_bytes != 8)
    throw std::invalid_argument(fmt::format("sort: keys are 4 or 8 bytes wide, not {}", key_bytes));
  return options.for_device(caps).graph_options();
}

}  // namespace

StackFootprint sort_footprint(std::uint64_t n) {
  // Four task and continuation stacks of sorts, two of merges, and on a GPU one each of
  // work-group sorts and merges; a level per halving of the keys down to the base case (depth 17
  // at 2^24 keys).
  std::uint32_t levels = 2;
  for (std::uint64_t keys = n; keys > kSortBase; keys /= 2) ++levels;
  return {.bytes_per_slot = 2 * sizeof(SortFrame) + 3 * sizeof(SortCont) + 2 * sizeof(MergeFrame) +
                            sizeof(MergeCont) + 8 * StackFootprint::kControlBytes,
          .levels = levels, .cpu_capacity = 1u << 14};
}

SortCilk::SortCilk(const Runtime& runtime, const SvmBuffer& data, const SvmBuffer& tmp, std::uint64_t n,
                   const RunSettings& options, SortArgs bases, std::uint32_t key_bytes, DataTasks where)
    : data_(data), tmp_(tmp), n_(n), graph_(runtime, checked_graph_options(options, runtime.caps(), key_bytes)) {
  Graph& g = graph_;
  const bool groups = work_group_data(where, runtime.caps());
  // Parts per split of a merge (sort.cl's merge_pre_sync): on a GPU up to kMergeSplitGpu, as many
  // as one work-group's request fits in a channel; sort.c's two elsewhere.
  const RunSettings settings = options.for_device(runtime.caps());
  std::uint32_t split = 2;
  while (groups && 2 * split <= kMergeSplitGpu && 2 * split * std::max(1u, settings.wg_size) <= settings.capacity) split *= 2;
  g.add_source(fmt::format("#define SORT_KEY {}\n#define SORT_GROUPS {}\n#define SORT_BLOCK_KEYS {}\n"
                           "#define SORT_BLOCK_MERGE {}\n#define SORT_SPLIT {}u\n",
                           key_bytes == 4 ? "uint" : "ulong", groups ? 1 : 0, groups ? kBlockSort : 1, kBlockMerge, split));
  g.add_source(std::string(workloads_cl::sort_types_h()));
  g.add_source(std::string(workloads_cl::sort_serial_h()));  // sort.c's helpers, the same text
  g.add_source(std::string(workloads_cl::sort_cl()));
  const std::uint32_t cap = settings.capacity;
  // cilksort: a task stack and one continuation stack per sync.
  auto& sorts = g.channel_stack<SortFrame>("sort", cap);
  auto& after_quarters = g.channel_stack<SortCont>("sort_cont1", cap, StackKind::Continuations);
  auto& after_halves = g.channel_stack<SortCont>("sort_cont2", cap, StackKind::Continuations);
  auto& after_whole = g.channel_stack<SortCont>("sort_cont3", cap, StackKind::Continuations);
  // cilkmerge: a task stack and its continuation stack.
  auto& merges = g.channel_stack<MergeFrame>("merge", cap);
  auto& merge_conts = g.channel_stack<MergeCont>("merge_cont", cap, StackKind::Continuations);

  auto& sort_spawn = g.kernel<SortFrame>("sort_spawn", "sort_spawn");
  auto& sort_halves = g.kernel<SortCont>("sort_halves", "sort_halves");
  auto& sort_whole = g.kernel<SortCont>("sort_whole", "sort_whole");
  auto& sort_done = g.kernel<SortCont>("sort_done", "sort_done");
  auto& merge_spawn = g.kernel<MergeFrame>("merge_spawn", "merge_spawn");
  auto& merge_done = g.kernel<MergeCont>("merge_done", "merge_done");

  make_edge(sorts, sort_spawn);
  make_edge(sort_spawn, after_quarters, Continuation{});
  make_edge(sort_spawn, sorts, Children{.max_per_item = 4});
  make_edge(after_quarters, sort_halves);
  make_edge(sort_halves, after_halves, Continuation{});  // a continuation that spawns again
  make_edge(sort_halves, merges, Children{.max_per_item = 2});
  make_edge(after_halves, sort_whole);
  make_edge(sort_whole, after_whole, Continuation{});
  make_edge(sort_whole, merges, Children{.max_per_item = 1});
  make_edge(after_whole, sort_done);
  make_edge(merges, merge_spawn);
  make_edge(merge_spawn, merge_conts, Continuation{});
  make_edge(merge_spawn, merges, Children{.max_per_item = split});
  make_edge(merge_conts, merge_done);

  std::vector<KernelNode*> nodes{&sort_spawn, &sort_halves, &sort_whole, &merge_spawn};
  if (groups) {
    // Sorts and merges small enough for a work-group (kBlockSort, kBlockMerge keys) go to
    // work-group tasks.
    auto& sort_blocks = g.channel_stack<SortFrame>("sort_block", cap);
    auto& merge_blocks = g.channel_stack<MergeFrame>("merge_block", cap);
    auto& sort_block = g.kernel<SortFrame>("sort_blocks", "sort_blocks");
    auto& merge_block = g.kernel<MergeFrame>("merge_blocks", "merge_blocks");
    make_edge(sort_spawn, sort_blocks, Children{.max_per_item = 4});
    make_edge(sort_halves, merge_blocks, Children{.max_per_item = 2});
    make_edge(sort_whole, merge_blocks, Children{.max_per_item = 1});
    make_edge(merge_spawn, merge_blocks, Children{.max_per_item = split});
    make_edge(sort_blocks, sort_block);
    make_edge(merge_blocks, merge_block);
    nodes.insert(nodes.end(), {&sort_block, &merge_block});
  }
  for (KernelNode* k : nodes) {
    k->set_args(bases);
    k->uses(data).uses(tmp);
  }
  sorts_ = &sorts;
  merges_ = &merges;
}

void SortCilk::seed_sort(std::uint64_t n) {
  if (n > n_) throw std::invalid_argument(fmt::format("sort: {} keys in a graph for {}", n, n_));
  sorts_->push(0, SortFrame{{0, 0, 0, 0}, data_.get(), tmp_.get(), n});
}

void SortCilk::seed_merge(const void* a, std::uint64_t na, const void* b, std::uint64_t nb, void* dest) {
  merges_->push(0, MergeFrame{{0, 0, 0, 0}, const_cast<void*>(a), const_cast<void*>(b), dest, na, nb, 0, na + nb});
}

SortResult SortCilk::run(SchedulingPolicy& policy, const RunOptions& run_options) {
  seed_sort(n_);
  return {graph_.run(policy, run_options)};
}

SortResult sort_cilk(const Runtime& runtime, const SvmBuffer& data, const SvmBuffer& tmp, std::uint64_t n,
                     SchedulingPolicy& policy, const RunSettings& options, const RunOptions& run_options,
                     SortArgs bases, std::uint32_t key_bytes, DataTasks where) {
  return SortCilk(runtime, data, tmp, n, options, bases, key_bytes, where).run(policy, run_options);
}

}  // namespace chanflow::workloads
