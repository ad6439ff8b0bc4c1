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

}  // namespace chanflow::cilk
