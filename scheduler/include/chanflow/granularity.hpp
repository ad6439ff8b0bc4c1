// Granularity control's automatic choice: the stack level from which a compiled Cilk function's
// tasks run their whole call serially in their work-item (RunOptions::serial_depth), picked per
// run of one graph from what the runtime knows.
//
// Above the depth every spawn is a task through a channel, which a GPU runs thousands at a time
// but at a cost per task; below it a work-item runs a whole subtree at a work-item's speed. The
// depth wanted is the first whose level holds `target` tasks: enough to fill the device, no more
// (serial_target). The first run of a graph knows only the device: it assumes the recursion
// doubles per level. Every run then says how many tasks each level really held (the channels'
// counts, RunStats::ces_per_level), and the next run takes the first level that held the target;
// beyond the last depth by the growth of its last level where the target lay deeper; the widest
// level of a recursion that never grows that wide.
#pragma once

#include "chanflow/opencl.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace chanflow {

/// Tasks wanted at the serial depth on `caps`: the device's resident work-items over 128 (on an
/// H100, 2,112: fib's first level that holds it is 12, 4,096 tasks, measured best for fib 30 and
/// 40), at least 2 (a CPU device's two compute units). CHANFLOW_SERIAL_TARGET in the environment
/// overrides it (for measuring).
std::uint64_t serial_target(const DeviceCaps& caps);

class SerialDepthChooser {
 public:
  explicit SerialDepthChooser(std::uint64_t target = 2);

  /// The depth for the next run.
  std::uint32_t depth() const noexcept { return depth_; }
  std::uint64_t target() const noexcept { return target_; }
  /// What the choice rests on, for a report: "the device's width" before any run, then "the last
  /// run's breadth".
  const char* basis() const noexcept { return learned_ ? "the last run's breadth" : "the device's width"; }

  /// A run at depth() held tasks_per_level[d] tasks at level d (every task stack summed, level 0
  /// first; nothing past the depth, where tasks ran serially): the next depth.
  void learn(const std::vector<std::uint64_t>& tasks_per_level);

 private:
  std::uint64_t target_;
  std::uint32_t depth_ = 0;
  bool learned_ = false;
};

/// "depth 12 (auto: 4,096 tasks wanted, from the last run's breadth)" and the like: how a run's
/// serial depth was set, for statistics.
std::string describe_serial_depth(std::uint32_t depth, const SerialDepthChooser* chooser);

}  // namespace chanflow
