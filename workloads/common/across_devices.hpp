// A hand-built graph run across the devices RunSettings::devices names: a copy per device, made
// on that device's runtime (under the scheduler the settings ask for: by default the device
// scheduler on a GPU, rounds on a CPU device), and the router (multidevice/) moving tasks between
// them.
// The root is placed on the first device, whose copy holds the result when the run ends.
#pragma once

#include "chanflow/cilk_runtime.hpp"
#include "chanflow/device_set.hpp"
#include "chanflow/run_settings.hpp"
#include "chanflow/work_router.hpp"
#include "common/workload.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace chanflow::workloads {

/// The copies of a hand-built graph class `Copy` (FibCilk, QueensCilk, ...: graph(), result()),
/// one per device, and their router: opened and built by the first measure(), kept for the next.
template <class Copy>
class AcrossDevices {
 public:
  /// Builds one device's copy of the graph.
  using Make = std::function<std::unique_ptr<Copy>(const Runtime&, const DeviceCaps&, const RunSettings&)>;

  /// `movable` names the stacks whose tasks may move (their CEs carry values only:
  /// work_router.hpp), `movable_channels` the plain channels whose CEs may; `settings.devices`
  /// names the devices.
  AcrossDevices(RunSettings settings, bool profiling, std::vector<std::string> movable, Make make,
                std::vector<std::string> movable_channels = {}, RouterOptions options = {})
      : settings_(std::move(settings)),
        profiling_(profiling),
        movable_(std::move(movable)),
        movable_channels_(std::move(movable_channels)),
        options_(options),
        make_(std::move(make)) {}

  /// One timed run (the first opens the devices and builds the copies), named `what` (its
  /// progress line; a trace per device where the settings ask for one): `seed(copy)` places the
  /// root on the first device's copy, whose result() is returned. `m` gets the time, every
  /// device's statistics (m.across) and the first device's as the run's (m.stats).
  template <class Seed>
  std::uint64_t measure(Measurement& m, const std::string& what, Seed&& seed) {
    std::uint64_t value = 0;
    m.ms = time_ms([&] {
      if (!router_) open();
      seed(*copies_.front());
      run(m, what);
      value = copies_.front()->result();
    });
    return value;
  }

  /// The same for a graph whose every copy counts a share of the result: `seed(copy, device,
  /// devices)` prepares each copy (its count zeroed, and its share of the roots placed), and the result is
  /// the sum of the copies' result() (a tree search's node counts).
  template <class Seed>
  std::uint64_t measure_summed(Measurement& m, const std::string& what, Seed&& seed) {
    std::uint64_t value = 0;
    m.ms = time_ms([&] {
      if (!router_) open();
      for (std::size_t d = 0; d < copies_.size(); ++d) seed(*copies_[d], d, copies_.size());
      run(m, what);
      for (const auto& copy : copies_) value += copy->result();
    });
    return value;
  }


 private:
  void run(Measurement& m, const std::string& what) {
    m.threads = 0;
    DeviceRunStats stats = router_->run([this] { return settings_.make_policy(); },
                                        settings_.run_options(fmt::format("{} across {} devices", what, copies_.size())));
    m.stats = stats.runs.front();
    m.across = std::move(stats);
  }

  void open() {
    set_ = std::make_unique<DeviceSet>(settings_.devices, profiling_);
    std::vector<DeviceGraph> graphs;
    for (std::size_t i = 0; i < set_->size(); ++i) {
      copies_.push_back(make_(set_->runtime(i), set_->caps(i), settings_));
      graphs.push_back({&copies_.back()->graph(), movable_, movable_channels_});
    }
    router_ = std::make_unique<WorkRouter>(std::move(graphs), options_);
  }

  RunSettings settings_;
  bool profiling_;
  std::vector<std::string> movable_;
  std::vector<std::string> movable_channels_;
  RouterOptions options_;
  Make make_;
  std::unique_ptr<DeviceSet> set_;
  std::vector<std::unique_ptr<Copy>> copies_;  // after set_: destroyed before its runtimes
  std::unique_ptr<WorkRouter> router_;
};

/// A compiled Cilk program's calls across the devices RunSettings::devices names (cilk::use with
/// a DeviceSet): the devices opened by the first measure() and kept for the next; chanflowc said
/// which functions' tasks may move (ProgramGraph::movable).
class CompiledAcrossDevices {
 public:
  /// `footprint` sizes the stacks as for the one-device run (cilk::settings_for).
  CompiledAcrossDevices(RunSettings settings, bool profiling, StackFootprint footprint)
      : settings_(std::move(settings)), profiling_(profiling), footprint_(footprint) {}
  ~CompiledAcrossDevices();
  CompiledAcrossDevices(const CompiledAcrossDevices&) = delete;
  CompiledAcrossDevices& operator=(const CompiledAcrossDevices&) = delete;
  /// One timed call: `call()` calls the compiled function and returns its value. `m` gets the
  /// time, the devices' statistics summed (m.stats) and each device's (m.across).
  template <class Call>
  std::uint64_t measure(Measurement& m, Call&& call) {
    use();
    m.threads = 0;
    std::uint64_t value = 0;
    m.ms = time_ms([&] { value = call(); });
    m.stats = cilk::last_stats();
    m.across = cilk::last_across();
    return value;
  }

 private:
  void use();
  RunSettings settings_;
  bool profiling_;
  StackFootprint footprint_;
  std::unique_ptr<DeviceSet> set_;
};

}  // namespace chanflow::workloads
