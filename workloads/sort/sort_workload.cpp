// Sort as a workload of `chanflow run` and `chanflow bench`.
#include "sort.hpp"

#include "peers/gpu_peers.hpp"
#include "sort/sort_across.hpp"

#include <chanflow/cilk_runtime.hpp>

#include <fmt/format.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace chanflow::workloads {
namespace {

template <class Key>
struct KeyTraits;
template <>
struct KeyTraits<std::uint32_t> {
  static constexpr const char* name = "sort";
  static constexpr std::uint32_t multiplier = 2654435761u;  // odd: a bijection modulo 2^32
};
template <>
struct KeyTraits<std::uint64_t> {
  static constexpr const char* name = "sort-u64";
  static constexpr std::uint64_t multiplier = 0x9e3779b97f4a7c15ull;  // odd: a bijection modulo 2^64
};

template <class Key>
class SortInstance final : public Instance {
 public:
  SortInstance(const Runtime& runtime, std::uint64_t n, std::uint64_t seed, const RunSettings& settings)
      : runtime_(runtime), n_(n), settings_(settings), input_(n), work_(n), tmp_(n),
        data_svm_(runtime, n * sizeof(Key)), tmp_svm_(runtime, n * sizeof(Key)) {
    // A seeded shuffle of n distinct keys spread over the key's range (an odd multiplier is a
    // bijection modulo 2^bits), so the sorted output is exactly the reference, key for key.
    for (std::uint64_t i = 0; i < n; ++i) input_[i] = static_cast<Key>(i * KeyTraits<Key>::multiplier);
    std::shuffle(input_.begin(), input_.end(), std::mt19937_64(seed));
    expected_ = input_;
    std::sort(expected_.begin(), expected_.end());
  }
  // The compiled program's graphs were kept for this runtime, and name this instance's arrays.
  ~SortInstance() override { cilk::forget(runtime_); }

  Measurement run(std::string_view impl) override {
    Measurement m;
    if (impl == "chanflow" && !settings_.devices.empty()) {
      // Across devices: a run sorted per device, cut into parts, exchanged and merged.
      if (!across_) across_ = std::make_unique<SortAcrossDevices<Key>>(settings_, runtime_.profiling(), n_);
      across_->measure(m, input_, work_);
    } else if (impl == "chanflow" || impl == "chanflow-items") {
      m.threads = 0;
      runtime_.svm_write(data_svm_.get(), input_.data(), n_ * sizeof(Key));
      const auto policy = settings_.make_policy();
      SortResult r;
      // chanflow-items: sort.c's granularity on every device (no work-group sorts and merges),
      // the graph chanflowc is to emit for it.
      const DataTasks where = impl == "chanflow" ? DataTasks::ForDevice : DataTasks::InTasks;
      auto& cilk = impl == "chanflow" ? cilk_ : items_;
      m.ms = time_ms([&] {  // the first run builds the graph, later ones reuse it
        if (!cilk)
          cilk = std::make_unique<SortCilk>(runtime_, data_svm_, tmp_svm_, n_, settings_.for_device(runtime_.caps(), footprint()),
                                            SortArgs{kSortBase, kMergeBase}, sizeof(Key), where);
        r = cilk->run(*policy, settings_.run_options(fmt::format("sort {}", n_)));
      });
      runtime_.svm_read(work_.data(), data_svm_.get(), n_ * sizeof(Key));
      m.stats = std::move(r.stats);
    } else if (impl == "chanflow-compiled" && sizeof(Key) == 4) {
      m.threads = 0;
      runtime_.svm_write(data_svm_.get(), input_.data(), n_ * sizeof(Key));
      const RunSettings compiled = cilk::settings_for(settings_, runtime_.caps(), footprint());
      RunStats stats;
      m.ms = time_ms([&] { stats = sort_compiled(runtime_, data_svm_, tmp_svm_, n_, compiled); });
      runtime_.svm_read(work_.data(), data_svm_.get(), n_ * sizeof(Key));
      m.stats = std::move(stats);
    } else {
      work_ = input_;
      Key* d = work_.data();
      Key* t = tmp_.data();
      if (impl == "serial") {
        m.ms = time_ms([&] { sort_serial(d, t, n_); });
      } else if (impl == "compute-sort" && have_boost_compute()) {
        m.threads = 0;
        if (!peer_) peer_ = std::make_unique<ComputeSort<Key>>(runtime_, n_);
        m.ms = peer_->run(d);
      } else if (impl == "std-sort") {
        m.ms = time_ms([&] { std::sort(work_.begin(), work_.end()); });
      } else {
        m.threads = tbb_threads();
        if (impl == "tbb-fine")
          m.ms = time_ms([&] { sort_tbb_fine<Key>(d, t, n_); });
        else if (impl == "tbb-cutoff")
          m.ms = time_ms([&] { sort_tbb_cutoff<Key>(d, t, n_); });
        else if (impl == "tbb-parallel-sort")
          m.ms = time_ms([&] { tbb::parallel_sort(work_.begin(), work_.end()); });
        else
          throw std::invalid_argument(fmt::format("{} has no implementation '{}'", KeyTraits<Key>::name, impl));
      }
    }
    // Sorted, and a permutation of the input: equal to the input sorted by std::sort.
    const auto first_wrong = std::mismatch(work_.begin(), work_.end(), expected_.begin()).first;
    m.correct = first_wrong == work_.end();
    m.result = m.correct ? fmt::format("{}({}): sorted, a permutation of the input", KeyTraits<Key>::name, n_)
                         : fmt::format("{}({}): WRONG from index {}", KeyTraits<Key>::name, n_, first_wrong - work_.begin());
    return m;
  }

 private:
  StackFootprint footprint() const { return sort_footprint(n_); }

  const Runtime& runtime_;
  std::uint64_t n_;
  RunSettings settings_;
  std::vector<Key> input_, expected_, work_, tmp_;
  SvmBuffer data_svm_, tmp_svm_;
  std::unique_ptr<SortCilk> cilk_, items_;  // after the buffers they name: they go first
  std::unique_ptr<ComputeSort<Key>> peer_;
  std::unique_ptr<SortAcrossDevices<Key>> across_;
};

template <class Key>
class Sort final : public Workload {
 public:
  std::string_view name() const override { return KeyTraits<Key>::name; }
  std::string_view size_name() const override { return "keys"; }
  std::vector<std::string> impls() const override {
    std::vector<std::string> impls{"serial",   "tbb-fine", "tbb-cutoff", "chanflow", "chanflow-items",
                                   "std-sort", "tbb-parallel-sort"};
    if (sizeof(Key) == 4) impls.emplace_back("chanflow-compiled");  // sort.c with its default keys
    if (have_boost_compute()) impls.emplace_back("compute-sort");  // Boost.Compute on the same device
    return impls;
  }
  std::vector<std::uint64_t> sizes(SizeSet set) const override {
    if (set == SizeSet::Default) return {1000000};
    if (set == SizeSet::Gpu) return {1u << 24};
    return {1u << 16, 1u << 18, 1u << 20, 1u << 22, 1u << 24};
  }
  void check_size(std::uint64_t size, const DeviceCaps& caps, const RunSettings&) const override {
    const auto name = KeyTraits<Key>::name;
    if (size == 0) throw std::invalid_argument(fmt::format("{} 0: the array must hold at least 1 key", name));
    constexpr std::uint64_t kMaxKeys = std::uint64_t{1} << 31;  // sort.c indexes with long; keys stay distinct
    if (size > kMaxKeys)
      throw std::invalid_argument(fmt::format("{} {}: at most {} keys", name, size, kMaxKeys));
    const std::uint64_t bytes = size * sizeof(Key);
    if (caps.max_alloc_bytes && bytes > caps.max_alloc_bytes)
      throw std::invalid_argument(fmt::format("{} {}: the {:.0f} MiB array exceeds the device's largest allocation "
                                              "({:.0f} MiB)",
                                              name, size, bytes / 1048576.0, caps.max_alloc_bytes / 1048576.0));
    if (caps.global_mem_bytes && 2 * bytes > caps.global_mem_bytes / 2)
      throw std::invalid_argument(fmt::format("{} {}: the array and its scratch ({:.0f} MiB) need more than half "
                                              "the device's memory ({:.0f} MiB)",
                                              name, size, 2 * bytes / 1048576.0, caps.global_mem_bytes / 1048576.0));
  }
  std::unique_ptr<Instance> prepare(const Runtime& runtime, std::uint64_t size, std::uint64_t seed,
                                    const RunSettings& settings) const override {
    return std::make_unique<SortInstance<Key>>(runtime, size, seed, settings);
  }
  bool runs_across_devices(std::string_view impl) const override { return impl == "chanflow"; }
};

}  // namespace

const Workload& sort_workload() {
  static const Sort<std::uint32_t> w;
  return w;
}

const Workload& sort_u64_workload() {
  static const Sort<std::uint64_t> w;
  return w;
}

}  // namespace chanflow::workloads
