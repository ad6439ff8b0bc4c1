// Device sweeps: when a stack may go out as one launch over its levels, the planning kernel that
// gives each level its range before a planned pass, and how many work-groups a sweep gets.
#include "aggregator.hpp"

#include <map>

namespace chanflow {

bool claimed_sweeps_hold(const DeviceCaps& caps) {
#if defined(__x86_64__)
  // A CPU device runs on this host; x86-64 keeps stores in order (TSO), and the kernels fence
  // against the compiler (enq before publishing, a claim before reading CEs).
  return (caps.type & CL_DEVICE_TYPE_CPU) != 0;
#else
  // Elsewhere (aarch64, say) nothing here has checked that PoCL's fences order stores between
  // cores: planned sweeps read only what earlier launches wrote.
  (void)caps;
  return false;
#endif
}

bool Aggregator::sweepable(const Watched& w, const std::vector<Launch>& launches) const {
  if (sweeps_ == Sweeps::Off || !w.stack) return false;
  const KernelNode& k = *w.consumer;
  if (!(k.is_yielding() || k.ports().empty())) return false;
  // A sweep spans at most CHANFLOW_SWEEP_MAX_LEVELS levels, and its deepest work needs the level
  // below for its children: deeper recursion goes on with host-sized dispatches, which make
  // levels on demand.
  if (w.stack->depth() > CHANFLOW_SWEEP_MAX_LEVELS || max_level_ + 2 > CHANFLOW_SWEEP_MAX_LEVELS) return false;
  // One planning kernel covers every level of the round's planned sweeps.
  const auto planned = std::count_if(launches.begin(), launches.end(), [&](const Launch& l) {
    return l.planned && l.sweep != w.stack;
  });
  return sweeps_ != Sweeps::Planned ||
         static_cast<std::size_t>(planned + 1) * CHANFLOW_SWEEP_MAX_LEVELS <= CHANFLOW_PLAN_MAX_LEVELS;
}

cl::Event Aggregator::enqueue_plan() {
  // The planner reads channel headers, the levels' environments, the yield counters and the
  // resumable counts; never channel storage or user data.
  const std::vector<void*> svm{graph_.table_.headers_allocation(), env_pool_.allocation(), counters_.allocation(),
                               resumable_.allocation()};  // null where they are in the control area
  if (plan_kernel_svm_ != svm) {
    set_indirect_svm(plan_kernel_, svm);
    plan_kernel_svm_ = svm;
  }
  set_arg_svm(plan_kernel_, 0, plan_pool_.get());
  set_arg(plan_kernel_, 1, static_cast<cl_uint>(plans_.size()));
  return launch(rt_, plan_kernel_, plan_local_, plan_local_, trace_.enabled());
}

// Work-groups for a sweep: each takes one batch, those starting later taking what earlier ones
// produced. On a CPU device every one runs the node's collectives even when it finds nothing
// (PoCL 3.1 mis-runs a kernel that skips them conditionally), so idle ones are not free there;
// elsewhere an idle one leaves at once (CHANFLOW_IDLE_GROUPS_LEAVE). The first sweep
// of a stack gets room for what is ready and what it spawns; later ones a quarter more than the
// batches the last sweeps found, and at least what the stack holds ready now (`own`: a wave of
// leaves that arrives at once goes in one pass, not in passes and rounds growing by a quarter);
// never more than the levels can hold.
std::uint32_t Aggregator::sweep_groups(const ChannelStackNode& stack, std::uint64_t ready, std::uint64_t own) const {
  if (graph_.options().sweep_groups) return graph_.options().sweep_groups;
  const std::uint64_t per = stack.consumer()->ces_per_group(wg_);
  const std::uint64_t holds = (std::uint64_t{stack.depth()} * stack.capacity_per_level() + per - 1) / per;
  const auto last = batches_.find(&stack);
  const std::uint64_t want = last != batches_.end()
                                 ? std::max(last->second + last->second / 4 + 2, (own + per - 1) / per)
                                 : 2 * ((ready + per - 1) / per) + 2;
  const std::uint64_t floor = 2 * std::max(1u, rt_.caps().compute_units);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(std::max(want, floor), std::min<std::uint64_t>(holds, 1u << 16)));
}

// A chain of sweeps may descend many levels in one host round: a stack gets a few levels (at
// least one: its children's) beyond its own deepest work and beyond that of any stack whose node
// spawns into it, as many as a modest amount of memory allows (levels cost capacity x CE size
// each). Not every stack to the deepest work of any: a compiled program of
// ~40 stacks (a function's loops are two or three each) with one recursion 23 deep took 1,024
// channel-table slots, every stack as deep as the recursion. A level a chain reaches unmade
// refuses the spawn there (its task yields) until a later round makes it.
void Aggregator::grow_stacks_for_sweeps() {
  constexpr std::uint64_t kLookaheadBytes = 16ull << 20;
  auto ahead = [&](const ChannelStackNode& s) {
    const std::uint64_t level_bytes = std::uint64_t{s.capacity_per_level()} * s.ce_bytes();
    return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(kLookaheadBytes / std::max<std::uint64_t>(level_bytes, 1), 1, 8));
  };
  std::map<ChannelStackNode*, std::uint32_t> want;  // levels each stack should have
  auto reach = [&](ChannelStackNode* s, std::uint32_t level, std::uint32_t lookahead) {
    std::uint32_t& w = want[s];
    w = std::max(w, std::min<std::uint32_t>(level + 1 + lookahead, CHANFLOW_SWEEP_MAX_LEVELS));
  };
  for (const Watched& w : watched_) {
    const auto& h = w.channel->counters();
    if (h.ctrl_published == h.ctrl_head && w.blocked.empty()) continue;
    // A channel node's consumer spawns at a stack's level 0 (and its children at 1).
    const std::uint32_t level = w.stack ? w.level : 0, lookahead = w.stack ? ahead(*w.stack) : 1;
    if (w.stack) reach(w.stack, level, lookahead);
    for (const PortTarget& port : w.consumer->ports())
      if (auto* const* target = std::get_if<ChannelStackNode*>(&port.node))
        reach(*target, level, std::max(lookahead, ahead(**target)));
  }
  for (const auto& [stack, levels] : want)
    if (stack->depth() < levels) stack->level(levels - 1);
  collect_watched();
}

}  // namespace chanflow
