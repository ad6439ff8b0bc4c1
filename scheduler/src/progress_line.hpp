// A long run's progress on a terminal (RunOptions::progress_label): one line on standard error,
// rewritten in place, once a run has gone on past CHANFLOW_PROGRESS_AFTER_MS (2,000 by default):
// what has run, the deepest level, the rate and the time. Nothing where standard error is not a
// terminal or the label is empty (--quiet, CHANFLOW_QUIET=1). Rounds report from the host's
// loop; the device scheduler's one long launch from its watchdog's thread, so a line is drawn
// under a lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace chanflow {

class ProgressLine {
 public:
  /// Shown only when `label` is not empty and standard error is a terminal.
  explicit ProgressLine(std::string label);
  ~ProgressLine();  // clears the line it drew
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool shown() const { return shown_; }
  /// After a round (the rounds) or a sample of the device scheduler's launch: `done` CEs or
  /// batches (`unit`) so far, the deepest level known (0: not known yet).
  void report(std::uint64_t done, const char* unit, std::uint32_t level);
  /// Something that takes time with nothing to count (a kernel compiled at its first launch).
  void waiting(const std::string& what);
  void clear();

 private:
  bool due();  // holding mutex_: past the delay, and not drawn in the last quarter second
  void draw(const std::string& text);

  std::string label_;
  bool shown_;
  double after_ms_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  bool drawn_ = false;
  double last_ms_ = 0;
};

}  // namespace chanflow
