// N-queens as a workload of `chanflow run` and `chanflow bench`.
#include "queens.hpp"

#include "nqueens/nqueens.hpp"

#include "common/across_devices.hpp"

#include <chanflow/cilk_runtime.hpp>

#include <fmt/format.h>

#include <stdexcept>

namespace chanflow::workloads {
namespace {

constexpr std::uint32_t kCpuCapacity = 1u << 16;  // CEs per level on CPU devices
static_assert(kNQueensMax >= kQueensMax, "the reference counts every board this workload takes");

class QueensInstance final : public Instance {
 public:
  QueensInstance(const Runtime& runtime, std::uint32_t n, const RunSettings& settings)
      : runtime_(runtime), n_(n), settings_(settings) {}
  // The compiled program's graphs were kept for this runtime (chanflow-compiled).
  ~QueensInstance() override { cilk::forget(runtime_); }

  Measurement run(std::string_view impl) override {
    Measurement m;
    std::uint64_t value = 0;
    if (impl == "serial") {
      m.ms = time_ms([&] { value = static_cast<std::uint64_t>(queens_solutions(static_cast<int>(n_))); });
      // The elision is the reference for the others; it is checked against the known counts.
      m.correct = value == queens_known(n_);
      if (m.correct) reference_ = value;
    } else {
      if (impl == "tbb-fine" || impl == "tbb-cutoff") {
        m.threads = tbb_threads();
        m.ms = time_ms([&] { value = impl == "tbb-fine" ? queens_tbb_fine(n_) : queens_tbb_cutoff(n_); });
      } else if (impl == "chanflow" && !settings_.devices.empty()) {
        value = across_.measure(m, fmt::format("queens {}", n_), [](auto& copy) { copy.seed(); });
      } else if (impl == "chanflow") {
        m.threads = 0;
        const auto policy = settings_.make_policy();
        QueensResult r;
        m.ms = time_ms([&] {  // the first run builds the graph, later ones reuse it
          if (!cilk_) cilk_ = std::make_unique<QueensCilk>(runtime_, n_, settings_.for_device(runtime_.caps(), footprint()));
          r = cilk_->run(*policy, settings_.run_options(fmt::format("queens {}", n_)));
        });
        value = r.value;
        m.stats = std::move(r.stats);
      } else if (impl == "chanflow-compiled") {
        m.threads = 0;
        const RunSettings cilk = cilk::settings_for(settings_, runtime_.caps(), footprint());
        QueensResult r;
        m.ms = time_ms([&] { r = queens_compiled(runtime_, n_, cilk); });
        value = r.value;
        m.stats = std::move(r.stats);
      } else {
        throw std::invalid_argument(fmt::format("queens has no implementation '{}'", impl));
      }
      m.correct = value == reference();
    }
    m.result = fmt::format("queens({}) = {}", n_, value);
    return m;
  }

 private:
  // A task and a continuation per slot; the rows above the serial ones spawn (one level each).
  StackFootprint footprint() const {
    const std::uint32_t spawning = n_ > kQueensSerialRows ? n_ - kQueensSerialRows : 0;
    return {.bytes_per_slot = sizeof(QueensFrame) + sizeof(QueensCont) + 2 * StackFootprint::kControlBytes,
            .levels = spawning + 2, .cpu_capacity = kCpuCapacity};
  }

  // The others are checked against the bitmask formulation's serial elision (nqueens.c): the same
  // count by another algorithm, and ~10x sooner than this board's at the GPU sizes (queens 16 took
  // minutes of a GPU bench's one-run budget on one core).
  std::uint64_t reference() {
    if (!reference_) reference_ = static_cast<std::uint64_t>(nqueens_solutions(static_cast<int>(n_)));
    return *reference_;
  }

  const Runtime& runtime_;
  std::uint32_t n_;
  RunSettings settings_;
  std::optional<std::uint64_t> reference_;
  std::unique_ptr<QueensCilk> cilk_;
  // The hand-built graph on every device of RunSettings::devices, its tasks moved between them.
  AcrossDevices<QueensCilk> across_{settings_, runtime_.profiling(), {"queens"},
                                  [this](const Runtime& rt, const DeviceCaps& caps, const RunSettings& s) {
                                    return std::make_unique<QueensCilk>(rt, n_, s.for_device(caps, footprint()));
                                  }};
};

class Queens final : public Workload {
 public:
  std::string_view name() const override { return "queens"; }
  std::string_view size_name() const override { return "n"; }
  std::vector<std::string> impls() const override {
    return {"serial", "tbb-fine", "tbb-cutoff", "chanflow", "chanflow-compiled"};
  }
  std::vector<std::uint64_t> sizes(SizeSet set) const override {
    if (set == SizeSet::Default) return {13};
    if (set == SizeSet::Gpu) return {15, 16};
    return {10, 12, 13, 14, 15};
  }
  void check_size(std::uint64_t size, const DeviceCaps&, const RunSettings&) const override {
    if (size == 0 || size > kQueensMax)
      throw std::invalid_argument(fmt::format("queens {}: n must be 1 to {} (queens.c counts in an int; queens(19) "
                                              "overflows it)",
                                              size, kQueensMax));
  }
  std::unique_ptr<Instance> prepare(const Runtime& runtime, std::uint64_t size, std::uint64_t,
                                    const RunSettings& settings) const override {
    return std::make_unique<QueensInstance>(runtime, static_cast<std::uint32_t>(size), settings);
  }
  bool runs_across_devices(std::string_view impl) const override { return impl == "chanflow"; }
};

}  // namespace

const Workload& queens_workload() {
  static const Queens w;
  return w;
}

}  // namespace chanflow::workloads
