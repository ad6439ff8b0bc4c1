// `chanflow run <workload> <size>`.
#include "run_command.hpp"

#include "peers/gpu_peers.hpp"

#include <chanflow/device_set.hpp>
#include <chanflow/work_router.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <vector>
#include <unistd.h>
#include <stdexcept>

namespace chanflow::workloads {
namespace {

void print_stats(std::FILE* out, const RunStats& st) {
  fmt::print(out, "policy {} ({} scheduler): {} rounds, {} dispatches ({} device sweeps), {} CEs ({:.1f} per dispatch), depth {}\n",
             st.policy, st.scheduler, st.rounds, st.dispatches, st.sweeps, st.ces, st.mean_ces_per_dispatch(), st.max_level);
  if (st.scheduler == "device")
    fmt::print(out, "device scheduler: {} launches, {} batches, {} empty polls ({} claims lost to other work-groups, {} "
               "with no room for what was ready), {} naps of dozing work-groups; work-groups left idle {}, after their polls "
               "{}, the launch quiet {}, recalled {} (launches recalled {}); blocks written before its launches {}\n",
               st.device_scheduler.launches, st.device_scheduler.batches, st.device_scheduler.empty_polls,
               st.device_scheduler.polls_lost, st.device_scheduler.polls_no_room, st.device_scheduler.naps,
               st.device_scheduler.left_idle, st.device_scheduler.left_polls, st.device_scheduler.left_quiet,
               st.device_scheduler.left_recalled, st.device_scheduler.recalled, st.device_scheduler.blocks_written);
  if (!st.device_scheduler.busy_ms_per_node.empty()) {
    // A device profile: where the work-groups' time went, node by node (from the device's clock).
    double all = 0;
    for (const auto& [node, ms] : st.device_scheduler.busy_ms_per_node) all += ms;
    std::string per;
    for (const auto& [node, ms] : st.device_scheduler.busy_ms_per_node)
      per += fmt::format("{}{} {:.1f} ms ({:.0f}%)", per.empty() ? "" : ", ", node, ms, 100 * ms / all);
    fmt::print(out, "work-group time per node (summed over work-groups): {}\n", per);
  }
  if (st.serial_depth != kSerialOff) {
    // Granularity control: the tasks at the serial depth ran their calls serially (their subtrees in-item).
    std::string tasks;
    for (const auto& [stack, per_level] : st.ces_per_level)
      if (per_level.size() > st.serial_depth) tasks += fmt::format("{}{} {}", tasks.empty() ? "" : ", ", stack, per_level[st.serial_depth]);
    fmt::print(out, "granularity control: serial depth {}; CEs at that level (each task a serial call): {}\n",
               st.serial_depth, tasks.empty() ? "none (the recursion ended above it)" : tasks);
  }
  fmt::print(out, "yields {} ({} after the continuation), restarts {} in {} dispatches\n", st.yields,
             st.partial_yields, st.restarts, st.restart_dispatches);
  fmt::print(out, "memory: peak live {} bytes, channels allocated {} bytes\n", st.peak_live_bytes,
             st.peak_channel_bytes);
  fmt::print(out, "time: run {:.3f} ms = aggregator {:.3f} ms + device {:.3f} ms (host enqueueing {:.3f} ms, "
             "launches naming up to {} SVM allocations); device idle on the aggregator {:.1f}%\n",
             st.wall_ms, st.aggregator_ms, st.device_ms, st.enqueue_ms, st.svm_named, 100 * st.device_idle_on_aggregator);
  fmt::print(out, "aggregator: observe {:.3f} ms, admit {:.3f}, making levels {:.3f}, lay out {:.3f}, collect {:.3f}\n",
             st.host.observe_ms, st.host.admit_ms, st.host.levels_ms, st.host.lay_out_ms, st.host.collect_ms);
}

// What a run across devices did on each: the CEs it ran, the tasks it gave and was given, the
// results it carried back, the bytes it sent (tasks and results, or a sort's keys), and its waits.
void print_traffic(std::FILE* out, const DeviceRunStats& across) {
  for (std::size_t d = 0; d < across.traffic.size(); ++d) {
    const DeviceTraffic& t = across.traffic[d];
    const RunStats& r = across.runs[d];
    fmt::print(out, "  device {}: {} CEs in {} {}{}, busy {:.3f} ms; tasks sent {} in {} batches, received {}, results returned {}, "
               "{:.1f} KiB sent; waited {} times, {:.3f} ms{}\n",
               d, r.ces, r.rounds, r.scheduler == "device" ? "launches of the device scheduler" : "rounds",
               r.scheduler == "device" ? fmt::format(" ({} recalled)", r.device_scheduler.recalled) : std::string(),
               r.device_ms, t.tasks_sent, t.batches_sent, t.tasks_received, t.returns_sent, t.bytes_sent / 1024.0, t.waits, t.wait_ms,
               t.wakes ? fmt::format(" (woken by work {} times, {:.1f} µs after it came on average, {:.1f} at most)", t.wakes,
                                     t.wake_us_total / t.wakes, t.wake_us_max)
                       : std::string());
  }
}

}  // namespace

std::uint64_t fresh_seed() { return std::random_device{}() % 1000000000u; }

int run_workload(const RunRequest& request, std::FILE* out) {
  const Workload& w = find_workload(request.workload);
  const auto impls = w.impls();
  if (std::find(impls.begin(), impls.end(), request.impl) == impls.end())
    throw std::invalid_argument(
        fmt::format("{} has no implementation '{}' (there are: {})", w.name(), request.impl, fmt::join(impls, ", ")));
  const bool on_device = request.impl.rfind("chanflow", 0) == 0 || is_gpu_peer(request.impl);
  // Across devices: the set checked before anything runs; its first device sizes the run.
  std::string device = request.device, where;
  std::vector<std::string> traces{request.settings.trace_path};  // a trace per device across devices
  if (const std::string& spec = request.settings.devices; !spec.empty()) {
    if (!w.runs_across_devices(request.impl)) {
      std::vector<std::string> across;
      for (const Workload* each : all_workloads())
        for (const auto& impl : each->impls())
          if (each->runs_across_devices(impl)) across.push_back(fmt::format("{} {}", each->name(), impl));
      throw std::invalid_argument(fmt::format("--devices: {} {} runs on one device (across devices so far: {})",
                                              w.name(), request.impl, fmt::join(across, ", ")));
    }
    if (!request.device.empty())
      throw std::invalid_argument("--device and --devices both given: --devices names every device of the run");
    const auto chosen = choose_devices(spec, list_devices());
    traces.clear();
    for (std::size_t d = 0; d < chosen.size(); ++d) traces.push_back(device_trace_path(request.settings.trace_path, d));
    device = std::to_string(chosen.front().index);
    for (const auto& d : chosen) where += fmt::format("{}[{}] {}", where.empty() ? "" : ", ", d.index, d.name);
    where = fmt::format("{} device{}: {}", chosen.size(), chosen.size() == 1 ? "" : "s", where);
  }
  const Runtime rt(DeviceSelection{device, /*profiling=*/!request.settings.trace_path.empty()});
  if (where.empty()) where = on_device ? rt.caps().name : std::string("the host");
  w.check_size(request.size, rt.caps(), request.settings);
  auto instance = w.prepare(rt, request.size, request.seed, request.settings);
  bool correct = true;
  // A graph's first run builds it and compiles its kernels (PoCL compiles each at its first
  // launch, NVIDIA's driver at the build): seconds that later runs do not pay. Said while it
  // happens, on a terminal, and reported apart from the runs after it.
  const bool terminal = !request.settings.quiet && isatty(fileno(stderr));
  std::vector<double> times;
  for (unsigned rep = 0; rep < std::max(1u, request.reps); ++rep) {
    if (rep == 0 && on_device && terminal) {
      fmt::print(stderr, "chanflow: first run: building the graph and compiling its kernels for {}...", rt.caps().name);
      std::fflush(stderr);
    }
    const Measurement m = instance->run(request.impl);
    if (rep == 0 && on_device && terminal) fmt::print(stderr, "\r\033[K");
    times.push_back(m.ms);
    correct = correct && m.correct;
    const std::string which = request.reps > 1 ? fmt::format(" (run {} of {})", rep + 1, request.reps) : "";
    fmt::print(out, "{} on {} ({}){}\n", m.result, where, m.correct ? "correct" : "WRONG", which);
    fmt::print(out, "{} {} {}: {:.3f} ms{}, input seed {}\n", w.name(), request.size, request.impl, m.ms,
               m.threads > 1 ? fmt::format(" on {} threads", m.threads) : std::string(), request.seed);
    if (m.across) print_traffic(out, *m.across);
    if (m.stats && rep + 1 == std::max(1u, request.reps)) print_stats(out, *m.stats);
    std::fflush(out);
  }
  if (on_device && times.size() == 1) {
    fmt::print(out, "(a first run: its time includes building the graph and compiling its kernels; --reps 3 times the "
               "runs after it too)\n");
  } else if (on_device) {
    std::vector<double> later(times.begin() + 1, times.end());
    std::sort(later.begin(), later.end());
    const double median = later[later.size() / 2];
    fmt::print(out, "first run {:.3f} ms, of which about {:.3f} ms building the graph and compiling kernels (the first "
               "run less the median of the {} after it, {:.3f} ms)\n",
               times.front(), std::max(0.0, times.front() - median), later.size(), median);
  }
  if (!request.settings.trace_path.empty() && on_device) fmt::print(out, "wrote {}\n", fmt::join(traces, ", "));
  return correct ? 0 : 1;
}

}  // namespace chanflow::workloads
