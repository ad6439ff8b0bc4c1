// What a compiled program tells its user about its calls (see run_report.hpp).
#include "run_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace chanflow::cilk {

TaskBreadth task_breadth(const ProgramGraph& program, std::uint32_t depth, const RunStats& stats) {
  TaskBreadth out;
  const std::vector<std::string>& forms = program.serial_functions();
  for (const ChannelStackNode* s : program.stacks()) {
    if (s->kind() != StackKind::Tasks) continue;
    const auto it = stats.ces_per_level.find(s->name());
    if (it == stats.ces_per_level.end()) continue;
    const std::vector<std::uint64_t>& per_level = it->second;
    if (out.per_level.size() < per_level.size()) out.per_level.resize(per_level.size());
    for (std::size_t d = 0; d < per_level.size(); ++d) out.per_level[d] += per_level[d];
    if (std::find(forms.begin(), forms.end(), s->name()) != forms.end())
      for (std::size_t d = depth; d < per_level.size(); ++d) out.serial += per_level[d];
  }
  return out;
}

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
