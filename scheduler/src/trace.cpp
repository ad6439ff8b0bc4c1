// Chrome-trace JSON output.
#include "trace.hpp"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

namespace chanflow {

void Trace::name_row(int row, const std::string& name) {
  if (!enabled_) return;
  events_.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", row}, {"args", {{"name", name}}}});
}

void Trace::span(int row, const std::string& name, double start_us, double duration_us, nlohmann::json args) {
  if (!enabled_) return;
  nlohmann::json e{{"name", name}, {"ph", "X"}, {"pid", 1}, {"tid", row}, {"ts", start_us}, {"dur", duration_us}};
  if (!args.is_null()) e["args"] = std::move(args);
  events_.push_back(std::move(e));
}

void Trace::write(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(fmt::format("cannot write the trace file '{}'", path));
  out << nlohmann::json{{"traceEvents", events_}, {"displayTimeUnit", "ms"}}.dump() << '\n';
  if (!out) throw std::runtime_error(fmt::format("error writing the trace file '{}'", path));
}

}  // namespace chanflow
