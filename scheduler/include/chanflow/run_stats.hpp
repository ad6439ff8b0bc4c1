// What a graph run takes and gives back: RunOptions (trace, round limit, dispatch log, progress,
// work shared with other devices)
// and RunStats (rounds, dispatches, CEs, yields, memory, and where the time went).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace chanflow {

/// RunOptions::serial_depth of a run without granularity control (CHANFLOW_SERIAL_OFF).
inline constexpr std::uint32_t kSerialOff = 0xffffffffu;

/// One dispatch, as made (RunOptions::record_dispatches).
struct DispatchRecord {
  std::uint64_t round = 0;
  std::string channel;
  std::string kernel;
  std::uint32_t level = 0;
  std::uint64_t count = 0;
  bool restart = false;  ///< a batch of restart contexts rather than ready CEs
};

/// Per-run statistics (thesis Table 4-5's device-idle measure included).
struct RunStats {
  double wall_ms = 0;
  double aggregator_ms = 0;            ///< host time deciding, bookkeeping, launching
  double device_ms = 0;                ///< time from the round's first launch to its completion
  double enqueue_ms = 0;               ///< of device_ms: the host enqueueing the round's launches
  /// Most SVM allocations one launch named (clSetKernelExecInfo): NVIDIA's OpenCL charges every
  /// launch for each (scheduler/README.md, "What a launch costs").
  std::uint32_t svm_named = 0;
  double device_idle_on_aggregator = 0;  ///< aggregator_ms / wall_ms: the device had nothing to run
  /// Where aggregator_ms went, by step of the round: reading the counters and building the views
  /// (observe), asking the policy and admitting its decisions (admit), making stack levels
  /// (channel storage: allocating, clearing; in whichever step made them), writing environments
  /// and lists (lay out, levels aside), and reading what the launches counted (collect).
  struct HostSteps {
    double observe_ms = 0, admit_ms = 0, levels_ms = 0, lay_out_ms = 0, collect_ms = 0;
  } host;
  std::uint64_t rounds = 0;
  std::uint64_t dispatches = 0;
  std::uint64_t ces = 0;               ///< CEs dispatched, all channels
  std::map<std::string, std::uint64_t> ces_per_channel;
  std::uint64_t peak_channel_bytes = 0;  ///< channel memory allocated at the end (grows with stacks)
  std::uint64_t peak_live_bytes = 0;     ///< most CE bytes allocated at once, over all channels
  std::uint64_t yields = 0;              ///< restart contexts written by yielding work-groups
  std::uint64_t partial_yields = 0;      ///< of those, tasks that had flushed their continuation
  std::uint64_t restarts = 0;            ///< tasks resumed after a yield (counted on the device)
  /// Of those, per kernel node and port their flush resumed at ("node:port", the port's name).
  std::map<std::string, std::uint64_t> restarts_per_port;
  std::uint64_t restart_dispatches = 0;
  std::uint64_t sweeps = 0;              ///< device sweeps (each counted in dispatches too)
  std::uint32_t max_level = 0;
  /// Per channel stack, the CEs published into each of its levels in this run (level 0 first):
  /// the breadth its recursion reached, level by level.
  std::map<std::string, std::vector<std::uint64_t>> ces_per_level;
  std::uint32_t serial_depth = kSerialOff;  ///< RunOptions::serial_depth of this run
  /// The runtime's choice of the serial depth still moves between runs (its search by measured
  /// time, cilk::SerialDepthChooser): a benchmark's warm-up lets it settle.
  bool serial_searching = false;
  std::uint32_t channels = 0;            ///< concrete channels at the end (stack levels one each)
  std::string policy;
  std::string scheduler;  ///< "device" or "rounds": where the aggregator's loop ran
  /// The device scheduler's launches and what its work-groups counted (scheduler/cl/schedule.cl).
  struct DeviceScheduling {
    std::uint64_t launches = 0, batches = 0, empty_polls = 0;
    /// Of the empty polls: a claim that found the CEs taken by other work-groups, and CEs ready
    /// whose outputs had no room.
    std::uint64_t polls_lost = 0, polls_no_room = 0;
    /// Sleeps of work-groups that dozed, beyond what was ready and held (GraphOptions::scheduler_awake).
    std::uint64_t naps = 0;
    std::uint64_t left_idle = 0;   ///< work-groups that left with nothing ready and none busy
    std::uint64_t left_polls = 0;  ///< work-groups that left after their empty polls in a row
    std::uint64_t left_quiet = 0;  ///< work-groups that left a launch gone quiet (no batch held or finished)
    /// Launches the host recalled while they ran (RunOptions::sharing: another device wanted
    /// work), and the work-groups that left them so.
    std::uint64_t recalled = 0, left_recalled = 0;
    /// Blocks the host wrote before its launches (environments, entries, header, counters): a
    /// block is written only where it changed, so a re-run of an unchanged graph writes none.
    std::uint64_t blocks_written = 0;
    /// Per kernel node, the work-group time its batches took, summed over work-groups (a device
    /// profile read from the device's clock: NVIDIA's %globaltimer; empty where there is none).
    std::map<std::string, double> busy_ms_per_node;
  } device_scheduler;
  std::vector<DispatchRecord> dispatch_log;  ///< filled when RunOptions::record_dispatches
  double mean_ces_per_dispatch() const { return dispatches ? double(ces) / dispatches : 0.0; }
};

class Graph;

/// A run that shares its work with runs of the same graph on other devices (the multi-device
/// layer, multidevice/). Its calls come on the run's host thread, while no kernel of the run is
/// in flight, but for the recall it is given, which any thread may call.
class WorkSharing {
 public:
  virtual ~WorkSharing() = default;
  /// At the start of every round (or device-scheduler launch): take ready CEs out of the graph's
  /// channels, put arrived ones in, publish frames whose children returned elsewhere (Channel's
  /// handoff calls). True when it changed any channel (the run reads their counters again).
  virtual bool at_round(Graph& graph) = 0;
  /// A launch of the device scheduler, which runs until the graph's work is done, has begun:
  /// until the next at_round (or the run's end), `recall` asks it to end at its work-groups' next
  /// poll, so that the next at_round can give work away. Callable from any thread, more than
  /// once; a recall that comes after the launch has ended may end the next one early (harmless).
  virtual void launch_begins(std::function<void()> recall) { (void)recall; }
  /// The run found nothing ready, in flight or blocked; CEs may still be allocated (frames whose
  /// children run elsewhere). Blocks until work may have arrived (true: the run looks again) or
  /// the run across devices is over (false: it ends, and a CE still allocated is an error, as in
  /// a run alone).
  virtual bool wait_for_work(Graph& graph) = 0;
  /// The run has work it cannot dispatch (its levels are full of frames whose children run
  /// elsewhere, say). Blocks until results of tasks it gave away come back (true: the run looks
  /// again) or it is clear none will (false: the stall is reported as in a run alone).
  virtual bool wait_for_returns(Graph& graph) = 0;
};

struct RunOptions {
  std::string trace_path;  ///< write a Chrome-trace JSON of the dispatches here
  std::uint64_t max_rounds = 0;  ///< 0: unlimited (no-progress detection still applies)
  bool record_dispatches = false;  ///< keep every dispatch in RunStats::dispatch_log
  /// Called after every round with the statistics so far and the milliseconds since the run
  /// began (a progress display: chanflow run shows one on a terminal); keep it cheap.
  std::function<void(const RunStats& so_far, double elapsed_ms)> progress;
  /// A progress line on standard error, where it is a terminal, for a run past ~2 s (tasks run,
  /// the deepest level, the rate; under the device scheduler batches, or a launch not yet
  /// started), naming the run with this label; empty (RunSettings::quiet): none.
  std::string progress_label;
  /// Granularity control: tasks of a compiled Cilk function that has a serial form run their
  /// whole call in their work-item from this stack level on (chanflow_node_env::serial_depth);
  /// kSerialOff: every spawn goes through a channel. Nodes without a serial form ignore it.
  std::uint32_t serial_depth = kSerialOff;
  /// Shares the run's work with runs on other devices; null: the run is alone. Under the
  /// device scheduler the host sees the channels only between launches: the sharing recalls a
  /// launch when another device wants work (WorkSharing::launch_begins).
  WorkSharing* sharing = nullptr;
};

}  // namespace chanflow
