// Laying a round out on the device (the levels it reaches, one environment per launch and level,
// restart lists, counters, plans: ordered non-blocking copies) and launching it.
#include "aggregator.hpp"
#include "chanflow/device_heap.hpp"

#include <fmt/format.h>

#include <map>

namespace chanflow {

// Only what each kernel reaches: NVIDIA's OpenCL charges every launch for each named pointer
// (scheduler/README.md, "What a launch costs").
std::vector<void*> Aggregator::indirect_svm(const KernelNode& k) const {
  std::vector<void*> ptrs = graph_.table_.svm_allocations();  // headers, channel storage, frame scratch
  // The aggregator's blocks are in the headers' allocation unless they outgrew its control area.
  ptrs.insert(ptrs.end(), {status_.allocation(), env_pool_.allocation(), positions_pool_.allocation(),
                           yield_pool_.allocation(), counters_.allocation(), resumable_.allocation(),
                           args_[k.index_].allocation()});
  if (graph_.heap_) ptrs.push_back(graph_.heap_->device_ptr());
  for (void* p : k.svm_uses_)
    if (std::find(ptrs.begin(), ptrs.end(), p) == ptrs.end()) ptrs.push_back(p);
  ptrs.erase(std::remove(ptrs.begin(), ptrs.end(), nullptr), ptrs.end());
  return ptrs;
}

void Aggregator::write_env(std::size_t launch_index, const Launch& l) {
  const Watched& w = watched_[l.input];
  const KernelNode& k = *w.consumer;
  chanflow_node_env& e = envs_[l.env_at];
  e = chanflow_node_env{};
  const std::vector<std::uint32_t>& staging = k.staging_offsets();
  for (std::size_t p = 0; p < k.ports().size(); ++p) {
    const auto& port = k.ports()[p];
    const std::uint32_t words = port_ce_bytes(port) / 4;
    // A multi-level launch's deepest levels may point at a level not made yet: 0, which has no
    // room (a sweep's work-groups skip it; a range dispatch never has CEs there).
    Channel* target = nullptr;
    if (auto* c = std::get_if<ChannelNode*>(&port.node)) {
      target = &(*c)->channel();
    } else {
      auto* stack = std::get<ChannelStackNode*>(port.node);
      const std::uint32_t d = w.level + static_cast<std::uint32_t>(port.level_delta());
      if ((!l.sweep && !l.stack) || d < stack->depth()) target = &stack->level(d);
    }
    e.port[p] = target ? reinterpret_cast<std::uint64_t>(target->device_ptr()) : 0;
    if (port.kind == PortKind::Continuation && target) {
      const auto* stack = std::get<ChannelStackNode*>(port.node);
      e.cont_scratch = reinterpret_cast<std::uint64_t>(stack->scratch_pool(w.level));
    }
    e.max_spawns[p] = port.max_per_item;
    e.ce_words[p] = words;
    e.staging_offset[p] = staging[p];
  }
  e.user_args = reinterpret_cast<std::uint64_t>(args_[k.index_].get());
  e.status = reinterpret_cast<std::uint64_t>(status_.get());
  e.heap = graph_.heap_ ? reinterpret_cast<std::uint64_t>(graph_.heap_->device_ptr()) : 0;
  e.serial_depth = options_.serial_depth;
  e.positions = l.restart ? reinterpret_cast<std::uint64_t>(static_cast<std::uint64_t*>(positions_pool_.get()) + l.positions_at) : 0;
  e.ports = static_cast<std::uint32_t>(k.ports().size());
  e.depth = w.level;
  e.node = k.index_;
  e.yielding = k.is_yielding() ? 1 : 0;
  e.group_ces = k.ces_per_group(wg_);
  e.batch_ces = l.sweep ? 0 : l.batch;  // a planned sweep's: written by the planning kernel
  e.cont_port = k.continuation_port().value_or(0xffffffffu);
  e.frames = w.stack && w.stack->kind() == StackKind::Continuations ? 1 : 0;
  if (w.stack) e.in_scratch = reinterpret_cast<std::uint64_t>(w.stack->scratch_pool(w.level));
  if (w.stack && w.level < CHANFLOW_SWEEP_MAX_LEVELS)
    e.resumable = reinterpret_cast<std::uint64_t>(static_cast<std::uint32_t*>(resumable_.get()) +
                                                  stack_index(*w.stack) * CHANFLOW_SWEEP_MAX_LEVELS + w.level);
  e.in = reinterpret_cast<std::uint64_t>(w.channel->device_ptr());
  e.counters = reinterpret_cast<std::uint64_t>(static_cast<chanflow_launch_counters*>(counters_.get()) + launch_index);
  if (k.is_yielding()) {
    e.yields = reinterpret_cast<std::uint64_t>(static_cast<chanflow_yield_record*>(yield_pool_.get()) + l.yields_at);
    e.yield_capacity = static_cast<std::uint32_t>(l.count);
    // Where a yielded task keeps its records; a planned sweep admits only what fits, and the device
    // scheduler prepays every batch's outputs, so neither yields.
    if (!(l.sweep && l.planned) && !l.device) {
      void* state = w.stack ? w.stack->yield_state(w.level) : w.node->yield_state(graph_.table_);
      e.yield_state = reinterpret_cast<std::uint64_t>(state);
      e.yield_state_bytes = state ? (w.stack ? w.stack->yield_state_bytes_ : w.node->yield_state_bytes_) : 0;
    }
  }
}

// One environment per level of `stack`, level d at env_at + d; each carries the level count.
void Aggregator::write_level_envs(std::size_t launch_index, const Launch& l, ChannelStackNode& stack) {
  const std::uint32_t levels = l.levels;  // as laid out: a later launch's write_env may add levels
  for (std::uint32_t d = 0; d < levels; ++d) {
    Launch level = l;
    level.env_at = l.env_at + d;
    level.input = static_cast<std::uint32_t>(watched_of_.at(&stack.level(d)));
    write_env(launch_index, level);
    envs_[level.env_at].sweep_levels = levels;
  }
}

void Aggregator::write_sweep_envs(std::size_t launch_index, const Launch& l) {
  write_level_envs(launch_index, l, *l.sweep);
  for (std::uint32_t d = 0; d < l.levels; ++d) {
    chanflow_node_env& e = envs_[l.env_at + d];
    e.unclaimed = serial_ranged(watched_[watched_of_.at(&l.sweep->level(d))]) ? 1 : 0;
    e.room_check = graph_.options().sweep_room_check ? 1 : 0;
    e.ranged = l.planned ? 1 : 0;  // ranges written by the planning kernel before each pass
    e.planned = l.planned ? 1 : 0;
  }
}

// The levels with a range get consecutive work-groups.
void Aggregator::write_ranged_envs(std::size_t launch_index, const Launch& l) {
  write_level_envs(launch_index, l, *l.stack);
  const std::uint32_t per = l.batch;
  std::uint32_t group = 0;
  for (std::uint32_t d = 0; d < l.levels; ++d) {
    chanflow_node_env& e = envs_[l.env_at + d];
    e.ranged = 1;
    e.group_first = group;
    for (const auto& r : l.ranges)
      if (watched_[r.input].level == d) {
        e.range_begin = r.begin;
        e.range_count = static_cast<std::uint32_t>(r.count);
        group += static_cast<std::uint32_t>((r.count + per - 1) / per);
      }
  }
}

std::size_t Aggregator::stack_index(const ChannelStackNode& stack) const {
  const auto& stacks = graph_.stacks();
  return static_cast<std::size_t>(
      std::find_if(stacks.begin(), stacks.end(), [&](const auto& s) { return s.get() == &stack; }) - stacks.begin());
}

void Aggregator::lay_out() {
  forget_device_images();  // the environments and counters are the rounds' now
  std::vector<Launch>& launches = launches_;
  // Levels reachable by this round exist now; environments, restart lists and yield counters
  // go to the device as ordered non-blocking copies.
  sweeps_only_ = std::all_of(launches.begin(), launches.end(), [](const Launch& l) { return l.sweep; });
  if (std::any_of(launches.begin(), launches.end(), [](const Launch& l) { return l.sweep; })) grow_stacks_for_sweeps();
  collect_watched();
  fit_spawned_sweeps();
  std::size_t env_count = 0;
  for (auto& l : launches) {
    l.env_at = env_count;
    l.levels = l.sweep ? l.sweep->depth() : l.stack ? l.stack->depth() : 1;
    env_count += l.levels;
    if (!l.sweep) l.batch = spread(l.count, watched_[l.input].consumer->ces_per_group(wg_));
  }
  envs_.resize(env_count);
  ensure<chanflow_node_env>(env_pool_, env_count);
  ensure<std::uint64_t>(positions_pool_, positions_.size());
  ensure<chanflow_yield_record>(yield_pool_, yield_records_);
  ensure<chanflow_launch_counters>(counters_, launches.size());
  for (std::size_t i = 0; i < launches.size(); ++i) {
    if (launches[i].sweep)
      write_sweep_envs(i, launches[i]);
    else if (launches[i].stack)
      write_ranged_envs(i, launches[i]);
    else
      write_env(i, launches[i]);
  }
  rt_.svm_write_async(env_pool_.get(), envs_.data(), envs_.size() * sizeof(chanflow_node_env));
  rt_.svm_write_async(positions_pool_.get(), positions_.data(), positions_.size() * sizeof(std::uint64_t));
  any_yielding_ = std::any_of(launches.begin(), launches.end(), [&](const Launch& l) {
    return l.sweep || watched_[l.input].consumer->is_yielding();
  });
  if (any_yielding_)
    check(clEnqueueSVMMemFill(rt_.queue()(), counters_.get(), &kZeroWord, sizeof kZeroWord,
                              launches.size() * sizeof(chanflow_launch_counters), 0, nullptr, nullptr),
          "clEnqueueSVMMemFill (launch counters)");
  reach_.clear();
  for (const auto& k : graph_.kernels()) reach_.push_back(indirect_svm(*k));

  // In-order deallocation of what a pass consumed runs on the device right behind it.
  consumed_.clear();
  for (const auto& l : launches) {
    if (l.sweep)
      for (std::uint32_t d = 0; d < l.levels; ++d) consumed_.push_back(l.sweep->level(d).id());
    else if (l.stack)
      for (const auto& r : l.ranges) consumed_.push_back(watched_[r.input].channel->id());
    else
      consumed_.push_back(watched_[l.input].channel->id());
  }
  std::sort(consumed_.begin(), consumed_.end());
  consumed_.erase(std::unique(consumed_.begin(), consumed_.end()), consumed_.end());

  // A round that only sweeps is repeated on the device, as many times as the last such round
  // earned (doubling while they finish work): no host round trip between the passes. Only where
  // a pass can feed the next, though: a round whose nodes spawn into no stack it sweeps (a wave of
  // cilk_for leaves) finds all its work in its first pass, and every later pass would launch its
  // planning and sweep for nothing (~17 us each on an H100; three a leaf round, and a part's round
  // after it then got one pass where its children needed two, and a round more).
  feeds_itself_ = round_feeds_itself();
  passes_ = 1;
  if (sweeps_only_ && feeds_itself_)
    for (const Launch& l : launches)
      if (l.sweep) passes_ = std::max(passes_, chain_of(l.sweep, l.spawned ? 4 : 2));
  std::uint64_t stack_ready = 0;  // CEs ready in any stack: what a sweep's work-groups start from
  std::map<const ChannelStackNode*, std::uint64_t> own_ready;  // and in each stack
  for (std::size_t i = 0; i < views_.size(); ++i)
    if (watched_[i].stack) {
      stack_ready += views_[i].ready;
      own_ready[watched_[i].stack] += views_[i].ready;
    }
  // A planned sweep's grid is fixed for the round's passes; the planning kernel fills it.
  plans_.clear();
  for (std::size_t i = 0; i < launches.size(); ++i) {
    Launch& l = launches[i];
    if (!l.sweep) continue;
    l.sweep_groups = sweep_groups(*l.sweep, stack_ready, own_ready[l.sweep], l.spawned);
    if (l.planned)
      plans_.push_back({reinterpret_cast<std::uint64_t>(static_cast<chanflow_node_env*>(env_pool_.get()) + l.env_at),
                        reinterpret_cast<std::uint64_t>(static_cast<chanflow_launch_counters*>(counters_.get()) + i),
                        l.levels, static_cast<std::uint32_t>(l.sweep_groups), spread_groups()});
  }
  if (!plans_.empty()) rt_.svm_write_async(plan_pool_.get(), plans_.data(), plans_.size() * sizeof(chanflow_plan));
}

// Whether a pass of this round can make work for the next: a launched node spawns into a stack
// the round sweeps, or the round sweeps a continuation stack (whose frames become ready as the
// children that the round's passes run return into them).
bool Aggregator::round_feeds_itself() const {
  for (const Launch& l : launches_) {
    if (l.sweep && l.sweep->kind() == StackKind::Continuations) return true;
    for (const PortTarget& port : watched_[l.input].consumer->ports())
      if (const auto* stack = std::get_if<ChannelStackNode*>(&port.node))
        for (const Launch& m : launches_)
          if (m.sweep == *stack) return true;
  }
  return false;
}

void Aggregator::launch_passes(RunStats& stats) {
  launch_start_ = Clock::now();
  for (std::uint32_t pass = 0; pass < passes_; ++pass) {
    bool plan_enqueued = false;
    for (Launch& l : launches_) {
      // The plan goes right before the first planned sweep, after the round's host-sized
      // launches: the free space it reads then already reflects what they reserved.
      if (l.planned && !plan_enqueued) {
        cl::Event planned = enqueue_plan();
        if (trace_.enabled()) plan_events_.push_back(std::move(planned));
        plan_enqueued = true;
      }
      Watched& w = watched_[l.input];
      const cl::Kernel& k = kernels_[w.consumer->index_];
      const auto& reach = reach_[w.consumer->index_];
      stats.svm_named = std::max(stats.svm_named, static_cast<std::uint32_t>(reach.size()));
      if (kernel_svm_[w.consumer->index_] != reach) {  // only when allocations changed
        set_indirect_svm(k, reach);
        kernel_svm_[w.consumer->index_] = reach;
      }
      set_arg_svm(k, 0, w.channel->device_ptr());
      set_arg(k, 1, cl_ulong{l.begin});
      set_arg(k, 2, static_cast<cl_uint>(l.count));
      set_arg_svm(k, 3, static_cast<chanflow_node_env*>(env_pool_.get()) + l.env_at);
      const std::uint32_t per = l.sweep ? w.consumer->ces_per_group(wg_) : l.batch;
      std::size_t groups = (l.count + per - 1) / per;
      if (l.sweep) groups = l.sweep_groups;
      if (l.stack) {
        groups = 0;
        for (const auto& r : l.ranges) groups += (r.count + per - 1) / per;
      }
      cl::Event event = launch(rt_, k, groups * wg_, wg_, trace_.enabled());
      if (trace_.enabled()) l.events.push_back(std::move(event));
      ++stats.dispatches;
      if (l.sweep) {
        ++stats.sweeps;
        continue;
      }
      // What the launch took, per level for a multi-level range dispatch.
      auto took = [&](Watched& level, std::uint64_t count, bool restart) {
        if (!restart) level.channel->mark_dispatched(count);
        stats.ces += count;
        stats.ces_per_channel[level.channel->config().name] += count;
        stats.max_level = std::max(stats.max_level, level.level);
        if (options_.record_dispatches)
          stats.dispatch_log.push_back(
              {stats.rounds, level.channel->config().name, level.consumer->name(), level.level, count, restart});
      };
      if (l.stack)
        for (const auto& r : l.ranges) took(watched_[r.input], r.count, false);
      else
        took(w, l.count, l.restart);
    }
    graph_.table_.enqueue_deallocate(consumed_);
  }
  enqueue_us_ += std::chrono::duration<double, std::micro>(Clock::now() - launch_start_).count();
}

}  // namespace chanflow
