// Granularity control's automatic choice: the stack level from which a compiled Cilk function's
// tasks run their whole call serially in their work-item (RunOptions::serial_depth), picked run
// by run for one graph from what the runtime knows: the device's width, the breadth each run
// reached, and what each run took.
//
// Above the depth every spawn is a task through a channel, which a GPU runs thousands at a time
// but at a cost per task; below it a work-item runs a whole subtree at a work-item's speed, and
// the items of one warp run subtrees of different sizes. Which wins depends on the program: on an
// H100 fib 40 ran fastest from depth 19 (1.6 M tasks), fib 30 from 15, and Queens 15 without any
// cut (its serial form, a loop over the board in one work-item, is slower at every depth). So:
// - the first run assumes the recursion doubles per level and cuts where `target` tasks would be
//   (serial_target: a couple of times the device's resident work-items);
// - the second takes the first level that really held the target in the first run (the
//   channels' counts, RunStats::ces_per_level), beyond the first run's depth by its last level's
//   growth where the target lay deeper, or the widest level of a recursion never that wide (the
//   first run's time says nothing of its depth: it is the first to touch the levels' memory);
// - then a search by measured time: from the fastest depth so far, the depths two levels either
//   side, then one, each run once; when neither side is faster, the runner-up, if within 1.25x of
//   the fastest, and the fastest are run once more (a depth keeps its fastest run: one sample is
//   noisy), and then the choice is settled. A depth at or past the deepest level a run reached
//   cuts nothing: all those count as one;
// - it stays settled while runs take about what the settled depth took: two runs in a row over
//   twice (or under half) its time say the input changed, and the search opens again from the
//   last run's breadth.
#pragma once

#include "chanflow/opencl.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace chanflow {

/// Tasks wanted at the serial depth on `caps`: twice the device's resident work-items (on an H100,
/// 540,672: fib 40's first level that holds it is 20, a level from its measured best), at least 2.
/// CHANFLOW_SERIAL_TARGET in the environment overrides it (for measuring).
std::uint64_t serial_target(const DeviceCaps& caps);

class SerialDepthChooser {
 public:
  explicit SerialDepthChooser(std::uint64_t target = 2);

  /// The depth for the next run.
  std::uint32_t depth() const noexcept { return depth_; }
  std::uint64_t target() const noexcept { return target_; }
  /// Whether the search has ended and the last run agreed with it: depth() stays what it is. A
  /// settled depth's run far off its time leaves it in doubt (not settled) until the next run.
  bool settled() const noexcept { return settled_ && drift_runs_ == 0; }
  /// What the next depth rests on, for a report.
  std::string basis() const;

  /// A run at depth() held tasks_per_level[d] tasks at level d (every task stack summed, level 0
  /// first; nothing past the depth, where tasks ran serially) and took `ms`: the next depth.
  void learn(const std::vector<std::uint64_t>& tasks_per_level, double ms);

 private:
  std::uint32_t from_breadth(const std::vector<std::uint64_t>& tasks) const;
  /// Whether a settled depth's run that took `ms` is the second in a row far off its time.
  bool drifted(double ms);
  std::uint64_t target_;
  std::uint32_t depth_ = 0;
  std::uint32_t runs_ = 0;
  /// One past the deepest level any run reached: a depth from there on cuts nothing.
  std::uint32_t uncut_ = 0xffffffffu;
  std::map<std::uint32_t, double> measured_;  ///< per depth (uncut_ for all those past it), the fastest run
  std::set<std::uint32_t> confirmed_;  ///< depths run once more after the search (kClose)
  std::uint32_t step_ = 2;
  bool settled_ = false;
  std::uint32_t searches_ = 1;  ///< searches opened, the first included
  int drift_side_ = 0;          ///< the last settled run: +1 far slower, -1 far faster, 0 neither
  int drift_runs_ = 0;          ///< settled runs in a row on drift_side_
};

/// "depth 15 (auto: settled, the fastest of 7 runs' depths)" and the like: how a run's serial
/// depth was set, for statistics.
std::string describe_serial_depth(std::uint32_t depth, const SerialDepthChooser* chooser);

}  // namespace chanflow
