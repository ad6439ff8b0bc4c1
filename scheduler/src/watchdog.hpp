// A watch over a launch the host cannot interrupt: the device scheduler's, which runs until its
// work-groups leave. While a launch is armed, a thread of its own samples a progress count every
// `every` and calls `stuck` once the count has not moved for `limit`, or the launch has not
// started within `start_limit`. OpenCL has no way to stop
// a kernel, so the aggregator's `stuck` says what it saw and ends the process: better than a run
// that hangs saying nothing (a node body that never returns).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace chanflow {

class LaunchWatchdog {
 public:
  /// The launch's progress count, or none while it has not started (a CPU device compiles a
  /// kernel at its first launch: PoCL took seconds for a compiled program's scheduler). One that
  /// throws counts as none.
  using Sample = std::function<std::optional<std::uint64_t>()>;
  /// The verdict: the launch has not moved (`started`) or not started for `seconds`.
  using Stuck = std::function<void(double seconds, bool started)>;
  /// `limit`: how long a started launch may go without its count moving; `start_limit`: how long
  /// one may take to start (zero: as long as it takes; a CPU device compiles its kernel there).
  LaunchWatchdog(std::chrono::milliseconds limit, std::chrono::milliseconds start_limit, std::chrono::milliseconds every,
                 Sample sample, Stuck stuck);
  ~LaunchWatchdog();
  LaunchWatchdog(const LaunchWatchdog&) = delete;
  LaunchWatchdog& operator=(const LaunchWatchdog&) = delete;

  /// A launch has started: watch it (the thread starts with the first launch).
  void arm();
  /// The launch has ended: returns once no sample of it is being read.
  void disarm();

 private:
  void watch();

  std::chrono::milliseconds limit_, start_limit_, every_;
  Sample sample_;
  Stuck stuck_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool armed_ = false;
  bool quit_ = false;
  bool sampling_ = false;     // a sample is being read (disarm waits for it)
  std::uint64_t launch_ = 0;  // launches armed so far: a sample belongs to the launch it began in
  std::thread thread_;
};

}  // namespace chanflow
