// ProgramGraph (cilk_runtime.hpp): how the graph code chanflowc generates makes a compiled
// program's stacks and kernel nodes.
#include "chanflow/cilk_runtime.hpp"
#include "chanflow/sizing.hpp"

#include <algorithm>

namespace chanflow::cilk {

// The most one talloc may reserve: the channels' default, or a work-group's largest request where
// that is more (a batch of 32 and one more spawn, by 256 work-items), within the capacity.
std::uint32_t ProgramGraph::max_reservation() const {
  return std::min(capacity_, std::max(request_, kDefaultMaxReservation));
}

std::uint32_t device_stack_capacity(const DeviceCaps& caps, std::size_t ce_bytes, std::uint32_t max_channels,
                                    std::uint32_t floor) {
  const StackFootprint table{.bytes_per_slot = ce_bytes + StackFootprint::kControlBytes,
                             .levels = std::max(max_channels, 1u),
                             .cpu_capacity = floor};
  return std::max(floor, stack_capacity(caps, table));
}

std::uint32_t ProgramGraph::stack_capacity_for(std::size_t ce_bytes) const {
  if (capacity_fixed_) return capacity_;
  return device_stack_capacity(graph_.runtime().caps(), ce_bytes, graph_.options().max_channels, capacity_);
}

ChannelStackNode& ProgramGraph::task_stack(const char* name, std::size_t ce_bytes) {
  ChannelStackNode& s = graph_.channel_stack(name, static_cast<std::uint32_t>(ce_bytes), stack_capacity_for(ce_bytes),
                                             StackKind::Tasks, max_reservation());
  stacks_.push_back(&s);
  return s;
}

ChannelStackNode& ProgramGraph::continuation_stack(const char* name, std::size_t ce_bytes) {
  ChannelStackNode& s = graph_.channel_stack(name, static_cast<std::uint32_t>(ce_bytes), stack_capacity_for(ce_bytes),
                                             StackKind::Continuations, max_reservation());
  stacks_.push_back(&s);
  return s;
}

KernelNode& ProgramGraph::kernel(const char* name, std::size_t input_ce_bytes) {
  KernelNode& k = graph_.kernel(name, name, static_cast<std::uint32_t>(input_ce_bytes));
  kernels_.push_back(&k);
  return k;
}

}  // namespace chanflow::cilk
