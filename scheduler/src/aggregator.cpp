// The aggregator's round, as a sequence: observe the channels, admit the policy's decisions,
// lay the round out on the device, launch it, collect what it counted, trace it.
#include "aggregator.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

namespace chanflow {

// The layouts host and device share are checked where node_layout.h is compiled, on both sides.
static_assert(kSerialOff == CHANFLOW_SERIAL_OFF);  // RunOptions::serial_depth is written into every environment as is

// CEs that went through a channel: those published, and those the device scheduler's work-groups
// kept for themselves (never published).
static std::uint64_t passed_through(const chanflow_channel& h) { return h.ctrl_published + h.ctrl_kept; }

Aggregator::Aggregator(Graph& graph, const cl::Program& program)
    : graph_(graph), rt_(graph.runtime()), wg_(graph.options().wg_size), program_(program) {
  for (const auto& k : graph_.kernels()) {
    kernels_.push_back(rt_.kernel(program, k->kernel_name().c_str()));
    kernel_svm_.emplace_back();
    args_.emplace_back();  // written by each run (the user may set new arguments between runs)
  }
  status_.reset(graph_.table_, rt_, sizeof(chanflow_status));
  rt_.svm_fill_zero_async(status_.get(), status_.size());
  // The pools start at a size most runs never outgrow, made here rather than in the timed loop
  // (an SVM allocation costs about a millisecond on some drivers), in the table's control area.
  ensure<chanflow_node_env>(env_pool_, 256);
  ensure<chanflow_launch_counters>(counters_, 256);
  ensure<std::uint64_t>(positions_pool_, 1u << 16);
  ensure<chanflow_yield_record>(yield_pool_, 1u << 16);
  resumable_.reset(graph_.table_, rt_,
                   std::max<std::size_t>(graph_.stacks().size(), 1) * CHANFLOW_SWEEP_MAX_LEVELS * sizeof(std::uint32_t));
  rt_.svm_fill_zero_async(resumable_.get(), resumable_.size());

  sweeps_ = graph_.options().device_sweeps;
  const char* spawned = std::getenv("CHANFLOW_SWEEP_SPAWNED");
  sweep_spawned_ = graph_.options().sweep_spawned && !(spawned && std::string_view(spawned) == "0");
  const bool claimable = claimed_sweeps_hold(rt_.caps());
  const bool cpu = (rt_.caps().type & CL_DEVICE_TYPE_CPU) != 0;
  cpu_ = cpu;
  if (sweeps_ == Sweeps::Auto) sweeps_ = claimable && cpu ? Sweeps::Claimed : Sweeps::Planned;
  if (sweeps_ == Sweeps::Claimed && !claimable)
    throw RunError(fmt::format("claimed device sweeps need a device whose work-groups see each other's stores in "
                               "order within a launch: '{}' has no device-scope ordering chanflow knows (a claimed "
                               "sweep reads CEs other work-groups wrote in the same launch; use Sweeps::Planned, Auto "
                               "or Off)",
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
  if (!graph_.scheduler_source_.empty()) adopt_scheduler(program);  // the program holds the device scheduler
}

void Aggregator::adopt_scheduler(const cl::Program& program) {
  sched_kernel_ = rt_.kernel(program, "chanflow_schedule");
  sched_block_.reset(graph_.table_, rt_, sizeof(chanflow_sched));
  sched_template_.reset(graph_.table_, rt_, sizeof(chanflow_sched));
  sched_recall_.reset(graph_.table_, rt_, sizeof(std::uint64_t));
  rt_.svm_fill_zero(sched_recall_.get(), sizeof(std::uint64_t));  // before any recall's write
  // Made now, before any launch: on NVIDIA's OpenCL, building it and making its kernel behind a
  // running launch held the host thread until the launch ended, and the scheduler's may never
  // end (its watchdog, armed once the launch is queued, never was: H100, 2026-11-27).
  readback_kernel();
  ensure<chanflow_sched_entry>(sched_entries_, 256);
}

Aggregator::~Aggregator() { rt_.finish_quietly(); }

void Aggregator::ControlBlock::reset(ChannelTable& table, const Runtime& rt, std::size_t bytes) {
  own_ = SvmBuffer();
  at_ = table.allocate_control(bytes);
  if (!at_) {
    own_ = SvmBuffer(rt, bytes);
    at_ = own_.get();
  }
  bytes_ = bytes;
}

void Aggregator::start_run(SchedulingPolicy& policy, const RunOptions& options) {
  device_ = uses_device_scheduler(policy);  // throws for what cannot run, before anything changes
  switch (policy.device_form().kind) {
    case SchedulingPolicy::DeviceForm::Kind::Greedy: sched_policy_ = CHANFLOW_POLICY_GREEDY; break;
    case SchedulingPolicy::DeviceForm::Kind::Source: sched_policy_ = CHANFLOW_POLICY_USER; break;
    default: sched_policy_ = CHANFLOW_POLICY_LEVELIZED; break;
  }
  // A recall that came after the last shared run's last launch had ended is not this run's.
  if (options.sharing && device_) rt_.svm_fill_zero(sched_recall_.get(), sizeof(std::uint64_t));
  policy_ = &policy;
  options_ = options;
  trace_ = Trace(!options.trace_path.empty());
  named_group_rows_.clear();  // a new trace names its rows again
  if (trace_.enabled() && !rt_.profiling())
    throw RunError("a trace needs kernel timestamps: make the Runtime with DeviceSelection::profiling = true");
  trace_.name_row(0, "aggregator");
  for (std::size_t i = 0; i < graph_.kernels().size(); ++i)
    trace_.name_row(static_cast<int>(i) + 1, "kernel " + graph_.kernels()[i]->name());
  // The argument blocks live in SVM so pointers inside them stay valid on the device; their
  // contents are the user's of this run.
  for (const auto& k : graph_.kernels()) {
    ControlBlock& block = args_[k->index_];
    const std::size_t bytes = std::max<std::size_t>(k->args_.size(), 16);
    if (block.size() < bytes) {
      block.reset(graph_.table_, rt_, bytes);
      rt_.svm_fill_zero_async(block.get(), block.size());
    }
    rt_.svm_write_async(block.get(), k->args_.data(), k->args_.size());
  }
  // What one run learned about the next round, nothing else, is forgotten. The channels,
  // levels, pools and sweep sizes stay (a finished run leaves every channel empty and no
  // restart context blocked: quiescence is that).
  max_level_ = 0;
  device_us_ = enqueue_us_ = 0;
  chains_.clear();
  stalled_ = 0;
  last_fingerprint_.clear();
  unchanged_ = 0;
}

RunStats Aggregator::run() {
  RunStats stats;
  stats.policy = policy_->name();
  stats.scheduler = device_ ? "device" : "rounds";
  run_start_ = Clock::now();
  ProgressLine line(options_.progress_label);
  struct Shown {  // the watchdog's thread sees the line only while this run holds it
    ProgressLine*& at;
    ~Shown() { at = nullptr; }
  } shown{progress_line_ = line.shown() ? &line : nullptr};
  readback_.read = false;
  blocks_written_ = 0;  // a failed run's lay-out is not this run's
  for (;;) {
    if (options_.max_rounds && stats.rounds >= options_.max_rounds)
      throw RunError(fmt::format("stopped after the round limit ({} rounds)", options_.max_rounds));
    round_start_ = Clock::now();
    // Each step's host time, less what making levels took inside it (counted on its own).
    auto step_end = round_start_;
    double levels_at = levels_us();
    auto step = [&](double& into, Clock::time_point from) {
      const auto now = Clock::now();
      const double levels = levels_us();
      into += (us_between(from, now) - (levels - levels_at)) / 1e3;
      stats.host.levels_ms += (levels - levels_at) / 1e3;
      levels_at = levels;
      step_end = now;
    };
    const bool more = observe(stats);
    step(stats.host.observe_ms, step_end);
    if (!more) break;
    if (device_) {  // the host only watches: one launch takes every channel's work
      lay_out_device();
      step(stats.host.lay_out_ms, step_end);
      launch_device(stats);
      collect_device(stats);
    } else {
      waited_ = false;
      admit(stats);
      step(stats.host.admit_ms, step_end);
      if (waited_) continue;  // a shared run that waited for results from elsewhere looks again
      lay_out();
      step(stats.host.lay_out_ms, step_end);
      launch_passes(stats);
      collect(stats);
    }
    step(stats.host.collect_ms, collect_start_);
    if (trace_.enabled()) device_ ? trace_device(stats) : trace_round(stats);
    if (options_.progress) options_.progress(stats, us_between(run_start_, step_end) / 1e3);
    if (progress_line_) progress_line_->report(stats.ces, "tasks", stats.max_level);
  }
  // Device-side errors are sticky and harmless to the channels, so one read at the end suffices.
  readback_.read ? check_status(readback_.status) : check_device_status();
  if (device_)  // the host saw only the launches' ends: the deepest level any CE reached
    for (const Watched& w : watched_)
      if (w.stack && passed_through(w.channel->counters()) > 0) stats.max_level = std::max(stats.max_level, w.level);
  stats.wall_ms = us_between(run_start_, Clock::now()) / 1e3;
  stats.device_ms = device_us_ / 1e3;
  stats.enqueue_ms = enqueue_us_ / 1e3;
  stats.aggregator_ms = stats.wall_ms - stats.device_ms;
  stats.device_idle_on_aggregator = stats.wall_ms > 0 ? stats.aggregator_ms / stats.wall_ms : 0;
  for (const auto& w : watched_) stats.peak_channel_bytes += w.channel->footprint_bytes();
  for (const auto& s : graph_.stacks()) stats.peak_channel_bytes += s->yield_state_allocated();
  for (const auto& c : graph_.channels())
    if (c->yield_state_) stats.peak_channel_bytes += std::uint64_t{c->capacity()} * c->yield_state_bytes_;
  stats.channels = static_cast<std::uint32_t>(watched_.size());
  stats.serial_depth = options_.serial_depth;
  for (const auto& s : graph_.stacks()) {
    std::vector<std::uint64_t>& per_level = stats.ces_per_level[s->name()];
    for (std::uint32_t d = 0; d < s->depth(); ++d) {
      const Channel& level = s->level(d);
      std::uint64_t& before = published_before_[&level];
      per_level.push_back(passed_through(level.counters()) - before);
      before = passed_through(level.counters());
    }
    while (!per_level.empty() && per_level.back() == 0) per_level.pop_back();
  }
  if (trace_.enabled()) trace_.write(options_.trace_path);
  return stats;
}

double Aggregator::levels_us() const {
  double us = 0;
  for (const auto& s : graph_.stacks()) us += s->making_levels_us_;
  return us;
}

bool Aggregator::observe(RunStats& stats) {
  for (;;) {
    // A shared run takes and gives work first (no kernel is in flight between rounds).
    const bool shared = options_.sharing && options_.sharing->at_round(graph_);
    collect_watched();
    // Every channel's counters in one transfer (behind a device-scheduler launch: already read,
    // unless work moved since).
    if (!readback_.read || shared) graph_.table_.refresh();
    graph_.table_.check_errors();
    live_bytes_ = 0;
    for (auto& w : watched_) {
      const auto& h = w.channel->counters();
      live_bytes_ += (h.data_tail - h.data_head) * w.channel->config().ce_bytes;
    }
    stats.peak_live_bytes = std::max(stats.peak_live_bytes, live_bytes_);

    // Structural freedom from hangs: rounds that leave every channel and restart context as it
    // was would repeat for ever. (Two stalled sweep rounds are caught first, with their reason.)
    auto state = fingerprint();
    // A recalled launch may end before any batch does: that is no stall.
    unchanged_ = state == last_fingerprint_ && !std::exchange(recalled_, false) ? unchanged_ + 1 : 0;
    last_fingerprint_ = std::move(state);

    build_views();
    const bool any_work =
        std::any_of(views_.begin(), views_.end(), [](const ChannelView& v) { return v.ready > 0 || v.blocked > 0; });
    if (!any_work) {  // quiescent: nothing ready, nothing in flight, nothing blocked
      // A shared run waits for work from the other devices (its frames' children, say) until the
      // run across them is over; rounds spent waiting are no stall.
      if (options_.sharing && options_.sharing->wait_for_work(graph_)) {
        unchanged_ = 0;
        last_fingerprint_.clear();
        continue;
      }
      if (live_bytes_ > 0) lost_work();
      if (readback_.read) {
        check_resumable(readback_.resumable);
        check_scratch_census(readback_.taken);
      } else {
        check_resumable_counts();
        check_scratch_released();
      }
      return false;
    }
    if (unchanged_ >= kUnchangedRounds) {
      check_device_status();
      if (options_.sharing && options_.sharing->wait_for_returns(graph_)) {
        unchanged_ = 0;
        last_fingerprint_.clear();
        continue;
      }
      no_progress(Stall::NothingChanged);
    }
    return true;
  }
}

void Aggregator::collect(RunStats& stats) {
  rt_.finish();
  collect_start_ = Clock::now();
  device_us_ += us_between(launch_start_, collect_start_);
  ++stats.rounds;
  if (any_yielding_) {
    std::vector<std::uint32_t> busy;  // per launch, the last pass of this round's chain in which its planned sweep found CEs
    const std::uint64_t finished = collect_yields(stats, busy);
    // Sweeps that finished no CE leave the channels as they were: twice in a row is no progress.
    if (sweeps_only_ && finished == 0) {
      if (++stalled_ >= 2) {
        check_device_status();
        no_progress(Stall::SweepsFinishedNothing);
      }
    } else {
      stalled_ = 0;
    }
    // A stack's chain doubles while its last pass finds work (a stack feeding itself); one that
    // ran dry sooner is cut to the last pass that found any, as planned sweeps tell: every pass of
    // a chain launches its kernels whether or not they find CEs. Each stack keeps its own (a part
    // needs two where the leaves before it needed one; the leaves a task's part spawns, swept in
    // the task's round, four). A round of one pass by design (its nodes feed no stack it sweeps)
    // says nothing of what a chain earns.
    const std::uint32_t most = std::max(1u, graph_.options().max_sweep_chain);
    for (std::size_t i = 0; i < launches_.size(); ++i) {
      const Launch& l = launches_[i];
      if (!l.sweep || !sweeps_only_ || !feeds_itself_) continue;
      std::uint32_t& chain = chain_of(l.sweep);
      if (finished == 0)
        chain = 1;
      else if (l.planned && busy[i] < passes_)
        chain = std::max(1u, busy[i]);
      else
        chain = std::min(passes_ * 2, most);
    }
  }
  stats.max_level = std::max(stats.max_level, max_level_);
}

std::uint64_t Aggregator::collect_yields(RunStats& stats, std::vector<std::uint32_t>& busy,
                                         const std::vector<chanflow_launch_counters>* read) {
  const auto& launches = launches_;
  const std::uint32_t passes = passes_;
  std::vector<chanflow_launch_counters> counts(launches.size());
  busy.assign(launches.size(), 0u);
  if (read && read->size() == counts.size())
    counts = *read;
  else
    rt_.svm_read(counts.data(), counters_.get(), counts.size() * sizeof(chanflow_launch_counters));
  std::uint64_t finished = 0;
  std::vector<chanflow_yield_record> records;
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const chanflow_launch_counters& c = counts[i];
    stats.restarts += c.restarts;  // counted by the tasks that resumed, in every dispatch mode
    const KernelNode& node = *watched_[launches[i].input].consumer;
    for (std::size_t p = 0; p < node.ports().size(); ++p)
      if (c.resumed_at[p]) stats.restarts_per_port[node.name() + ":" + node.ports()[p].name] += c.resumed_at[p];
    if (launches[i].device) {  // the device scheduler's: claimed batches, never yielded (all prepaid)
      const Watched& w = watched_[launches[i].input];
      stats.yields += c.yields;
      stats.ces += c.claimed;
      if (c.claimed)
        stats.ces_per_channel[launches[i].sweep ? launches[i].sweep->name() + "[*]" : w.channel->config().name] += c.claimed;
      if (c.busy_ns) stats.device_scheduler.busy_ms_per_node[node.name()] += c.busy_ns / 1e6;
      finished += c.claimed - std::min(c.claimed, c.yields);
      continue;
    }
    if (launches[i].sweep) {
      // Size the stack's next sweeps by the work-groups that found CEs in these.
      // (A planned sweep: per pass that found any; a stack swept for what other stacks spawn
      // may find its one wave in one pass of many.)
      const std::uint32_t per = launches[i].planned ? std::max(1u, c.busy_passes) : passes;
      batches_[launches[i].sweep] = (c.batches + per - 1) / per;
      busy[i] = c.last_busy_pass;
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
    const auto cont = watched_[launches[i].input].consumer->continuation_port();
    for (const auto& r : records) {
      // A multi-level launch's record names its level.
      Watched& w = launches[i].stack ? watched_[watched_of_.at(&launches[i].stack->level(r.depth))] : watched_[launches[i].input];
      w.blocked.push_back({r.ctrl_pos, r.blocked_port});
      stats.partial_yields += cont && r.blocked_port > *cont;
    }
    stats.yields += n;
  }
  return finished;
}

void Aggregator::trace_round(const RunStats& stats) {
  const double t0 = us_between(run_start_, launch_start_);
  trace_.span(0, "round", us_between(run_start_, round_start_), us_between(round_start_, launch_start_),
              {{"round", stats.rounds}, {"dispatches", launches_.size()}});
  // Device times are placed relative to the round's first launch (two clocks, aligned there).
  cl_ulong first = ~cl_ulong{0};
  for (const auto& e : plan_events_) first = std::min(first, e.getProfilingInfo<CL_PROFILING_COMMAND_START>());
  for (const auto& l : launches_)
    for (const auto& e : l.events) first = std::min(first, e.getProfilingInfo<CL_PROFILING_COMMAND_START>());
  auto span = [&](int row, const std::string& what, const cl::Event& e, nlohmann::json args) {
    const cl_ulong start = e.getProfilingInfo<CL_PROFILING_COMMAND_START>();
    const cl_ulong end = e.getProfilingInfo<CL_PROFILING_COMMAND_END>();
    trace_.span(row, what, t0 + (start - first) / 1e3, (end - start) / 1e3, std::move(args));
  };
  for (std::size_t pass = 0; pass < plan_events_.size(); ++pass)
    span(0, "plan", plan_events_[pass], {{"pass", pass}, {"sweeps", plans_.size()}});
  for (const auto& l : launches_) {
    const Watched& w = watched_[l.input];
    const std::string what = l.sweep ? l.sweep->name() + (l.planned ? " planned sweep" : " sweep")
                                     : w.channel->config().name + (l.restart ? " restart" : "");
    for (std::size_t pass = 0; pass < l.events.size(); ++pass)
      span(static_cast<int>(w.consumer->index_) + 1, what, l.events[pass],
           {{"ces", l.count}, {"level", w.level}, {"restart", l.restart}, {"pass", pass}});
  }
  plan_events_.clear();
}

}  // namespace chanflow
