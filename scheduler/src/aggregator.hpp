// The aggregator: chanflow's host thread that watches every channel and turns ready CEs into
// kernel dispatches under a scheduling policy (the thesis' GPU control processor, 4.1.1), and
// keeps the restart contexts of yielded work-groups (4.4).
// Not to be confused with oneTBB's `aggregator`, a lock-free operation combiner.
//
// One class, its members defined by concern:
//   aggregator.cpp   the round as a sequence: observe, admit, lay out, launch, collect, trace
//   admission.cpp    the watched channels, their views, and admission of the policy's decisions
//   launch_envs.cpp  laying a round out on the device (environments, pools) and launching it
//   sweeps.cpp       device sweeps: when a stack may be swept, the planning kernel, grids
//   diagnostics.cpp  device-side errors, no-progress and lost-work reports, end-of-run checks
#pragma once

#include "chanflow/graph.hpp"
#include "progress_line.hpp"
#include "trace.hpp"
#include "watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <set>

namespace chanflow {

/// A word of zeros, the pattern the launch counters are filled with.
inline constexpr cl_uint kZeroWord = 0;

inline double us_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

/// Round-based protocol (DESIGN.md decision 4): read every header in one transfer, ask the
/// policy, launch the dispatches it chose (ranges of ready CEs, or lists of restarted CEs) and,
/// behind them, in-order deallocation of the channels they consumed; wait; collect the restart
/// contexts the round wrote.
/// A non-yielding node is admitted only as many CEs as its outputs can take in the worst case,
/// so its flush never finds a full channel; a yielding node is admitted what is likely to fit
/// and yields the rest. A round in which nothing can be dispatched while work remains is
/// reported as no progress.
class Aggregator {
 public:
  /// Makes what every run of `graph` uses (its kernels from `program`, argument blocks, pools):
  /// a graph keeps its aggregator, so running it again costs none of this.
  Aggregator(Graph& graph, const cl::Program& program);
  /// Waits for the queue: queued copies read the host staging below (also when run() unwinds).
  ~Aggregator();
  Aggregator(const Aggregator&) = delete;
  Aggregator& operator=(const Aggregator&) = delete;
  /// Takes a run's policy, options and argument blocks and forgets the last run's round state;
  /// throws (changing nothing on the device) for options the runtime cannot honour.
  void start_run(SchedulingPolicy& policy, const RunOptions& options);
  /// Runs the graph to quiescence under the policy start_run() took.
  RunStats run();
  /// The program its kernels come from (a graph whose program was rebuilt needs a new aggregator).
  const cl::Program& program() const noexcept { return program_; }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::uint32_t kUnchangedRounds = 3;  ///< rounds in a row that changed nothing: no progress

  struct Blocked {
    std::uint64_t ctrl_pos;
    std::uint32_t port;
  };
  /// A concrete channel the aggregator watches: a channel node, or one level of a channel stack.
  struct Watched {
    Channel* channel = nullptr;
    KernelNode* consumer = nullptr;
    ChannelStackNode* stack = nullptr;
    std::uint32_t level = 0;
    const ChannelPredicate* predicate = nullptr;  ///< the node's, if set
    std::deque<Blocked> blocked;  ///< restart contexts of this channel's CEs, oldest first
    ChannelNode* node = nullptr;  ///< the channel node, if it is not a stack level
  };
  struct Launch {
    std::uint32_t input = 0;   ///< the watched input channel (a sweep: its stack's level 0)
    std::uint64_t begin = 0;   ///< first control position (range dispatch)
    std::uint64_t count = 0;   ///< CEs (range, restart list); 0 for a sweep
    bool restart = false;
    std::size_t positions_at = 0;  ///< offset (in entries) into the positions pool (restart dispatch)
    std::size_t yields_at = 0;     ///< offset (in records) into the yield pool
    ChannelStackNode* sweep = nullptr;  ///< a device sweep over this stack's levels
    bool planned = false;               ///< the sweep's ranges are planned on the device (Sweeps::Planned)
    bool spawned = false;               ///< swept because a swept node spawns into it (GraphOptions::sweep_spawned)
    std::size_t sweep_groups = 0;       ///< work-groups per pass of the sweep
    std::uint32_t batch = 0;            ///< a host-sized launch: CEs per work-group (spread())
    std::size_t env_at = 0;             ///< first of its environments (one per level for a sweep)
    std::uint32_t levels = 1;           ///< environments it has: its stack's depth when they were laid out
    bool device = false;                ///< a channel the device scheduler watches (all of its levels)
    std::vector<cl::Event> events;  ///< one per pass (traced runs only)
    /// A multi-level range dispatch: the ranges of several levels of one stack in one launch.
    struct LevelRange {
      std::uint32_t input;
      std::uint64_t begin, count;
    };
    ChannelStackNode* stack = nullptr;
    std::vector<LevelRange> ranges;
  };
  /// Why a run cannot progress: nothing could be dispatched; device sweeps finished nothing twice
  /// in a row; or rounds ran and changed nothing (every dispatch refused or yielded again).
  enum class Stall { NothingDispatchable, SweepsFinishedNothing, NothingChanged };

  // --- One round, in order (aggregator.cpp) ---
  /// Reads every counter, checks for stalls, builds the views; false once the graph is quiescent.
  bool observe(RunStats& stats);
  /// Asks the policy and admits its decisions into launches_ (admission.cpp).
  void admit(RunStats& stats);
  /// Makes the levels the round reaches and writes its environments, lists and plans to the
  /// device (launch_envs.cpp).
  void lay_out();
  bool round_feeds_itself() const;
  /// Enqueues the round's launches, each pass followed by in-order deallocation (launch_envs.cpp).
  void launch_passes(RunStats& stats);
  /// Reads what the round's work-groups counted, keeps restart contexts, detects stalled sweeps.
  void collect(RunStats& stats);
  void trace_round(const RunStats& stats);
  /// Host time the graph's stacks have spent making levels so far (RunStats::HostSteps).
  double levels_us() const;

  // --- The watched channels and admission (admission.cpp) ---
  void collect_watched();
  Channel& port_channel(const PortTarget& port, std::uint32_t level);
  static std::uint32_t port_ce_bytes(const PortTarget& port);
  std::int64_t port_free(const PortTarget& port, std::uint32_t level) const;
  bool port_has_room(const Watched& w, std::uint32_t port) const;
  /// Most CEs a dispatch of `w` may take given `free` slots in a port's target.
  std::uint64_t admits(const Watched& w, const PortTarget& port, std::int64_t free) const;
  /// Whether admission charges port `p` of `w`'s consumer: not the continuation port of a full
  /// level that holds tasks a sweep resumed past it (as the device's chanflow_port_need).
  bool charges_port(const Watched& w, std::uint32_t p);
  void build_views();
  /// Merges the round's range dispatches of each stack's levels into one launch per stack.
  /// (A merged launch's yield records are one block: each record names its level.)
  void merge_level_ranges(std::vector<Launch>& launches) const;

  // --- Laying a round out (launch_envs.cpp) ---
  void write_env(std::size_t launch_index, const Launch& launch);
  void write_level_envs(std::size_t launch_index, const Launch& launch, ChannelStackNode& stack);
  void write_sweep_envs(std::size_t launch_index, const Launch& launch);
  void write_ranged_envs(std::size_t launch_index, const Launch& launch);
  std::size_t stack_index(const ChannelStackNode& stack) const;
  /// The SVM allocations kernel node `k` reaches through pointers stored in SVM.
  std::vector<void*> indirect_svm(const KernelNode& k) const;
  /// A block the aggregator keeps for its launches: carved from the channel table's control
  /// area where it fits (ChannelTable::allocate_control: no pointer of its own for a launch to
  /// name), else an allocation of its own.
  class ControlBlock {
   public:
    void* get() const noexcept { return at_; }
    std::size_t size() const noexcept { return bytes_; }
    /// The allocation a launch must name for it: nullptr when it is in the control area.
    void* allocation() const noexcept { return own_.get(); }
    void reset(ChannelTable& table, const Runtime& rt, std::size_t bytes);

   private:
    void* at_ = nullptr;
    std::size_t bytes_ = 0;
    SvmBuffer own_;
  };
  /// Room for `count` Ts (at least 64; twice that when it grows).
  template <class T>
  void ensure(ControlBlock& block, std::size_t count);

  // --- Device sweeps (sweeps.cpp) ---
  /// Whether `w`'s stack may go out as a sweep this round, given the launches made so far.
  /// A stack a swept node spawns into (`spawned`) is not counted against the planning kernel's
  /// levels here: lay_out() keeps those that fit once the stacks have grown.
  bool sweepable(const Watched& w, const std::vector<Launch>& launches, bool spawned = false) const;
  bool serial_ranged(const Watched& w) const;
  /// Adds the sweeps of the stacks the round's swept nodes spawn into, transitively.
  void add_spawned_sweeps(const std::set<const ChannelStackNode*>& held);
  /// Drops the spawned sweeps that would take the planning kernel past its levels.
  void fit_spawned_sweeps();
  /// Enqueues the planning kernel for the round's planned sweeps (one pass).
  cl::Event enqueue_plan();
  /// Makes the levels a sweep of the graph's stacks may reach in a chain of sweeps.
  void grow_stacks_for_sweeps();
  std::uint32_t sweep_groups(const ChannelStackNode& stack, std::uint64_t ready, std::uint64_t own, bool spawned) const;
  /// CEs per work-group for a host-sized launch of `count` CEs of a node whose work-groups take
  /// `per`: fewer where it would fill fewer work-groups than twice the compute units.
  std::uint32_t spread(std::uint64_t count, std::uint32_t per) const;
  /// The work-groups a narrow launch is spread over: twice the device's compute units.
  std::uint32_t spread_groups() const { return 2 * std::max(1u, rt_.caps().compute_units); }

  // --- The device scheduler (device_scheduler.cpp) ---
  /// Whether this run's policy runs on the device scheduler; throws for a combination that cannot run.
  bool uses_device_scheduler(const SchedulingPolicy& policy);
  // The scheduler kernel of `program` (the graph's, or the one built beside it) and its blocks.
  void adopt_scheduler(const cl::Program& program);
  std::uint32_t scheduler_groups(std::uint64_t ready) const;
  /// Makes the levels the recursion reaches and writes every watched channel's environment and entry.
  void lay_out_device();
  /// Launches the scheduler and in-order deallocation of every channel behind it.
  void launch_device(RunStats& stats);
  /// Waits, reads what the launch counted, detects launches that finished nothing.
  void collect_device(RunStats& stats);
  void trace_device(const RunStats& stats);
  void trace_device_timeline(double t0);
  /// The scheduler's header as the launch writes it, read while it runs (a CPU device's SVM in
  /// place; elsewhere through a queue of its own).
  chanflow_sched read_sched_live();
  void read_live(void* to, const void* svm, std::size_t bytes);
  /// Whether read_live reads the memory in place (a CPU device), rather than copying on a queue.
  bool reads_live_in_place() const;
  /// Asks the running launch to end at its work-groups' next poll (WorkSharing::launch_begins:
  /// another device wants work); from any one thread at a time.
  void recall_launch();
  /// What the watchdog samples: batches finished, polls made and work-groups gone in the launch
  /// (none before its first work-group has taken a batch or polled in vain).
  std::optional<std::uint64_t> sched_heartbeat();
  /// The heartbeat found the launch not yet running: the progress line says why it may wait.
  void launch_not_started();
  /// The watchdog's verdicts: the launch has not moved, or (a CPU device compiling its kernel) not
  /// started, for `seconds`. Each says so and ends the process.
  [[noreturn]] void sched_stuck(double seconds);
  [[noreturn]] void sched_not_started(double seconds);

  // --- Before and after a device-scheduler launch (launch_readback.cpp) ---
  /// A block a launch reads, as it was last written to the device (at `at`).
  struct DeviceImage {
    const void* at = nullptr;
    std::vector<std::byte> bytes;
  };
  /// Writes `bytes` of `host` to `svm` unless `image` says the device holds them already.
  void write_if_changed(DeviceImage& image, void* svm, const void* host, std::size_t bytes);
  /// After anything but the device scheduler wrote the blocks (the rounds' lay-out) or a launch
  /// that did not end as it should: the next lay-out writes them all.
  void forget_device_images();
  /// Zeroes the first `launches` launch counters unless the last readback left them so.
  void zero_launch_counters(std::size_t launches);
  /// Lays out the readback kernel's block and writes its pieces where they changed: everything
  /// the host reads once a launch has ended (its header and counters, every channel's header,
  /// the end-of-run checks'), and the blocks the launch changes, put back for the next (readback.cl).
  void lay_out_readback();
  /// Queues the readback kernel behind the launch (and nothing else: see launch_readback.cpp).
  void enqueue_readback();
  /// Reads that block (one copy: ~20 µs on NVIDIA's OpenCL, where the pieces were six and a census
  /// launch) into readback_ and the channel table's mirror, once the queue has finished.
  void read_readback();
  const cl::Kernel& readback_kernel();
  /// Launches it over `count` pieces and `pool_count` pools, their counts into `taken`.
  void launch_readback(const void* pieces, std::size_t count, const void* pools, std::size_t pool_count, void* taken);
  /// The frame scratch pools the census counts into census_pool_list_, their levels into census_levels_.
  void census_pools();

  // --- Diagnostics (diagnostics.cpp) ---
  void check_device_status() const;
  void check_status(const chanflow_status& s) const;
  [[noreturn]] void no_progress(Stall why) const;
  /// Every channel's positions and the host's restart contexts: a round that leaves them as they
  /// were changed nothing, and the next one, seeing the same, would do the same.
  std::vector<std::uint64_t> fingerprint() const;
  [[noreturn]] void lost_work() const;
  void check_resumable_counts() const;
  void check_resumable(const std::vector<std::uint32_t>& counts) const;
  void check_scratch_released();
  /// Queues the census of frame scratch blocks still taken (readback.cl, no pieces) and the read
  /// of its counts into `taken`, in the order of census_levels_; false (and `taken` empty) where no
  /// stack has frame scratch.
  bool queue_scratch_census(std::vector<std::uint32_t>& taken);
  void check_scratch_census(const std::vector<std::uint32_t>& taken) const;

  /// Reads the round's launch counters (or takes them as `read` holds them) and keeps host restart
  /// contexts; returns the CEs the round finished (dispatched and not yielded).
  std::uint64_t collect_yields(RunStats& stats, std::vector<std::uint32_t>& busy,
                               const std::vector<chanflow_launch_counters>* read = nullptr);

  Graph& graph_;
  const Runtime& rt_;
  std::uint32_t wg_;
  cl::Program program_;
  SchedulingPolicy* policy_ = nullptr;  // this run's
  RunOptions options_;
  std::vector<Watched> watched_;
  /// Each stack level's ctrl_published when the last run ended (RunStats::ces_per_level: a run's
  /// count includes the CEs seeded before it).
  std::map<const Channel*, std::uint64_t> published_before_;
  std::map<const Channel*, std::size_t> watched_of_;
  std::vector<ChannelView> views_;
  std::uint32_t max_level_ = 0;
  std::vector<cl::Kernel> kernels_;
  std::vector<std::vector<void*>> kernel_svm_;  // per kernel: the SVM list it was last given
  std::vector<ControlBlock> args_;
  ControlBlock status_;
  ControlBlock env_pool_;
  ControlBlock positions_pool_;
  ControlBlock yield_pool_;                    // chanflow_yield_record per dispatched item
  ControlBlock counters_;                      // chanflow_launch_counters per launch
  std::map<const ChannelStackNode*, std::uint64_t> batches_;  // per stack: batches its last sweep found
  ControlBlock resumable_;                     // per stack and level: see chanflow_node_env::resumable
  std::vector<std::uint32_t> resumable_seen_;  // its counts as charges_port read them this round
  bool resumable_read_ = false;
  Sweeps sweeps_ = Sweeps::Off;                // GraphOptions::device_sweeps, resolved for the device
  bool sweep_spawned_ = true;                  // GraphOptions::sweep_spawned, unless the environment says 0
  cl::Kernel plan_kernel_;                     // chanflow_plan_batches (Sweeps::Planned)
  std::size_t plan_local_ = 0;                 // its work-group size
  std::vector<void*> plan_kernel_svm_;
  ControlBlock census_pools_, census_taken_;
  std::vector<std::uint64_t> census_pool_list_;  // what census_pools_ is written from (until the queue ends)
  std::vector<std::pair<const ChannelStackNode*, std::uint32_t>> census_levels_;  // stack and level per pool
  // What read_readback read after the last device-scheduler launch, for collect_device and the
  // observe after it (which then takes the channel table's mirror as it is).
  struct LaunchReadback {
    bool read = false;
    chanflow_sched head{};
    std::vector<chanflow_launch_counters> counters;
    std::vector<std::uint32_t> resumable, taken;  // taken: the scratch census's (empty: no frame scratch)
    chanflow_status status{};
  } readback_;
  SvmBuffer plan_pool_;
  Trace trace_;
  bool device_ = false;                        // this run uses the device scheduler
  bool cpu_ = false;                           // the device is a CPU (PoCL's)
  cl::Kernel sched_kernel_;                    // chanflow_schedule, if the program holds it
  std::vector<void*> sched_svm_;
  ControlBlock sched_entries_;                 // chanflow_sched_entry per watched channel
  ControlBlock sched_block_;                   // chanflow_sched
  ControlBlock sched_recall_;                  // its recall word (chanflow_sched::recall)
  ControlBlock sched_spans_;                   // chanflow_sched_span per batch (traced runs on a device with a clock)
  std::uint32_t sched_spans_used_ = 0;         // as the last launch counted them
  std::set<int> named_group_rows_;             // the trace's work-group rows named so far
  std::uint32_t sched_policy_ = CHANFLOW_POLICY_LEVELIZED;
  std::uint32_t sched_groups_ = 0;
  std::vector<cl::Event> sched_events_;        // traced runs only
  std::vector<chanflow_sched_entry> sched_entries_host_;  // host staging of the entries
  std::vector<std::uint64_t> sched_case_envs_;  // an environment per case of the scheduler's switch
  chanflow_sched sched_head_host_{};           // and of the launch's header
  ControlBlock sched_template_;                // the header as laid out: the readback kernel puts it back
  struct {
    DeviceImage envs, entries, case_envs, head, head_template, pieces;
  } images_;                                   // what the device scheduler's blocks hold
  const void* counters_zeroed_at_ = nullptr;   // the launch counters known to be zero there,
  std::size_t counters_zeroed_ = 0;            // how many
  std::uint64_t blocks_written_ = 0;           // by the lay-outs since the last collect
  bool launch_in_flight_ = false;              // laid out, not yet read back: a failure forgets the images
  cl::Kernel readback_kernel_;                 // chanflow_readback (readback.cl): made with the scheduler's, or by the first census
  std::vector<void*> readback_svm_;
  ControlBlock readback_pieces_;               // its pieces, then the census's pools
  ControlBlock readback_block_;                // what it gathers, in readback_layout_
  std::vector<chanflow_readback_piece> readback_pieces_host_;
  std::vector<std::byte> readback_list_host_;
  std::vector<std::uint64_t> readback_host_;   // the block, read
  struct ReadbackLayout {                      // byte offsets in the block, and sizes
    std::size_t head = 0, recall = 0, counters = 0, headers = 0, resumable = 0, status = 0, taken = 0, bytes = 0;
    std::size_t launches = 0, header_bytes = 0, resumable_words = 0, pools = 0;
  } readback_layout_;

  // The round in progress (what one step leaves for the next).
  std::vector<Dispatch> decisions_;
  std::vector<Launch> launches_;
  std::vector<chanflow_node_env> envs_;        // host staging of the round's environments
  std::vector<std::uint64_t> positions_;       // host staging of restart lists
  std::vector<chanflow_plan> plans_;           // host staging of the round's planned sweeps
  std::size_t yield_records_ = 0;              // records the round's launches may write
  std::vector<std::uint32_t> consumed_;        // channel ids each pass deallocates behind it
  std::vector<std::vector<void*>> reach_;      // per kernel node: the SVM it reaches this round
  bool sweeps_only_ = false;                   // the round is repeated on the device (passes_)
  bool feeds_itself_ = false;                  // a launched node spawns into a stack the round sweeps
  bool any_yielding_ = false;                  // its launches may yield: collect their counters
  std::uint32_t passes_ = 1;
  std::uint64_t live_bytes_ = 0;
  std::vector<cl::Event> plan_events_;         // this round's planning kernels (traced runs only)

  // Across rounds.
  Clock::time_point run_start_, round_start_, launch_start_, collect_start_;
  double device_us_ = 0, enqueue_us_ = 0;
  /// Per swept stack, the passes its next round earns while rounds only sweep (first 2: a
  /// cilk_for part's round needs two, its parts' and theirs; 4 for a stack swept for what
  /// others spawn: the leaves of a part of 128 grains come in the third).
  std::map<const ChannelStackNode*, std::uint32_t> chains_;
  std::uint32_t& chain_of(const ChannelStackNode* stack, std::uint32_t first = 2) {
    return chains_.try_emplace(stack, std::clamp(graph_.options().max_sweep_chain, 1u, first)).first->second;
  }
  std::uint32_t stalled_ = 0;                  // consecutive sweep rounds that finished no CE
  std::vector<std::uint64_t> last_fingerprint_;
  std::uint32_t unchanged_ = 0;                // consecutive rounds that changed nothing
  bool recalled_ = false;  // the last launch was recalled (a shared run): its end is no stall
  bool waited_ = false;  // this round, a shared run waited for results from elsewhere instead of launching

  std::optional<cl::CommandQueue> watch_queue_;  // the watchdog's reads on a device that is not the host's
  std::optional<cl::CommandQueue> recall_queue_;  // recall_launch's writes there
  cl::Event sched_launch_event_;                 // the scheduler's launch in progress (watched runs)
  // The run's progress line (RunOptions::progress_label) while run() runs: the rounds report to
  // it, and the device scheduler's watchdog thread between arm() and disarm().
  ProgressLine* progress_line_ = nullptr;
  // Over the scheduler's launches (none: not watched). Its thread uses the members above: it is
  // declared last, so it goes (joined) first.
  std::unique_ptr<LaunchWatchdog> watchdog_;
};

template <class T>
void Aggregator::ensure(ControlBlock& block, std::size_t count) {
  const std::size_t bytes = std::max<std::size_t>(count, 64) * sizeof(T);
  if (block.size() < bytes) block.reset(graph_.table_, rt_, bytes * 2);
}

}  // namespace chanflow
