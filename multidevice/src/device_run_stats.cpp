// A run across devices, as one run's statistics (work_router.hpp: DeviceRunStats), and where each
// device writes its trace.
#include "chanflow/work_router.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace chanflow {

RunStats DeviceRunStats::total() const {
  RunStats out;
  for (const RunStats& r : runs) {
    out.aggregator_ms += r.aggregator_ms;
    out.device_ms += r.device_ms;
    out.rounds += r.rounds;
    out.dispatches += r.dispatches;
    out.ces += r.ces;
    for (const auto& [name, n] : r.ces_per_channel) out.ces_per_channel[name] += n;
    for (const auto& [name, levels] : r.ces_per_level) {
      std::vector<std::uint64_t>& sum = out.ces_per_level[name];
      if (sum.size() < levels.size()) sum.resize(levels.size());
      for (std::size_t d = 0; d < levels.size(); ++d) sum[d] += levels[d];
    }
    out.peak_channel_bytes = std::max(out.peak_channel_bytes, r.peak_channel_bytes);
    out.peak_live_bytes = std::max(out.peak_live_bytes, r.peak_live_bytes);
    out.yields += r.yields;
    out.partial_yields += r.partial_yields;
    out.restarts += r.restarts;
    for (const auto& [port, n] : r.restarts_per_port) out.restarts_per_port[port] += n;
    out.restart_dispatches += r.restart_dispatches;
    out.sweeps += r.sweeps;
    out.max_level = std::max(out.max_level, r.max_level);
    out.channels = std::max(out.channels, r.channels);
    out.host.levels_ms = std::max(out.host.levels_ms, r.host.levels_ms);  // made at once, device by device
    RunStats::DeviceScheduling& ds = out.device_scheduler;
    const RunStats::DeviceScheduling& rs = r.device_scheduler;
    ds.launches += rs.launches;
    ds.batches += rs.batches;
    ds.empty_polls += rs.empty_polls;
    ds.left_idle += rs.left_idle;
    ds.left_polls += rs.left_polls;
    ds.left_quiet += rs.left_quiet;
    ds.recalled += rs.recalled;
    ds.left_recalled += rs.left_recalled;
    ds.blocks_written += rs.blocks_written;
    for (const auto& [node, ms] : rs.busy_ms_per_node) ds.busy_ms_per_node[node] += ms;
  }
  if (!runs.empty()) {  // host and device time: a device's mean (they ran at once)
    out.aggregator_ms /= static_cast<double>(runs.size());
    out.device_ms /= static_cast<double>(runs.size());
    out.serial_depth = runs.front().serial_depth;
    out.policy = runs.front().policy;
    out.scheduler = runs.front().scheduler;
  }
  out.wall_ms = wall_ms;
  return out;
}

std::string device_trace_path(const std::string& path, std::size_t device) {
  const std::size_t slash = path.find_last_of('/');
  std::size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) dot = path.size();
  return fmt::format("{}.device{}{}", path.substr(0, dot), device, path.substr(dot));
}

}  // namespace chanflow
