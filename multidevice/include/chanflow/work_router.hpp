// One run of a graph across several devices (DESIGN.md decision 16): each device runs its own
// copy of the graph, in rounds or under the device scheduler, and the router moves tasks from a
// busy device to an idle one between its rounds or launches (a launch is recalled when another
// device waits), returns their results to the frames that wait for them, and ends the run when
// every device is idle and nothing is on its way.
//
// A task moves whole: its CE (a chanflow_task header, then its arguments) goes, packed with the
// others taken at once, from the shallowest ready level of a movable stack of the busiest device
// to the same level of the same stack on an idle one (or, from a movable plain channel, a CE that
// returns nothing to the same channel). There it returns into a proxy frame of the
// router's (a frame in a channel of its own on that device, one pending child); when the proxy's
// child has returned, the router carries the result back and the origin's frame counts the child
// as returned (its join counter drops once, as for a child that ran at home). A stack is movable
// when its tasks carry nothing that points into their device's memory but the header's result
// slot and frame: each device has a context of its own, and an address means nothing elsewhere.
#pragma once

#include "chanflow/graph.hpp"
#include "chanflow/run_stats.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace chanflow {

/// One device's copy of the graph: the graph (made on that device's runtime), the names of its stacks whose tasks may move, and of its
/// plain channels whose CEs may move: tasks that return nothing to a frame (a tree search that
/// counts what it visits, each device counting in its own memory, summed when the run ends).
struct DeviceGraph {
  Graph* graph = nullptr;
  std::vector<std::string> movable;
  std::vector<std::string> movable_channels = {};
};

/// How a run across devices shares its work.
struct RouterOptions {
  /// False: no task moves, each device runs what it was seeded with (a static split, to compare
  /// against); the run still ends when every device is idle.
  bool move_work = true;
};

/// What moved to and from one device during a run.
struct DeviceTraffic {
  std::uint64_t tasks_sent = 0;      ///< tasks taken from this device for another
  std::uint64_t tasks_received = 0;  ///< tasks another device gave this one
  std::uint64_t plain_received = 0;  ///< of those, CEs of plain channels, which return nothing
  std::uint64_t batches_sent = 0;    ///< packed transfers of tasks (one per take)
  std::uint64_t returns_sent = 0;    ///< results of received tasks, carried back to their frames
  std::uint64_t bytes_sent = 0;      ///< task CEs and results (or data: a sort's keys, sort_across.hpp)
  std::uint64_t recalls = 0;         ///< its device-scheduler launches another device's wait recalled
  std::uint64_t waits = 0;           ///< times the device ran dry and waited
  double wait_ms = 0;                ///< host time it spent waiting
  std::uint64_t wakes = 0;           ///< waits that work ended (tasks or results arriving)
  double wake_us_total = 0;          ///< over those: from the work's posting to the device running again
  double wake_us_max = 0;
};

/// A run's statistics, device by device.
struct DeviceRunStats {
  std::vector<RunStats> runs;
  std::vector<DeviceTraffic> traffic;
  double wall_ms = 0;
  /// The devices' runs as one: counts summed (CEs, per level and per channel too), the deepest
  /// level and the most memory of any device, host and device time a device's mean, the run's
  /// wall time.
  RunStats total() const;
};

/// Where device `device` of a run across devices writes its Chrome trace when the run was asked
/// for one at `path`: `trace.json` becomes `trace.device1.json` (the first device's too).
std::string device_trace_path(const std::string& path, std::size_t device);

/// Runs `graphs` (one per device, the same definition, seeded where the run starts) at once, one
/// host thread each, moving work between them as they run. `make_policy` gives each device's run
/// its policy. Throws the first device's error, naming the device, after every run has stopped.
class WorkRouter {
 public:
  explicit WorkRouter(std::vector<DeviceGraph> graphs, RouterOptions options = {});
  ~WorkRouter();
  WorkRouter(const WorkRouter&) = delete;
  WorkRouter& operator=(const WorkRouter&) = delete;

  /// `options` are every device's (its serial depth, its trace: one file per device,
  /// device_trace_path; its progress line: the first device's only).
  DeviceRunStats run(const std::function<std::unique_ptr<SchedulingPolicy>()>& make_policy, const RunOptions& options = {});

  /// Most tasks one take moves (a work-group's worth or a level's half, whichever is fewer).
  static constexpr std::uint32_t kMostPerBatch = 1024;

 private:
  class Share;
  struct Moved;
  struct Return;
  /// Every device waits, and nothing is on its way to any (under mutex_).
  bool all_idle() const;
  RouterOptions options_;
  std::vector<std::unique_ptr<Share>> shares_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  bool over_ = false;
  bool failed_ = false;
  std::size_t started_ = 0;  // devices whose run has begun its first round
};

}  // namespace chanflow
