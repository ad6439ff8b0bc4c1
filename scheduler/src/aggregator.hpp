// The aggregator: chanflow's host thread that watches every channel and turns ready CEs into
// kernel dispatches under a scheduling policy (the thesis' GPU control processor, 4.1.1), and
// keeps the restart contexts of yielded work-groups (4.4).
// Not to be confused with oneTBB's `aggregator`, a lock-free operation combiner.
#pragma once

#include "chanflow/graph.hpp"
#include "trace.hpp"

#include <chrono>
#include <deque>
#include <map>
#include <set>

namespace chanflow {

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
  Aggregator(Graph& graph, SchedulingPolicy& policy, const RunOptions& options);
  /// Waits for the queue: queued copies read the host staging below (also when run() unwinds).
  ~Aggregator();
  Aggregator(const Aggregator&) = delete;
  Aggregator& operator=(const Aggregator&) = delete;
  RunStats run();

 private:
  struct Blocked {
    std::uint64_t ctrl_pos;
    std::uint32_t port;
  };
  /// A concrete channel: a channel node, or one level of a channel stack.
  struct Slot {
    Channel* channel = nullptr;
    KernelNode* consumer = nullptr;
    ChannelStackNode* stack = nullptr;
    std::uint32_t level = 0;
    const ChannelPredicate* predicate = nullptr;  ///< the node's, if set
    std::deque<Blocked> blocked;  ///< restart contexts of this channel's CEs, oldest first
  };
  struct Launch {
    std::uint32_t slot = 0;    ///< the input channel (a sweep: its stack's level 0)
    std::uint64_t begin = 0;   ///< first control position (range dispatch)
    std::uint64_t count = 0;   ///< CEs (range, restart list); 0 for a sweep
    bool restart = false;
    std::size_t positions_at = 0;  ///< offset (in entries) into the positions pool (restart dispatch)
    std::size_t yields_at = 0;     ///< offset (in records) into the yield pool
    ChannelStackNode* sweep = nullptr;  ///< a device sweep over this stack's levels
    bool planned = false;               ///< the sweep's ranges are planned on the device (Sweeps::Planned)
    std::size_t sweep_groups = 0;       ///< work-groups per pass of the sweep
    std::size_t env_at = 0;             ///< first of its environments (one per level for a sweep)
    std::uint32_t levels = 1;           ///< environments it has: its stack's depth when they were laid out
    std::vector<cl::Event> events;  ///< one per pass (traced runs only)
    /// A multi-level range dispatch: the ranges of several levels of one stack in one launch.
    struct LevelRange {
      std::uint32_t slot;
      std::uint64_t begin, count;
    };
    ChannelStackNode* stack = nullptr;
    std::vector<LevelRange> ranges;
  };
  /// Merges the round's range dispatches of each stack's levels into one launch per stack.
  /// (A merged launch's yield records are one block: each record names its level.)
  void merge_level_ranges(std::vector<Launch>& launches) const;
  void write_ranged_envs(std::size_t launch_index, const Launch& launch);

  void collect_slots();
  Channel& port_channel(const PortTarget& port, std::uint32_t level);
  static std::uint32_t port_ce_bytes(const PortTarget& port);
  std::int64_t port_free(const PortTarget& port, std::uint32_t level) const;
  bool port_has_room(const Slot& slot, std::uint32_t port) const;
  /// Most CEs a dispatch of `slot` may take given `free` slots in a port's target.
  std::uint64_t admits(const Slot& slot, const PortTarget& port, std::int64_t free) const;
  void build_views();
  void check_device_status() const;
  /// Why a run cannot progress: nothing could be dispatched; device sweeps finished nothing twice
  /// in a row; or rounds ran and changed nothing (every dispatch refused or yielded again).
  enum class Stall { NothingDispatchable, SweepsFinishedNothing, NothingChanged };
  [[noreturn]] void no_progress(Stall why) const;
  /// Every channel's positions and the host's restart contexts: a round that leaves them as they
  /// were changed nothing, and the next one, seeing the same, would do the same.
  std::vector<std::uint64_t> fingerprint() const;
  [[noreturn]] void lost_work() const;
  void check_resumable_counts() const;
  void write_env(std::size_t launch_index, const Launch& launch);
  void write_level_envs(std::size_t launch_index, const Launch& launch, ChannelStackNode& stack);
  void write_sweep_envs(std::size_t launch_index, const Launch& launch);
  /// Whether `slot`'s stack may go out as a sweep this round, given the launches made so far.
  bool sweepable(const Slot& slot, const std::vector<Launch>& launches) const;
  /// Enqueues the planning kernel for the round's planned sweeps (one pass).
  cl::Event enqueue_plan();
  std::size_t stack_index(const ChannelStackNode& stack) const;
  /// Makes the levels a sweep of the graph's stacks may reach in a chain of sweeps.
  void grow_stacks_for_sweeps();
  std::uint32_t sweep_groups(const ChannelStackNode& stack, std::uint64_t ready) const;
  /// Reads the round's yield and claim counters and keeps host restart contexts; returns the
  /// CEs the round finished (dispatched and not yielded).
  std::uint64_t collect_yields(const std::vector<Launch>& launches, std::uint32_t passes, RunStats& stats);
  /// The SVM allocations kernel node `k` reaches through pointers stored in SVM.
  std::vector<void*> indirect_svm(const KernelNode& k) const;
  template <class T>
  static void ensure(SvmBuffer& buffer, const Runtime& rt, std::size_t count);

  Graph& graph_;
  SchedulingPolicy& policy_;
  RunOptions options_;
  const Runtime& rt_;
  std::uint32_t wg_;
  std::vector<Slot> slots_;
  std::map<const Channel*, std::size_t> slot_of_;
  std::vector<ChannelView> views_;
  std::uint32_t max_level_ = 0;
  std::vector<cl::Kernel> kernels_;
  std::vector<std::vector<void*>> kernel_svm_;  // per kernel: the SVM list it was last given
  std::vector<SvmBuffer> args_;
  SvmBuffer status_;
  std::vector<chanflow_node_env> envs_;        // host staging of the round's environments
  SvmBuffer env_pool_;
  std::vector<std::uint64_t> positions_;       // host staging of restart lists
  SvmBuffer positions_pool_;
  SvmBuffer yield_pool_;                       // chanflow_yield_record per dispatched item
  SvmBuffer counters_;                         // chanflow_launch_counters per launch
  std::map<const ChannelStackNode*, std::uint64_t> batches_;  // per stack: batches its last sweep found
  SvmBuffer resumable_;                        // per stack and level: see chanflow_node_env::resumable
  Sweeps sweeps_ = Sweeps::Off;                // GraphOptions::device_sweeps, resolved for the device
  cl::Kernel plan_kernel_;                     // chanflow_plan_batches (Sweeps::Planned)
  std::size_t plan_local_ = 0;                 // its work-group size
  std::vector<void*> plan_kernel_svm_;
  std::vector<chanflow_plan> plans_;           // host staging of the round's planned sweeps
  SvmBuffer plan_pool_;
  std::vector<cl::Event> plan_events_;        // this round's planning kernels (traced runs only)
  std::uint32_t chain_ = 1;                    // sweeps per host round while rounds only sweep
  std::uint32_t stalled_ = 0;                  // consecutive sweep rounds that finished no CE
  std::vector<std::uint64_t> last_fingerprint_;
  std::uint32_t unchanged_ = 0;                // consecutive rounds that changed nothing
  Trace trace_;
};

}  // namespace chanflow
