// Builds and runs the unbalanced tree search's flow graph (uts.cl).
#include "uts.hpp"

#include "chanflow_workloads_sources.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace chanflow::workloads {
namespace {

struct UtsArgs {
  std::uint64_t* counts;  // an SVM pointer: __global ulong* on the device
};

}  // namespace

UtsGraph::UtsGraph(const Runtime& runtime, const RunSettings& settings)
    : runtime_(runtime),
      settings_(settings.for_device(runtime.caps())),
      graph_(runtime, settings_.graph_options()),
      tasks_((graph_.add_source(std::string(workloads_cl::uts_tree_h())), graph_.add_source(std::string(workloads_cl::uts_cl())),
              graph_.channel<UtsTask>("uts_tasks", settings_.capacity))),
      counts_(runtime, kUtsCounters * sizeof(std::uint64_t)) {
  auto& kernel = graph_.kernel<UtsTask>("uts", "uts_kernel");
  make_edge(tasks_, kernel);
  make_edge(kernel, tasks_, Spawns{.max_per_item = 4});  // UTS_SPLIT
  kernel.set_args(UtsArgs{static_cast<std::uint64_t*>(counts_.get())}).uses(counts_);
}

void UtsGraph::clear() {
  runtime_.svm_fill_zero_async(counts_.get(), counts_.size());
  placed_ = 0;
}

void UtsGraph::push_range(std::uint64_t parent, std::uint32_t lo, std::uint32_t hi) {
  if (lo < hi) tasks_.push(UtsTask{parent, lo, hi, kUtsRange, 0});
}

void UtsGraph::seed_tree(std::uint64_t seed, std::uint32_t heavy) {
  seed_share(seed, heavy, 0, 1);
}

void UtsGraph::seed_share(std::uint64_t seed, std::uint32_t heavy, std::size_t device, std::size_t devices) {
  clear();
  const std::uint64_t root = uts_root(seed);
  const auto lo = static_cast<std::uint32_t>(kUtsRootChildren * device / devices);
  const auto hi = static_cast<std::uint32_t>(kUtsRootChildren * (device + 1) / devices);
  if (device == 0) placed_ = 1;  // the root
  if (lo == 0 && hi > 0) {       // child 0, the heavy one: counted here, its children placed
    ++placed_;
    push_range(uts_child(root, 0), 0, heavy);
  }
  push_range(root, std::max(lo, 1u), hi);
}

std::uint64_t UtsGraph::result() const {
  std::vector<std::uint64_t> counts(kUtsCounters);
  runtime_.svm_read(counts.data(), counts_.get(), counts_.size());
  return std::accumulate(counts.begin(), counts.end(), placed_);
}

UtsResult UtsGraph::run(std::uint64_t seed, std::uint32_t heavy, SchedulingPolicy& policy, const RunOptions& options) {
  seed_tree(seed, heavy);
  UtsResult r;
  r.stats = graph_.run(policy, options);
  r.value = result();
  return r;
}

}  // namespace chanflow::workloads
