// What a compiled program tells its user about its calls (see run_report.hpp).
#include "run_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace chanflow::cilk {

std::string describe_restarts(const std::map<std::string, std::uint64_t>& per_port) {
  std::map<std::string, std::vector<std::string>> by_function;
  for (const auto& [key, count] : per_port) {
    const auto colon = key.find(':');
    std::string function = key.substr(0, colon);
    if (const auto at = function.rfind("__spawn"); at != std::string::npos) function.erase(at);
    const std::string port = key.substr(colon + 1);
    by_function[function].push_back(port == function + "_cont" ? fmt::format("{} before its frame", count)
                                                                 : fmt::format("{} at its spawns of {}", count, port));
  }
  std::string out;
  for (const auto& [function, parts] : by_function)
    out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", function, fmt::join(parts, ", "));
  return out;
}

namespace {

double progress_after_ms() {
  const char* v = std::getenv("CHANFLOW_PROGRESS_AFTER_MS");
  return v && *v ? std::strtod(v, nullptr) : 3000.0;
}

}  // namespace

Progress::Progress(std::string function, bool shown)
    : function_(std::move(function)), shown_(shown), after_ms_(shown ? progress_after_ms() : 0) {}

std::function<void(const RunStats&, double)> Progress::callback() {
  if (!shown_) return {};
  return [this](const RunStats& s, double ms) {
    if (ms < after_ms_ || (printed_ && ms - last_ms_ < 500)) return;
    last_ms_ = ms;
    printed_ = true;
    fmt::print(stderr, "\r\033[Kchanflow: {}: {} tasks and frames run, level {} reached, {:.1f} s", function_, s.ces,
               s.max_level, ms / 1e3);
    std::fflush(stderr);
  };
}

void Progress::clear() {
  if (printed_) fmt::print(stderr, "\r\033[K");
  printed_ = false;
}

}  // namespace chanflow::cilk
