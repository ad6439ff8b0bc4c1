// Choosing and checking the devices of a run across devices (device_set.hpp).
#include "chanflow/device_set.hpp"

#include "chanflow/channel.hpp"
#include "chanflow/graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <chrono>
#include <set>
#include <thread>

namespace chanflow {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<unsigned> number(std::string_view s) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); })) return std::nullopt;
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

std::string named(const DeviceCaps& d) { return fmt::format("[{}] {}", d.index, d.name); }

std::string listing(const std::vector<DeviceCaps>& listed) {
  std::string out;
  for (const auto& d : listed) out += fmt::format("\n  {} ({}, {})", named(d), d.type_name(), d.platform);
  return out;
}

const DeviceCaps& at_index(unsigned i, const std::vector<DeviceCaps>& listed, std::string_view spec) {
  for (const auto& d : listed)
    if (d.index == i) return d;
  throw DeviceSetError(fmt::format("--devices '{}': there is no device {}; this machine lists {} (`chanflow devices`):{}",
                                   spec, i, listed.size(), listing(listed)));
}

bool can_take_part(const DeviceCaps& d) { return multi_device_missing(d).empty(); }

// The devices "all" names: every one that can take part, of the run's platform.
std::vector<DeviceCaps> all_devices(const std::vector<DeviceCaps>& listed) {
  const DeviceCaps* first = nullptr;
  for (const auto& d : listed)
    if (!first && (d.type & CL_DEVICE_TYPE_GPU) && can_take_part(d)) first = &d;
  for (const auto& d : listed)
    if (!first && d.platform.find("Portable Computing Language") != std::string::npos && (d.type & CL_DEVICE_TYPE_CPU) &&
        can_take_part(d))
      first = &d;
  for (const auto& d : listed)
    if (!first && can_take_part(d)) first = &d;
  if (!first) {
    std::string why;
    for (const auto& d : listed)
      for (const auto& m : multi_device_missing(d)) why += fmt::format("\n  {}: {}", named(d), m);
    throw DeviceSetError("--devices 'all': no device can take part in a run across devices:" + why);
  }
  std::vector<DeviceCaps> out;
  for (const auto& d : listed)
    if (d.platform == first->platform && can_take_part(d)) out.push_back(d);
  return out;
}

}  // namespace

std::vector<std::string> multi_device_missing(const DeviceCaps& caps) {
  std::vector<std::string> missing = caps.missing_requirements();
  if (device_order(caps) == DeviceOrder::None)
    missing.emplace_back(
        "device-scope store order (PTX release/acquire on NVIDIA from compute capability 7, or a CPU device of an "
        "x86-64 host): work another device sent is claimed by work-groups that did not write it");
  return missing;
}

std::vector<DeviceCaps> choose_devices(std::string_view spec, const std::vector<DeviceCaps>& listed) {
  const std::string_view whole = trim(spec);
  if (whole.empty()) throw DeviceSetError("--devices: no device named (an index, a range such as 0-3, a name part, or 'all')");
  if (listed.empty()) throw DeviceSetError("--devices: this machine lists no OpenCL device");
  std::vector<DeviceCaps> chosen;
  if (lower(whole) == "all") {
    chosen = all_devices(listed);
  } else {
    std::string_view rest = whole;
    while (true) {
      const std::size_t comma = rest.find(',');
      const std::string_view item = trim(rest.substr(0, comma));
      if (item.empty()) throw DeviceSetError(fmt::format("--devices '{}': an empty item between commas", whole));
      if (const auto i = number(item)) {
        chosen.push_back(at_index(*i, listed, whole));
      } else if (const std::size_t dash = item.find('-'); dash != std::string_view::npos && number(trim(item.substr(0, dash))) &&
                                                          number(trim(item.substr(dash + 1)))) {
        const unsigned from = *number(trim(item.substr(0, dash))), to = *number(trim(item.substr(dash + 1)));
        if (from > to) throw DeviceSetError(fmt::format("--devices '{}': the range {} runs backwards", whole, item));
        for (unsigned i = from; i <= to; ++i) chosen.push_back(at_index(i, listed, whole));
      } else {
        const std::string needle = lower(item);
        std::size_t matched = 0;
        for (const auto& d : listed)
          if (lower(d.name + " " + d.vendor + " " + d.platform + " " + d.type_name()).find(needle) != std::string::npos) {
            chosen.push_back(d);
            ++matched;
          }
        if (matched == 0)
          throw DeviceSetError(fmt::format("--devices '{}': no device matches '{}'; this machine lists:{}", whole, item,
                                           listing(listed)));
      }
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  std::set<unsigned> seen;
  for (const auto& d : chosen)
    if (!seen.insert(d.index).second)
      throw DeviceSetError(fmt::format("--devices '{}' names device {} twice", whole, named(d)));
  for (const auto& d : chosen)
    if (d.platform != chosen.front().platform)
      throw DeviceSetError(fmt::format("--devices '{}': {} ({}) and {} ({}) are of different platforms; one run spans "
                                       "one platform's devices",
                                       whole, named(chosen.front()), chosen.front().platform, named(d), d.platform));
  for (const auto& d : chosen) {
    // One device runs as it always has; a device among several must meet the run's needs too.
    const auto missing = chosen.size() > 1 ? multi_device_missing(d) : d.missing_requirements();
    if (!missing.empty()) {
      std::string why;
      for (const auto& m : missing) why += "\n  - " + m;
      throw DeviceSetError(fmt::format("--devices '{}': {} cannot take part{}; it lacks:{}", whole, named(d),
                                       chosen.size() > 1 ? " in a run across devices" : "", why));
    }
  }
  return chosen;
}

std::vector<DeviceGroup> device_groups(const std::vector<DeviceCaps>& listed) {
  std::vector<DeviceGroup> groups;
  for (const auto& d : listed) {
    if (!can_take_part(d)) continue;
    auto g = std::find_if(groups.begin(), groups.end(), [&](const DeviceGroup& x) { return x.platform == d.platform; });
    if (g == groups.end()) g = groups.insert(groups.end(), DeviceGroup{d.platform, {}});
    g->indices.push_back(d.index);
  }
  return groups;
}

DeviceSet::DeviceSet(std::string_view spec, bool profiling) {
  const auto chosen = choose_devices(spec, list_devices());
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const DeviceCaps& d = chosen[i];
    DeviceSelection selection{.spec = std::to_string(d.index), .profiling = profiling};
    // PoCL 3.1's CPU devices share one cache of loaded kernels, keyed by the program's build (its
    // source, options and device model) and the work-group size; a kernel that finishes
    // releases the first entry of its key, whatever the grid it was specialized for. Two of its
    // devices (the same model) running one kernel at once, at different grid sizes, release
    // each other's entry and abort (common.c, pocl_release_dlhandle_cache: ref_count > 0). A
    // define per device makes their builds, and so their entries, their own.
    if (chosen.size() > 1 && (d.type & CL_DEVICE_TYPE_CPU) && d.platform.find("Portable Computing Language") != std::string::npos)
      selection.build_options = fmt::format("-DCHANFLOW_DEVICE_IN_SET={}", i);
    runtimes_.push_back(std::make_unique<Runtime>(selection));
  }
}

std::string DeviceSet::describe() const {
  std::string out = fmt::format("{} device{}:", size(), size() == 1 ? "" : "s");
  for (std::size_t i = 0; i < size(); ++i) out += fmt::format("{} {}", i ? "," : "", named(caps(i)));
  return out;
}

namespace {
RunError device_error(const DeviceSet& set, std::size_t d, const std::string& what) {
  return RunError(fmt::format("device {} ({}): {}", d, set.caps(d).name, what));
}
}  // namespace

void on_each_device(const DeviceSet& set, const std::function<void(std::size_t)>& work) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::string> errors(set.size());
  std::vector<Clock::time_point> failed_at(set.size());
  std::vector<std::thread> threads;
  for (std::size_t d = 0; d < set.size(); ++d)
    threads.emplace_back([&, d] {
      try {
        work(d);
      } catch (const std::exception& e) {
        errors[d] = e.what();
        failed_at[d] = Clock::now();
      }
    });
  for (auto& t : threads) t.join();
  std::size_t first = set.size();
  for (std::size_t d = 0; d < set.size(); ++d)
    if (!errors[d].empty() && (first == set.size() || failed_at[d] < failed_at[first])) first = d;
  if (first < set.size()) throw device_error(set, first, errors[first]);
}

void in_turn_on_each_device(const DeviceSet& set, const std::function<void(std::size_t)>& work) {
  for (std::size_t d = 0; d < set.size(); ++d) {
    try {
      work(d);
    } catch (const std::exception& e) {
      throw device_error(set, d, e.what());
    }
  }
}

}  // namespace chanflow
