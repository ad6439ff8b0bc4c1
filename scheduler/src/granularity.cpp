// Granularity control's automatic choice (see chanflow/granularity.hpp).
#include "chanflow/granularity.hpp"

#include "chanflow/node_layout.h"
#include "chanflow/sizing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace chanflow {
namespace {

// The most levels one run's evidence moves the depth beyond where it was.
constexpr std::uint32_t kMostLevelsFurther = 8;

}  // namespace

std::uint64_t serial_target(const DeviceCaps& caps) {
  if (const char* v = std::getenv("CHANFLOW_SERIAL_TARGET"); v && *v) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (*end == '\0' && n > 0) return n;
  }
  return std::max<std::uint64_t>(2, device_sizing(caps).resident_items / 128);
}

SerialDepthChooser::SerialDepthChooser(std::uint64_t target) : target_(std::max<std::uint64_t>(target, 1)) {
  // Nothing known of the recursion yet: as if every task spawned two.
  depth_ = static_cast<std::uint32_t>(std::ceil(std::log2(static_cast<double>(target_))));
}

void SerialDepthChooser::learn(const std::vector<std::uint64_t>& tasks) {
  if (tasks.empty()) return;
  learned_ = true;
  const std::uint32_t last = static_cast<std::uint32_t>(tasks.size() - 1);
  // The levels this run saw whole: every one above the depth, and the depth's own (its tasks ran
  // serially, so none deeper exist); all of them where the recursion ended above it. The first
  // that held the target is the depth.
  const std::uint32_t seen = std::min(last, depth_);
  for (std::uint32_t d = 0; d <= seen; ++d)
    if (tasks[d] >= target_) {
      depth_ = d;
      return;
    }
  // The recursion was cut before it grew that wide: go on at the growth of its last level.
  if (last >= depth_ && depth_ > 0 && tasks[depth_ - 1] > 0) {
    const double growth = static_cast<double>(tasks[depth_]) / static_cast<double>(tasks[depth_ - 1]);
    if (growth > 1.05) {
      const double levels = std::log(static_cast<double>(target_) / static_cast<double>(tasks[depth_])) / std::log(growth);
      depth_ += static_cast<std::uint32_t>(std::clamp(std::ceil(levels), 1.0, static_cast<double>(kMostLevelsFurther)));
      return;
    }
  }
  // It never grows that wide: its widest level (the shallowest of equals).
  std::uint32_t widest = 0;
  for (std::uint32_t d = 1; d <= seen; ++d)
    if (tasks[d] > tasks[widest]) widest = d;
  depth_ = widest;
}

std::string describe_serial_depth(std::uint32_t depth, const SerialDepthChooser* chooser) {
  if (depth == CHANFLOW_SERIAL_OFF) return "off";
  if (!chooser) return fmt::format("depth {}", depth);
  return fmt::format("depth {} (auto: about {} tasks wanted, from {})", depth, chooser->target(), chooser->basis());
}

}  // namespace chanflow
