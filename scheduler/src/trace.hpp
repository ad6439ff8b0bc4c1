// A Chrome-trace (Trace Event Format) recorder for dispatches and aggregator work; the JSON
// opens in Perfetto or chrome://tracing, one row per kernel node plus one for the aggregator.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace chanflow {

class Trace {
 public:
  explicit Trace(bool enabled = false) : enabled_(enabled) {}
  bool enabled() const noexcept { return enabled_; }
  /// Names row `row` (a thread in the trace viewer).
  void name_row(int row, const std::string& name);
  /// A complete event on `row`, times in microseconds from the run's start.
  void span(int row, const std::string& name, double start_us, double duration_us, nlohmann::json args = {});
  void write(const std::string& path) const;

 private:
  bool enabled_;
  nlohmann::json events_ = nlohmann::json::array();
};

}  // namespace chanflow
