// The aggregator loop: counters in, policy decisions, admission-controlled launches, statistics.
#include "aggregator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace chanflow {

namespace {

using Clock = std::chrono::steady_clock;

double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

// Mirrors chanflow_status in scheduler/cl/kernel_node.cl.
struct DeviceStatus {
  std::uint32_t code, node, detail, extra;
};

std::string describe(const DeviceStatus& s, const Graph& g) {
  const std::string node = s.node < g.kernels().size() ? g.kernels()[s.node]->name() : fmt::format("#{}", s.node);
  switch (s.code) {
    case 1:
      return fmt::format("kernel node '{}': its body's CE type is {} bytes but its input channel holds {}-byte CEs",
                         node, s.extra, s.detail);
    case 2:
      return fmt::format("kernel node '{}' spawned more than the {} CE(s) per item its edge on port {} declares",
                         node, s.extra, s.detail);
    case 3:
      return fmt::format("kernel node '{}' spawned a value whose size differs from port {}'s {}-byte CEs", node,
                         s.detail, s.extra);
    case 4:
      return fmt::format("kernel node '{}' spawned on port {}, but it has {} output port(s)", node, s.detail, s.extra);
    case 5:
      return fmt::format("kernel node '{}': port {}'s channel refused a reservation the aggregator had admitted", node,
                         s.detail);
    default:
      return fmt::format("kernel node '{}': device error code {}", node, s.code);
  }
}

}  // namespace

Aggregator::Aggregator(Graph& graph, SchedulingPolicy& policy, const RunOptions& options)
    : graph_(graph), policy_(policy), options_(options), rt_(graph.runtime()), trace_(!options.trace_path.empty()) {
  const auto& program = graph_.program();
  for (const auto& k : graph_.kernels()) {
    kernels_.push_back(rt_.kernel(program, k->kernel_name().c_str()));
    max_ports_ = std::max<std::uint32_t>(max_ports_, static_cast<std::uint32_t>(k->ports().size()));
    // The argument block lives in SVM so pointers inside it stay valid on the device.
    SvmBuffer block(rt_, std::max<std::size_t>(k->args_.size(), 16));
    rt_.svm_fill_zero(block.get(), block.size());
    rt_.svm_write(block.get(), k->args_.data(), k->args_.size());
    args_.push_back(std::move(block));
  }
  status_ = SvmBuffer(rt_, sizeof(DeviceStatus));
  rt_.svm_fill_zero(status_.get(), status_.size());
  env_stride_ = (20 * std::size_t{max_ports_} + 32 + 63) / 64 * 64;

  trace_.name_row(0, "aggregator");
  for (std::size_t i = 0; i < graph_.kernels().size(); ++i)
    trace_.name_row(static_cast<int>(i) + 1, "kernel " + graph_.kernels()[i]->name());
}

void Aggregator::collect_slots() {
  // Append-only: a slot's index (its ChannelView id) never changes during a run, while stacks
  // grow new levels at the end.
  auto add = [&](Channel& channel, KernelNode* consumer, ChannelStackNode* stack, std::uint32_t level) {
    if (known_.insert(&channel).second) slots_.push_back({&channel, consumer, stack, level, false});
  };
  for (const auto& c : graph_.channels()) add(c->channel(), c->consumer(), nullptr, 0);
  for (const auto& s : graph_.stacks())
    for (std::uint32_t d = 0; d < s->depth(); ++d) add(s->level(d), s->consumer(), s.get(), d);
}

Channel& Aggregator::port_channel(const PortTarget& port, std::uint32_t level) {
  if (auto* c = std::get_if<ChannelNode*>(&port.node)) return (*c)->channel();
  return std::get<ChannelStackNode*>(port.node)->level(level + static_cast<std::uint32_t>(port.level_delta));
}

std::int64_t Aggregator::port_free(const PortTarget& port, std::uint32_t level) const {
  if (auto* c = std::get_if<ChannelNode*>(&port.node))
    return static_cast<std::int64_t>((*c)->channel().counters().data_free);
  auto* s = std::get<ChannelStackNode*>(port.node);
  const std::uint32_t d = level + static_cast<std::uint32_t>(port.level_delta);
  if (d >= s->depth()) return s->capacity_per_level();  // a level not made yet is empty
  return static_cast<std::int64_t>(s->level(d).counters().data_free);
}

std::vector<void*> Aggregator::indirect_svm() const {
  std::vector<void*> ptrs{graph_.table_.headers_allocation(), status_.get(), env_pool_.get()};
  for (const auto& s : slots_) ptrs.push_back(s.channel->svm_allocations().front());
  for (const auto& a : args_) ptrs.push_back(a.get());
  for (const auto& k : graph_.kernels()) ptrs.insert(ptrs.end(), k->svm_uses_.begin(), k->svm_uses_.end());
  return ptrs;
}

void Aggregator::write_env(std::size_t slot_in_pool, const Slot& slot) {
  const KernelNode& k = *slot.consumer;
  const std::size_t P = max_ports_;
  std::byte* env = env_staging_.data() + slot_in_pool * env_stride_;
  std::memset(env, 0, env_stride_);
  auto put64 = [&](std::size_t off, std::uint64_t v) { std::memcpy(env + off, &v, 8); };
  auto put32 = [&](std::size_t off, std::uint32_t v) { std::memcpy(env + off, &v, 4); };
  std::uint32_t staging = 0;
  for (std::size_t p = 0; p < k.ports().size(); ++p) {
    const auto& port = k.ports()[p];
    Channel& target = port_channel(port, slot.level);
    const std::uint32_t words = target.config().ce_bytes / 4;
    put64(8 * p, reinterpret_cast<std::uint64_t>(target.device_ptr()));
    put32(8 * P + 16 + 4 * p, port.max_per_item);
    put32(12 * P + 16 + 4 * p, words);
    put32(16 * P + 16 + 4 * p, staging);
    staging += port.max_per_item * words;
  }
  put64(8 * P, reinterpret_cast<std::uint64_t>(args_[k.index_].get()));
  put64(8 * P + 8, reinterpret_cast<std::uint64_t>(status_.get()));
  put32(20 * P + 16, static_cast<std::uint32_t>(k.ports().size()));
  put32(20 * P + 20, slot.level);
  put32(20 * P + 24, k.index_);
}

void Aggregator::check_device_status() {
  DeviceStatus s{};
  rt_.svm_read(&s, status_.get(), sizeof s);
  if (s.code != 0) throw RunError("device-side error: " + describe(s, graph_));
}

void Aggregator::no_progress(const std::vector<ChannelView>& views, bool policy_chose_nothing) const {
  std::string msg = fmt::format("no progress possible: CEs are ready but no dispatch can be made (policy '{}'):",
                                policy_.name());
  for (const auto& v : views) {
    if (v.ready == 0) continue;
    msg += fmt::format("\n  - channel '{}': {} ready, consumer '{}'", v.name, v.ready, v.consumer);
    const Slot& slot = slots_[v.id];
    if (v.admissible == 0) {
      for (std::size_t p = 0; p < slot.consumer->ports().size(); ++p) {
        const auto& port = slot.consumer->ports()[p];
        const std::int64_t free = port_free(port, slot.level);
        if (free < static_cast<std::int64_t>(port.max_per_item)) {
          const std::string target = std::visit([](auto* n) { return n->name(); }, port.node);
          msg += fmt::format("; blocked on port {} into '{}' (depth {}), which has {} free slot(s) but needs {} per CE",
                             p, target, slot.level + port.level_delta, std::max<std::int64_t>(free, 0), port.max_per_item);
        }
      }
    } else if (policy_chose_nothing) {
      msg += fmt::format("; {} admissible, but the policy dispatched nothing", v.admissible);
    }
  }
  throw RunError(msg);
}

RunStats Aggregator::run() {
  RunStats stats;
  stats.policy = policy_.name();
  const std::uint32_t wg = graph_.options().wg_size;
  const auto run_start = Clock::now();
  double device_us = 0;
  std::vector<ChannelView> views;
  std::vector<Dispatch> decisions;
  std::vector<Launch> launches;

  for (;;) {
    if (options_.max_rounds && stats.rounds >= options_.max_rounds)
      throw RunError(fmt::format("stopped after the round limit ({} rounds)", options_.max_rounds));
    const auto round_start = Clock::now();
    collect_slots();
    graph_.table_.refresh();  // every channel's counters in one transfer
    for (auto& s : slots_)
      if (s.consumed_last_round) {
        s.channel->deallocate();
        s.consumed_last_round = false;
      }

    // The state every policy sees.
    views.clear();
    std::uint32_t max_level = 0;
    bool any_ready = false, any_full_group = false;
    for (std::uint32_t i = 0; i < slots_.size(); ++i) {
      const Slot& s = slots_[i];
      const auto& h = s.channel->counters();
      ChannelView v;
      v.id = i;
      v.name = s.channel->config().name;
      v.consumer = s.consumer->name();
      v.in_stack = s.stack != nullptr;
      v.level = s.level;
      v.ready = h.ctrl_published - h.ctrl_head;
      v.capacity = s.channel->config().capacity;
      v.free = static_cast<std::uint64_t>(std::max<std::int64_t>(static_cast<std::int64_t>(h.data_free), 0));
      v.admissible = v.ready;
      for (const auto& port : s.consumer->ports()) {
        const std::int64_t free = std::max<std::int64_t>(port_free(port, s.level), 0);
        v.admissible = std::min<std::uint64_t>(v.admissible, static_cast<std::uint64_t>(free) / port.max_per_item);
      }
      if (v.ready > 0) {
        any_ready = true;
        if (v.in_stack) max_level = std::max(max_level, v.level);
      }
      v.predicate = v.ready >= wg && v.admissible > 0;
      any_full_group |= v.predicate;
      views.push_back(v);
    }
    // The default predicate's second half: with no channel holding a work-group's worth, every
    // producer is idle (nothing is in flight between rounds), so the rest may go.
    if (!any_full_group)
      for (auto& v : views) v.predicate = v.ready > 0 && v.admissible > 0;
    if (!any_ready) break;  // quiescent: nothing ready, nothing in flight, nothing blocked

    decisions.clear();
    GraphView gv{views, stats.rounds, wg, max_level};
    policy_.decide(gv, decisions);

    // Admission control and launch, in the order the policy gave.
    std::vector<std::uint64_t> taken(slots_.size(), 0);
    std::map<const Channel*, std::int64_t> reserved;  // worst-case spawns admitted this round
    launches.clear();
    env_staging_.resize(std::max<std::size_t>(decisions.size(), 1) * env_stride_);
    for (const auto& d : decisions) {
      if (d.channel >= slots_.size())
        throw RunError(fmt::format("policy '{}' chose channel {}, but the graph has {} channel(s)", policy_.name(),
                                   d.channel, slots_.size()));
      Slot& slot = slots_[d.channel];
      const ChannelView& v = views[d.channel];
      std::uint64_t count = std::min<std::uint64_t>(d.count == 0 ? v.ready : d.count, v.ready - taken[d.channel]);
      for (const auto& port : slot.consumer->ports()) {
        const Channel* target = &port_channel(port, slot.level);
        const std::int64_t free = port_free(port, slot.level) - reserved[target];
        count = std::min<std::uint64_t>(count, static_cast<std::uint64_t>(std::max<std::int64_t>(free, 0)) / port.max_per_item);
      }
      if (count == 0) continue;
      for (const auto& port : slot.consumer->ports())
        reserved[&port_channel(port, slot.level)] += static_cast<std::int64_t>(count * port.max_per_item);
      const std::uint64_t begin = v.ready == 0 ? 0 : slot.channel->ready().begin + taken[d.channel];
      taken[d.channel] += count;
      launches.push_back({d.channel, begin, count, {}});
    }
    if (launches.empty()) {
      check_device_status();  // a device-side error explains a stall better
      no_progress(views, true);
    }

    // Levels reachable by this round exist now; envs go to the device in one copy.
    collect_slots();
    if (env_pool_.size() < launches.size() * env_stride_)
      env_pool_ = SvmBuffer(rt_, std::max<std::size_t>(launches.size(), 16) * env_stride_ * 2);
    for (std::size_t i = 0; i < launches.size(); ++i) write_env(i, slots_[launches[i].slot]);
    rt_.svm_write_async(env_pool_.get(), env_staging_.data(), launches.size() * env_stride_);
    const auto svm = indirect_svm();

    const auto launch_start = Clock::now();
    for (std::size_t i = 0; i < launches.size(); ++i) {
      Launch& l = launches[i];
      Slot& slot = slots_[l.slot];
      const cl::Kernel& k = kernels_[slot.consumer->index_];
      set_indirect_svm(k, svm);
      set_arg_svm(k, 0, slot.channel->device_ptr());
      set_arg(k, 1, cl_ulong{l.begin});
      set_arg(k, 2, static_cast<cl_uint>(l.count));
      set_arg_svm(k, 3, static_cast<std::byte*>(env_pool_.get()) + i * env_stride_);
      l.event = launch(rt_, k, (l.count + wg - 1) / wg * wg, wg);
      slot.channel->mark_dispatched(l.count);
      slot.consumed_last_round = true;
      stats.ces += l.count;
      stats.ces_per_channel[slot.channel->config().name] += l.count;
      stats.max_level = std::max(stats.max_level, slot.level);
      if (options_.record_dispatches)
        stats.dispatch_log.push_back(
            {stats.rounds, slot.channel->config().name, slot.consumer->name(), slot.level, l.count});
    }
    rt_.finish();
    const auto launch_end = Clock::now();
    device_us += us_between(launch_start, launch_end);
    ++stats.rounds;
    stats.dispatches += launches.size();

    if (trace_.enabled()) {
      const double t0 = us_between(run_start, launch_start);
      trace_.span(0, "round", us_between(run_start, round_start), us_between(round_start, launch_start),
                  {{"round", stats.rounds}, {"dispatches", launches.size()}});
      cl_ulong first = 0;
      for (std::size_t i = 0; i < launches.size(); ++i) {
        const auto& l = launches[i];
        const cl_ulong start = l.event.getProfilingInfo<CL_PROFILING_COMMAND_START>();
        const cl_ulong end = l.event.getProfilingInfo<CL_PROFILING_COMMAND_END>();
        if (i == 0) first = start;
        const Slot& slot = slots_[l.slot];
        trace_.span(static_cast<int>(slot.consumer->index_) + 1, slot.channel->config().name,
                    t0 + (start - first) / 1e3, (end - start) / 1e3,
                    {{"ces", l.count}, {"level", slot.level}, {"ctrl_begin", l.begin}});
      }
    }
  }

  // Device-side errors are sticky and harmless to the channels, so one read at the end suffices.
  check_device_status();
  stats.wall_ms = us_between(run_start, Clock::now()) / 1e3;
  stats.device_ms = device_us / 1e3;
  stats.aggregator_ms = stats.wall_ms - stats.device_ms;
  stats.device_idle_on_aggregator = stats.wall_ms > 0 ? stats.aggregator_ms / stats.wall_ms : 0;
  for (const auto& s : slots_) stats.peak_channel_bytes += s.channel->footprint_bytes();
  if (trace_.enabled()) trace_.write(options_.trace_path);
  return stats;
}

}  // namespace chanflow
