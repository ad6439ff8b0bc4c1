#include "watchdog.hpp"

namespace chanflow {

LaunchWatchdog::LaunchWatchdog(std::chrono::milliseconds limit, std::chrono::milliseconds start_limit,
                               std::chrono::milliseconds every, Sample sample, Stuck stuck)
    : limit_(limit), start_limit_(start_limit), every_(every), sample_(std::move(sample)), stuck_(std::move(stuck)) {}

LaunchWatchdog::~LaunchWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LaunchWatchdog::arm() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = true;
    ++launch_;
    if (!thread_.joinable()) thread_ = std::thread([this] { watch(); });
  }
  wake_.notify_all();
}

void LaunchWatchdog::disarm() {
  std::unique_lock<std::mutex> lock(mutex_);
  armed_ = false;
  wake_.notify_all();
  // A sample in progress reads what the host writes next: it ends first.
  wake_.wait(lock, [&] { return !sampling_; });
}

void LaunchWatchdog::watch() {
  using Clock = std::chrono::steady_clock;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return quit_ || armed_; });
    if (quit_) return;
    const std::uint64_t launch = launch_;
    const auto ended = [&] { return quit_ || !armed_ || launch_ != launch; };
    bool seen = false;
    std::uint64_t last = 0;
    const Clock::time_point armed = Clock::now();
    Clock::time_point since = armed;
    // Most launches end long before the first sample: the thread only waits.
    while (!wake_.wait_for(lock, every_, ended)) {
      sampling_ = true;
      lock.unlock();
      std::optional<std::uint64_t> now;
      try {  // a read that fails (an OpenCL error) leaves this launch unwatched, not the process ended
        now = sample_();
      } catch (...) {
        now.reset();
      }
      lock.lock();
      sampling_ = false;
      wake_.notify_all();
      if (ended()) break;
      const auto verdict = [&](Clock::time_point from, bool started) {
        sampling_ = true;
        lock.unlock();
        stuck_(std::chrono::duration<double>(Clock::now() - from).count(), started);  // the aggregator's does not return
        lock.lock();
        sampling_ = false;
        wake_.notify_all();
      };
      if (!now) {  // not started: the clock of a stopped launch starts with the launch
        if (!seen && start_limit_.count() > 0 && Clock::now() - armed >= start_limit_) verdict(armed, false);
        since = Clock::now();
      } else if (!seen || *now != last) {
        seen = true;
        last = *now;
        since = Clock::now();
      } else if (Clock::now() - since >= limit_) {
        verdict(since, true);
        since = Clock::now();
      }
    }
    // Wait for the next launch (or the end).
    wake_.wait(lock, [&] { return quit_ || launch_ != launch; });
    if (quit_) return;
  }
}

}  // namespace chanflow
