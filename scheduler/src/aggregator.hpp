// The aggregator: chanflow's host thread that watches every channel and turns ready CEs into
// kernel dispatches under a scheduling policy (the thesis' GPU control processor, 4.1.1).
// Not to be confused with oneTBB's `aggregator`, a lock-free operation combiner.
#pragma once

#include "chanflow/graph.hpp"
#include "trace.hpp"

#include <chrono>
#include <set>

namespace chanflow {

/// Round-based protocol (DESIGN.md decision 4): read every header in one transfer, deallocate
/// what the last round finished, ask the policy, launch the dispatches it chose over control
/// ranges, wait for them. Admission control keeps every launch within its outputs' free space,
/// so a flush never finds a full channel; a round in which nothing can be dispatched while CEs
/// are ready is reported as no progress.
class Aggregator {
 public:
  Aggregator(Graph& graph, SchedulingPolicy& policy, const RunOptions& options);
  RunStats run();

 private:
  /// A concrete channel: a channel node, or one level of a channel stack.
  struct Slot {
    Channel* channel = nullptr;
    KernelNode* consumer = nullptr;
    ChannelStackNode* stack = nullptr;
    std::uint32_t level = 0;
    bool consumed_last_round = false;
  };
  struct Launch {
    std::uint32_t slot;
    std::uint64_t begin;
    std::uint64_t count;
    cl::Event event;
  };

  void collect_slots();
  Channel& port_channel(const PortTarget& port, std::uint32_t level);
  std::int64_t port_free(const PortTarget& port, std::uint32_t level) const;
  void check_device_status();
  [[noreturn]] void no_progress(const std::vector<ChannelView>& views, bool policy_chose_nothing) const;
  void write_env(std::size_t slot_in_pool, const Slot& slot);
  std::vector<void*> indirect_svm() const;

  Graph& graph_;
  SchedulingPolicy& policy_;
  RunOptions options_;
  const Runtime& rt_;
  std::vector<Slot> slots_;
  std::set<const Channel*> known_;
  std::vector<cl::Kernel> kernels_;
  std::vector<SvmBuffer> args_;
  SvmBuffer status_;
  SvmBuffer env_pool_;
  std::size_t env_stride_ = 0;
  std::uint32_t max_ports_ = 1;
  std::vector<std::byte> env_staging_;
  Trace trace_;
};

}  // namespace chanflow
