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

// On a GPU, where the capacity is left to the device, a level deeper than that size allows for
// gets what the recursion can put there, fan_out^d CEs for the most children any task spawns on
// one port (ChannelStackNode::grow_levels), to four times what the device keeps resident (2^20
// at most), while the channel table stays within the device's channel budget and 1 GiB. Every
// level alike at the size above gave fib 40 65,536 CEs a level where level 19 holds 2^19 tasks,
// some of them long: in-order deallocation cannot pass a long task, so the level wrapped onto it
// and waited (21 ms a call, where the bench's levels of 2^20 took 6-7). The 1 GiB keeps a first
// call's clSVMAlloc (NVIDIA's host: ~0.45 ms a MiB) within ~0.5 s. A CPU device's levels stay
// alike: its work-groups take few CEs a pass.
void ProgramGraph::size_levels() {
  if (capacity_fixed_) return;
  const DeviceSizing sizing = device_sizing(graph_.runtime().caps());
  if (!sizing.gpu) return;
  std::uint32_t fan_out = 1;
  for (const KernelNode* k : kernels_)
    for (const PortTarget& port : k->ports())
      if (port.kind == PortKind::Children) fan_out = std::max(fan_out, port.max_per_item);
  const std::uint64_t most = std::min<std::uint64_t>(1u << 20, 4 * sizing.resident_items);
  const std::uint64_t budget = std::min<std::uint64_t>(sizing.channel_budget, std::uint64_t{1} << 30);
  for (ChannelStackNode* s : stacks_) s->grow_levels(fan_out, static_cast<std::uint32_t>(most), budget);
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
