// What every workload (Fib, Queens, Sort, Strassen) offers `chanflow run` and `chanflow bench`:
// its sizes and their limits, its competing implementations, and one size's fresh inputs with
// the reference every implementation is checked against before its time counts.
#pragma once

#include "chanflow/chanflow.hpp"
#include "chanflow/cilk_runtime.hpp"
#include "chanflow/work_router.hpp"
#include "common/bench_common.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chanflow::workloads {

/// Where a workload's data loops run: in work-group tasks (CHANFLOW_GROUP_KERNEL_NODE, a GPU's
/// way), or in the per-work-item tasks that need them (a CPU device's, whose work-group is one
/// core's loop, vectorized across its work-items); by default as suits the device.
enum class DataTasks { ForDevice, WorkGroup, InTasks };
inline bool work_group_data(DataTasks where, const DeviceCaps& caps) {
  return where == DataTasks::ForDevice ? (caps.type & CL_DEVICE_TYPE_CPU) == 0 : where == DataTasks::WorkGroup;
}

/// One timed run of one implementation, checked.
struct Measurement {
  double ms = 0;
  bool correct = false;
  std::string result;             ///< what it computed, for a person: "fib(24) = 46368"
  std::optional<RunStats> stats;  ///< chanflow implementations only (across devices: the first device's; a compiled program's, every device's summed)
  std::optional<DeviceRunStats> across;  ///< a run across devices (RunSettings::devices): every device's
  unsigned threads = 1;           ///< host threads it used (0: the OpenCL device's)
};

/// One size of a workload with fresh inputs (drawn from the seed) and their reference.
class Instance {
 public:
  virtual ~Instance() = default;
  /// Runs implementation `impl` once on this instance's inputs (restored first where the run
  /// changes them), times it and checks its result.
  virtual Measurement run(std::string_view impl) = 0;
};

/// Default: thesis Table 4-3's sizes. Scaling: larger ones too, to see how cost grows. Gpu: sizes
/// that fill a GPU (fib 30, queens 15 and 16, sort 2^24, strassen 2048 and 4096).
enum class SizeSet { Default, Scaling, Gpu };

/// Work a size may ask for before `chanflow run` refuses it: 2^32 tasks is about an hour of
/// fine-grain tasks on PoCL (fib 60 would need 3e12).
inline constexpr double kMaxTasks = 4294967296.0;

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view size_name() const = 0;  ///< what a size means: "n", "keys", ...
  /// In table order: "serial", "tbb-fine", "tbb-cutoff", "chanflow", then any others.
  virtual std::vector<std::string> impls() const = 0;
  virtual std::vector<std::uint64_t> sizes(SizeSet set) const = 0;
  /// What `chanflow bench --sizes gpu` runs unless --impls says: chanflow's graphs (hand-built,
  /// with join continuations where it has them, and compiled from its Cilk source) against oneTBB
  /// with a cut-off on the host's cores and the GPU libraries that do the same job. Serial and
  /// tbb-fine take minutes at those sizes.
  virtual std::vector<std::string> gpu_impls() const {
    static const std::vector<std::string> kGpu{"tbb-cutoff", "chanflow", "chanflow-join", "chanflow-compiled",
                                              "clblast-gemm", "compute-sort"};
    std::vector<std::string> out;
    for (const auto& impl : impls())
      if (std::find(kGpu.begin(), kGpu.end(), impl) != kGpu.end()) out.push_back(impl);
    return out;
  }
  /// Throws std::invalid_argument naming the limit when `size` cannot run (its result would
  /// overflow, it would run more than kMaxTasks tasks, or its data or channels would not fit
  /// the device): checked before anything runs.
  virtual void check_size(std::uint64_t size, const DeviceCaps& caps, const RunSettings& settings) const = 0;
  virtual std::unique_ptr<Instance> prepare(const Runtime& runtime, std::uint64_t size, std::uint64_t seed,
                                            const RunSettings& settings) const = 0;
  /// Whether `impl` runs across the devices RunSettings::devices names (its tasks can move).
  virtual bool runs_across_devices(std::string_view impl) const {
    (void)impl;
    return false;
  }
};

/// Every workload, in the order the benchmark reports them.
const std::vector<const Workload*>& all_workloads();
/// The workload called `name`; std::invalid_argument listing the names otherwise.
const Workload& find_workload(std::string_view name);

/// Runs `f` and returns its wall time in milliseconds.
template <class F>
double time_ms(F&& f) {
  const auto start = bench::Clock::now();
  f();
  return bench::ms_since(start);
}

/// Host threads oneTBB runs on by default.
unsigned tbb_threads();

}  // namespace chanflow::workloads
