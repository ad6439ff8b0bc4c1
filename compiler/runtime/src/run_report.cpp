// What a compiled program tells its user about its calls (see run_report.hpp).
#include "run_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
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

void Totals::add(const RunStats& s) {
  ++calls;
  if (s.scheduler == "device") ++device_scheduled;
  rounds += s.rounds;
  dispatches += s.dispatches;
  ces += s.ces;
  yields += s.yields;
  restarts += s.restarts;
  for (const auto& [port, count] : s.restarts_per_port) restarts_per_port[port] += count;
  wall_ms += s.wall_ms;
  aggregator_ms += s.aggregator_ms;
  max_level = std::max(max_level, s.max_level);
  channel_bytes = std::max(channel_bytes, s.peak_channel_bytes);
  live_bytes = std::max(live_bytes, s.peak_live_bytes);
  channels = std::max(channels, s.channels);
}

void Totals::add(const DeviceRunStats& across) {
  if (devices.size() < across.runs.size()) devices.resize(across.runs.size());
  for (std::size_t d = 0; d < across.runs.size(); ++d) {
    Device& mine = devices[d];
    mine.ces += across.runs[d].ces;
    const DeviceTraffic& t = d < across.traffic.size() ? across.traffic[d] : DeviceTraffic{};
    mine.traffic.tasks_sent += t.tasks_sent;
    mine.traffic.tasks_received += t.tasks_received;
    mine.traffic.batches_sent += t.batches_sent;
    mine.traffic.returns_sent += t.returns_sent;
    mine.traffic.bytes_sent += t.bytes_sent;
    mine.traffic.waits += t.waits;
    mine.traffic.wait_ms += t.wait_ms;
    mine.traffic.wakes += t.wakes;
    mine.traffic.wake_us_total += t.wake_us_total;
    mine.traffic.wake_us_max = std::max(mine.traffic.wake_us_max, t.wake_us_max);
  }
}

void print_totals(const Totals& t, const RunSettings& s, std::uint32_t wg_used, const DeviceHeap* heap) {
  if (t.calls == 0) return;
  fmt::print(stderr,
             "chanflow: {} graph run(s) on {} ({} on the device scheduler): {:.2f} ms, {} rounds, {} dispatches, {} CEs "
             "(tasks and frames), {} yields, {} restarts, deepest level {}, device idle on the aggregator {:.0f}%\n",
             t.calls, t.device, t.device_scheduled, t.wall_ms, t.rounds, t.dispatches, t.ces, t.yields, t.restarts, t.max_level,
             t.wall_ms > 0 ? 100.0 * t.aggregator_ms / t.wall_ms : 0.0);
  fmt::print(stderr, "chanflow: of these, {} first run(s) of a graph took {:.2f} ms: a first run also makes its "
             "levels and compiles its kernels (PoCL at their first launches; later runs and processes reuse them)\n",
             t.first_runs, t.first_runs_ms);
  fmt::print(stderr, "chanflow: settings: {} CEs per stack level{}, work-groups of {}, {} policy, {} dispatch, {} channel-table slots\n",
             std::max(s.capacity, t.stack_capacity),
             t.stack_capacity > s.capacity ? " at most (sized for the device and the work-groups' requests)" : "",
             wg_used ? wg_used : s.wg_size, s.policy, to_string(s.dispatch), s.max_channels);
  fmt::print(stderr, "chanflow: device memory: channels {:.1f} MiB in {} stack levels and channels at most, {:.1f} KiB of "
                     "CEs live at most\n",
             static_cast<double>(t.channel_bytes) / (1 << 20), t.channels, static_cast<double>(t.live_bytes) / 1024);
  if (heap)
    fmt::print(stderr, "chanflow: device heap: {:.1f} MiB of {:.0f} MiB used at most (CHANFLOW_HEAP, --heap), {} block(s) live at exit\n",
               static_cast<double>(heap->high_water_bytes()) / (1 << 20), static_cast<double>(heap->bytes()) / (1 << 20),
               heap->live_blocks());
  if (!t.serial_depth.empty())
    fmt::print(stderr, "chanflow: granularity control: serial {} in the last call; {} task(s) ran their call serially "
                       "in their work-item\n", t.serial_depth, t.serial_tasks);
  // A resumed task continues its flush with the spawns it recorded: its statements ran once.
  if (t.restarts)
    fmt::print(stderr, "chanflow: tasks resumed where they yielded (their bodies not run again): {}\n",
               describe_restarts(t.restarts_per_port));
  if (t.devices.empty()) return;
  fmt::print(stderr, "chanflow: across devices (CHANFLOW_DEVICES): tasks of {} may move",
             t.movable.empty() ? std::string("no function") : fmt::format("{}", fmt::join(t.movable, ", ")));
  for (const auto& [function, why] : t.staying) fmt::print(stderr, "; {} stays where it is spawned: {}", function, why);
  fmt::print(stderr, "\n");
  for (std::size_t d = 0; d < t.devices.size(); ++d) {
    const Totals::Device& v = t.devices[d];
    const DeviceTraffic& x = v.traffic;
    fmt::print(stderr,
               "chanflow:   device {} ({}): {} CEs; tasks sent {} in {} batch(es), received {}; results returned {}; "
               "{:.1f} KiB moved; waited {} time(s), {:.2f} ms; woke {:.0f} us after work arrived (mean; max {:.0f})\n",
               d, v.name, v.ces, x.tasks_sent, x.batches_sent, x.tasks_received, x.returns_sent,
               static_cast<double>(x.bytes_sent) / 1024, x.waits, x.wait_ms, x.wakes ? x.wake_us_total / x.wakes : 0.0,
               x.wake_us_max);
  }
}

std::string in_program_words(std::string message) {
  const std::string node = "kernel node '";
  for (std::size_t at = message.find(node); at != std::string::npos; at = message.find(node, at + 1)) {
    const std::size_t end = message.find('\'', at + node.size());
    if (end == std::string::npos) break;
    std::string name = message.substr(at + node.size(), end - at - node.size());
    for (const char* suffix : {"__spawn", "__sync"})
      if (name.ends_with(suffix)) {
        name.erase(name.size() - std::strlen(suffix));
        message.replace(at, end - at, "Cilk function '" + name);
        break;
      }
  }
  return message;
}

std::string depth_message(const StackDepthError& e, std::uint32_t max_channels) {
  std::string function = e.stack();
  if (function.size() > 5 && function.ends_with("_cont")) function.erase(function.size() - 5);
  return fmt::format("Cilk function '{}' recursed {} levels deep, as deep as this run can go: every level of "
                     "every Cilk function's stacks takes one of the run's {} channel-table slots. Does '{}' "
                     "miss a base case? If the recursion is meant to be this deep, raise "
                     "CHANFLOW_MAX_CHANNELS (--max-channels with chanflow run).",
                     function, e.level(), max_channels, function);
}

}  // namespace chanflow::cilk
