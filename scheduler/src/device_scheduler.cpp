// The device scheduler's host side (scheduler/cl/schedule.cl holds the kernel): a round of it
// (its program, in the graph's or built beside it: scheduler_program.cpp). The host only watches: it makes the levels the
// recursion reaches, writes an environment per watched channel, launches the scheduler (whose
// work-groups take batches of every channel under the policy's device form until nothing is left
// for them) and in-order deallocation behind it, and reads the counters back to see whether work
// remains; the observe step, its quiescence test and its no-progress diagnostics are the rounds'.
#include "aggregator.hpp"
#include "chanflow/sizing.hpp"

#include "chanflow_scheduler_sources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <utility>

namespace chanflow {

namespace {

// A setting the environment may override, to compare (CHANFLOW_SCHED_GROUPS, _POLLS, _PATIENCE, _QUIET).
std::uint32_t env_u32(const char* name, std::uint32_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? static_cast<std::uint32_t>(std::strtoul(v, nullptr, 10)) : fallback;
}

}  // namespace

bool Aggregator::uses_device_scheduler(const SchedulingPolicy& policy) {
  const Scheduler asked = graph_.options().scheduler;
  const auto form = policy.device_form();
  const bool has_form = form.kind != SchedulingPolicy::DeviceForm::Kind::None;
  const bool holds = device_scheduler_holds(rt_.caps());
  const auto* device_only = dynamic_cast<const DevicePolicy*>(&policy);
  if (asked == Scheduler::Rounds || !holds) {
    if (device_only && !device_only->has_host_form())
      throw RunError(fmt::format("policy '{}' is a device policy without a host form, and this run uses the rounds ({})",
                                 policy.name(),
                                 holds ? "GraphOptions::scheduler is Rounds"
                                       : fmt::format("'{}' has no device-scope ordering chanflow knows",
                                                     rt_.caps().name)));
    if (asked == Scheduler::Device)
      throw RunError(fmt::format("the device scheduler needs a device that orders stores at device scope (NVIDIA "
                                 "from compute capability 7, or a CPU device of an x86-64 host): '{}' has none",
                                 rt_.caps().name));
    return false;
  }
  // Auto, but for a device policy without a host form (its program holds the scheduler): on a GPU
  // the scheduler once its program, built beside the graph's, is ready; the rounds until then. The
  // scheduler's kernel calls every node body of the graph and its first build is slow where there
  // are many (NVIDIA: 53 s for Sort's against 8 s for the rounds' program; the driver's cache makes
  // the next process's a lookup). On a CPU device Auto keeps the rounds, whose claimed sweeps are
  // faster there: a work-group of PoCL's polls once (PoCL 3.1 mis-runs barriers in loops and under
  // conditions), and PoCL took over 10 minutes to build Sort's scheduler.
  if (asked == Scheduler::Auto && !(device_only && !device_only->has_host_form())) {
    if (!has_form) return false;
    const cl::Program* beside = graph_.scheduler_program();
    if (!beside) return false;
    if (!sched_kernel_()) adopt_scheduler(*beside);
    return true;
  }
  if (!has_form) {
    if (asked == Scheduler::Device)
      throw RunError(fmt::format("policy '{}' is a host policy: the device scheduler runs the built-in policies and "
                                 "DevicePolicy (use Scheduler::Rounds or Auto for a host policy)",
                                 policy.name()));
    return false;
  }
  if (!sched_kernel_()) {
    if (!graph_.scheduler_error_.empty()) throw RunError(graph_.scheduler_error_);
    throw RunError("the graph's program holds no device scheduler (internal: built before it was asked for)");
  }
  return true;
}

// As many work-groups as the device keeps resident: each loops until nothing is left for it. On a
// CPU device a work-group polls once (schedule.cl), so a launch has as many as the ready CEs fill
// and some for what they spawn; the next launch takes what is left.
std::uint32_t Aggregator::scheduler_groups(std::uint64_t ready) const {
  if (const std::uint32_t groups = env_u32("CHANFLOW_SCHED_GROUPS", graph_.options().scheduler_groups)) return groups;
  const DeviceSizing sizing = device_sizing(rt_.caps());
  const std::uint64_t resident = std::max<std::uint64_t>(1, sizing.resident_items / wg_);
  if (!(rt_.caps().type & CL_DEVICE_TYPE_CPU)) return static_cast<std::uint32_t>(resident);
  const std::uint64_t want = 4 * ((ready + wg_ - 1) / wg_) + 2 * std::max(1u, rt_.caps().compute_units);
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(want, 1u << 14));
}

// Every watched channel with a consumer: a stack as one launch record over all its levels, a
// channel node as one of its own; each gets its environments and counters as a sweep would (no
// yield state: every batch prepays its outputs, so nothing it runs yields).
void Aggregator::lay_out_device() {
  if (launch_in_flight_) forget_device_images();  // the last launch did not end as it should
  launch_in_flight_ = true;
  launches_.clear();
  // On a CPU device every node's collectives run for each batch (schedule.cl), on an environment of
  // its own: each consumed stack has its level 0 (at a CPU device's capacities, a few hundred KiB).
  const bool every_body = (rt_.caps().type & CL_DEVICE_TYPE_CPU) != 0;
  if (every_body) {
    for (const auto& s : graph_.stacks())
      if (s->consumer()) s->level(0);
    collect_watched();
  }
  for (const auto& s : graph_.stacks())
    if (s->consumer() && s->depth() > 0)
      launches_.push_back({.input = static_cast<std::uint32_t>(watched_of_.at(&s->level(0))), .sweep = s.get(), .device = true});
  for (const auto& c : graph_.channels())
    if (c->consumer())
      launches_.push_back({.input = static_cast<std::uint32_t>(watched_of_.at(&c->channel())), .device = true});
  grow_stacks_for_sweeps();
  std::size_t env_count = 0;
  for (auto& l : launches_) {
    l.env_at = env_count;
    l.levels = l.sweep ? l.sweep->depth() : 1;
    env_count += l.levels;
  }
  envs_.resize(env_count);
  ensure<chanflow_node_env>(env_pool_, env_count);
  ensure<chanflow_launch_counters>(counters_, launches_.size());
  const std::size_t cases = graph_.scheduler_kernels().size();
  ensure<chanflow_sched_entry>(sched_entries_, env_count + (cases * 8 + sizeof(chanflow_sched_entry) - 1) / sizeof(chanflow_sched_entry));
  if (env_count > CHANFLOW_SCHED_MAX_ENTRIES)
    throw RunError(fmt::format("the device scheduler watches at most {} channels; this run has {} (use "
                               "Scheduler::Rounds)",
                               CHANFLOW_SCHED_MAX_ENTRIES, env_count));
  std::vector<chanflow_sched_entry>& entries = sched_entries_host_;  // kept: the watchdog's report and the trace read them
  entries.clear();
  for (std::size_t i = 0; i < launches_.size(); ++i) {
    const Launch& l = launches_[i];
    if (l.sweep)
      write_sweep_envs(i, l);
    else
      write_env(i, l);
    for (std::uint32_t d = 0; d < l.levels; ++d) {
      chanflow_node_env& e = envs_[l.env_at + d];
      e.sweep_levels = l.sweep ? l.levels : 1;
      e.room_check = 1;
      e.ranged = 0;
      e.planned = 0;
      const Watched& w = watched_[l.sweep ? watched_of_.at(&l.sweep->level(d)) : l.input];
      std::uint32_t flags = w.stack ? CHANFLOW_SCHED_IN_STACK : 0u;
      if (w.stack && w.stack->kind() == StackKind::Continuations) flags |= CHANFLOW_SCHED_CONTINUATION;
      entries.push_back({reinterpret_cast<std::uint64_t>(static_cast<chanflow_node_env*>(env_pool_.get()) + l.env_at + d),
                         reinterpret_cast<std::uint64_t>(w.channel->device_ptr()), graph_.scheduler_case(*w.consumer),
                         w.consumer->index_, w.level, flags});
    }
  }
  // Each block only where it changed: a re-run of an unchanged graph writes none.
  write_if_changed(images_.envs, env_pool_.get(), envs_.data(), envs_.size() * sizeof(chanflow_node_env));
  // After the entries, an environment per case (the first entry's of its node).
  std::vector<std::uint64_t>& envs = sched_case_envs_;
  envs.assign(cases, 0);
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) envs[it->body] = it->env;
  auto* case_envs = reinterpret_cast<std::uint64_t*>(static_cast<chanflow_sched_entry*>(sched_entries_.get()) + entries.size());
  write_if_changed(images_.entries, sched_entries_.get(), entries.data(), entries.size() * sizeof(chanflow_sched_entry));
  write_if_changed(images_.case_envs, case_envs, envs.data(), envs.size() * sizeof(std::uint64_t));
  std::uint64_t ready = 0;
  for (const auto& v : views_) ready += v.ready;
  sched_groups_ = scheduler_groups(ready);
  chanflow_sched& head = sched_head_host_;
  head = chanflow_sched{};
  head.entries = reinterpret_cast<std::uint64_t>(sched_entries_.get());
  head.envs = reinterpret_cast<std::uint64_t>(case_envs);
  head.count = static_cast<std::uint32_t>(entries.size());
  head.policy = sched_policy_;
  head.polls = std::max(1u, env_u32("CHANFLOW_SCHED_POLLS", graph_.options().scheduler_polls));
  head.spread = env_u32("CHANFLOW_SCHED_SPREAD", every_body ? 1u : spread_groups());
  head.patience = env_u32("CHANFLOW_SCHED_PATIENCE", every_body ? 0u : graph_.options().scheduler_patience);
  head.quiet = std::max(1u, env_u32("CHANFLOW_SCHED_QUIET", graph_.options().scheduler_quiet));
  // Every group awake to begin with (the first polls that find nothing ready lull the rest), and
  // the least that stay so (a sixteenth unless set): nothing of a launch's own, so that a run
  // again writes no header. A CPU device's groups poll once: none dozes.
  if (!every_body) {
    const std::uint32_t least = env_u32("CHANFLOW_SCHED_AWAKE", graph_.options().scheduler_awake);
    head.least = std::min(sched_groups_, least ? least : std::max(1u, sched_groups_ / 16));
    head.awake = sched_groups_;
  }
  // Only a shared run can be recalled: alone, the pollers skip the word's uncached read.
  head.recall = options_.sharing ? reinterpret_cast<std::uint64_t>(sched_recall_.get()) : 0;
  // A traced run's device timeline: a span per batch, where the device has a clock.
  if (trace_.enabled() && device_order(rt_.caps()) == DeviceOrder::Ptx) {
    constexpr std::uint32_t kSpans = 1u << 18;
    ensure<chanflow_sched_span>(sched_spans_, kSpans);
    head.spans = reinterpret_cast<std::uint64_t>(sched_spans_.get());
    head.span_capacity = kSpans;
  }
  // The header, and beside it the template the readback kernel puts back after the launch.
  write_if_changed(images_.head, sched_block_.get(), &head, sizeof head);
  write_if_changed(images_.head_template, sched_template_.get(), &head, sizeof head);
  zero_launch_counters(launches_.size());
  lay_out_readback();
  consumed_.clear();
  for (const Watched& w : watched_)
    if (w.consumer) consumed_.push_back(w.channel->id());
  std::sort(consumed_.begin(), consumed_.end());
  consumed_.erase(std::unique(consumed_.begin(), consumed_.end()), consumed_.end());
}

void Aggregator::launch_device(RunStats& stats) {
  launch_start_ = Clock::now();
  // The scheduler reaches what every node's body reaches.
  std::vector<void*> reach;
  for (const auto& k : graph_.kernels())
    for (void* p : indirect_svm(*k))
      if (std::find(reach.begin(), reach.end(), p) == reach.end()) reach.push_back(p);
  for (void* p : {sched_entries_.allocation(), sched_block_.allocation(), sched_recall_.allocation(), sched_spans_.allocation()})
    if (p && std::find(reach.begin(), reach.end(), p) == reach.end()) reach.push_back(p);
  stats.svm_named = std::max(stats.svm_named, static_cast<std::uint32_t>(reach.size()));
  if (sched_svm_ != reach) {
    set_indirect_svm(sched_kernel_, reach);
    sched_svm_ = reach;
  }
  set_arg_svm(sched_kernel_, 0, sched_block_.get());
  if (!watchdog_) {
    const std::uint32_t limit = env_u32("CHANFLOW_SCHED_WATCHDOG", graph_.options().scheduler_watchdog_s);
    // Sampled every second (a quarter of a shorter limit; CHANFLOW_SCHED_WATCH_EVERY_MS: the tests').
    const std::uint32_t every = env_u32("CHANFLOW_SCHED_WATCH_EVERY_MS", std::min<std::uint32_t>(1000, limit * 250));
    // A CPU device compiles the scheduler's kernel, which calls every node body of the graph, at
    // its first launch: PoCL 3.1 took over 10 minutes for Sort's. Past a limit the wait is refused
    // with the reason (NVIDIA's driver compiles at the build: a GPU's launch starts at once).
    const bool cpu = (rt_.caps().type & CL_DEVICE_TYPE_CPU) != 0;
    const std::uint32_t start_limit = cpu ? env_u32("CHANFLOW_SCHED_START_LIMIT", 180) : 0;
    if (limit > 0)
      watchdog_ = std::make_unique<LaunchWatchdog>(
          std::chrono::seconds(limit), std::chrono::seconds(start_limit), std::chrono::milliseconds(std::max(1u, every)),
          [this] { return sched_heartbeat(); },
          [this](double seconds, bool started) { started ? sched_stuck(seconds) : sched_not_started(seconds); });
  }
  // A shared run's launch may be recalled from now on: a recall made before the launch starts
  // ends it at its first poll (the word is zeroed only behind a launch, by the readback).
  if (options_.sharing) {
    if (!reads_live_in_place() && !recall_queue_) recall_queue_.emplace(rt_.context(), rt_.device());
    options_.sharing->launch_begins([this] { recall_launch(); });
  }
  // The launch's event: traced runs' timestamps, and the watchdog's "has it started".
  cl::Event event = launch(rt_, sched_kernel_, std::size_t{sched_groups_} * wg_, wg_, trace_.enabled() || watchdog_);
  sched_launch_event_ = event;
  if (trace_.enabled()) sched_events_.push_back(std::move(event));
  ++stats.dispatches;
  graph_.table_.enqueue_deallocate(consumed_);
  enqueue_readback();  // behind the deallocation: the heads it moves
  enqueue_us_ += us_between(launch_start_, Clock::now());
}

void Aggregator::recall_launch() {
  auto* recall = static_cast<std::uint32_t*>(sched_recall_.get());
  if (reads_live_in_place()) {  // a CPU device's SVM is the host's memory
    __atomic_store_n(recall, 1u, __ATOMIC_RELAXED);
    return;
  }
  // A copy on a queue of its own runs while the launch does (as the watchdog's reads); the
  // work-groups read the word past their L1.
  const std::uint32_t one = 1;
  check(clEnqueueSVMMemcpy((*recall_queue_)(), CL_TRUE, recall, &one, sizeof one, 0, nullptr, nullptr),
        "clEnqueueSVMMemcpy (a launch's recall)");
}

void Aggregator::collect_device(RunStats& stats) {
  if (watchdog_) watchdog_->arm();
  try {
    rt_.finish();
  } catch (...) {
    if (watchdog_) watchdog_->disarm();
    throw;
  }
  if (watchdog_) watchdog_->disarm();
  collect_start_ = Clock::now();
  device_us_ += us_between(launch_start_, collect_start_);
  // Read only now, one copy of what the readback kernel gathered: on NVIDIA's OpenCL a copy to
  // the host queued behind a launch that never ends keeps the watchdog from firing (H100,
  // 2026-11-27: never_returns ran to its time limit; queued, the copy saved ~0.05 ms a run).
  read_readback();
  launch_in_flight_ = false;
  ++stats.rounds;
  const chanflow_sched& head = readback_.head;
  stats.device_scheduler.launches += 1;
  stats.device_scheduler.batches += head.batches;
  stats.device_scheduler.empty_polls += head.empty_polls;
  stats.device_scheduler.polls_lost += head.polls_lost;
  stats.device_scheduler.polls_no_room += head.polls_no_room;
  stats.device_scheduler.naps += head.naps;
  stats.device_scheduler.left_idle += head.left_idle;
  stats.device_scheduler.left_polls += head.left_polls;
  stats.device_scheduler.left_quiet += head.left_quiet;
  stats.device_scheduler.left_recalled += head.left_recalled;
  recalled_ = head.left_recalled > 0;
  stats.device_scheduler.recalled += recalled_ ? 1 : 0;
  stats.device_scheduler.blocks_written += std::exchange(blocks_written_, 0);
  sched_spans_used_ = head.spans_used;
  std::vector<std::uint32_t> busy;
  const std::uint64_t finished = collect_yields(stats, busy, &readback_.counters);
  if (finished == 0 && !recalled_) {
    if (++stalled_ >= 2) {
      check_status(readback_.status);
      no_progress(Stall::SweepsFinishedNothing);
    }
  } else {
    stalled_ = 0;
  }
}

bool Aggregator::reads_live_in_place() const { return (rt_.caps().type & CL_DEVICE_TYPE_CPU) != 0; }

void Aggregator::read_live(void* to, const void* svm, std::size_t bytes) {
  if (reads_live_in_place()) {
    // A CPU device's SVM is the host's memory: read in place, word by word (the launch writes it).
    const auto* from = static_cast<const std::uint32_t*>(svm);
    auto* words = static_cast<std::uint32_t*>(to);
    for (std::size_t i = 0; i < bytes / sizeof(std::uint32_t); ++i) words[i] = __atomic_load_n(from + i, __ATOMIC_RELAXED);
    return;
  }
  // Elsewhere a copy on a queue of its own, which the launch on the runtime's queue does not hold up.
  if (!watch_queue_) watch_queue_.emplace(rt_.context(), rt_.device());
  check(clEnqueueSVMMemcpy((*watch_queue_)(), CL_TRUE, to, svm, bytes, 0, nullptr, nullptr),
        "clEnqueueSVMMemcpy (the watchdog's read)");
}

chanflow_sched Aggregator::read_sched_live() {
  chanflow_sched head{};
  read_live(&head, sched_block_.get(), sizeof head);
  return head;
}

std::optional<std::uint64_t> Aggregator::sched_heartbeat() {
  // Read in place (a CPU device), not before the launch runs: the header's copy queued before it
  // may still be under way. A copy on the watch queue reads the device's memory whatever runs (and
  // NVIDIA's OpenCL reports a running kernel as CL_SUBMITTED until it completes).
  if (reads_live_in_place()) {
    cl_int status = CL_COMPLETE;
    if (sched_launch_event_())
      check(clGetEventInfo(sched_launch_event_(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr),
            "clGetEventInfo (the watchdog's)");
    if (status > CL_RUNNING) {
      launch_not_started();
      return std::nullopt;
    }
  }
  const chanflow_sched h = read_sched_live();
  const std::uint64_t beat = std::uint64_t{h.batches} + h.empty_polls + h.left_idle + h.left_polls + h.left_quiet;
  if (beat == 0 && h.busy == 0) {
    launch_not_started();
    return std::nullopt;
  }
  if (progress_line_) progress_line_->report(h.batches, "batches", 0);
  return beat;
}

void Aggregator::launch_not_started() {
  if (progress_line_)
    progress_line_->waiting(rt_.caps().type & CL_DEVICE_TYPE_CPU
                                ? "the device scheduler's launch has not started: the driver compiles its kernel, which "
                                  "holds every node body, at the first launch (minutes for a large graph; --scheduler "
                                  "rounds, the default on CPU devices, does not wait for it)"
                                : "the device scheduler's launch has not started yet (its kernel being compiled?)");
}

void Aggregator::sched_not_started(double seconds) {
  std::fputs(fmt::format("chanflow: the device scheduler's launch on '{}' has not started after {:.0f} s: the OpenCL "
                         "driver compiles its kernel, which calls every node body of this graph ({} nodes), at the "
                         "first launch, and on a CPU device that can take many minutes (PoCL 3.1: over 10 for Sort's). "
                         "Use --scheduler rounds, the default on CPU devices, or let the build finish with "
                         "CHANFLOW_SCHED_START_LIMIT=SECONDS (0: no limit; the driver caches the kernel once built). An "
                         "OpenCL kernel cannot be stopped: the process ends here.\n",
                         rt_.caps().name, seconds, graph_.kernels().size())
                 .c_str(),
             stderr);
  std::fflush(stderr);
  std::_Exit(1);
}

void Aggregator::sched_stuck(double seconds) {
  std::string msg = fmt::format(
      "chanflow: no progress: the device scheduler's launch ran {:.0f} s with no batch finishing and no work-group "
      "leaving;",
      seconds);
  try {  // on the watchdog's thread: a read that fails still leaves the verdict said
    const chanflow_sched h = read_sched_live();
    msg += fmt::format(" {} work-group(s) hold a batch whose node body has not returned (one that never ends?), after "
                       "{} batches in this launch.",
                       h.busy, h.batches);
    std::string ready;
    for (const auto& e : sched_entries_host_) {
      chanflow_channel c{};
      read_live(&c, reinterpret_cast<const void*>(e.in), sizeof c);
      if (c.ctrl_published > c.ctrl_head)
        ready += fmt::format("\n  - channel of node '{}' (level {}): {} CEs ready", graph_.kernels()[e.node]->name(),
                             e.level, c.ctrl_published - c.ctrl_head);
    }
    msg += ready.empty() ? " No channel has ready CEs." : " Channels with ready CEs:" + ready;
  } catch (const std::exception& e) {
    msg += fmt::format(" its counters could not be read ({}).", e.what());
  }
  msg += "\nAn OpenCL kernel cannot be stopped: the process ends here. (The watch: GraphOptions::scheduler_watchdog_s, "
         "or CHANFLOW_SCHED_WATCHDOG=SECONDS; 0 turns it off.)\n";
  std::fputs(msg.c_str(), stderr);
  std::fflush(stderr);
  std::_Exit(1);
}

void Aggregator::trace_device(const RunStats& stats) {
  trace_.span(0, "observe", us_between(run_start_, round_start_), us_between(round_start_, launch_start_),
              {{"round", stats.rounds}});
  const double t0 = us_between(run_start_, launch_start_);
  if (sched_events_.empty()) return;
  const cl::Event& e = sched_events_.back();
  const cl_ulong start = e.getProfilingInfo<CL_PROFILING_COMMAND_START>();
  const cl_ulong end = e.getProfilingInfo<CL_PROFILING_COMMAND_END>();
  trace_.span(0, "device scheduler", t0, (end - start) / 1e3, {{"groups", sched_groups_}});
  sched_events_.clear();
  trace_device_timeline(t0);
}

// Each batch of the launch on the row of the work-group that ran it, from the device's clock
// (placed from the launch's start on the host's: the first batch's start there).
void Aggregator::trace_device_timeline(double t0) {
  const std::uint32_t capacity = sched_head_host_.span_capacity;
  const std::uint32_t n = std::min(sched_spans_used_, capacity);
  if (n == 0) return;
  std::vector<chanflow_sched_span> spans(n);
  rt_.svm_read(spans.data(), sched_spans_.get(), n * sizeof(chanflow_sched_span));
  std::uint64_t first = spans.front().start_ns;
  for (const auto& sp : spans) first = std::min(first, sp.start_ns);
  constexpr int kGroupRows = 1000;  // after the aggregator's and the kernels' rows
  for (const auto& sp : spans) {
    if (sp.entry >= sched_entries_host_.size()) continue;
    const chanflow_sched_entry& e = sched_entries_host_[sp.entry];
    const int row = kGroupRows + static_cast<int>(sp.group);
    if (named_group_rows_.insert(row).second) trace_.name_row(row, fmt::format("work-group {}", sp.group));
    const double start_us = t0 + (sp.start_ns - first) / 1e3, dur_us = (sp.end_ns - sp.start_ns) / 1e3;
    const std::string& name = graph_.kernels()[e.node]->name();
    nlohmann::json args{{"ces", sp.ces}, {"level", e.level}};
    // A profiled build: each part's ns beside the batch (cli/bench/trace_batches.py sums them).
    static constexpr const char* kParts[] = {"body_ns", "reserve_ns", "write_ns", "publish_ns", "join_ns", "free_ns"};
    static_assert(std::size(kParts) == std::size(chanflow_sched_span{}.phase_ns));
    if (std::any_of(std::begin(sp.phase_ns), std::end(sp.phase_ns), [](std::uint32_t ns) { return ns != 0; }))
      for (std::size_t k = 0; k < std::size(kParts); ++k) args[kParts[k]] = sp.phase_ns[k];
    trace_.span(row, name, start_us, dur_us, std::move(args));
  }
  if (sched_spans_used_ > capacity)
    trace_.span(0, fmt::format("device timeline: {} of {} batches kept", capacity, sched_spans_used_), t0, 0);
}

}  // namespace chanflow
