// The unbalanced tree search's oneTBB versions (uts.hpp).
#include "uts.hpp"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for_each.h>

#include <numeric>
#include <vector>

namespace chanflow::workloads {
namespace {

// The root's children (the heavy one's children in its place) as the first items, and the two
// nodes counted before them.
std::vector<std::uint64_t> first_nodes(std::uint64_t seed, std::uint32_t heavy) {
  const std::uint64_t root = uts_root(seed);
  const std::uint64_t heavy_child = uts_child(root, 0);
  std::vector<std::uint64_t> nodes;
  for (std::uint32_t i = 0; i < heavy; ++i) nodes.push_back(uts_child(heavy_child, i));
  for (std::uint32_t i = 1; i < kUtsRootChildren; ++i) nodes.push_back(uts_child(root, i));
  return nodes;
}

std::uint64_t total(tbb::enumerable_thread_specific<std::uint64_t>& counts) {
  return std::accumulate(counts.begin(), counts.end(), std::uint64_t{2});  // and the root, the heavy child
}

}  // namespace

std::uint64_t uts_tbb_fine(std::uint64_t seed, std::uint32_t heavy) {
  tbb::enumerable_thread_specific<std::uint64_t> counts(0);
  const auto nodes = first_nodes(seed, heavy);
  tbb::parallel_for_each(nodes.begin(), nodes.end(), [&](std::uint64_t node, tbb::feeder<std::uint64_t>& feeder) {
    ++counts.local();
    const unsigned n = uts_binomial_children(node);
    for (unsigned i = 0; i < n; ++i) feeder.add(uts_child(node, i));
  });
  return total(counts);
}

std::uint64_t uts_tbb_cutoff(std::uint64_t seed, std::uint32_t heavy) {
  tbb::enumerable_thread_specific<std::uint64_t> counts(0);
  const auto nodes = first_nodes(seed, heavy);
  tbb::parallel_for_each(nodes.begin(), nodes.end(), [&](std::uint64_t node, tbb::feeder<std::uint64_t>& feeder) {
    std::vector<std::uint64_t> stack{node};
    std::uint64_t visited = 0;
    while (!stack.empty()) {
      if (stack.size() >= 2 * kUtsTbbChunk) {  // the oldest chunk (the largest subtrees) to the pool
        for (std::uint32_t i = 0; i < kUtsTbbChunk; ++i) feeder.add(stack[i]);
        stack.erase(stack.begin(), stack.begin() + kUtsTbbChunk);
      }
      const std::uint64_t at = stack.back();
      stack.pop_back();
      ++visited;
      const unsigned n = uts_binomial_children(at);
      for (unsigned i = 0; i < n; ++i) stack.push_back(uts_child(at, i));
    }
    counts.local() += visited;
  });
  return total(counts);
}

}  // namespace chanflow::workloads
