// The aggregator loop: counters in, policy decisions, admission-controlled launches, restart
// contexts, statistics.
#include "aggregator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace chanflow {

static_assert(sizeof(chanflow_node_env) == CHANFLOW_NODE_ENV_BYTES);
static_assert(sizeof(chanflow_plan) == 24);
static_assert(offsetof(chanflow_node_env, max_spawns) == 104);
static_assert(offsetof(chanflow_node_env, yield_capacity) == 220);
static_assert(sizeof(chanflow_yield_record) == 16);
static_assert(sizeof(chanflow_launch_counters) == 32);
static_assert(sizeof(chanflow_task) == 24);
static_assert(sizeof(chanflow_frame) == CHANFLOW_FRAME_BYTES);

namespace {

using Clock = std::chrono::steady_clock;
constexpr cl_uint kZero = 0;
constexpr std::uint32_t kUnchangedRounds = 3;  // rounds in a row that changed nothing: no progress

double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

std::string describe(const chanflow_status& s, const Graph& g) {
  const std::string node = s.node < g.kernels().size() ? g.kernels()[s.node]->name() : fmt::format("#{}", s.node);
  switch (s.code) {
    case CHANFLOW_ERR_CE_SIZE:
      return fmt::format("kernel node '{}': its body's CE type is {} bytes but its input channel holds {}-byte CEs",
                         node, s.extra, s.detail);
    case CHANFLOW_ERR_SPAWN_LIMIT:
      return fmt::format("kernel node '{}' spawned more than the {} CE(s) per item its edge on port {} declares",
                         node, s.extra, s.detail);
    case CHANFLOW_ERR_SPAWN_SIZE:
      return fmt::format("kernel node '{}' spawned a value whose size differs from port {}'s {}-byte CEs", node,
                         s.detail, s.extra);
    case CHANFLOW_ERR_BAD_PORT:
      return fmt::format("kernel node '{}' spawned on port {}, but it has {} output port(s)", node, s.detail, s.extra);
    case CHANFLOW_ERR_CHANNEL_FULL:
      return fmt::format("kernel node '{}': port {}'s channel refused a reservation the aggregator had admitted "
                         "(a non-yielding node; are other producers writing to it?)",
                         node, s.detail);
    case CHANFLOW_ERR_NODE_KIND:
      return s.extra ? fmt::format("kernel node '{}' is a CHANFLOW_CONTINUATION_NODE but its input is not a continuation stack", node)
                     : fmt::format("kernel node '{}' consumes a continuation stack: define its kernel with "
                                   "CHANFLOW_CONTINUATION_NODE", node);
    case CHANFLOW_ERR_NO_CONTINUATION:
      return fmt::format("kernel node '{}' spawned a child returning into its continuation (or the continuation "
                         "itself), but it has no Continuation port",
                         node);
    case CHANFLOW_ERR_YIELD_SPACE:
      return fmt::format("kernel node '{}' wrote more restart contexts than its dispatch had items", node);
    default:
      return fmt::format("kernel node '{}': device error code {}", node, s.code);
  }
}

std::string target_name(const PortTarget& port) {
  return std::visit([](auto* n) { return n->name(); }, port.node);
}

}  // namespace

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

template <class T>
void Aggregator::ensure(SvmBuffer& buffer, const Runtime& rt, std::size_t count) {
  const std::size_t bytes = std::max<std::size_t>(count, 64) * sizeof(T);
  if (buffer.size() < bytes) buffer = SvmBuffer(rt, bytes * 2);
}

Aggregator::Aggregator(Graph& graph, SchedulingPolicy& policy, const RunOptions& options)
    : graph_(graph),
      policy_(policy),
      options_(options),
      rt_(graph.runtime()),
      wg_(graph.options().wg_size),
      trace_(!options.trace_path.empty()) {
  const auto& program = graph_.program();
  for (const auto& k : graph_.kernels()) {
    kernels_.push_back(rt_.kernel(program, k->kernel_name().c_str()));
    kernel_svm_.emplace_back();
    // The argument block lives in SVM so pointers inside it stay valid on the device.
    SvmBuffer block(rt_, std::max<std::size_t>(k->args_.size(), 16));
    rt_.svm_fill_zero(block.get(), block.size());
    rt_.svm_write(block.get(), k->args_.data(), k->args_.size());
    args_.push_back(std::move(block));
  }
  status_ = SvmBuffer(rt_, sizeof(chanflow_status));
  rt_.svm_fill_zero(status_.get(), status_.size());
  // The pools start at a size most runs never outgrow, allocated here rather than in the
  // timed loop (an SVM allocation costs about a millisecond on some drivers).
  ensure<chanflow_node_env>(env_pool_, rt_, 256);
  ensure<std::uint64_t>(positions_pool_, rt_, 1u << 16);
  ensure<chanflow_yield_record>(yield_pool_, rt_, 1u << 16);
  ensure<chanflow_launch_counters>(counters_, rt_, 256);
  resumable_ = SvmBuffer(rt_, std::max<std::size_t>(graph_.stacks().size(), 1) * CHANFLOW_SWEEP_MAX_LEVELS * sizeof(std::uint32_t));
  rt_.svm_fill_zero(resumable_.get(), resumable_.size());

  sweeps_ = graph_.options().device_sweeps;
  const bool claimable = claimed_sweeps_hold(rt_.caps());
  if (sweeps_ == Sweeps::Auto) sweeps_ = claimable ? Sweeps::Claimed : Sweeps::Planned;
  if (sweeps_ == Sweeps::Claimed && !claimable)
    throw RunError(fmt::format("claimed device sweeps need a device whose work-groups see each other's stores in "
                               "order within a launch: '{}' is not an x86-64 CPU device (a claimed sweep reads CEs "
                               "other work-groups wrote in the same launch; use Sweeps::Planned, Auto or Off)",
                               rt_.caps().name));
  if (sweeps_ == Sweeps::Planned && graph_.options().max_channels > CHANFLOW_PLAN_MAX_CHANNELS) {
    if (graph_.options().device_sweeps == Sweeps::Auto) sweeps_ = Sweeps::Off;  // host-sized dispatches
    else throw RunError(fmt::format("planned device sweeps keep free space for at most {} channel-table slots; this "
                                 "graph has {} (GraphOptions::max_channels)",
                                 CHANFLOW_PLAN_MAX_CHANNELS, graph_.options().max_channels));
  }
  if (sweeps_ == Sweeps::Planned) {
    plan_kernel_ = rt_.kernel(program, "chanflow_plan_batches");
    std::size_t kernel_max = 0;
    check(clGetKernelWorkGroupInfo(plan_kernel_(), rt_.device()(), CL_KERNEL_WORK_GROUP_SIZE, sizeof kernel_max,
                                   &kernel_max, nullptr),
          "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
    plan_local_ = std::min<std::size_t>({CHANFLOW_PLAN_MAX_LEVELS, rt_.caps().max_work_group_size, kernel_max});
    plan_pool_ = SvmBuffer(rt_, CHANFLOW_PLAN_MAX_LEVELS * sizeof(chanflow_plan));
  }
  if (trace_.enabled() && !rt_.profiling())
    throw RunError("a trace needs kernel timestamps: make the Runtime with DeviceSelection::profiling = true");
  trace_.name_row(0, "aggregator");
  for (std::size_t i = 0; i < graph_.kernels().size(); ++i)
    trace_.name_row(static_cast<int>(i) + 1, "kernel " + graph_.kernels()[i]->name());
}

Aggregator::~Aggregator() { rt_.finish_quietly(); }

void Aggregator::collect_slots() {
  // Append-only: a slot's index (its ChannelView id) never changes during a run, while stacks
  // grow new levels at the end.
  auto add = [&](Channel& channel, KernelNode* consumer, ChannelStackNode* stack, std::uint32_t level,
                 const ChannelPredicate& predicate) {
    if (slot_of_.emplace(&channel, slots_.size()).second)
      slots_.push_back({&channel, consumer, stack, level, predicate ? &predicate : nullptr, {}});
  };
  for (const auto& c : graph_.channels()) add(c->channel(), c->consumer(), nullptr, 0, c->predicate());
  for (const auto& s : graph_.stacks())
    for (std::uint32_t d = 0; d < s->depth(); ++d) add(s->level(d), s->consumer(), s.get(), d, s->predicate());
}

std::uint32_t Aggregator::port_ce_bytes(const PortTarget& port) {
  if (auto* c = std::get_if<ChannelNode*>(&port.node)) return (*c)->channel().config().ce_bytes;
  return std::get<ChannelStackNode*>(port.node)->ce_bytes();
}

Channel& Aggregator::port_channel(const PortTarget& port, std::uint32_t level) {
  if (auto* c = std::get_if<ChannelNode*>(&port.node)) return (*c)->channel();
  return std::get<ChannelStackNode*>(port.node)->level(level + static_cast<std::uint32_t>(port.level_delta()));
}

std::int64_t Aggregator::port_free(const PortTarget& port, std::uint32_t level) const {
  if (auto* c = std::get_if<ChannelNode*>(&port.node))
    return static_cast<std::int64_t>((*c)->channel().counters().data_free);
  auto* s = std::get<ChannelStackNode*>(port.node);
  const std::uint32_t d = level + static_cast<std::uint32_t>(port.level_delta());
  if (d >= s->depth()) return s->capacity_per_level();  // a level not made yet is empty
  return static_cast<std::int64_t>(s->level(d).counters().data_free);
}

// A blocked context may restart once its port could take at least one work-group's request.
bool Aggregator::port_has_room(const Slot& slot, std::uint32_t port) const {
  const auto& p = slot.consumer->ports()[port];
  return port_free(p, slot.level) >= static_cast<std::int64_t>(std::uint64_t{wg_} * p.max_per_item);
}

std::uint64_t Aggregator::admits(const Slot& slot, const PortTarget& port, std::int64_t free) const {
  const auto fits = static_cast<std::uint64_t>(std::max<std::int64_t>(free, 0)) / port.max_per_item;
  // Worst case for a node that must not fail; a yielding node may take a work-group more.
  return slot.consumer->is_yielding() && free > 0 ? std::max<std::uint64_t>(fits, wg_) : fits;
}

void Aggregator::build_views() {
  views_.clear();
  // The deepest stack level holding work (ready CEs or blocked contexts). A channel's producers
  // are busy while a channel feeding it (through its consumer's ports) holds work.
  std::uint32_t deepest_work = 0;
  bool any_stack_work = false;
  std::set<const Channel*> fed;
  for (const Slot& s : slots_) {
    const auto& h = s.channel->counters();
    if (h.ctrl_published == h.ctrl_head && s.blocked.empty()) continue;
    if (s.stack) {
      deepest_work = any_stack_work ? std::max(deepest_work, s.level) : s.level;
      any_stack_work = true;
    }
    for (const auto& port : s.consumer->ports()) {
      if (auto* c = std::get_if<ChannelNode*>(&port.node)) {
        fed.insert(&(*c)->channel());
      } else {
        auto* stack = std::get<ChannelStackNode*>(port.node);
        const std::uint32_t d = s.level + static_cast<std::uint32_t>(port.level_delta());
        if (d < stack->depth()) fed.insert(&stack->level(d));
      }
    }
  }
  max_level_ = deepest_work;

  bool any_default_passes = false;
  for (std::uint32_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    const auto& h = s.channel->counters();
    ChannelView v;
    v.id = i;
    v.name = s.channel->config().name;
    v.consumer = s.consumer->name();
    v.in_stack = s.stack != nullptr;
    v.continuation = s.stack && s.stack->kind() == StackKind::Continuations;
    v.level = s.level;
    v.ready = h.ctrl_published - h.ctrl_head;
    v.capacity = s.channel->config().capacity;
    v.free = static_cast<std::uint64_t>(std::max<std::int64_t>(static_cast<std::int64_t>(h.data_free), 0));
    v.blocked = s.blocked.size();
    for (const auto& b : s.blocked) v.restartable += port_has_room(s, b.port);
    v.admissible = v.ready;
    for (const auto& port : s.consumer->ports())
      v.admissible = std::min(v.admissible, admits(s, port, port_free(port, s.level)));
    v.producers_idle = fed.count(s.channel) == 0;
    if (s.predicate) {
      v.predicate = v.admissible > 0 && (*s.predicate)(v);
    } else {
      v.predicate = v.admissible > 0 && (v.ready >= wg_ || (v.ready > 0 && v.producers_idle));
      any_default_passes |= v.predicate;
    }
    views_.push_back(v);
  }
  // No default-predicate channel may go (a channel feeding itself never has idle producers):
  // everything is idle between rounds, so any ready CEs may.
  if (!any_default_passes)
    for (std::uint32_t i = 0; i < slots_.size(); ++i)
      if (!slots_[i].predicate) views_[i].predicate = views_[i].ready > 0 && views_[i].admissible > 0;
}

// Only what each kernel reaches: NVIDIA's OpenCL charges every launch ~0.6 µs per named
// pointer (see scheduler/README.md, "What a launch costs").
std::vector<void*> Aggregator::indirect_svm(const KernelNode& k) const {
  std::vector<void*> ptrs = graph_.table_.svm_allocations();  // headers and channel storage
  ptrs.insert(ptrs.end(), {status_.get(), env_pool_.get(), positions_pool_.get(), yield_pool_.get(),
                           counters_.get(), resumable_.get(), args_[k.index_].get()});
  for (void* p : k.svm_uses_)
    if (std::find(ptrs.begin(), ptrs.end(), p) == ptrs.end()) ptrs.push_back(p);
  ptrs.erase(std::remove(ptrs.begin(), ptrs.end(), nullptr), ptrs.end());
  return ptrs;
}

void Aggregator::write_env(std::size_t launch_index, const Launch& l) {
  const Slot& slot = slots_[l.slot];
  const KernelNode& k = *slot.consumer;
  chanflow_node_env& e = envs_[l.env_at];
  e = chanflow_node_env{};
  std::uint32_t staging = 0;
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
      const std::uint32_t d = slot.level + static_cast<std::uint32_t>(port.level_delta());
      if ((!l.sweep && !l.stack) || d < stack->depth()) target = &stack->level(d);
    }
    e.port[p] = target ? reinterpret_cast<std::uint64_t>(target->device_ptr()) : 0;
    e.max_spawns[p] = port.max_per_item;
    e.ce_words[p] = words;
    e.staging_offset[p] = staging;
    staging += port.max_per_item * words;
  }
  e.user_args = reinterpret_cast<std::uint64_t>(args_[k.index_].get());
  e.status = reinterpret_cast<std::uint64_t>(status_.get());
  e.positions = l.restart ? reinterpret_cast<std::uint64_t>(static_cast<std::uint64_t*>(positions_pool_.get()) + l.positions_at) : 0;
  e.ports = static_cast<std::uint32_t>(k.ports().size());
  e.depth = slot.level;
  e.node = k.index_;
  e.yielding = k.is_yielding() ? 1 : 0;
  e.cont_port = k.continuation_port().value_or(0xffffffffu);
  e.frames = slot.stack && slot.stack->kind() == StackKind::Continuations ? 1 : 0;
  if (slot.stack && slot.level < CHANFLOW_SWEEP_MAX_LEVELS)
    e.resumable = reinterpret_cast<std::uint64_t>(static_cast<std::uint32_t*>(resumable_.get()) +
                                                  stack_index(*slot.stack) * CHANFLOW_SWEEP_MAX_LEVELS + slot.level);
  e.in = reinterpret_cast<std::uint64_t>(slot.channel->device_ptr());
  e.counters = reinterpret_cast<std::uint64_t>(static_cast<chanflow_launch_counters*>(counters_.get()) + launch_index);
  if (k.is_yielding()) {
    e.yields = reinterpret_cast<std::uint64_t>(static_cast<chanflow_yield_record*>(yield_pool_.get()) + l.yields_at);
    e.yield_capacity = static_cast<std::uint32_t>(l.count);
  }
}

// One environment per level of `stack`, level d at env_at + d; each carries the level count.
void Aggregator::write_level_envs(std::size_t launch_index, const Launch& l, ChannelStackNode& stack) {
  const std::uint32_t levels = l.levels;  // as laid out: a later launch's write_env may add levels
  for (std::uint32_t d = 0; d < levels; ++d) {
    Launch level = l;
    level.env_at = l.env_at + d;
    level.slot = static_cast<std::uint32_t>(slot_of_.at(&stack.level(d)));
    write_env(launch_index, level);
    envs_[level.env_at].sweep_levels = levels;
  }
}

void Aggregator::write_sweep_envs(std::size_t launch_index, const Launch& l) {
  write_level_envs(launch_index, l, *l.sweep);
  for (std::uint32_t d = 0; d < l.levels; ++d) {
    chanflow_node_env& e = envs_[l.env_at + d];
    e.room_check = graph_.options().sweep_room_check ? 1 : 0;
    e.ranged = l.planned ? 1 : 0;  // ranges written by the planning kernel before each pass
    e.planned = l.planned ? 1 : 0;
  }
}

std::size_t Aggregator::stack_index(const ChannelStackNode& stack) const {
  const auto& stacks = graph_.stacks();
  return static_cast<std::size_t>(
      std::find_if(stacks.begin(), stacks.end(), [&](const auto& s) { return s.get() == &stack; }) - stacks.begin());
}

void Aggregator::merge_level_ranges(std::vector<Launch>& launches) const {
  std::vector<Launch> out;
  std::map<ChannelStackNode*, std::size_t> merged;  // stack -> index in out
  std::map<ChannelStackNode*, std::size_t> per_stack;
  for (const auto& l : launches)
    if (!l.sweep && !l.restart && slots_[l.slot].stack) ++per_stack[slots_[l.slot].stack];
  for (auto& l : launches) {
    ChannelStackNode* stack = l.sweep || l.restart ? nullptr : slots_[l.slot].stack;
    if (!stack || per_stack[stack] < 2) {
      out.push_back(std::move(l));
      continue;
    }
    auto [it, fresh] = merged.emplace(stack, out.size());
    if (fresh) {
      Launch m{.slot = static_cast<std::uint32_t>(slot_of_.at(&stack->level(0)))};
      m.stack = stack;
      out.push_back(std::move(m));
    }
    Launch& m = out[it->second];
    m.ranges.push_back({l.slot, l.begin, l.count});
    m.count += l.count;
  }
  launches = std::move(out);
}

// The levels with a range get consecutive work-groups.
void Aggregator::write_ranged_envs(std::size_t launch_index, const Launch& l) {
  write_level_envs(launch_index, l, *l.stack);
  std::uint32_t group = 0;
  for (std::uint32_t d = 0; d < l.levels; ++d) {
    chanflow_node_env& e = envs_[l.env_at + d];
    e.ranged = 1;
    e.group_first = group;
    for (const auto& r : l.ranges)
      if (slots_[r.slot].level == d) {
        e.range_begin = r.begin;
        e.range_count = static_cast<std::uint32_t>(r.count);
        group += static_cast<std::uint32_t>((r.count + wg_ - 1) / wg_);
      }
  }
}

bool Aggregator::sweepable(const Slot& slot, const std::vector<Launch>& launches) const {
  if (sweeps_ == Sweeps::Off || !slot.stack) return false;
  const KernelNode& k = *slot.consumer;
  if (!(k.is_yielding() || k.ports().empty())) return false;
  // A sweep spans at most CHANFLOW_SWEEP_MAX_LEVELS levels, and its deepest work needs the level
  // below for its children: deeper recursion goes on with host-sized dispatches, which make
  // levels on demand.
  if (slot.stack->depth() > CHANFLOW_SWEEP_MAX_LEVELS || max_level_ + 2 > CHANFLOW_SWEEP_MAX_LEVELS) return false;
  // One planning kernel covers every level of the round's planned sweeps.
  const auto planned = std::count_if(launches.begin(), launches.end(), [&](const Launch& l) {
    return l.planned && l.sweep != slot.stack;
  });
  return sweeps_ != Sweeps::Planned ||
         static_cast<std::size_t>(planned + 1) * CHANFLOW_SWEEP_MAX_LEVELS <= CHANFLOW_PLAN_MAX_LEVELS;
}

cl::Event Aggregator::enqueue_plan() {
  // The planner reads channel headers, the levels' environments, the yield counters and the
  // resumable counts; never channel storage or user data.
  const std::vector<void*> svm{graph_.table_.headers_allocation(), env_pool_.get(), counters_.get(),
                               resumable_.get()};
  if (plan_kernel_svm_ != svm) {
    set_indirect_svm(plan_kernel_, svm);
    plan_kernel_svm_ = svm;
  }
  set_arg_svm(plan_kernel_, 0, plan_pool_.get());
  set_arg(plan_kernel_, 1, static_cast<cl_uint>(plans_.size()));
  return launch(rt_, plan_kernel_, plan_local_, plan_local_, trace_.enabled());
}

// Work-groups for a sweep: each takes one batch, those starting later taking what earlier ones
// produced, and every one runs the node's collectives even when it finds nothing (PoCL 3.1
// mis-runs a kernel that skips them conditionally), so idle ones are not free. The first sweep
// of a stack gets room for what is ready and what it spawns; later ones a quarter more than the
// batches the last sweeps found; never more than the levels can hold.
std::uint32_t Aggregator::sweep_groups(const ChannelStackNode& stack, std::uint64_t ready) const {
  if (graph_.options().sweep_groups) return graph_.options().sweep_groups;
  const std::uint64_t holds = (std::uint64_t{stack.depth()} * stack.capacity_per_level() + wg_ - 1) / wg_;
  const auto last = batches_.find(&stack);
  const std::uint64_t want = last != batches_.end() ? last->second + last->second / 4 + 2
                                                     : 2 * ((ready + wg_ - 1) / wg_) + 2;
  const std::uint64_t floor = 2 * std::max(1u, rt_.caps().compute_units);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(std::max(want, floor), std::min<std::uint64_t>(holds, 1u << 16)));
}

// A chain of sweeps may descend many levels in one host round: every stack gets a few levels
// beyond the deepest work, as many as a modest amount of memory allows (levels cost
// capacity x CE size each).
void Aggregator::grow_stacks_for_sweeps() {
  constexpr std::uint64_t kLookaheadBytes = 16ull << 20;
  for (const auto& s : graph_.stacks()) {
    const std::uint64_t level_bytes = std::uint64_t{s->capacity_per_level()} * s->ce_bytes();
    const std::uint32_t ahead = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(kLookaheadBytes / std::max<std::uint64_t>(level_bytes, 1), 1, 8));
    const std::uint32_t want = std::min<std::uint32_t>(max_level_ + 1 + ahead, CHANFLOW_SWEEP_MAX_LEVELS);
    if (s->depth() < want) s->level(want - 1);
  }
  collect_slots();
}

void Aggregator::check_device_status() const {
  chanflow_status s{};
  rt_.svm_read(&s, status_.get(), sizeof s);
  if (s.code != CHANFLOW_ERR_NONE) throw RunError("device-side error: " + describe(s, graph_));
}

std::uint64_t Aggregator::collect_yields(const std::vector<Launch>& launches, std::uint32_t passes, RunStats& stats) {
  std::vector<chanflow_launch_counters> counts(launches.size());
  rt_.svm_read(counts.data(), counters_.get(), counts.size() * sizeof(chanflow_launch_counters));
  std::uint64_t finished = 0;
  std::vector<chanflow_yield_record> records;
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const chanflow_launch_counters& c = counts[i];
    stats.restarts += c.restarts;  // counted by the tasks that ran again, in every dispatch mode
    if (launches[i].sweep) {
      // Size the stack's next sweeps by the work-groups that found CEs in these.
      batches_[launches[i].sweep] = (c.batches + passes - 1) / passes;
      // A sweep's restart contexts are re-published control entries, run again by a later claim.
      stats.yields += c.yields;
      stats.partial_yields += c.partial_yields;
      stats.ces += c.claimed;
      stats.ces_per_channel[launches[i].sweep->name() + "[*]"] += c.claimed;
      finished += c.claimed - std::min(c.claimed, c.yields);
      continue;
    }
    const std::uint32_t n = std::min<std::uint64_t>(c.yields, launches[i].count);
    finished += launches[i].count - n;
    if (n == 0) continue;
    records.resize(n);
    rt_.svm_read(records.data(), static_cast<chanflow_yield_record*>(yield_pool_.get()) + launches[i].yields_at,
                 n * sizeof(chanflow_yield_record));
    const auto cont = slots_[launches[i].slot].consumer->continuation_port();
    for (const auto& r : records) {
      // A multi-level launch's record names its level.
      Slot& slot = launches[i].stack ? slots_[slot_of_.at(&launches[i].stack->level(r.depth))] : slots_[launches[i].slot];
      slot.blocked.push_back({r.ctrl_pos, r.blocked_port});
      stats.partial_yields += cont && r.blocked_port > *cont;
    }
    stats.yields += n;
  }
  return finished;
}

// Every task a sweep counted as resumable has run again by the end: a count left over would
// keep the planner from charging continuation room at its level in a later run of the graph.
void Aggregator::check_resumable_counts() const {
  std::vector<std::uint32_t> counts(resumable_.size() / sizeof(std::uint32_t));
  rt_.svm_read(counts.data(), resumable_.get(), resumable_.size());
  for (std::size_t i = 0; i < counts.size(); ++i)
    if (counts[i] != 0)
      throw RunError(fmt::format("internal error: level {} of channel stack '{}' still counts {} resumable task(s) "
                                 "at the end of the run",
                                 i % CHANFLOW_SWEEP_MAX_LEVELS, graph_.stacks()[i / CHANFLOW_SWEEP_MAX_LEVELS]->name(),
                                 counts[i]));
}

std::vector<std::uint64_t> Aggregator::fingerprint() const {
  std::vector<std::uint64_t> f;
  f.reserve(slots_.size() * 5);
  for (const Slot& s : slots_) {
    const auto& h = s.channel->counters();
    f.insert(f.end(), {h.data_head, h.data_tail, h.ctrl_head, h.ctrl_published, s.blocked.size()});
  }
  return f;
}

void Aggregator::no_progress(Stall why) const {
  std::string msg = fmt::format("no progress possible: work remains but no dispatch can be made (policy '{}'):",
                                policy_.name());
  for (const auto& v : views_) {
    if (v.ready == 0 && v.blocked == 0) continue;
    const Slot& slot = slots_[v.id];
    msg += fmt::format("\n  - channel '{}': {} ready, {} blocked context(s), consumer '{}'", v.name, v.ready, v.blocked,
                       v.consumer);
    if (v.ready > 0 && v.admissible == 0) {
      for (std::uint32_t p = 0; p < slot.consumer->ports().size(); ++p) {
        const auto& port = slot.consumer->ports()[p];
        const std::int64_t free = port_free(port, slot.level);
        if (free < static_cast<std::int64_t>(port.max_per_item))
          msg += fmt::format("; blocked on port {} into '{}' (depth {}), which has {} free slot(s) but needs {} per CE",
                             p, target_name(port), slot.level + port.level_delta(), std::max<std::int64_t>(free, 0),
                             port.max_per_item);
      }
    } else if (v.blocked > 0 && v.restartable == 0) {
      const auto& b = slot.blocked.front();
      const auto& port = slot.consumer->ports()[b.port];
      msg += fmt::format("; yielded work-groups wait on port {} into '{}' (depth {}), which has {} free slot(s), "
                         "less than one work-group's request ({})",
                         b.port, target_name(port), slot.level + port.level_delta(),
                         std::max<std::int64_t>(port_free(port, slot.level), 0), std::uint64_t{wg_} * port.max_per_item);
    } else {
      switch (why) {
        case Stall::SweepsFinishedNothing:
          msg += fmt::format("; {} admissible, but two device sweeps in a row finished none of it", v.admissible);
          break;
        case Stall::NothingChanged:
          msg += fmt::format("; {} admissible and {} restartable, but {} rounds in a row changed no channel (every "
                             "dispatch was refused or yielded again)",
                             v.admissible, v.restartable, kUnchangedRounds);
          break;
        case Stall::NothingDispatchable:
          msg += fmt::format("; {} admissible and {} restartable, but the policy dispatched nothing", v.admissible,
                             v.restartable);
          break;
      }
    }
  }
  throw RunError(msg);
}

// Quiescent, yet CEs are still allocated: reserved and never enqueued, or dequeued and never
// freed. With join counters this is a continuation frame whose children never all returned.
void Aggregator::lost_work() const {
  check_device_status();
  std::string msg = "the run went quiet with CEs still allocated (they would never run):";
  for (const Slot& s : slots_) {
    const auto& h = s.channel->counters();
    if (h.data_tail == h.data_head) continue;
    msg += fmt::format("\n  - channel '{}': {} CE(s) allocated, none ready", s.channel->config().name,
                       h.data_tail - h.data_head);
    if (s.stack && s.stack->kind() == StackKind::Continuations)
      msg += " (continuation frames whose children did not all return: does every task reach its return?)";
  }
  throw RunError(msg);
}

RunStats Aggregator::run() {
  RunStats stats;
  stats.policy = policy_.name();
  const auto run_start = Clock::now();
  double device_us = 0, enqueue_us = 0;
  std::vector<Dispatch> decisions;
  std::vector<Launch> launches;

  for (;;) {
    if (options_.max_rounds && stats.rounds >= options_.max_rounds)
      throw RunError(fmt::format("stopped after the round limit ({} rounds)", options_.max_rounds));
    const auto round_start = Clock::now();
    collect_slots();
    graph_.table_.refresh();  // every channel's counters in one transfer
    std::uint64_t live_bytes = 0;
    graph_.table_.check_errors();
    for (auto& s : slots_) {
      const auto& h = s.channel->counters();
      live_bytes += (h.data_tail - h.data_head) * s.channel->config().ce_bytes;
    }
    stats.peak_live_bytes = std::max(stats.peak_live_bytes, live_bytes);

    // Structural freedom from hangs: rounds that leave every channel and restart context as it
    // was would repeat for ever. (Two stalled sweep rounds are caught first, with their reason.)
    auto state = fingerprint();
    unchanged_ = state == last_fingerprint_ ? unchanged_ + 1 : 0;
    last_fingerprint_ = std::move(state);

    build_views();
    const bool any_work = std::any_of(views_.begin(), views_.end(), [](const ChannelView& v) {
      return v.ready > 0 || v.blocked > 0;
    });
    if (!any_work) {  // quiescent: nothing ready, nothing in flight, nothing blocked
      if (live_bytes > 0) lost_work();
      check_resumable_counts();
      break;
    }

    if (unchanged_ >= kUnchangedRounds) {
      check_device_status();
      no_progress(Stall::NothingChanged);
    }

    decisions.clear();
    policy_.decide(GraphView{views_, stats.rounds, wg_, max_level_}, decisions);

    // Admission control, in the order the policy gave. Worst-case spawns admitted this round are
    // charged to their target channels so two dispatches cannot both count on the same space.
    std::vector<std::uint64_t> taken(slots_.size(), 0);
    std::map<const Channel*, std::int64_t> charged;
    launches.clear();
    positions_.clear();
    auto charge = [&](const Slot& slot, std::uint64_t items) {
      for (const auto& port : slot.consumer->ports())
        charged[&port_channel(port, slot.level)] += static_cast<std::int64_t>(items * port.max_per_item);
    };
    auto add_sweep = [&](const Slot& slot) {
      if (std::any_of(launches.begin(), launches.end(), [&](const Launch& l) { return l.sweep == slot.stack; })) return;
      launches.push_back({.slot = static_cast<std::uint32_t>(slot_of_.at(&slot.stack->level(0))),
                          .sweep = slot.stack,
                          .planned = sweeps_ == Sweeps::Planned});
    };
    std::set<const ChannelStackNode*> held;  // stacks with host-kept restart contexts
    for (const Slot& slot : slots_)
      if (slot.stack && !slot.blocked.empty()) held.insert(slot.stack);
    for (const auto& d : decisions) {
      if (d.channel >= slots_.size())
        throw RunError(fmt::format("policy '{}' chose channel {}, but the graph has {} channel(s)", policy_.name(),
                                   d.channel, slots_.size()));
      const std::uint32_t id = d.channel;
      Slot& slot = slots_[id];
      const ChannelView& v = views_[id];

      // A stack the policy chose goes to the device as one sweep over its levels (unless it
      // still has host-kept restart contexts from range dispatches).
      if (sweepable(slot, launches) && (d.count > 0 || d.restarts > 0) && !held.count(slot.stack)) {
        add_sweep(slot);
        continue;
      }

      // Restarts: the oldest contexts whose blocked port has room, a bounded batch per port.
      if (d.restarts > 0 && v.restartable > 0) {
        std::vector<std::uint64_t> allowance(slot.consumer->ports().size());
        for (std::uint32_t p = 0; p < allowance.size(); ++p) {
          const auto& port = slot.consumer->ports()[p];
          const auto free = std::max<std::int64_t>(port_free(port, slot.level) - charged[&port_channel(port, slot.level)], 0);
          allowance[p] = std::max<std::uint64_t>(wg_, static_cast<std::uint64_t>(free) / port.max_per_item);
        }
        const std::size_t at = positions_.size();
        std::deque<Blocked> keep;
        std::uint64_t budget = d.restarts;
        for (const auto& b : slot.blocked) {
          if (budget > 0 && port_has_room(slot, b.port) && allowance[b.port] > 0) {
            positions_.push_back(b.ctrl_pos);
            --allowance[b.port];
            --budget;
          } else {
            keep.push_back(b);
          }
        }
        const std::uint64_t n = positions_.size() - at;
        if (n > 0) {
          slot.blocked = std::move(keep);
          charge(slot, n);
          launches.push_back({.slot = id, .count = n, .restart = true, .positions_at = at});
          ++stats.restart_dispatches;
        }
      }

      // Ready CEs: a range from the channel's dispatch head.
      std::uint64_t count = std::min({d.count, v.admissible, v.ready - taken[id]});
      for (const auto& port : slot.consumer->ports())
        count = std::min(count, admits(slot, port, port_free(port, slot.level) - charged[&port_channel(port, slot.level)]));
      if (count == 0) continue;
      charge(slot, count);
      const std::uint64_t begin = slot.channel->ready().begin + taken[id];
      taken[id] += count;
      // A policy may dispatch one channel more than once in a round: the ranges are adjacent
      // (each starts where the last one taken ended), so they become one.
      const auto same = std::find_if(launches.begin(), launches.end(), [&](const Launch& l) {
        return l.slot == id && !l.restart && !l.sweep && l.begin + l.count == begin;
      });
      if (same != launches.end()) same->count += count;
      else launches.push_back({.slot = id, .begin = begin, .count = count});
    }
    merge_level_ranges(launches);
    // Each launch's yield records are one block of the pool (a record per dispatched item).
    std::size_t yield_records = 0;
    for (auto& l : launches) {
      l.yields_at = yield_records;
      yield_records += l.count;
    }

    // After a round whose sweeps finished nothing, every stack holding ready CEs is swept,
    // whatever the policy chose (a level short of its predicate may hold what the others wait
    // for); if that finishes nothing too, no progress is possible.
    if (stalled_ > 0)
      for (const Slot& slot : slots_)
        if (sweepable(slot, launches) && !held.count(slot.stack) && views_[slot_of_.at(slot.channel)].ready > 0)
          add_sweep(slot);

    // Host-sized launches go first: they were admitted against the free space the host read,
    // and sweeps (which take their room on the device) then see what those reserved. Then
    // continuation sweeps: frames that complete free their stack's space and make their parents
    // ready before the task sweeps ask for new frames (measured on PoCL: n = 24 with 512 CEs per
    // level ran in 35 ms this way, 51 ms the other way round).
    std::stable_sort(launches.begin(), launches.end(), [](const Launch& a, const Launch& b) {
      auto rank = [](const Launch& l) { return l.sweep ? (l.sweep->kind() == StackKind::Continuations ? 1 : 2) : 0; };
      return rank(a) < rank(b);
    });
    if (launches.empty()) {
      check_device_status();  // a device-side error explains a stall better
      no_progress(Stall::NothingDispatchable);
    }

    // Levels reachable by this round exist now; environments, restart lists and yield counters
    // go to the device as ordered non-blocking copies.
    const bool sweeps_only = std::all_of(launches.begin(), launches.end(), [](const Launch& l) { return l.sweep; });
    if (std::any_of(launches.begin(), launches.end(), [](const Launch& l) { return l.sweep; })) grow_stacks_for_sweeps();
    collect_slots();
    std::size_t env_count = 0;
    for (auto& l : launches) {
      l.env_at = env_count;
      l.levels = l.sweep ? l.sweep->depth() : l.stack ? l.stack->depth() : 1;
      env_count += l.levels;
    }
    envs_.resize(env_count);
    ensure<chanflow_node_env>(env_pool_, rt_, env_count);
    ensure<std::uint64_t>(positions_pool_, rt_, positions_.size());
    ensure<chanflow_yield_record>(yield_pool_, rt_, yield_records);
    ensure<chanflow_launch_counters>(counters_, rt_, launches.size());
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
    const bool any_yielding = std::any_of(launches.begin(), launches.end(), [&](const Launch& l) {
      return l.sweep || slots_[l.slot].consumer->is_yielding();
    });
    if (any_yielding)
      check(clEnqueueSVMMemFill(rt_.queue()(), counters_.get(), &kZero, sizeof kZero,
                                launches.size() * sizeof(chanflow_launch_counters), 0, nullptr, nullptr),
            "clEnqueueSVMMemFill (launch counters)");
    std::vector<std::vector<void*>> svm;  // per kernel node
    for (const auto& k : graph_.kernels()) svm.push_back(indirect_svm(*k));

    // In-order deallocation of what a pass consumed runs on the device right behind it.
    std::vector<std::uint32_t> consumed;
    for (const auto& l : launches) {
      if (l.sweep)
        for (std::uint32_t d = 0; d < l.levels; ++d) consumed.push_back(l.sweep->level(d).id());
      else if (l.stack)
        for (const auto& r : l.ranges) consumed.push_back(slots_[r.slot].channel->id());
      else
        consumed.push_back(slots_[l.slot].channel->id());
    }
    std::sort(consumed.begin(), consumed.end());
    consumed.erase(std::unique(consumed.begin(), consumed.end()), consumed.end());

    // A round that only sweeps is repeated on the device, as many times as the last such round
    // earned (doubling while they finish work): no host round trip between the passes.
    const std::uint32_t passes = sweeps_only ? chain_ : 1;
    std::uint64_t stack_ready = 0;  // CEs ready in any stack: what a sweep's work-groups start from
    for (const auto& v : views_) stack_ready += v.in_stack ? v.ready : 0;
    // A planned sweep's grid is fixed for the round's passes; the planning kernel fills it.
    plans_.clear();
    for (std::size_t i = 0; i < launches.size(); ++i) {
      Launch& l = launches[i];
      if (!l.sweep) continue;
      l.sweep_groups = sweep_groups(*l.sweep, stack_ready);
      if (l.planned)
        plans_.push_back({reinterpret_cast<std::uint64_t>(static_cast<chanflow_node_env*>(env_pool_.get()) + l.env_at),
                          reinterpret_cast<std::uint64_t>(static_cast<chanflow_launch_counters*>(counters_.get()) + i),
                          l.levels, static_cast<std::uint32_t>(l.sweep_groups)});
    }
    if (!plans_.empty()) rt_.svm_write_async(plan_pool_.get(), plans_.data(), plans_.size() * sizeof(chanflow_plan));
    const auto launch_start = Clock::now();
    for (std::uint32_t pass = 0; pass < passes; ++pass) {
      bool plan_enqueued = false;
      for (std::size_t i = 0; i < launches.size(); ++i) {
        Launch& l = launches[i];
        // The plan goes right before the first planned sweep, after the round's host-sized
        // launches: the free space it reads then already reflects what they reserved.
        if (l.planned && !plan_enqueued) {
          cl::Event planned = enqueue_plan();
          if (trace_.enabled()) plan_events_.push_back(std::move(planned));
          plan_enqueued = true;
        }
        Slot& slot = slots_[l.slot];
        const cl::Kernel& k = kernels_[slot.consumer->index_];
        const auto& reach = svm[slot.consumer->index_];
        if (kernel_svm_[slot.consumer->index_] != reach) {  // only when allocations changed
          set_indirect_svm(k, reach);
          kernel_svm_[slot.consumer->index_] = reach;
        }
        set_arg_svm(k, 0, slot.channel->device_ptr());
        set_arg(k, 1, cl_ulong{l.begin});
        set_arg(k, 2, static_cast<cl_uint>(l.count));
        set_arg_svm(k, 3, static_cast<chanflow_node_env*>(env_pool_.get()) + l.env_at);
        std::size_t groups = (l.count + wg_ - 1) / wg_;
        if (l.sweep) groups = l.sweep_groups;
        if (l.stack) {
          groups = 0;
          for (const auto& r : l.ranges) groups += (r.count + wg_ - 1) / wg_;
        }
        cl::Event event = launch(rt_, k, groups * wg_, wg_, trace_.enabled());
        if (trace_.enabled()) l.events.push_back(std::move(event));
        ++stats.dispatches;
        if (l.sweep) {
          ++stats.sweeps;
          continue;
        }
        if (l.stack) {
          for (const auto& r : l.ranges) {
            Slot& level = slots_[r.slot];
            level.channel->mark_dispatched(r.count);
            stats.ces += r.count;
            stats.ces_per_channel[level.channel->config().name] += r.count;
            stats.max_level = std::max(stats.max_level, level.level);
            if (options_.record_dispatches)
              stats.dispatch_log.push_back(
                  {stats.rounds, level.channel->config().name, level.consumer->name(), level.level, r.count, false});
          }
          continue;
        }
        if (!l.restart) slot.channel->mark_dispatched(l.count);
        stats.ces += l.count;
        stats.ces_per_channel[slot.channel->config().name] += l.count;
        stats.max_level = std::max(stats.max_level, slot.level);
        if (options_.record_dispatches)
          stats.dispatch_log.push_back(
              {stats.rounds, slot.channel->config().name, slot.consumer->name(), slot.level, l.count, l.restart});
      }
      graph_.table_.enqueue_deallocate(consumed);
    }
    enqueue_us += us_between(launch_start, Clock::now());
    rt_.finish();
    const auto launch_end = Clock::now();
    device_us += us_between(launch_start, launch_end);
    ++stats.rounds;
    if (any_yielding) {
      const std::uint64_t finished = collect_yields(launches, passes, stats);
      // Sweeps that finished no CE leave the channels as they were: twice in a row is no progress.
      if (sweeps_only && finished == 0) {
        if (++stalled_ >= 2) {
          check_device_status();
          no_progress(Stall::SweepsFinishedNothing);
        }
      } else {
        stalled_ = 0;
      }
      chain_ = sweeps_only && finished > 0 ? std::min(chain_ * 2, std::max(1u, graph_.options().max_sweep_chain)) : 1;
    }
    stats.max_level = std::max(stats.max_level, max_level_);

    if (trace_.enabled()) {
      const double t0 = us_between(run_start, launch_start);
      trace_.span(0, "round", us_between(run_start, round_start), us_between(round_start, launch_start),
                  {{"round", stats.rounds}, {"dispatches", launches.size()}});
      // Device times are placed relative to the round's first launch (two clocks, aligned there).
      cl_ulong first = ~cl_ulong{0};
      for (const auto& e : plan_events_) first = std::min(first, e.getProfilingInfo<CL_PROFILING_COMMAND_START>());
      for (const auto& l : launches)
        for (const auto& e : l.events) first = std::min(first, e.getProfilingInfo<CL_PROFILING_COMMAND_START>());
      auto span = [&](int row, const std::string& what, const cl::Event& e, nlohmann::json args) {
        const cl_ulong start = e.getProfilingInfo<CL_PROFILING_COMMAND_START>();
        const cl_ulong end = e.getProfilingInfo<CL_PROFILING_COMMAND_END>();
        trace_.span(row, what, t0 + (start - first) / 1e3, (end - start) / 1e3, std::move(args));
      };
      for (std::size_t pass = 0; pass < plan_events_.size(); ++pass)
        span(0, "plan", plan_events_[pass], {{"pass", pass}, {"sweeps", plans_.size()}});
      for (const auto& l : launches) {
        const Slot& slot = slots_[l.slot];
        const std::string what = l.sweep ? l.sweep->name() + (l.planned ? " planned sweep" : " sweep")
                                         : slot.channel->config().name + (l.restart ? " restart" : "");
        for (std::size_t pass = 0; pass < l.events.size(); ++pass)
          span(static_cast<int>(slot.consumer->index_) + 1, what, l.events[pass],
               {{"ces", l.count}, {"level", slot.level}, {"restart", l.restart}, {"pass", pass}});
      }
      plan_events_.clear();
    }
  }

  // Device-side errors are sticky and harmless to the channels, so one read at the end suffices.
  check_device_status();
  stats.wall_ms = us_between(run_start, Clock::now()) / 1e3;
  stats.device_ms = device_us / 1e3;
  stats.enqueue_ms = enqueue_us / 1e3;
  stats.aggregator_ms = stats.wall_ms - stats.device_ms;
  stats.device_idle_on_aggregator = stats.wall_ms > 0 ? stats.aggregator_ms / stats.wall_ms : 0;
  for (const auto& s : slots_) stats.peak_channel_bytes += s.channel->footprint_bytes();
  stats.channels = static_cast<std::uint32_t>(slots_.size());
  if (trace_.enabled()) trace_.write(options_.trace_path);
  return stats;
}

}  // namespace chanflow
