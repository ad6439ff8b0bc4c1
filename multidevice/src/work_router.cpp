// The router of a run across devices (work_router.hpp): each device's share of the run takes and
// gives work between its rounds; the router's lock guards what is on its way between devices.
#include "chanflow/work_router.hpp"

#include "chanflow/node_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <map>
#include <thread>

namespace chanflow {

namespace {

// The frame a moved task returns into on its new device: a chanflow_frame whose one result slot
// follows it, and the device the task came from. Its `ret` and `ret_frame` are the task's own,
// addresses on that device, which the router carries back with the result.
struct ProxyFrame {
  chanflow_frame frame;
  std::uint64_t slot;
  std::uint32_t origin;
  std::uint32_t unused;
};
static_assert(sizeof(ProxyFrame) == 56);

constexpr std::uint32_t kProxyCapacity = 1u << 14;

// A waiting device recalls the others' launches at once, then after these pauses, doubling.
constexpr std::chrono::microseconds kFirstRecall{100};
constexpr std::chrono::microseconds kLongestRecall{20'000};

using Clock = std::chrono::steady_clock;

}  // namespace

struct WorkRouter::Moved {
  std::size_t origin = 0;
  std::string name;       // the stack's, or the plain channel's
  bool plain = false;     // from a movable plain channel: nothing returns, `level` unused
  std::uint32_t level = 0;
  std::vector<std::byte> ces;  // packed
};

struct WorkRouter::Return {
  std::uint64_t ret = 0;
  std::uint64_t ret_frame = 0;
  std::uint64_t value = 0;
};

class WorkRouter::Share : public WorkSharing {
 public:
  Share(WorkRouter& router, std::size_t self, DeviceGraph g) : router_(router), self_(self), g_(std::move(g)) {
    if (!g_.graph) throw std::invalid_argument(fmt::format("device {}: no graph", self));
    for (const auto& name : g_.movable)
      if (!stack(name))
        throw std::invalid_argument(fmt::format("device {}: the graph has no channel stack '{}' to move tasks of", self, name));
    for (const auto& name : g_.movable_channels)
      if (!channel(name))
        throw std::invalid_argument(fmt::format("device {}: the graph has no channel '{}' to move CEs of", self, name));
    proxies_ = std::make_unique<Channel>(g_.graph->table(), ChannelConfig{.name = "chanflow_proxy_frames",
                                                                          .ce_bytes = sizeof(ProxyFrame),
                                                                          .capacity = kProxyCapacity});
  }

  bool at_round(Graph& graph) override {
    std::vector<Return> returns;
    std::vector<Moved> tasks;
    touched_ = false;
    {
      std::unique_lock lock(router_.mutex_);
      ended_launch();
      // Work moves once every device has reached its first round (run() built the programs
      // before): a device still starting cannot take work, and the others would run it alone.
      if (!started_) {
        started_ = true;
        ++router_.started_;
        router_.arrived_.notify_all();
        router_.arrived_.wait(lock, [&] { return router_.failed_ || router_.started_ == router_.shares_.size(); });
      }
      if (router_.failed_) throw RunError("stopped: another device's run failed");
      returns.swap(returns_in);
      tasks.swap(tasks_in);
    }
    apply(graph, returns);
    std::vector<Moved> later;
    for (auto& m : tasks)
      if (!take_in(m)) later.push_back(std::move(m));
    if (!later.empty()) {
      std::lock_guard lock(router_.mutex_);
      tasks_in.insert(tasks_in.begin(), std::make_move_iterator(later.begin()), std::make_move_iterator(later.end()));
    }
    send_back();
    give_away();
    return touched_;
  }

  void launch_begins(std::function<void()> recall) override {
    std::lock_guard lock(router_.mutex_);
    recall_ = std::move(recall);
    recalled_ = false;
  }

  // The device's launch has ended (or its run has: the recall may not outlive the graph's run).
  void ended_launch() { recall_ = nullptr; }

  bool wait_for_work(Graph&) override {
    send_back();  // the round's counters are fresh here: results its last kernels made ready go first
    std::unique_lock lock(router_.mutex_);
    return !tasks_in.empty() || !returns_in.empty() || wait_idle(lock);
  }

  bool wait_for_returns(Graph&) override {
    send_back();
    std::unique_lock lock(router_.mutex_);
    if (!returns_in.empty()) return true;
    if (lent == 0) return false;  // nothing of its own is away: the stall is its own
    return wait_idle(lock);
  }

  Graph& graph() const { return *g_.graph; }
  void restart() { started_ = false; }

  // What is on its way to this device, and what it lent (under the router's lock).
  std::vector<Moved> tasks_in;
  std::vector<Return> returns_in;
  bool waiting = false;
  std::uint64_t lent = 0;  // tasks taken from here whose results have not come back
  DeviceTraffic traffic;

  // Asks this device's launch of the device scheduler, if one runs and has not been asked since
  // it began, to end, so that its next round can give work to the device that waits (under the
  // router's lock).
  void recall() {
    if (!recall_ || recalled_) return;
    recalled_ = true;
    ++traffic.recalls;
    recall_();
  }

 private:
  ChannelStackNode* stack(const std::string& name) const {
    for (const auto& s : g_.graph->stacks())
      if (s->name() == name) return s.get();
    return nullptr;
  }
  Channel* channel(const std::string& name) const {
    for (const auto& c : g_.graph->channels())
      if (c->name() == name) return &c->channel();
    return nullptr;
  }

  // CEs of a plain channel another device gave this one, placed in the same channel as they
  // are (nothing returns). False when there is no room yet.
  bool take_in_plain(Moved& m) {
    Channel& ch = *channel(m.name);
    const std::uint32_t bytes = ch.config().ce_bytes;
    const auto n = static_cast<std::uint32_t>(m.ces.size() / bytes);
    std::uint32_t done = 0;
    while (done < n) {
      const std::uint32_t k = std::min(ch.config().max_reservation, n - done);
      g_.graph->table().refresh();
      if (ch.counters().data_free < k) break;
      auto ces = ch.talloc(k);
      if (!ces) throw RunError(fmt::format("device {}: room for {} moved CE(s) vanished", self_, k));
      std::memcpy(ces->ces.data(), m.ces.data() + std::size_t{done} * bytes, std::size_t{k} * bytes);
      ch.enq(std::move(*ces));
      done += k;
    }
    return received(m, done, bytes);
  }

  // `done` of the CEs of `m` placed: counted, and taken off what is left to place.
  bool received(Moved& m, std::uint32_t done, std::uint32_t bytes) {
    if (done > 0) touched_ = true;
    {
      std::lock_guard lock(router_.mutex_);
      traffic.tasks_received += done;
      if (m.plain) traffic.plain_received += done;
    }
    m.ces.erase(m.ces.begin(), m.ces.begin() + std::size_t{done} * bytes);
    return m.ces.empty();
  }

  // Blocks, under the router's lock, until tasks or results arrive for this device (true) or
  // the run is over (false): when every device waits and nothing is on its way to any, none will
  // send anything again, and the last to wait says so.
  bool wait_idle(std::unique_lock<std::mutex>& lock) {
    const auto start = Clock::now();
    waiting = true;
    ++traffic.waits;
    if (router_.all_idle()) {
      router_.over_ = true;
      router_.arrived_.notify_all();
    }
    const bool empty = tasks_in.empty() && returns_in.empty();
    const auto woken = [&] { return router_.over_ || !tasks_in.empty() || !returns_in.empty(); };
    // A device under the device scheduler gives work only between launches, which run until its
    // work is done: the others' launches are recalled, and again, less and less often, while this
    // one waits (one that had nothing to give runs on, and is asked again later).
    auto pause = kFirstRecall;
    for (;;) {
      if (router_.options_.move_work)
        for (const auto& s : router_.shares_)
          if (s.get() != this) s->recall();
      if (router_.arrived_.wait_for(lock, pause, woken)) break;
      pause = std::min(2 * pause, kLongestRecall);
    }
    waiting = false;
    const auto now = Clock::now();
    traffic.wait_ms += std::chrono::duration<double, std::milli>(now - start).count();
    const bool got = !tasks_in.empty() || !returns_in.empty();
    if (empty && got) {  // woken by work: how long after it was posted
      const double us = std::chrono::duration<double, std::micro>(now - posted_).count();
      ++traffic.wakes;
      traffic.wake_us_total += us;
      traffic.wake_us_max = std::max(traffic.wake_us_max, us);
    }
    return got;
  }

  // Marks the time work is posted to this device's empty inbox (under the router's lock).
  void posting() {
    if (tasks_in.empty() && returns_in.empty()) posted_ = Clock::now();
  }

  // Results of tasks this device lent: each written to its slot, and its frame told that one
  // more child has returned; the child that was its last makes it ready, as chanflow_join does (a
  // proxy frame made ready goes back further, in send_back).
  void apply(Graph& graph, const std::vector<Return>& returns) {
    if (returns.empty()) return;
    touched_ = true;
    const Runtime& rt = graph.runtime();
    // A frame of the graph's stacks, or a proxy: a task this device was given and lent on.
    std::map<std::uint64_t, Channel*> by_header{{reinterpret_cast<std::uint64_t>(proxies_->device_ptr()), proxies_.get()}};
    for (const auto& s : graph.stacks())
      for (std::uint32_t d = 0; d < s->depth(); ++d) by_header[reinterpret_cast<std::uint64_t>(s->level(d).device_ptr())] = &s->level(d);
    for (const Return& r : returns) {
      if (r.ret) rt.svm_write(reinterpret_cast<void*>(r.ret), &r.value, sizeof r.value);
      if (!r.ret_frame) continue;
      chanflow_frame f{};
      rt.svm_read(&f, reinterpret_cast<const void*>(r.ret_frame), sizeof f);
      if (f.pending == 0)
        throw RunError(fmt::format("device {}: a result came back to a frame with no child pending", self_));
      --f.pending;
      rt.svm_write(reinterpret_cast<std::byte*>(r.ret_frame) + offsetof(chanflow_frame, pending), &f.pending, sizeof f.pending);
      if (f.pending > 0) continue;
      const auto channel = by_header.find(f.channel);
      if (channel == by_header.end())
        throw RunError(fmt::format("device {}: a frame whose child returned from another device lies in no channel of its graph", self_));
      channel->second->enq_at(f.index);
    }
    std::lock_guard lock(router_.mutex_);
    lent -= returns.size();
  }

  // Tasks another device gave this one, placed at their level, each returning into a proxy frame.
  // False when there is no room yet (a later round tries again).
  bool take_in(Moved& m) {
    if (m.plain) return take_in_plain(m);
    ChannelStackNode* s = stack(m.name);
    Channel& level = s->level(m.level);
    const std::uint32_t bytes = level.config().ce_bytes;
    const auto n = static_cast<std::uint32_t>(m.ces.size() / bytes);
    const std::uint32_t step = std::min(level.config().max_reservation, proxies_->config().max_reservation);
    std::uint32_t done = 0;
    while (done < n) {
      const std::uint32_t k = std::min(step, n - done);
      // Both reservations or neither (a host reservation cannot be given back).
      g_.graph->table().refresh();
      if (level.counters().data_free < k || proxies_->counters().data_free < k) break;
      auto frames = proxies_->talloc(k);
      auto tasks = level.talloc(k);
      if (!frames || !tasks) throw RunError(fmt::format("device {}: room for {} moved task(s) vanished", self_, k));
      for (std::uint32_t i = 0; i < k; ++i) {
        std::byte* ce = m.ces.data() + std::size_t{done + i} * bytes;
        chanflow_task header;
        std::memcpy(&header, ce, sizeof header);
        ProxyFrame p{};
        p.frame.ret = header.ret;
        p.frame.ret_frame = header.ret_frame;
        p.frame.channel = reinterpret_cast<std::uint64_t>(proxies_->device_ptr());
        p.frame.index = frames->index + i;
        p.frame.pending = 1;
        p.origin = static_cast<std::uint32_t>(m.origin);
        std::memcpy(frames->ces.data() + std::size_t{i} * sizeof p, &p, sizeof p);
        header.ret = proxies_->ce_address(frames->index + i) + offsetof(ProxyFrame, slot);
        header.ret_frame = proxies_->ce_address(frames->index + i);
        std::memcpy(ce, &header, sizeof header);
      }
      proxies_->place(std::move(*frames));
      std::memcpy(tasks->ces.data(), m.ces.data() + std::size_t{done} * bytes, std::size_t{k} * bytes);
      level.enq(std::move(*tasks));
      done += k;
    }
    return received(m, done, bytes);
  }

  // Results of tasks this device was given, whose proxies their last child made ready, sent back.
  // Only where the counters the aggregator last read show some ready, so a round that has none
  // costs no transfer: between rounds they are a round old (a result waits one round more),
  // and fresh when the device has run out of work and is about to wait (wait_for_work).
  void send_back() {
    if (proxies_->ready().count == 0) return;
    const std::vector<std::byte> ready = proxies_->take_ready(kProxyCapacity);
    if (ready.empty()) return;
    touched_ = true;
    proxies_->deallocate();
    std::lock_guard lock(router_.mutex_);
    for (std::size_t at = 0; at < ready.size(); at += sizeof(ProxyFrame)) {
      ProxyFrame p;
      std::memcpy(&p, ready.data() + at, sizeof p);
      Share& origin = *router_.shares_.at(p.origin);
      origin.posting();
      origin.returns_in.push_back({p.frame.ret, p.frame.ret_frame, p.slot});
      ++traffic.returns_sent;
      traffic.bytes_sent += sizeof(Return);
    }
    router_.arrived_.notify_all();
  }

  // Tasks of the shallowest level that has any ready, half of them (at least one), to a device
  // that has run dry, where this one has two or more ready: the shallowest tasks hold the largest
  // subtrees (as a Cilk thief steals the oldest frame).
  void give_away() {
    if (!router_.options_.move_work) return;
    Share* to = nullptr;
    {
      std::lock_guard lock(router_.mutex_);
      for (const auto& s : router_.shares_)
        if (s.get() != this && s->waiting && s->tasks_in.empty() && s->returns_in.empty()) {
          to = s.get();
          break;
        }
    }
    if (!to) return;
    g_.graph->table().refresh();
    // Keep one: a device with a single ready task runs it.
    std::uint64_t total = 0;
    for (const auto& name : g_.movable) {
      ChannelStackNode* s = stack(name);
      for (std::uint32_t d = 0; d < s->depth(); ++d) total += s->level(d).ready().count;
    }
    for (const auto& name : g_.movable_channels) total += channel(name)->ready().count;
    if (total < 2) return;
    for (const auto& name : g_.movable) {
      ChannelStackNode* s = stack(name);
      for (std::uint32_t d = 0; d < s->depth(); ++d) {
        Channel& level = s->level(d);
        const std::uint64_t ready = level.ready().count;
        if (ready == 0) continue;
        const auto want = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(ready / 2, 1, kMostPerBatch));
        // Only tasks that never ran: one that yielded keeps its place (its spawns are recorded here).
        std::vector<std::byte> ces = level.take_ready(want, [](std::span<const std::byte> ce) {
          chanflow_task header;
          std::memcpy(&header, ce.data(), sizeof header);
          return header.resume_port == 0;
        });
        if (ces.empty()) continue;
        hand_over(*to, level, {self_, name, false, d, std::move(ces)});
        return;
      }
    }
    // Then a plain channel's: tasks with no depth, none more promising than another.
    for (const auto& name : g_.movable_channels) {
      Channel& ch = *channel(name);
      const std::uint64_t ready = ch.ready().count;
      if (ready == 0) continue;
      const auto want = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(ready / 2, 1, kMostPerBatch));
      std::vector<std::byte> ces = ch.take_ready(want);
      if (ces.empty()) continue;
      hand_over(*to, ch, {self_, name, true, 0, std::move(ces)});
      return;
    }
  }

  // CEs taken out of `from` (their space returned) put in `to`'s inbox, and counted: a stack's
  // tasks as lent until their results come back.
  void hand_over(Share& to, Channel& from, Moved m) {
    touched_ = true;
    from.deallocate();
    const std::uint64_t n = m.ces.size() / from.config().ce_bytes;
    std::lock_guard lock(router_.mutex_);
    traffic.tasks_sent += n;
    ++traffic.batches_sent;
    traffic.bytes_sent += m.ces.size();
    if (!m.plain) lent += n;
    to.posting();
    to.tasks_in.push_back(std::move(m));
    router_.arrived_.notify_all();
  }

  WorkRouter& router_;
  std::size_t self_;
  DeviceGraph g_;
  std::unique_ptr<Channel> proxies_;
  bool started_ = false;  // this run's first round has begun (under the router's lock)
  Clock::time_point posted_;  // when work last arrived in an empty inbox (under the router's lock)
  bool touched_ = false;  // this round's calls changed a channel
  // The running launch's recall (WorkSharing::launch_begins), and whether it was asked (under the
  // router's lock).
  std::function<void()> recall_;
  bool recalled_ = false;
};

WorkRouter::WorkRouter(std::vector<DeviceGraph> graphs, RouterOptions options) : options_(options) {
  if (graphs.empty()) throw std::invalid_argument("a run across devices needs at least one device's graph");
  for (std::size_t i = 0; i < graphs.size(); ++i) shares_.push_back(std::make_unique<Share>(*this, i, std::move(graphs[i])));
}

WorkRouter::~WorkRouter() = default;

bool WorkRouter::all_idle() const {
  return std::all_of(shares_.begin(), shares_.end(), [](const auto& s) {
    return s->waiting && s->tasks_in.empty() && s->returns_in.empty();
  });
}

DeviceRunStats WorkRouter::run(const std::function<std::unique_ptr<SchedulingPolicy>()>& make_policy,
                               const RunOptions& options) {
  const auto start = Clock::now();
  over_ = failed_ = false;
  started_ = 0;
  for (auto& share : shares_) share->restart();
  DeviceRunStats out;
  out.runs.resize(shares_.size());
  std::vector<std::string> errors(shares_.size());
  std::vector<Clock::time_point> failed_at(shares_.size());
  // Each device's program is built here, one device after another, before the runs start: a
  // build error is this device's, said before anything runs elsewhere, and PoCL's caches of what
  // it compiled are not filled by several threads at once.
  for (std::size_t d = 0; d < shares_.size(); ++d) {
    try {
      shares_[d]->graph().validate();
    } catch (const std::exception& e) {
      throw RunError(fmt::format("device {} ({}): {}", d, shares_[d]->graph().runtime().caps().name, e.what()));
    }
  }
  std::vector<std::thread> threads;
  for (std::size_t d = 0; d < shares_.size(); ++d)
    threads.emplace_back([&, d] {
      try {
        const auto policy = make_policy();
        RunOptions mine = options;
        mine.sharing = shares_[d].get();
        if (!mine.trace_path.empty()) mine.trace_path = device_trace_path(options.trace_path, d);
        if (d > 0) {  // one progress line
          mine.progress = nullptr;
          mine.progress_label.clear();
        }
        out.runs[d] = shares_[d]->graph().run(*policy, mine);
        std::lock_guard lock(mutex_);
        shares_[d]->ended_launch();
      } catch (const std::exception& e) {
        errors[d] = e.what();
        failed_at[d] = Clock::now();
        std::lock_guard lock(mutex_);
        shares_[d]->ended_launch();
        failed_ = over_ = true;
        arrived_.notify_all();
      }
    });
  for (auto& t : threads) t.join();
  // The first device to fail says why; the others stopped because it did.
  std::size_t first = shares_.size();
  for (std::size_t d = 0; d < shares_.size(); ++d)
    if (!errors[d].empty() && (first == shares_.size() || failed_at[d] < failed_at[first])) first = d;
  if (first < shares_.size())
    throw RunError(fmt::format("device {} ({}): {}", first, shares_[first]->graph().runtime().caps().name, errors[first]));
  for (std::size_t d = 0; d < shares_.size(); ++d) {
    if (shares_[d]->lent != 0)
      throw RunError(fmt::format("device {}: the run ended with {} lent task(s) whose results never came back", d,
                                 shares_[d]->lent));
    out.traffic.push_back(shares_[d]->traffic);
    shares_[d]->traffic = {};
  }
  out.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return out;
}

}  // namespace chanflow
