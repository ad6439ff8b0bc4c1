// How a graph runs, from the command line or the environment to the graph (see
// chanflow/run_settings.hpp). The environment's names are kept in one table, read and written
// by the same entries.
#include "chanflow/run_settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>

namespace chanflow {
namespace {

std::uint32_t positive_u32(const char* name, std::string_view value, bool zero_allowed) {
  std::uint64_t n = 0;
  bool ok = !value.empty() && value.size() <= 10;
  for (const char c : value) {
    ok = ok && c >= '0' && c <= '9';
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (!ok || n > 0xffffffffu || (n == 0 && !zero_allowed))
    throw std::invalid_argument(fmt::format("{}={} is not a {} 32-bit number", name, value,
                                            zero_allowed ? "non-negative" : "positive"));
  return static_cast<std::uint32_t>(n);
}

// One environment variable: how it is written from the settings and read back into them.
struct Variable {
  const char* name;
  std::string (*write)(const RunSettings&);
  void (*read)(RunSettings&, const char* name, std::string_view value);
};

const Variable kVariables[] = {
    // 0: the device's (RunSettings::for_device)
    {"CHANFLOW_CAPACITY", [](const RunSettings& s) { return std::to_string(s.capacity); },
     [](RunSettings& s, const char* n, std::string_view v) { s.capacity = positive_u32(n, v, true); }},
    {"CHANFLOW_WG", [](const RunSettings& s) { return std::to_string(s.wg_size); },
     [](RunSettings& s, const char* n, std::string_view v) { s.wg_size = positive_u32(n, v, true); }},
    {"CHANFLOW_POLICY", [](const RunSettings& s) { return s.policy; },
     [](RunSettings& s, const char* n, std::string_view v) {
       if (v != "levelized" && v != "greedy")
         throw std::invalid_argument(fmt::format("{}={} is not a policy (levelized or greedy)", n, v));
       s.policy = v;
     }},
    {"CHANFLOW_DISPATCH",
     [](const RunSettings& s) { return std::string(to_string(s.dispatch)); },
     [](RunSettings& s, const char* n, std::string_view v) {
       try {
         s.dispatch = sweeps_from_string(v);
       } catch (const std::invalid_argument&) {
         throw std::invalid_argument(
             fmt::format("{}={} is not a dispatch mode (auto, claimed, planned or host)", n, v));
       }
     }},
    {"CHANFLOW_SCHEDULER",
     [](const RunSettings& s) { return std::string(to_string(s.scheduler)); },
     [](RunSettings& s, const char* n, std::string_view v) {
       try {
         s.scheduler = scheduler_from_string(v);
       } catch (const std::invalid_argument&) {
         throw std::invalid_argument(fmt::format("{}={} is not a scheduler (auto, device or rounds)", n, v));
       }
     }},
    {"CHANFLOW_SWEEP_GROUPS", [](const RunSettings& s) { return std::to_string(s.sweep_groups); },
     [](RunSettings& s, const char* n, std::string_view v) { s.sweep_groups = positive_u32(n, v, true); }},
    {"CHANFLOW_MAX_CHANNELS", [](const RunSettings& s) { return std::to_string(s.max_channels); },
     [](RunSettings& s, const char* n, std::string_view v) { s.max_channels = positive_u32(n, v, false); }},
    {"CHANFLOW_HEAP", [](const RunSettings& s) { return std::to_string(s.heap_bytes); },
     [](RunSettings& s, const char* n, std::string_view v) { s.heap_bytes = parse_bytes(n, v); }},
    {"CHANFLOW_DEVICES", [](const RunSettings& s) { return s.devices; },
     [](RunSettings& s, const char*, std::string_view v) { s.devices = v; }},  // checked when the devices open
    {"CHANFLOW_TRACE", [](const RunSettings& s) { return s.trace_path; },
     [](RunSettings& s, const char*, std::string_view v) { s.trace_path = v; }},
    {"CHANFLOW_SERIAL_CUTOFF", [](const RunSettings& s) { return s.serial_cutoff.to_string(); },
     [](RunSettings& s, const char* n, std::string_view v) { s.serial_cutoff = SerialCutoff::parse(n, v); }},
    {"CHANFLOW_QUIET", [](const RunSettings& s) { return std::string(s.quiet ? "1" : "0"); },
     [](RunSettings& s, const char* n, std::string_view v) {
       if (v != "0" && v != "1") throw std::invalid_argument(fmt::format("{}={} is not 0 or 1", n, v));
       s.quiet = v == "1";
     }},
};

}  // namespace

std::string SerialCutoff::to_string() const {
  switch (mode) {
    case Mode::Program: return "program";
    case Mode::Auto: return "auto";
    case Mode::Off: return "off";
    case Mode::Depth: break;
  }
  return std::to_string(depth);
}

SerialCutoff SerialCutoff::parse(std::string_view what, std::string_view value) {
  if (value == "program") return {};
  if (value == "auto") return {.mode = Mode::Auto};
  if (value == "off") return {.mode = Mode::Off};
  try {
    return {.mode = Mode::Depth, .depth = positive_u32(std::string(what).c_str(), value, true)};
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(fmt::format("{}={} is not a serial cut-off (a depth, auto, off or program)", what, value));
  }
}

std::uint64_t parse_bytes(std::string_view what, std::string_view value) {
  std::uint64_t n = 0;
  std::size_t i = 0;
  for (; i < value.size() && value[i] >= '0' && value[i] <= '9' && n < (std::uint64_t{1} << 50); ++i)
    n = n * 10 + static_cast<std::uint64_t>(value[i] - '0');
  std::string unit(value.substr(i));
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::tolower(c); });
  int shift = -1;
  if (unit.empty() || unit == "b") shift = 0;
  for (const auto& [prefix, bits] : {std::pair{'k', 10}, std::pair{'m', 20}, std::pair{'g', 30}})
    if (unit == std::string(1, prefix) || unit == std::string(1, prefix) + "b" || unit == std::string(1, prefix) + "ib")
      shift = bits;
  if (i == 0 || shift < 0 || n == 0 || n > (std::uint64_t{1} << (50 - shift)))
    throw std::invalid_argument(fmt::format("{}={} is not a size (bytes, or with K, M or G: 512M, 2G)", what, value));
  return n << shift;
}

RunSettings RunSettings::for_device(const DeviceCaps& caps, const StackFootprint& footprint) const {
  RunSettings s = *this;
  if (!s.capacity) s.capacity = stack_capacity(caps, footprint);
  if (!s.wg_size) {
    const std::uint32_t device = device_sizing(caps).wg_size;
    s.wg_size = footprint.max_wg ? std::min(footprint.max_wg, device) : device;
  }
  return s;
}

GraphOptions RunSettings::graph_options() const {
  if (!wg_size) throw std::logic_error("RunSettings::graph_options: the work-group size is not set (for_device())");
  return {.wg_size = wg_size, .max_channels = max_channels, .device_sweeps = dispatch, .sweep_groups = sweep_groups,
          .sweep_room_check = sweep_room_check, .scheduler = scheduler};
}

RunOptions RunSettings::run_options(std::string what) const {
  return {.trace_path = trace_path, .progress_label = quiet ? std::string() : std::move(what)};
}

std::unique_ptr<SchedulingPolicy> RunSettings::make_policy() const { return chanflow::make_policy(policy); }

std::vector<std::pair<std::string, std::string>> RunSettings::environment() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Variable& v : kVariables) out.emplace_back(v.name, v.write(*this));
  return out;
}

RunSettings RunSettings::from_environment() {
  RunSettings s;
  for (const Variable& v : kVariables)
    if (const char* value = std::getenv(v.name); value && *value) v.read(s, v.name, value);
  return s;
}

std::unique_ptr<SchedulingPolicy> make_policy(std::string_view name) {
  if (name == "levelized") return std::make_unique<Levelized>();
  if (name == "greedy") return std::make_unique<Greedy>();
  throw std::invalid_argument(fmt::format("no policy '{}' (there are: levelized, greedy)", name));
}

}  // namespace chanflow
