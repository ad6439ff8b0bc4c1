// Granularity control's automatic choice (see chanflow/granularity.hpp).
#include "chanflow/granularity.hpp"

#include "chanflow/node_layout.h"
#include "chanflow/sizing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

namespace chanflow {
namespace {

// The most levels one run's evidence moves the depth beyond where it was.
constexpr std::uint32_t kMostLevelsFurther = 8;

// Depths whose runs' times lie within this factor of the fastest's are run once more before the
// search settles: one run is a noisy sample (on the H100 fib 40's depth 19 took 8.98 ms in a
// search and 6.2-7.0 in five runs of its own, and the search kept 20 at 7.8).
constexpr double kClose = 1.25;

// A settled depth holds for inputs like those it was found on. Two runs in a row that took more
// than kDrift times the settled depth's fastest run, or less than its 1/kDrift, on the same side,
// say the input changed (fib 40's best depth on the H100 is 19, fib 30's 15, and a fib 40 call
// takes ~6x a fib 30's): the search opens again from the last run's breadth.
constexpr double kDrift = 2.0;
constexpr int kDriftRuns = 2;

}  // namespace

std::uint64_t serial_target(const DeviceCaps& caps) {
  if (const char* v = std::getenv("CHANFLOW_SERIAL_TARGET"); v && *v) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (*end == '\0' && n > 0) return n;
  }
  return std::max<std::uint64_t>(2, 2 * device_sizing(caps).resident_items);
}

SerialDepthChooser::SerialDepthChooser(std::uint64_t target) : target_(std::max<std::uint64_t>(target, 1)) {
  // Nothing known of the recursion yet: as if every task spawned two.
  depth_ = static_cast<std::uint32_t>(std::ceil(std::log2(static_cast<double>(target_))));
}

std::string SerialDepthChooser::basis() const {
  if (settled_ && drift_runs_ > 0)
    return fmt::format("settled, in doubt: the last run took {} its time", drift_side_ > 0 ? "over twice" : "under half");
  if (settled_) return fmt::format("settled: the fastest of {} runs' depths", runs_);
  if (runs_ == 0) return "from the device's width";
  if (runs_ == 1) return searches_ > 1 ? "from the breadth of a run unlike the settled ones" : "from the first run's breadth";
  return fmt::format("searching{} by measured time, run {}", searches_ > 1 ? " again" : "", runs_ + 1);
}

// The levels a run at depth_ saw whole: every one above the depth, and the depth's own (its
// tasks ran serially, so none deeper exist); all of them where the recursion ended above it.
// The first that held the target is the depth.
std::uint32_t SerialDepthChooser::from_breadth(const std::vector<std::uint64_t>& tasks) const {
  const std::uint32_t last = static_cast<std::uint32_t>(tasks.size() - 1);
  const std::uint32_t seen = std::min(last, depth_);
  for (std::uint32_t d = 0; d <= seen; ++d)
    if (tasks[d] >= target_) return d;
  // Cut before it grew that wide: go on at the growth of its last level.
  if (last >= depth_ && depth_ > 0 && tasks[depth_ - 1] > 0) {
    const double growth = static_cast<double>(tasks[depth_]) / static_cast<double>(tasks[depth_ - 1]);
    if (growth > 1.05) {
      const double levels = std::log(static_cast<double>(target_) / static_cast<double>(tasks[depth_])) / std::log(growth);
      return depth_ + static_cast<std::uint32_t>(std::clamp(std::ceil(levels), 1.0, static_cast<double>(kMostLevelsFurther)));
    }
  }
  // It never grows that wide: its widest level (the shallowest of equals).
  std::uint32_t widest = 0;
  for (std::uint32_t d = 1; d <= seen; ++d)
    if (tasks[d] > tasks[widest]) widest = d;
  return widest;
}

bool SerialDepthChooser::drifted(double ms) {
  const double settled_ms = measured_.at(depth_);
  const int side = ms > kDrift * settled_ms ? 1 : ms * kDrift < settled_ms ? -1 : 0;
  drift_runs_ = side != 0 && side == drift_side_ ? drift_runs_ + 1 : side != 0 ? 1 : 0;
  drift_side_ = side;
  return drift_runs_ >= kDriftRuns;
}

void SerialDepthChooser::learn(const std::vector<std::uint64_t>& tasks, double ms) {
  if (tasks.empty()) return;
  if (settled_) {
    if (!drifted(ms)) return;
    // Searched afresh, as after a first run: this run at the settled depth gives the breadth.
    const std::uint32_t depth = depth_, searches = searches_ + 1;
    *this = SerialDepthChooser(target_);
    depth_ = depth;
    searches_ = searches;
  }
  ++runs_;
  const std::uint32_t last = static_cast<std::uint32_t>(tasks.size() - 1);
  if (last < depth_) uncut_ = std::min(uncut_, last + 1);  // the recursion ended above the depth
  const auto key = [&](std::uint32_t d) { return std::min(d, uncut_); };
  if (runs_ == 1) {
    // The first run's time is not the depth's: it touches every level's memory first (on an
    // H100, fib 30's first run took 27 ms of device time, the same depth 3 ms later).
    depth_ = key(from_breadth(tasks));
    return;
  }
  auto [it, fresh] = measured_.try_emplace(key(depth_), ms);
  if (!fresh) it->second = std::min(it->second, ms);
  // From the fastest depth so far, the nearest depths not yet run, two levels off, then one.
  std::uint32_t best = measured_.begin()->first;
  for (const auto& [d, t] : measured_)
    if (t < measured_.at(best)) best = d;
  for (; step_ > 0; step_ /= 2)
    for (const std::int64_t next : {std::int64_t{best} - step_, std::int64_t{best} + step_})
      if (next >= 0 && next <= std::int64_t{uncut_} && !measured_.count(key(static_cast<std::uint32_t>(next)))) {
        depth_ = static_cast<std::uint32_t>(next);
        return;
      }
  // The search done: where the runner-up is close, it and the fastest are each run once more
  // (each depth keeps its fastest run), so that one slow sample does not decide.
  std::optional<std::uint32_t> second;
  for (const auto& [d, t] : measured_)
    if (d != best && (!second || t < measured_.at(*second))) second = d;
  if (second && measured_.at(*second) <= kClose * measured_.at(best))
    for (const std::uint32_t d : {*second, best})
      if (confirmed_.insert(d).second) {
        depth_ = d;
        return;
      }
  settled_ = true;
  depth_ = best;
}

std::string describe_serial_depth(std::uint32_t depth, const SerialDepthChooser* chooser) {
  if (depth == CHANFLOW_SERIAL_OFF) return "off";
  if (!chooser) return fmt::format("depth {}", depth);
  return fmt::format("depth {} (auto, {}; {} tasks wanted)", depth, chooser->basis(), chooser->target());
}

}  // namespace chanflow
