// Bitmask N-queens as a workload of `chanflow run` and `chanflow bench` (`nqueens`), with its
// oneTBB versions.
#include "nqueens.hpp"

#include "queens/queens.hpp"  // queens_known: the counts are the board's, whatever its encoding

#include "common/across_devices.hpp"

#include <chanflow/cilk_runtime.hpp>

#include <fmt/format.h>
#include <tbb/task_group.h>

#include <array>
#include <stdexcept>

namespace chanflow::workloads {
namespace {

// One task per open column down to `task_rows`; below them nqueens.c's serial completion.
std::uint64_t nqueens_tasks(std::uint32_t n, std::uint32_t row, unsigned cols, unsigned left, unsigned right,
                            std::uint32_t task_rows) {
  if (row == n) return 1;
  if (row >= task_rows)
    return static_cast<std::uint64_t>(nqueens_complete(static_cast<int>(n), static_cast<int>(row), cols, left, right));
  std::array<std::uint64_t, kNQueensMax> count{};
  const unsigned open = nqueens_open(static_cast<int>(n), cols, left, right);
  tbb::task_group g;
  for (std::uint32_t col = 0; col < n; ++col) {
    const unsigned bit = 1u << col;
    if (open & bit) g.run([&, col, bit] { count[col] = nqueens_tasks(n, row + 1, cols | bit, (left | bit) << 1, (right | bit) >> 1, task_rows); });
  }
  g.wait();
  std::uint64_t total = 0;
  for (std::uint32_t col = 0; col < n; ++col) total += count[col];
  return total;
}

constexpr std::uint32_t kCpuCapacity = 1u << 16;  // CEs per level on CPU devices

class NQueensInstance final : public Instance {
 public:
  NQueensInstance(const Runtime& runtime, std::uint32_t n, const RunSettings& settings)
      : runtime_(runtime), n_(n), settings_(settings) {}
  ~NQueensInstance() override { cilk::forget(runtime_); }

  Measurement run(std::string_view impl) override {
    Measurement m;
    std::uint64_t value = 0;
    if (impl == "serial") {
      m.ms = time_ms([&] { value = static_cast<std::uint64_t>(nqueens_solutions(static_cast<int>(n_))); });
      m.correct = value == queens_known(n_);  // the elision is checked against the known counts
      if (m.correct) reference_ = value;
    } else {
      if (impl == "tbb-fine" || impl == "tbb-cutoff") {
        m.threads = tbb_threads();
        m.ms = time_ms([&] { value = impl == "tbb-fine" ? nqueens_tbb_fine(n_) : nqueens_tbb_cutoff(n_); });
      } else if (impl == "chanflow" && !settings_.devices.empty()) {
        value = across_.measure(m, fmt::format("nqueens {}", n_), [](auto& copy) { copy.seed(); });
      } else if (impl == "chanflow") {
        m.threads = 0;
        const auto policy = settings_.make_policy();
        NQueensResult r;
        m.ms = time_ms([&] {  // the first run builds the graph, later ones reuse it
          if (!cilk_) cilk_ = std::make_unique<NQueensCilk>(runtime_, n_, settings_.for_device(runtime_.caps(), footprint()));
          r = cilk_->run(*policy, settings_.run_options(fmt::format("nqueens {}", n_)));
        });
        value = r.value;
        m.stats = std::move(r.stats);
      } else if (impl == "chanflow-compiled") {
        m.threads = 0;
        const RunSettings cilk = cilk::settings_for(settings_, runtime_.caps(), footprint());
        NQueensResult r;
        m.ms = time_ms([&] { r = nqueens_compiled(runtime_, n_, cilk); });
        value = r.value;
        m.stats = std::move(r.stats);
      } else {
        throw std::invalid_argument(fmt::format("nqueens has no implementation '{}'", impl));
      }
      m.correct = value == reference();
    }
    m.result = fmt::format("nqueens({}) = {}", n_, value);
    return m;
  }

 private:
  // A task and a continuation per slot; the rows that spawn take a level each.
  StackFootprint footprint() const {
    return {.bytes_per_slot = sizeof(NQueensFrame) + sizeof(NQueensCont) + 2 * StackFootprint::kControlBytes,
            .levels = std::min(n_, kNQueensSpawnRows) + 2, .cpu_capacity = kCpuCapacity};
  }

  // The serial elision, checked against the known counts.
  std::uint64_t reference() {
    if (!reference_) {
      const auto value = static_cast<std::uint64_t>(nqueens_solutions(static_cast<int>(n_)));
      if (value != queens_known(n_))
        throw std::logic_error(fmt::format("nqueens.c's elision counts {} for n = {}, not {}", value, n_, queens_known(n_)));
      reference_ = value;
    }
    return *reference_;
  }

  const Runtime& runtime_;
  std::uint32_t n_;
  RunSettings settings_;
  std::optional<std::uint64_t> reference_;
  std::unique_ptr<NQueensCilk> cilk_;
  // The hand-built graph on every device of RunSettings::devices, its tasks moved between them.
  AcrossDevices<NQueensCilk> across_{settings_, runtime_.profiling(), {"nqueens"},
                                  [this](const Runtime& rt, const DeviceCaps& caps, const RunSettings& s) {
                                    return std::make_unique<NQueensCilk>(rt, n_, s.for_device(caps, footprint()));
                                  }};
};

class NQueens final : public Workload {
 public:
  std::string_view name() const override { return "nqueens"; }
  std::string_view size_name() const override { return "n"; }
  std::vector<std::string> impls() const override {
    return {"serial", "tbb-fine", "tbb-cutoff", "chanflow", "chanflow-compiled"};
  }
  std::vector<std::uint64_t> sizes(SizeSet set) const override {
    if (set == SizeSet::Default) return {13};
    if (set == SizeSet::Gpu) return {16};  // GTaP's size
    return {10, 12, 13, 14, 15};
  }
  void check_size(std::uint64_t size, const DeviceCaps&, const RunSettings&) const override {
    if (size == 0 || size > kNQueensMax)
      throw std::invalid_argument(fmt::format("nqueens {}: n must be 1 to {} (nqueens.c counts in an int)", size, kNQueensMax));
  }
  std::unique_ptr<Instance> prepare(const Runtime& runtime, std::uint64_t size, std::uint64_t,
                                    const RunSettings& settings) const override {
    return std::make_unique<NQueensInstance>(runtime, static_cast<std::uint32_t>(size), settings);
  }
  bool runs_across_devices(std::string_view impl) const override { return impl == "chanflow"; }
};

}  // namespace

std::uint64_t nqueens_tbb_fine(std::uint32_t n) { return nqueens_tasks(n, 0, 0, 0, 0, kNQueensSpawnRows); }

std::uint64_t nqueens_tbb_cutoff(std::uint32_t n) { return nqueens_tasks(n, 0, 0, 0, 0, kNQueensTbbTaskRows); }

const Workload& nqueens_workload() {
  static const NQueens w;
  return w;
}

}  // namespace chanflow::workloads
