// `chanflow bench`: the workloads against their baselines.
#include "workload_bench.hpp"

#include "chanflow_cli_sources.hpp"
#include "common/bench_common.hpp"

#include <chanflow/device_set.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <unistd.h>

namespace chanflow::bench {
namespace {

// The most warm-up runs granularity control's search may take before the timed runs (it settles in
// six to thirteen).
constexpr unsigned kMostSettlingRuns = 16;

using workloads::Measurement;
using workloads::Workload;

struct Cell {
  const Workload* workload = nullptr;
  std::uint64_t size = 0;
};

// One implementation at one size: a checked warm-up, then `reps` timed runs, each checked;
// `status` is told which run is next ("warm-up", "run 2 of 3").
nlohmann::json measure(workloads::Instance& instance, const Cell& cell, const std::string& impl, unsigned reps,
                       const std::function<void(const std::string&)>& status) {
  Measurement m;
  std::string error;
  double first_ms = 0;
  nlohmann::json settling = nlohmann::json::array();  // [depth, run ms, device ms, levels ms] per warm-up run
  status("warm-up");
  try {
    m = instance.run(impl);  // warm-up: builds programs and chanflow's graph, faults pages in
    first_ms = m.ms;
    // Granularity control left to the runtime searches for its depth by measured time: the
    // warm-up goes on until it has settled, keeping each run's depth and times (its graph run, and
    // of that the device's and making levels).
    const auto searched = [&] {
      settling.push_back({m.stats->serial_depth, m.stats->wall_ms, m.stats->device_ms, m.stats->host.levels_ms});
    };
    if (m.stats && m.stats->serial_searching) searched();
    for (unsigned w = 0; m.stats && m.stats->serial_searching && w < kMostSettlingRuns; ++w) {
      status(fmt::format("warm-up: granularity control's search, run {}", w + 2));
      m = instance.run(impl);
      searched();
    }
  } catch (const std::exception& e) {  // a run that fails is reported, and fails the benchmark; the others still run
    error = e.what();
    fmt::print(stderr, "\nbench: {} {} {} failed: {}\n", cell.workload->name(), cell.size, impl, error);
  }
  std::vector<double> samples;
  bool correct = error.empty() && m.correct;
  double idle = 0;
  std::vector<double> host_ms;
  std::string schedulers;  // which ran the repetitions: "device", "rounds", or "rounds, device" (Auto on a GPU)
  for (unsigned i = 0; correct && i < reps; ++i) {
    status(fmt::format("run {} of {}", i + 1, reps));
    m = instance.run(impl);  // an error here ends the benchmark: it passed the warm-up
    correct = m.correct;
    samples.push_back(m.ms);
    if (m.stats) {
      idle += m.stats->device_idle_on_aggregator;
      host_ms.push_back(m.stats->aggregator_ms);
      if (schedulers.find(m.stats->scheduler) == std::string::npos)
        schedulers += (schedulers.empty() ? "" : ", ") + m.stats->scheduler;
    }
  }
  const Summary s = summarize(samples);
  nlohmann::json j{{"workload", cell.workload->name()}, {"size", cell.size},
                   {"size_name", cell.workload->size_name()}, {"impl", impl},
                   {"threads", m.threads ? nlohmann::json(m.threads) : nlohmann::json(nullptr)},
                   {"reps", samples.size()}, {"correct", correct}, {"result", m.result}};
  if (!error.empty()) j["error"] = error;
  for (const char* key : {"median_ms", "min_ms", "max_ms"}) j[key] = nullptr;
  if (correct) {
    j["median_ms"] = s.median;
    j["min_ms"] = s.min;
    j["max_ms"] = s.max;
  }
  // The first call: chanflow's includes building its graph (programs, channels, levels), which the
  // timed repetitions reuse.
  j["first_ms"] = correct ? nlohmann::json(first_ms) : nlohmann::json(nullptr);
  for (const char* key : {"tasks", "dispatches", "yields", "peak_live_bytes", "device_idle_on_aggregator", "run_ms",
                          "host_ms", "channel_bytes", "serial_depth"})
    j[key] = nullptr;
  j["devices"] = m.across ? nlohmann::json(m.across->runs.size()) : nlohmann::json(nullptr);
  if (m.across && correct) {
    // Across devices: every device's CEs and what moved between them (the last run's).
    std::uint64_t ces = 0;
    nlohmann::json per_device = nlohmann::json::array();
    for (std::size_t d = 0; d < m.across->runs.size(); ++d) {
      const DeviceTraffic& t = m.across->traffic[d];
      ces += m.across->runs[d].ces;
      per_device.push_back({{"ces", m.across->runs[d].ces}, {"rounds", m.across->runs[d].rounds},
                            {"scheduler", m.across->runs[d].scheduler},
                            {"recalled", m.across->runs[d].device_scheduler.recalled}, {"recalls", t.recalls},
                            {"busy_ms", m.across->runs[d].device_ms},
                            {"tasks_sent", t.tasks_sent}, {"batches_sent", t.batches_sent},
                            {"tasks_received", t.tasks_received}, {"plain_received", t.plain_received},
                            {"returns_sent", t.returns_sent},
                            {"bytes_sent", t.bytes_sent}, {"waits", t.waits}, {"wait_ms", t.wait_ms},
                            {"wakes", t.wakes}, {"wake_us_max", t.wake_us_max},
                            {"wake_us_mean", t.wakes ? nlohmann::json(t.wake_us_total / t.wakes) : nlohmann::json(nullptr)}});
    }
    j["per_device"] = per_device;
    m.stats->ces = ces;
  }
  if (m.stats && correct) {
    j["tasks"] = m.stats->ces;  // every task and continuation is one CE
    j["dispatches"] = m.stats->dispatches;
    j["yields"] = m.stats->yields;
    j["peak_live_bytes"] = m.stats->peak_live_bytes;
    j["device_idle_on_aggregator"] = idle / samples.size();
    j["run_ms"] = m.stats->wall_ms;  // the last run's graph run, without building the graph
    j["host_ms"] = summarize(host_ms).median;  // the aggregator's host time per run
    j["channel_bytes"] = m.stats->peak_channel_bytes;
    j["scheduler"] = schedulers;
    // Granularity control (a compiled Cilk program's serial forms): the last run's depth.
    if (m.stats->serial_depth != kSerialOff) j["serial_depth"] = m.stats->serial_depth;
    j["settling"] = settling;
  }
  return j;
}

// A row's implementation, with the devices it ran across: "chanflow ×2 dev".
std::string impl_label(const nlohmann::json& r) {
  const auto devices = r.value("devices", nlohmann::json());
  return devices.is_null() ? r["impl"].get<std::string>()
                           : fmt::format("{} ×{} dev", r["impl"].get<std::string>(), devices.get<unsigned>());
}

std::string ms_text(const nlohmann::json& v) { return v.is_null() ? "-" : fmt::format("{:.3f}", v.get<double>()); }

using Medians = std::map<std::pair<std::string, std::uint64_t>, std::map<std::string, double>>;

// Runs across devices: each device count's speed-up over the same implementation on one device
// (the one-device run, as the workload runs alone) and over its own run on one device through the
// router, with the tasks that moved.
void print_speedups(std::FILE* out, const nlohmann::json& rows, const Medians& medians) {
  // Each run across devices' median by workload, size, implementation and device count.
  std::map<std::tuple<std::string, std::uint64_t, std::string, unsigned>, double> by_count;
  for (const auto& r : rows)
    if (!r.value("devices", nlohmann::json()).is_null() && !r["median_ms"].is_null())
      by_count[{r["workload"].get<std::string>(), r["size"].get<std::uint64_t>(), r["impl"].get<std::string>(),
                r["devices"].get<unsigned>()}] = r["median_ms"].get<double>();
  if (by_count.empty()) return;
  fmt::print(out, "\nacross devices: speed-up over one device (above 1: faster)\n");
  fmt::print(out, "{:<12} {:>8} {:<22} {:>11} {:>15} {:>15} {:>12} {:>10} {:>10}\n", "workload", "size", "impl", "median ms",
             "× one device", "× routed on 1", "× static", "tasks moved", "waits");
  for (const auto& r : rows) {
    if (r.value("devices", nlohmann::json()).is_null() || r["median_ms"].is_null()) continue;
    const std::string w = r["workload"].get<std::string>(), impl = r["impl"].get<std::string>();
    const std::uint64_t size = r["size"].get<std::uint64_t>();
    const double ms = r["median_ms"].get<double>();
    const auto over = [&](std::optional<double> base) {
      return base && ms > 0 ? fmt::format("{:.2f}", *base / ms) : std::string("-");
    };
    const auto find = [&](const std::string& which, unsigned devices) -> std::optional<double> {
      const auto b = by_count.find({w, size, which, devices});
      return b == by_count.end() ? std::nullopt : std::optional(b->second);
    };
    std::optional<double> alone;
    if (const auto c = medians.find({w, size}); c != medians.end())
      if (const auto b = c->second.find(impl); b != c->second.end()) alone = b->second;
    // Its own run routed on one device; the same count of devices with nothing moved (an
    // implementation `<impl>-static`, such as the tree search's static split), where there is one.
    const std::optional<double> routed = find(impl, 1), split = find(impl + "-static", r["devices"].get<unsigned>());
    std::uint64_t moved = 0, waits = 0;
    for (const auto& d : r.value("per_device", nlohmann::json::array())) {
      moved += d["tasks_sent"].get<std::uint64_t>();
      waits += d["waits"].get<std::uint64_t>();
    }
    fmt::print(out, "{:<12} {:>8} {:<22} {:>11.3f} {:>15} {:>15} {:>12} {:>10} {:>10}\n", w, size, impl_label(r), ms,
               over(alone), over(routed), over(split), moved, waits);
  }
}

void print_tables(std::FILE* out, const nlohmann::json& rows) {
  fmt::print(out, "{:<12} {:>8} {:<22} {:>11} {:>11} {:>11} {:>10} {:>10} {:>8} {:>6} {:>7} {:>13}\n", "workload", "size",
             "impl", "median ms", "min ms", "max ms", "tasks", "dispatches", "yields", "idle", "correct", "cut-off depth");
  for (const auto& r : rows) {
    const auto opt = [&](const char* key) {
      return r[key].is_null() ? std::string("-") : fmt::format("{}", r[key].get<std::uint64_t>());
    };
    fmt::print(out, "{:<12} {:>8} {:<22} {:>11} {:>11} {:>11} {:>10} {:>10} {:>8} {:>6} {:>7} {:>13}\n",
               r["workload"].get<std::string>(), r["size"].get<std::uint64_t>(), impl_label(r),
               ms_text(r["median_ms"]), ms_text(r["min_ms"]), ms_text(r["max_ms"]), opt("tasks"), opt("dispatches"),
               opt("yields"),
               r["device_idle_on_aggregator"].is_null()
                   ? std::string("-")
                   : fmt::format("{:.0f}%", 100 * r["device_idle_on_aggregator"].get<double>()),
               r["correct"].get<bool>() ? "yes" : r.contains("error") ? "failed" : "NO",
               r.value("serial_depth", nlohmann::json()).is_null() ? std::string("-") : opt("serial_depth"));
  }
  // chanflow's time over each baseline's, per workload and size (< 1: chanflow is faster).
  Medians medians;
  std::vector<std::pair<std::string, std::uint64_t>> order;
  for (const auto& r : rows) {
    const auto key = std::pair(r["workload"].get<std::string>(), r["size"].get<std::uint64_t>());
    if (!medians.count(key)) order.push_back(key);
    if (!r["median_ms"].is_null() && r.value("devices", nlohmann::json()).is_null())
      medians[key][r["impl"].get<std::string>()] = r["median_ms"].get<double>();
  }
  fmt::print(out, "\nchanflow's time divided by each baseline's (below 1: chanflow is faster)\n");
  fmt::print(out, "{:<12} {:>8} {:<22} {:>13} {:>13} {:>13} {:>13} {:>13}\n", "workload", "size", "impl", "÷ tbb-fine",
             "÷ tbb-cutoff", "÷ serial", "÷ chanflow", "÷ GPU peer");
  for (const auto& key : order) {
    const auto& m = medians[key];
    for (const auto& [impl, ms] : m) {
      if (impl.rfind("chanflow", 0) != 0) continue;  // every chanflow implementation gets a row
      const auto ratio = [&, ms = ms](const char* base) {
        const auto b = m.find(base);
        return b == m.end() || b->second <= 0 ? std::string("-") : fmt::format("{:.2f}", ms / b->second);
      };
      // The other chanflow implementations against the hand-built graph (chanflow-compiled: chanflowc's).
      // The library doing the same job on the same device (gpu_peers.hpp), where there is one.
      const std::string peer = m.count("clblast-gemm") ? ratio("clblast-gemm") : ratio("compute-sort");
      fmt::print(out, "{:<12} {:>8} {:<22} {:>13} {:>13} {:>13} {:>13} {:>13}\n", key.first, key.second, impl,
                 ratio("tbb-fine"), ratio("tbb-cutoff"), ratio("serial"), impl == "chanflow" ? "-" : ratio("chanflow"), peer);
    }
  }
  print_speedups(out, rows, medians);
}

}  // namespace

nlohmann::json run_workload_bench(const Runtime& rt, const WorkloadBenchOptions& o, std::FILE* table) {
  // A named set, or the user's own sizes (numbers, comma-separated).
  std::vector<std::uint64_t> own;
  if (o.sizes != "default" && o.sizes != "scaling" && o.sizes != "gpu") {
    std::size_t at = 0;
    while (at <= o.sizes.size()) {
      const std::size_t comma = std::min(o.sizes.find(',', at), o.sizes.size());
      const std::string item = o.sizes.substr(at, comma - at);
      if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 18)
        throw std::invalid_argument(
            fmt::format("--sizes {}: use default, scaling, gpu, or sizes (numbers, comma-separated)", o.sizes));
      own.push_back(std::stoull(item));
      at = comma + 1;
    }
  }
  const auto set = !own.empty() || o.sizes == "default" ? workloads::SizeSet::Default
                   : o.sizes == "scaling" ? workloads::SizeSet::Scaling
                                          : workloads::SizeSet::Gpu;
  auto impls_of = [&](const Workload& w) {
    if (o.impls.empty()) return set == workloads::SizeSet::Gpu ? w.gpu_impls() : w.impls();
    std::vector<std::string> out;
    for (const auto& impl : w.impls())
      if (std::find(o.impls.begin(), o.impls.end(), impl) != o.impls.end()) out.push_back(impl);
    return out;
  };
  // Across devices: the first 1, 2, 4, ... and all of the devices named (or the counts asked for).
  std::vector<std::string> across;  // a device set's spec per device count
  if (!o.settings.devices.empty()) {
    const auto named = choose_devices(o.settings.devices, list_devices());
    std::vector<unsigned> counts = o.device_counts;
    if (counts.empty()) {
      for (unsigned k = 1; k < named.size(); k *= 2) counts.push_back(k);
      counts.push_back(static_cast<unsigned>(named.size()));
    }
    for (unsigned k : counts) {
      if (k == 0 || k > named.size())
        throw std::invalid_argument(fmt::format("--device-counts {}: --devices {} names {} device{}", k,
                                                o.settings.devices, named.size(), named.size() == 1 ? "" : "s"));
      std::string spec;
      for (unsigned i = 0; i < k; ++i) spec += fmt::format("{}{}", i ? "," : "", named[i].index);
      across.push_back(spec);
    }
  } else if (!o.device_counts.empty()) {
    throw std::invalid_argument("--device-counts: counts of the devices --devices names, which it does not");
  }
  RunSettings alone = o.settings;
  alone.devices.clear();
  std::vector<const Workload*> chosen;
  if (o.workloads.empty()) chosen = workloads::all_workloads();
  for (const auto& name : o.workloads) chosen.push_back(&workloads::find_workload(name));
  std::vector<Cell> cells;
  for (const Workload* w : chosen)
    for (std::uint64_t size : own.empty() ? w->sizes(set) : own) {
      w->check_size(size, rt.caps(), o.settings);  // every size is checked before anything runs
      cells.push_back({w, size});
    }
  std::size_t runs = 0, done = 0;
  for (const auto& c : cells)
    for (const auto& impl : impls_of(*c.workload))
      runs += 1 + (c.workload->runs_across_devices(impl) ? across.size() : 0);

  fmt::print(table, "chanflow bench --sizes {} on {} (host: {} threads for oneTBB), median of {}, input seed {}\n",
             o.sizes, rt.caps().name, workloads::tbb_threads(), o.reps, o.seed);
  nlohmann::json rows = nlohmann::json::array();
  // Progress on standard error: on a terminal one line rewritten with the row, its run and the
  // time the bench has taken; otherwise a line per row; --quiet: neither.
  const bool quiet = o.settings.quiet;
  const bool tty = !quiet && isatty(fileno(stderr));
  const auto started = Clock::now();
  for (const auto& cell : cells) {
    if (tty) {
      fmt::print(stderr, "\r\033[Kbench: {} {}: preparing inputs and their reference, {:.0f} s", cell.workload->name(),
                 cell.size, ms_since(started) / 1e3);
      std::fflush(stderr);
    }
    // Every implementation on one device, then (its instance gone first: a large size's graphs
    // and buffers would not leave room for another's) across each count of devices where the
    // implementation can.
    auto instance = cell.workload->prepare(rt, cell.size, o.seed, alone);
    auto one_row = [&](const std::string& impl, const std::string& spec, workloads::Instance& on) {
      ++done;
      const std::string label = spec.empty() ? impl : fmt::format("{} on devices {}", impl, spec);
      auto status = [&](const std::string& which) {
        if (!tty) return;
        fmt::print(stderr, "\r\033[Kbench: [{}/{}] {} {} {}: {}, {:.0f} s", done, runs, cell.workload->name(), cell.size,
                   label, which, ms_since(started) / 1e3);
        std::fflush(stderr);
      };
      if (!tty && !quiet) fmt::print(stderr, "bench: [{}/{}] {} {} {}\n", done, runs, cell.workload->name(), cell.size, label);
      rows.push_back(measure(on, cell, impl, o.reps, status));
      if (o.on_row) o.on_row(rows);
    };
    for (const auto& impl : impls_of(*cell.workload)) one_row(impl, "", *instance);
    instance.reset();
    for (const auto& impl : impls_of(*cell.workload)) {
      if (!cell.workload->runs_across_devices(impl)) continue;
      for (const auto& spec : across) {
        RunSettings settings = o.settings;
        settings.devices = spec;
        auto on_devices = cell.workload->prepare(rt, cell.size, o.seed, settings);
        one_row(impl, spec, *on_devices);
      }
    }
  }
  if (tty) fmt::print(stderr, "\r\033[K");
  print_tables(table, rows);
  return rows;
}

void plot_bench(const std::string& json_path, const std::string& png_path) {
  const auto script = std::filesystem::temp_directory_path() / fmt::format("chanflow-plot-{}.py", getpid());
  {
    std::ofstream f(script);
    f << cli_cl::plot_bench_py();
    if (!f) throw std::runtime_error(fmt::format("cannot write {}", script.string()));
  }
  // Debian's interpreter, which python3-matplotlib is installed for (a python3 earlier on PATH,
  // from pyenv or a virtual environment, may lack it).
  const char* python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  const std::string command = fmt::format("{} '{}' '{}' '{}'", python, script.string(), json_path, png_path);
  const int status = std::system(command.c_str());
  std::filesystem::remove(script);
  if (status != 0)
    throw std::runtime_error(fmt::format("--plot: drawing {} failed (it needs python3 and Debian's "
                                         "python3-matplotlib; `./run.sh` installs them)",
                                         png_path));
}

}  // namespace chanflow::bench
