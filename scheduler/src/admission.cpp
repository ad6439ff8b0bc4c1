// The channels the aggregator watches, what each looks like to a policy (ChannelView), and
// admission control: the policy's decisions, clamped so that no non-yielding node finds an
// output full, turned into the round's launches.
#include "aggregator.hpp"

#include <fmt/format.h>

namespace chanflow {

void Aggregator::collect_watched() {
  // Append-only: a watched channel's index (its ChannelView id) never changes during a run, while stacks
  // grow new levels at the end.
  auto add = [&](Channel& channel, KernelNode* consumer, ChannelStackNode* stack, std::uint32_t level,
                 const ChannelPredicate& predicate, ChannelNode* node) {
    if (watched_of_.emplace(&channel, watched_.size()).second)
      watched_.push_back({&channel, consumer, stack, level, predicate ? &predicate : nullptr, {}, node});
  };
  for (const auto& c : graph_.channels()) add(c->channel(), c->consumer(), nullptr, 0, c->predicate(), c.get());
  for (const auto& s : graph_.stacks())
    for (std::uint32_t d = 0; d < s->depth(); ++d) add(s->level(d), s->consumer(), s.get(), d, s->predicate(), nullptr);
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
  if (d >= s->depth()) return s->capacity_of(d);  // a level not made yet is empty
  return static_cast<std::int64_t>(s->level(d).counters().data_free);
}

// A blocked context may restart once its port could take at least one work-group's request.
bool Aggregator::port_has_room(const Watched& w, std::uint32_t port) const {
  const auto& p = w.consumer->ports()[port];
  return port_free(p, w.level) >= static_cast<std::int64_t>(std::uint64_t{wg_} * p.max_per_item);
}

std::uint64_t Aggregator::admits(const Watched& w, const PortTarget& port, std::int64_t free) const {
  const auto fits = static_cast<std::uint64_t>(std::max<std::int64_t>(free, 0)) / port.max_per_item;
  // Worst case for a node that must not fail; a yielding node may take a work-group more.
  return w.consumer->is_yielding() && free > 0 ? std::max<std::uint64_t>(fits, wg_) : fits;
}

// A sweep's task that yielded after reserving its continuation is published again and resumes
// past it: it needs no room there (chanflow_port_need), and its own frame may be what holds the
// level full. Charging that port would leave such a level waiting for room only its own tasks
// can make, so where the port is full the host reads the levels' resumable counts (only then:
// one small read) and does not charge it at a level that holds such tasks. Fresh tasks of the
// level that find no room yield whole and are published again.
bool Aggregator::charges_port(const Watched& w, std::uint32_t p) {
  const auto cont = w.consumer->continuation_port();
  if (!cont || *cont != p || !w.stack || w.level >= CHANFLOW_SWEEP_MAX_LEVELS || sweeps_ == Sweeps::Off) return true;
  if (port_has_room(w, p)) return true;
  if (!resumable_read_) {
    resumable_seen_.resize(resumable_.size() / sizeof(std::uint32_t));
    rt_.svm_read(resumable_seen_.data(), resumable_.get(), resumable_.size());
    resumable_read_ = true;
  }
  return resumable_seen_[stack_index(*w.stack) * CHANFLOW_SWEEP_MAX_LEVELS + w.level] == 0;
}

void Aggregator::build_views() {
  views_.clear();
  resumable_read_ = false;
  // The deepest stack level holding work (ready CEs or blocked contexts). A channel's producers
  // are busy while a channel feeding it (through its consumer's ports) holds work.
  std::uint32_t deepest_work = 0;
  bool any_stack_work = false;
  std::set<const Channel*> fed;
  for (const Watched& s : watched_) {
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
  for (std::uint32_t i = 0; i < watched_.size(); ++i) {
    const Watched& s = watched_[i];
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
    for (std::uint32_t p = 0; p < s.consumer->ports().size(); ++p) {
      const auto& port = s.consumer->ports()[p];
      if (v.ready > 0 && charges_port(s, p)) v.admissible = std::min(v.admissible, admits(s, port, port_free(port, s.level)));
    }
    v.producers_idle = fed.count(s.channel) == 0;
    if (s.predicate) {
      v.predicate = v.admissible > 0 && (*s.predicate)(v);
    } else {
      v.predicate = v.admissible > 0 && (v.ready >= s.consumer->ces_per_group(wg_) || (v.ready > 0 && v.producers_idle));
      any_default_passes |= v.predicate;
    }
    views_.push_back(v);
  }
  // No default-predicate channel may go (a channel feeding itself never has idle producers):
  // everything is idle between rounds, so any ready CEs may.
  if (!any_default_passes)
    for (std::uint32_t i = 0; i < watched_.size(); ++i)
      if (!watched_[i].predicate) views_[i].predicate = views_[i].ready > 0 && views_[i].admissible > 0;
}

void Aggregator::admit(RunStats& stats) {
  decisions_.clear();
  policy_->decide(GraphView{views_, stats.rounds, wg_, max_level_}, decisions_);
  // After a round that finished nothing every stack with ready CEs is swept (below), whatever the
  // policy chose; a CPU device's serial levels, which no sweep claims, go out as ranges then.
  if (stalled_ > 0)
    for (std::uint32_t i = 0; i < watched_.size(); ++i)
      if (serial_ranged(watched_[i]) && views_[i].ready > 0 &&
          std::none_of(decisions_.begin(), decisions_.end(), [i](const Dispatch& d) { return d.channel == i; }))
        decisions_.push_back({.channel = i, .restarts = 0});

  // Admission control, in the order the policy gave. Worst-case spawns admitted this round are
  // charged to their target channels so two dispatches cannot both count on the same space.
  std::vector<std::uint64_t> taken(watched_.size(), 0);
  std::map<const Channel*, std::int64_t> charged;
  std::vector<Launch>& launches = launches_;
  launches.clear();
  positions_.clear();
  auto charge = [&](const Watched& w, std::uint64_t items) {
    for (const auto& port : w.consumer->ports())
      charged[&port_channel(port, w.level)] += static_cast<std::int64_t>(items * port.max_per_item);
  };
  auto add_sweep = [&](const Watched& w) {
    if (std::any_of(launches.begin(), launches.end(), [&](const Launch& l) { return l.sweep == w.stack; })) return;
    launches.push_back({.input = static_cast<std::uint32_t>(watched_of_.at(&w.stack->level(0))),
                        .sweep = w.stack,
                        .planned = sweeps_ == Sweeps::Planned});
  };
  std::set<const ChannelStackNode*> held;  // stacks with host-kept restart contexts
  for (const Watched& w : watched_)
    if (w.stack && !w.blocked.empty()) held.insert(w.stack);
  for (const auto& d : decisions_) {
    if (d.channel >= watched_.size())
      throw RunError(fmt::format("policy '{}' chose channel {}, but the graph has {} channel(s)", policy_->name(),
                                 d.channel, watched_.size()));
    const std::uint32_t id = d.channel;
    Watched& w = watched_[id];
    const ChannelView& v = views_[id];

    // A stack the policy chose goes to the device as one sweep over its levels (unless it
    // still has host-kept restart contexts from range dispatches).
    if (sweepable(w, launches) && (d.count > 0 || d.restarts > 0) && !held.count(w.stack)) {
      add_sweep(w);
      continue;
    }

    // Restarts: the oldest contexts whose blocked port has room, a bounded batch per port.
    if (d.restarts > 0 && v.restartable > 0) {
      std::vector<std::uint64_t> allowance(w.consumer->ports().size());
      for (std::uint32_t p = 0; p < allowance.size(); ++p) {
        const auto& port = w.consumer->ports()[p];
        const auto free = std::max<std::int64_t>(port_free(port, w.level) - charged[&port_channel(port, w.level)], 0);
        allowance[p] = std::max<std::uint64_t>(wg_, static_cast<std::uint64_t>(free) / port.max_per_item);
      }
      const std::size_t at = positions_.size();
      std::deque<Blocked> keep;
      std::uint64_t budget = d.restarts;
      for (const auto& b : w.blocked) {
        if (budget > 0 && port_has_room(w, b.port) && allowance[b.port] > 0) {
          positions_.push_back(b.ctrl_pos);
          --allowance[b.port];
          --budget;
        } else {
          keep.push_back(b);
        }
      }
      const std::uint64_t n = positions_.size() - at;
      if (n > 0) {
        w.blocked = std::move(keep);
        charge(w, n);
        launches.push_back({.input = id, .count = n, .restart = true, .positions_at = at});
        ++stats.restart_dispatches;
      }
    }

    // Ready CEs: a range from the channel's dispatch head.
    std::uint64_t count = std::min({d.count, v.admissible, v.ready - taken[id]});
    for (std::uint32_t p = 0; p < w.consumer->ports().size() && count > 0; ++p) {
      const auto& port = w.consumer->ports()[p];
      if (charges_port(w, p))
        count = std::min(count, admits(w, port, port_free(port, w.level) - charged[&port_channel(port, w.level)]));
    }
    if (count == 0) continue;
    charge(w, count);
    const std::uint64_t begin = w.channel->ready().begin + taken[id];
    taken[id] += count;
    // A policy may dispatch one channel more than once in a round: the ranges are adjacent
    // (each starts where the last one taken ended), so they become one.
    const auto same = std::find_if(launches.begin(), launches.end(), [&](const Launch& l) {
      return l.input == id && !l.restart && !l.sweep && l.begin + l.count == begin;
    });
    if (same != launches.end()) same->count += count;
    else launches.push_back({.input = id, .begin = begin, .count = count});
  }
  merge_level_ranges(launches);
  // Each launch's yield records are one block of the pool (a record per dispatched item).
  yield_records_ = 0;
  for (auto& l : launches) {
    l.yields_at = yield_records_;
    yield_records_ += l.count;
  }

  // After a round whose sweeps finished nothing, every stack holding ready CEs is swept,
  // whatever the policy chose (a level short of its predicate may hold what the others wait
  // for); if that finishes nothing too, no progress is possible. Continuation stacks first:
  // their frames need no room to finish and free what the tasks wait for, and planned sweeps
  // take only two stacks a round (Sort under greedy at 64 CEs per level stalled with ready
  // frames in merge_cont while the two planned sweeps went to task stacks that could not move).
  if (stalled_ > 0)
    for (const StackKind kind : {StackKind::Continuations, StackKind::Tasks})
      for (const Watched& w : watched_)
        if (w.stack && w.stack->kind() == kind && sweepable(w, launches) && !held.count(w.stack) &&
            views_[watched_of_.at(w.channel)].ready > 0)
          add_sweep(w);

  add_spawned_sweeps(held);

  // Host-sized launches of nodes that cannot yield go first: they were admitted against the free
  // space the host read, and must find it. Then those of yielding nodes, which may have been
  // admitted a work-group more than fits and take what is left (yielding the rest); then sweeps,
  // which take their room on the device. Continuation sweeps before task sweeps: frames that
  // complete free their stack's space and make their parents ready before the task sweeps ask
  // for new frames (scheduler/README.md, "Device sweeps").
  std::stable_sort(launches.begin(), launches.end(), [this](const Launch& a, const Launch& b) {
    auto rank = [this](const Launch& l) {
      if (l.sweep) return l.sweep->kind() == StackKind::Continuations ? 2 : 3;
      return watched_[l.input].consumer->is_yielding() ? 1 : 0;
    };
    return rank(a) < rank(b);
  });
  if (launches.empty()) {
    check_device_status();  // a device-side error explains a stall better
    // A shared run may be waiting for its frames' children on other devices: a round skipped.
    if (options_.sharing && options_.sharing->wait_for_returns(graph_)) {
      waited_ = true;
      return;
    }
    no_progress(Stall::NothingDispatchable);
  }
}

void Aggregator::merge_level_ranges(std::vector<Launch>& launches) const {
  std::vector<Launch> out;
  std::map<ChannelStackNode*, std::size_t> merged;  // stack -> index in out
  std::map<ChannelStackNode*, std::size_t> per_stack;
  for (const auto& l : launches)
    if (!l.sweep && !l.restart && watched_[l.input].stack) ++per_stack[watched_[l.input].stack];
  for (auto& l : launches) {
    ChannelStackNode* stack = l.sweep || l.restart ? nullptr : watched_[l.input].stack;
    if (!stack || per_stack[stack] < 2) {
      out.push_back(std::move(l));
      continue;
    }
    auto [it, fresh] = merged.emplace(stack, out.size());
    if (fresh) {
      Launch m{.input = static_cast<std::uint32_t>(watched_of_.at(&stack->level(0)))};
      m.stack = stack;
      out.push_back(std::move(m));
    }
    Launch& m = out[it->second];
    m.ranges.push_back({l.input, l.begin, l.count});
    m.count += l.count;
  }
  launches = std::move(out);
}

}  // namespace chanflow
