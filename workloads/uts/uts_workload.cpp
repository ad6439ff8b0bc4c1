// The unbalanced tree search as a workload of `chanflow run` and `chanflow bench` (`uts`).
#include "uts.hpp"

#include "common/across_devices.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace chanflow::workloads {
namespace {

constexpr std::uint32_t kMostHeavy = 1000000;  // about 10^9 nodes

class UtsInstance final : public Instance {
 public:
  UtsInstance(const Runtime& runtime, std::uint32_t heavy, std::uint64_t seed, const RunSettings& settings)
      : runtime_(runtime), heavy_(heavy), seed_(seed), settings_(settings) {}
  // The compiled program's graphs were kept for this runtime (chanflow-compiled).
  ~UtsInstance() override { cilk::forget(runtime_); }

  Measurement run(std::string_view impl) override {
    Measurement m;
    std::uint64_t value = 0;
    if (impl == "serial") {
      m.ms = time_ms([&] { value = static_cast<std::uint64_t>(uts_tree(seed_, heavy_)); });
      reference_ = value;
      m.correct = true;  // the reference; the others are checked against it
    } else {
      if (impl == "tbb-fine" || impl == "tbb-cutoff") {
        m.threads = tbb_threads();
        m.ms = time_ms([&] { value = impl == "tbb-fine" ? uts_tbb_fine(seed_, heavy_) : uts_tbb_cutoff(seed_, heavy_); });
      } else if (impl == "chanflow" && !settings_.devices.empty()) {
        // The tree on the first device; every device counts the nodes it visits.
        value = across_.measure_summed(m, fmt::format("uts {}", heavy_), [&](UtsGraph& copy, std::size_t device, std::size_t) {
          if (device == 0) copy.seed_tree(seed_, heavy_);
          else copy.clear();
        });
      } else if (impl == "chanflow-static" && !settings_.devices.empty()) {
        value = split_.measure_summed(m, fmt::format("uts {} split", heavy_), [&](UtsGraph& copy, std::size_t device, std::size_t devices) {
          copy.seed_share(seed_, heavy_, device, devices);
        });
      } else if (impl == "chanflow-compiled" && !settings_.devices.empty()) {
        value = compiled_across_.measure(m, [&] { return uts_compiled_call(seed_, heavy_); });
      } else if (impl == "chanflow-compiled") {
        m.threads = 0;
        const RunSettings cilk = cilk::settings_for(settings_, runtime_.caps(), footprint());
        UtsResult r;
        m.ms = time_ms([&] { r = uts_compiled(runtime_, seed_, heavy_, cilk); });
        value = r.value;
        m.stats = std::move(r.stats);
      } else if (impl == "chanflow" || impl == "chanflow-static") {  // one device: the split is the whole tree
        m.threads = 0;
        const auto policy = settings_.make_policy();
        UtsResult r;
        m.ms = time_ms([&] {  // the first run builds the graph, later ones reuse it
          if (!graph_) graph_ = std::make_unique<UtsGraph>(runtime_, settings_.for_device(runtime_.caps(), footprint()));
          r = graph_->run(seed_, heavy_, *policy, settings_.run_options(fmt::format("uts {}", heavy_)));
        });
        value = r.value;
        m.stats = std::move(r.stats);
      } else {
        throw std::invalid_argument(fmt::format("uts has no implementation '{}'", impl));
      }
      m.correct = value == reference();
    }
    m.result = fmt::format("uts({}) = {} nodes", heavy_, value);
    return m;
  }

 private:
  // One channel: every node in flight (the frontier: about `heavy` nodes at its widest), at most
  // 4 spawned per task; a channel too small for it ends the run with the no-progress diagnostic.
  static StackFootprint footprint() {
    return {.bytes_per_slot = sizeof(UtsTask) + StackFootprint::kControlBytes, .levels = 1, .cpu_capacity = 1u << 18};
  }

  std::uint64_t reference() {
    if (!reference_) reference_ = static_cast<std::uint64_t>(uts_tree(seed_, heavy_));
    return *reference_;
  }

  AcrossDevices<UtsGraph>::Make make_copy() const {
    return [](const Runtime& rt, const DeviceCaps& caps, const RunSettings& s) {
      return std::make_unique<UtsGraph>(rt, s.for_device(caps, footprint()));
    };
  }

  const Runtime& runtime_;
  std::uint32_t heavy_;
  std::uint64_t seed_;
  RunSettings settings_;
  std::optional<std::uint64_t> reference_;
  std::unique_ptr<UtsGraph> graph_;
  // Across the devices of RunSettings::devices: the tree's nodes moved between them, or the
  // root's children split among them with nothing moved.
  AcrossDevices<UtsGraph> across_{settings_, runtime_.profiling(), {}, make_copy(), {"uts_tasks"}};
  AcrossDevices<UtsGraph> split_{settings_, runtime_.profiling(), {}, make_copy(), {"uts_tasks"},
                                 RouterOptions{.move_work = false}};
  // uts.c compiled, on the same devices: its uts_subtree and uts_children tasks move.
  CompiledAcrossDevices compiled_across_{settings_, runtime_.profiling(), footprint()};
};

class Uts final : public Workload {
 public:
  std::string_view name() const override { return "uts"; }
  std::string_view size_name() const override { return "heavy"; }
  std::vector<std::string> impls() const override {
    return {"serial", "tbb-fine", "tbb-cutoff", "chanflow", "chanflow-static", "chanflow-compiled"};
  }
  std::vector<std::uint64_t> sizes(SizeSet set) const override {
    if (set == SizeSet::Default) return {1000};
    if (set == SizeSet::Gpu) return {50000};
    return {200, 1000, 5000, 20000};
  }
  std::vector<std::string> gpu_impls() const override {
    return {"tbb-cutoff", "chanflow", "chanflow-static", "chanflow-compiled"};
  }
  void check_size(std::uint64_t size, const DeviceCaps&, const RunSettings&) const override {
    if (size == 0 || size > kMostHeavy)
      throw std::invalid_argument(fmt::format("uts {}: the heavy child's children must be 1 to {} (about 1,000 nodes "
                                              "each)",
                                              size, kMostHeavy));
  }
  std::unique_ptr<Instance> prepare(const Runtime& runtime, std::uint64_t size, std::uint64_t seed,
                                    const RunSettings& settings) const override {
    return std::make_unique<UtsInstance>(runtime, static_cast<std::uint32_t>(size), seed, settings);
  }
  bool runs_across_devices(std::string_view impl) const override {
    return impl == "chanflow" || impl == "chanflow-static" || impl == "chanflow-compiled";
  }
};

}  // namespace

const Workload& uts_workload() {
  static const Uts w;
  return w;
}

}  // namespace chanflow::workloads
