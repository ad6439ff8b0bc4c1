// Device sweeps: when a stack may go out as one launch over its levels, the planning kernel that
// gives each level its range before a planned pass, and how many work-groups a sweep gets.
#include "aggregator.hpp"

#include <limits>
#include <map>

namespace chanflow {

bool claimed_sweeps_hold(const DeviceCaps& caps) {
  // A claim reads CEs other work-groups of the launch published: the device must order their
  // stores before the publication at device scope (channels/cl/order.cl), as NVIDIA's GPUs do from
  // compute capability 7 through PTX release/acquire, and an x86-64 host's CPU device does (TSO).
  return device_order(caps) != DeviceOrder::None;
}

// On a CPU device a task stack's levels from the serial depth on (granularity control: each task
// runs its whole call in its work-item) go out as host-sized ranges, spread over the compute
// units, and a claimed sweep of the stack leaves them alone (chanflow_node_env::unclaimed). In a
// claimed pass the level fills while most of the pass's work-groups have come and gone: on this
// project's 2-core VM, compiled Queens 13 from depth 2 ran its 132 serial calls in one or two
// work-groups (64 calls each) on one core, 580-610 ms a run against 305-320 as a range over both
// cores (tbb-cutoff: 283-292).
bool Aggregator::serial_ranged(const Watched& w) const {
  return cpu_ && !device_ && options_.serial_depth != kSerialOff && w.stack &&
         w.stack->kind() == StackKind::Tasks && w.level >= options_.serial_depth;
}

bool Aggregator::sweepable(const Watched& w, const std::vector<Launch>& launches, bool spawned) const {
  if (sweeps_ == Sweeps::Off || !w.stack || serial_ranged(w)) return false;
  const KernelNode& k = *w.consumer;
  if (!(k.is_yielding() || k.ports().empty())) return false;
  // A sweep spans at most CHANFLOW_SWEEP_MAX_LEVELS levels, and its deepest work needs the level
  // below for its children: deeper recursion goes on with host-sized dispatches, which make
  // levels on demand.
  if (w.stack->depth() > CHANFLOW_SWEEP_MAX_LEVELS || max_level_ + 2 > CHANFLOW_SWEEP_MAX_LEVELS) return false;
  // One planning kernel covers every level of the round's planned sweeps: the policy's stacks
  // are counted at the most levels a sweep spans, spawned ones by what they have (fit_spawned_sweeps).
  const auto planned = std::count_if(launches.begin(), launches.end(), [&](const Launch& l) {
    return l.planned && !l.spawned && l.sweep != w.stack;
  });
  return sweeps_ != Sweeps::Planned || spawned ||
         static_cast<std::size_t>(planned + 1) * CHANFLOW_SWEEP_MAX_LEVELS <= CHANFLOW_PLAN_MAX_LEVELS;
}

// A round of sweeps only is chained on the device; what its nodes spawn into other stacks would
// wait for the next round (its host round trip: ~160 us on an H100, against ~60 us for a pass)
// unless those stacks are swept in the same chain. So they are, for a node that only forwards:
// one without a continuation, whose children complete its parent (a cilk_for part, whose leaves
// then run in the part's round, not in one of their own), and so on for theirs. Not for every
// node: a pass launches every stack it sweeps, found work or not, and on NVIDIA's OpenCL each
// launch costs the host ~20 us; a compiled Strassen task, whose node spawns into nine loop
// stacks of which a level uses one or two, took the run from 9.6 to 10.8-11.8 ms on an H100
// with all of them in its rounds (the hand-built graph's, 7.4 to 7.6-7.8). A stack that is not
// sweepable (a continuation node that spawns: host-sized), or holds host-kept restart contexts,
// is left to its own rounds.
void Aggregator::add_spawned_sweeps(const std::set<const ChannelStackNode*>& held) {
  std::vector<Launch>& launches = launches_;
  if (!sweep_spawned_ || launches.empty() ||
      !std::all_of(launches.begin(), launches.end(), [](const Launch& l) { return l.sweep; }))
    return;
  for (std::size_t i = 0; i < launches.size(); ++i) {  // the list grows: a closure
    const KernelNode& node = *launches[i].sweep->consumer();
    if (node.continuation_port()) continue;
    for (const PortTarget& port : node.ports()) {
      auto* const* target = std::get_if<ChannelStackNode*>(&port.node);
      if (!target || (*target)->depth() == 0) continue;
      const Watched& w = watched_[watched_of_.at(&(*target)->level(0))];
      if (held.count(*target) || !sweepable(w, launches, true) ||
          std::any_of(launches.begin(), launches.end(), [&](const Launch& l) { return l.sweep == *target; }))
        continue;
      launches.push_back({.input = static_cast<std::uint32_t>(watched_of_.at(&w.stack->level(0))),
                          .sweep = w.stack,
                          .planned = sweeps_ == Sweeps::Planned,
                          .spawned = true});
    }
  }
}

// After the stacks have grown for the round: the policy's sweeps always fit the planning kernel
// (at most CHANFLOW_PLAN_MAX_LEVELS / CHANFLOW_SWEEP_MAX_LEVELS of them); spawned ones are kept,
// in the order they were found, while their levels fit too.
void Aggregator::fit_spawned_sweeps() {
  if (sweeps_ != Sweeps::Planned) return;
  std::size_t levels = 0;
  for (const Launch& l : launches_)
    if (l.planned && !l.spawned) levels += l.sweep->depth();
  std::vector<Launch> kept;
  for (Launch& l : launches_) {
    if (l.spawned && levels + l.sweep->depth() > CHANFLOW_PLAN_MAX_LEVELS) continue;
    if (l.spawned) levels += l.sweep->depth();
    kept.push_back(std::move(l));
  }
  launches_ = std::move(kept);
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
// never more than the levels can hold. A stack swept for what others spawn in the round holds
// nothing yet, and its wave may be larger than any before it (a part's leaves at the next level
// down: seven times as many): it gets at least what fills the device, 16 work-groups a compute
// unit (idle ones leave at once there; 896 leaves of compiled Strassen's second level had gone in
// three passes and a round sized from the 128 of the first).
std::uint32_t Aggregator::sweep_groups(const ChannelStackNode& stack, std::uint64_t ready, std::uint64_t own,
                                       bool spawned) const {
  if (graph_.options().sweep_groups) return graph_.options().sweep_groups;
  const std::uint64_t per = stack.consumer()->ces_per_group(wg_);
  std::uint64_t slots = 0;
  for (std::uint32_t d = 0; d < stack.depth(); ++d) slots += stack.capacity_of(d);
  const std::uint64_t holds = (slots + per - 1) / per;
  const auto last = batches_.find(&stack);
  const std::uint64_t want = last != batches_.end()
                                 ? std::max(last->second + last->second / 4 + 2, (own + per - 1) / per)
                                 : 2 * ((ready + per - 1) / per) + 2;
  const std::uint64_t floor = (spawned ? 16 : 2) * std::uint64_t{std::max(1u, rt_.caps().compute_units)};
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(std::max(want, floor), std::min<std::uint64_t>(holds, 1u << 16)));
}

// A narrow level packed into few work-groups runs its tasks on few compute units, each work-item
// after its neighbours where their paths differ (compiled Strassen's continuations at its second
// level: 49 frames in one work-group, each allocating and spawning); spread over twice as many
// work-groups as the device has compute units, they run side by side. (A planned pass spreads in
// the planning kernel, over as many: chanflow_plan::spread_groups.)
std::uint32_t Aggregator::spread(std::uint64_t count, std::uint32_t per) const {
  const std::uint64_t target = spread_groups();
  if (per <= 1 || count >= target * per) return per;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>((count + target - 1) / target, 1, per));
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
    const std::uint64_t level_bytes = std::uint64_t{s.capacity_of(s.depth())} * s.ce_bytes();  // the next one made
    return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(kLookaheadBytes / std::max<std::uint64_t>(level_bytes, 1), 1, 8));
  };
  std::map<ChannelStackNode*, std::uint32_t> want;  // levels each stack should have
  // A sweep spans at most CHANFLOW_SWEEP_MAX_LEVELS levels; the device scheduler's entries, any.
  const std::uint32_t most = device_ ? std::numeric_limits<std::uint32_t>::max() : CHANFLOW_SWEEP_MAX_LEVELS;
  auto reach = [&](ChannelStackNode* s, std::uint32_t level, std::uint32_t lookahead) {
    std::uint32_t& w = want[s];
    w = std::max(w, std::min<std::uint32_t>(level + 1 + lookahead, most));
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
  // A stack swept because a swept node spawns into it may get work from levels its source
  // reaches during the chain (a task's cilk_for part, then the part's leaves): it grows as deep.
  auto swept = [&](const ChannelStackNode* s) {
    return std::any_of(launches_.begin(), launches_.end(), [&](const Launch& l) { return l.sweep == s; });
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (const Launch& l : launches_) {
      if (!l.sweep || !want.count(l.sweep)) continue;
      const std::uint32_t from = want[l.sweep];
      for (const PortTarget& port : l.sweep->consumer()->ports()) {
        auto* const* target = std::get_if<ChannelStackNode*>(&port.node);
        if (!target || !swept(*target)) continue;
        // As deep as the source (whose depth already looks a level or more past its work): a
        // child one level down still fits, and a cycle of such stacks cannot grow them.
        std::uint32_t& to = want[*target];
        if (to < from) {
          to = from;
          grew = true;
        }
      }
    }
  }
  for (const auto& [stack, levels] : want)
    if (stack->depth() < levels) stack->level(levels - 1);
  collect_watched();
}

}  // namespace chanflow
