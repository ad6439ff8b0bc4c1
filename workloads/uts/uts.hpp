// An unbalanced tree search (uts_tree.h's tree): the Cilk source (uts.c), its channel-flow
// lowering (uts.cl) and its oneTBB versions.
#pragma once

#include "common/workload.hpp"

#include <chanflow/cilk_runtime.hpp>

#include <cstdint>

namespace chanflow::workloads {

/// uts.cl's task: a node of the tree, or a range of a node's children.
struct UtsTask {
  std::uint64_t state;
  std::uint32_t lo, hi;
  std::uint32_t kind;  ///< kUtsRange or kUtsNode
  std::uint32_t pad;
};
inline constexpr std::uint32_t kUtsRange = 0, kUtsNode = 1;
inline constexpr std::uint32_t kUtsCounters = 4096;   ///< uts.cl's UTS_COUNTERS
inline constexpr std::uint32_t kUtsRootChildren = 64;  ///< uts_tree.h's UTS_ROOT_CHILDREN

struct UtsResult {
  std::uint64_t value = 0;
  RunStats stats;
};

/// The graph of uts.cl (one channel, one kernel node), built once and run as often as asked.
/// seed_tree() places the whole tree, seed_share() one device's share of a static split; run()
/// (or a router) runs it; result() counts what was placed on this graph and the nodes it visited.
class UtsGraph {
 public:
  UtsGraph(const Runtime& runtime, const RunSettings& settings = {});
  Graph& graph() noexcept { return graph_; }
  /// The tree of `seed` whose heavy child has `heavy` children: its root's children placed.
  void seed_tree(std::uint64_t seed, std::uint32_t heavy);
  /// Device `device` of `devices`' share of the root's children, split in contiguous blocks (the
  /// one holding child 0 holds the heavy child): nothing moves between them.
  void seed_share(std::uint64_t seed, std::uint32_t heavy, std::size_t device, std::size_t devices);
  /// The nodes counted since the last seed (the root and heavy child, where seeded here, too).
  std::uint64_t result() const;
  /// No node placed, none counted: a device that only counts what it is given.
  void clear();
  UtsResult run(std::uint64_t seed, std::uint32_t heavy, SchedulingPolicy& policy, const RunOptions& options = {});

 private:
  void push_range(std::uint64_t parent, std::uint32_t lo, std::uint32_t hi);
  const Runtime& runtime_;
  RunSettings settings_;  ///< as given, the device filling in what was left to it
  Graph graph_;
  ChannelNode& tasks_;
  SvmBuffer counts_;
  std::uint64_t placed_ = 0;  // nodes counted on the host: the root, the heavy child
};

/// uts.c compiled by chanflowc (the generated graph of uts_compiled.cpp), run on `runtime`.
UtsResult uts_compiled(const Runtime& runtime, std::uint64_t seed, std::uint32_t heavy, const RunSettings& settings);
/// One call of uts.c's compiled uts_tree on the devices cilk::use named last (across devices:
/// CompiledAcrossDevices), the tree's node count.
std::uint64_t uts_compiled_call(std::uint64_t seed, std::uint32_t heavy);

/// oneTBB, a task per node: parallel_for_each over the root's children, each node feeding its
/// children (no join: the counts are per thread, summed at the end).
std::uint64_t uts_tbb_fine(std::uint64_t seed, std::uint32_t heavy);
/// oneTBB with UTS's own cut-off: each task walks its subtree depth-first on a stack of its own
/// and, when that stack holds two chunks of kUtsTbbChunk nodes, hands the oldest chunk (the
/// shallowest nodes: the largest subtrees) back to the pool (Olivier et al.'s chunked release), so
/// a deep subtree is shared and a shallow one costs one task.
std::uint64_t uts_tbb_cutoff(std::uint64_t seed, std::uint32_t heavy);
inline constexpr std::uint32_t kUtsTbbChunk = 20;  // UTS's default chunk

}  // namespace chanflow::workloads

extern "C" {  // uts.c's serial elision
long uts_tree(unsigned long seed, unsigned heavy);
unsigned long uts_root(unsigned long seed);
unsigned long uts_child(unsigned long state, unsigned i);
unsigned uts_binomial_children(unsigned long state);
}
