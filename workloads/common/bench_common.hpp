// Shared pieces of chanflow's benchmark programs: timing, medians, the machine description.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace chanflow::bench {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Summary {
  double median = 0, min = 0, max = 0;
};

inline Summary summarize(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  const auto n = samples.size();
  const double median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return {median, samples.front(), samples.back()};
}

/// Host name, CPU model, core count and memory: what a reader needs to compare two runs.
nlohmann::json machine_info();

}  // namespace chanflow::bench
