// A long run's progress on a terminal (see progress_line.hpp).
#include "progress_line.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace chanflow {
namespace {

double progress_after_ms() {
  const char* v = std::getenv("CHANFLOW_PROGRESS_AFTER_MS");
  return v && *v ? std::strtod(v, nullptr) : 2000.0;
}

// 1234567 -> "1.23 M"; rates and counts read at a glance.
std::string short_count(double n) {
  if (n >= 1e9) return fmt::format("{:.2f} G", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.2f} M", n / 1e6);
  if (n >= 1e4) return fmt::format("{:.1f} k", n / 1e3);
  return fmt::format("{:.0f}", n);
}

}  // namespace

ProgressLine::ProgressLine(std::string label)
    : label_(std::move(label)),
      shown_(!label_.empty() && isatty(fileno(stderr))),
      after_ms_(shown_ ? progress_after_ms() : 0),
      start_(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() { clear(); }

bool ProgressLine::due() {
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  if (ms < after_ms_ || (drawn_ && ms - last_ms_ < 250)) return false;
  last_ms_ = ms;
  return true;
}

void ProgressLine::draw(const std::string& text) {
  fmt::print(stderr, "\r\033[Kchanflow: {}: {}, {:.1f} s", label_, text, last_ms_ / 1e3);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::report(std::uint64_t done, const char* unit, std::uint32_t level) {
  if (!shown_) return;
  const std::lock_guard lock(mutex_);
  if (!due()) return;
  const double rate = last_ms_ > 0 ? done / (last_ms_ / 1e3) : 0;
  draw(fmt::format("{} {} run ({}/s){}", short_count(static_cast<double>(done)), unit, short_count(rate),
                   level ? fmt::format(", level {} reached", level) : std::string()));
}

void ProgressLine::waiting(const std::string& what) {
  if (!shown_) return;
  const std::lock_guard lock(mutex_);
  if (due()) draw(what);
}

void ProgressLine::clear() {
  if (!shown_) return;
  const std::lock_guard lock(mutex_);
  if (drawn_) {
    fmt::print(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  drawn_ = false;
}

}  // namespace chanflow
