// Fibonacci as a workload of `chanflow run` and `chanflow bench`.
#include "fib.hpp"

#include "common/across_devices.hpp"

#include <chanflow/cilk_runtime.hpp>

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <tuple>

namespace chanflow::workloads {
namespace {

// The naive graph counts its result in a 32-bit word on the device.
constexpr std::uint32_t kNaiveMaxN = 47;
constexpr std::uint32_t kNaiveCapacity = 1u << 22;
// Per level: 64 work-groups' requests. Larger levels cost more to allocate than they save in
// passes at the default sizes (fib 24 here: 2,048 29.6 ms, 8,192 25.8, 32,768 35.9, 65,536 57.3).
constexpr std::uint32_t kCilkCapacity = 1u << 13;

class FibInstance final : public Instance {
 public:
  FibInstance(const Runtime& runtime, std::uint32_t n, const RunSettings& settings)
      : runtime_(runtime), n_(n), settings_(settings), expected_(fib_serial(n)) {}
  // The compiled program's graphs were kept for this runtime (chanflow-compiled).
  ~FibInstance() override { cilk::forget(runtime_); }

  Measurement run(std::string_view impl) override {
    Measurement m;
    std::uint64_t value = 0;
    if (impl == "serial") {
      m.ms = time_ms([&] { value = static_cast<std::uint64_t>(fib(static_cast<long>(n_))); });
    } else if (impl == "tbb-fine" || impl == "tbb-cutoff") {
      m.threads = tbb_threads();
      m.ms = time_ms([&] { value = impl == "tbb-fine" ? fib_tbb_fine(n_) : fib_tbb_cutoff(n_); });
    } else if (impl == "chanflow-compiled" && !settings_.devices.empty()) {
      value = compiled_across_.measure(m, [&] { return fib_compiled_call(n_); });
    } else if (impl == "chanflow-compiled") {
      m.threads = 0;
      const RunSettings cilk = cilk::settings_for(settings_, runtime_.caps(), footprint());
      FibResult r;
      m.ms = time_ms([&] { r = fib_compiled(runtime_, n_, cilk); });
      value = r.value;
      m.stats = std::move(r.stats);
    } else if (impl == "chanflow" || impl == "chanflow-naive") {
      m.threads = 0;
      const auto policy = settings_.make_policy();
      const RunOptions options = settings_.run_options(fmt::format("fib {}", n_));
      FibResult r;
      if (impl == "chanflow" && !settings_.devices.empty()) {
        r.value = across_.measure(m, fmt::format("fib {}", n_), [&](FibCilk& copy) { copy.seed(n_); });
        r.stats = *m.stats;
      } else if (impl == "chanflow") {
        // The graph is built by the first run and reused by the next (as a user keeps it).
        m.ms = time_ms([&] {
          if (!cilk_) cilk_ = std::make_unique<FibCilk>(runtime_, settings_.for_device(runtime_.caps(), footprint()));
          r = cilk_->run(n_, *policy, options);
        });
      } else {
        if (n_ > kNaiveMaxN)
          throw std::invalid_argument(fmt::format("fib {}: chanflow-naive counts in 32 bits (n may be at most {})",
                                                  n_, kNaiveMaxN));
        const std::uint32_t capacity = settings_.capacity ? settings_.capacity : kNaiveCapacity;
        m.ms = time_ms([&] { r = fib_naive(runtime_, n_, *policy, options, capacity, settings_.for_device(runtime_.caps()).wg_size); });
      }
      value = r.value;
      m.stats = std::move(r.stats);
    } else {
      throw std::invalid_argument(fmt::format("fib has no implementation '{}'", impl));
    }
    m.correct = value == expected_;
    m.result = fmt::format("fib({}) = {}", n_, value);
    return m;
  }

 private:
  // A task and a continuation per slot; fib(n) reaches level n - 1, and sweeps make a few more.
  StackFootprint footprint() const {
    return {.bytes_per_slot = sizeof(FibFrame) + sizeof(FibCont) + 2 * StackFootprint::kControlBytes,
            .levels = n_ + 2, .cpu_capacity = kCilkCapacity,
            // Level d of fib(n)'s call tree holds at most 2^d calls and, all told, fib(n + 1) leaves.
            .max_width = fib_serial(n_ + 1)};
  }

  const Runtime& runtime_;
  std::uint32_t n_;
  RunSettings settings_;
  std::uint64_t expected_;
  std::unique_ptr<FibCilk> cilk_;
  // The hand-built graph on every device of RunSettings::devices, its tasks moved between them.
  AcrossDevices<FibCilk> across_{settings_, runtime_.profiling(), {"fib"},
                                 [this](const Runtime& rt, const DeviceCaps& caps, const RunSettings& s) {
                                   return std::make_unique<FibCilk>(rt, s.for_device(caps, footprint()));
                                 }};
  // fib.c compiled, on the same devices.
  CompiledAcrossDevices compiled_across_{settings_, runtime_.profiling(), footprint()};
};

class Fib final : public Workload {
 public:
  std::string_view name() const override { return "fib"; }
  std::string_view size_name() const override { return "n"; }
  std::vector<std::string> impls() const override {
    return {"serial", "tbb-fine", "tbb-cutoff", "chanflow", "chanflow-naive", "chanflow-compiled"};
  }
  std::vector<std::uint64_t> sizes(SizeSet set) const override {
    if (set == SizeSet::Default) return {24};
    if (set == SizeSet::Gpu) return {30};
    return {20, 24, 28, 32};
  }
  // Fib's GPU target is against oneTBB without a cut-off (tbb-fine: a task per call, like the
  // graphs), which takes milliseconds at fib(30).
  std::vector<std::string> gpu_impls() const override {
    return {"tbb-fine", "tbb-cutoff", "chanflow", "chanflow-compiled"};
  }

  // fib(n) must fit fib.c's 64-bit long, and the run must not exceed kMaxTasks: fib(n) makes
  // 2·fib(n) − 1 calls and fib(n) − 1 continuations.
  void check_size(std::uint64_t size, const DeviceCaps&, const RunSettings&) const override {
    if (size == 0) throw std::invalid_argument("fib 0: n must be at least 1");
    const double limit = std::ldexp(1.0, 63);  // fib.c's long
    double f = 0, next = 1;  // fib(i), fib(i + 1)
    std::uint64_t i = 0;
    for (; i < size && next < limit; ++i) std::tie(f, next) = std::pair(next, f + next);
    if (i < size || f >= limit)
      throw std::invalid_argument(
          fmt::format("fib {}: fib({}) does not fit a 64-bit long (n may be at most {})", size, size, i));
    const double tasks = 3 * f - 2;
    if (tasks > kMaxTasks)
      throw std::invalid_argument(
          fmt::format("fib {} would run {:.3g} tasks (3·fib(n) − 2), more than the {:.3g} a run may take", size,
                      tasks, kMaxTasks));
  }

  std::unique_ptr<Instance> prepare(const Runtime& runtime, std::uint64_t size, std::uint64_t,
                                    const RunSettings& settings) const override {
    return std::make_unique<FibInstance>(runtime, static_cast<std::uint32_t>(size), settings);
  }
  bool runs_across_devices(std::string_view impl) const override {
    return impl == "chanflow" || impl == "chanflow-compiled";
  }
};

}  // namespace

const Workload& fib_workload() {
  static const Fib w;
  return w;
}

}  // namespace chanflow::workloads
