// What every workload (Fib, Queens, Sort, Strassen) offers `chanflow run` and `chanflow bench`:
// its sizes and their limits, its competing implementations, and one size's fresh inputs with
// the reference every implementation is checked against before its time counts.
#pragma once

#include "chanflow/chanflow.hpp"
#include "chanflow/cilk_runtime.hpp"
#include "common/bench_common.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chanflow::workloads {

/// How a Cilk-style graph runs: per-level capacity of its channel stacks, work-group size and
/// dispatch mode (the flags of `chanflow run`).
struct CilkOptions {
  std::uint32_t capacity_per_level = 1u << 16;  ///< CEs per stack level (task and continuation stacks)
  std::uint32_t wg_size = 64;
  /// Create every level the run can reach before it starts, so a timed run does not pay for
  /// allocating levels; otherwise levels grow on demand.
  bool preallocate_levels = false;
  Sweeps device_sweeps = Sweeps::Auto;  ///< GraphOptions::device_sweeps
  std::uint32_t sweep_groups = 0;       ///< GraphOptions::sweep_groups
  bool sweep_room_check = true;         ///< GraphOptions::sweep_room_check

  /// The options of a graph built with these.
  GraphOptions graph_options() const {
    return {.wg_size = wg_size, .device_sweeps = device_sweeps, .sweep_groups = sweep_groups,
            .sweep_room_check = sweep_room_check};
  }
};

/// What a workload's channel stacks take per level, for sizing them to the device: the bytes of
/// one slot over every stack (each stack's CE and its two control entries), how many levels a run
/// reaches, and the capacity per level measured best on CPU devices.
struct StackFootprint {
  /// A slot's control entries (a channel keeps two 8-byte entries per data slot).
  static constexpr std::uint64_t kControlBytes = 16;
  std::uint64_t bytes_per_slot = 0;
  std::uint32_t levels = 1;
  std::uint32_t cpu_capacity = 1u << 12;
  /// The largest work-group the device's default may give (a workload with few, large tasks
  /// wants more work-groups rather than wider ones); 0: no limit.
  std::uint32_t max_wg = 0;
  /// Most tasks a level can hold at once, if the workload knows (fib(n): its call tree's widest
  /// level); the device's capacity is not made larger than that. 0: unknown.
  std::uint64_t max_width = 0;
};

/// What `chanflow run` and `chanflow bench` pass to a workload's chanflow implementations.
struct ChanflowSettings {
  std::string policy = "levelized";  ///< "levelized" or "greedy"
  std::uint32_t capacity = 0;        ///< CEs per channel or stack level; 0: sized to the device
  /// Its capacity_per_level is replaced by the one above (or the device's); a wg_size of 0 is the
  /// device's (device_sizing()).
  CilkOptions cilk{.wg_size = 0};
  std::string trace_path;            ///< a Chrome trace of the chanflow run, if set

  /// The work-group size asked for, or the device's.
  std::uint32_t wg_size(const DeviceCaps& caps) const {
    return cilk.wg_size ? cilk.wg_size : device_sizing(caps).wg_size;
  }


  /// `cilk` with the capacity asked for, or one sized to the device for `footprint`
  /// (stack_capacity()), and the work-group size asked for, or the device's.
  CilkOptions cilk_for(const DeviceCaps& caps, const StackFootprint& footprint) const {
    CilkOptions o = cilk;
    o.capacity_per_level =
        capacity ? capacity : stack_capacity(caps, footprint.bytes_per_slot, footprint.levels, footprint.cpu_capacity);
    if (!capacity && footprint.max_width)  // no larger than the widest level, in whole powers of two
      while (o.capacity_per_level / 2 >= footprint.max_width && o.capacity_per_level / 2 >= footprint.cpu_capacity)
        o.capacity_per_level /= 2;
    o.wg_size = cilk.wg_size ? cilk.wg_size
                : footprint.max_wg ? std::min(footprint.max_wg, wg_size(caps))
                                   : wg_size(caps);
    return o;
  }

  /// The same for a program chanflowc compiled (impl chanflow-compiled): the hand-built graph's
  /// capacity and work-group size for the same footprint, so that the two compare.
  cilk::Settings compiled_settings(const DeviceCaps& caps, const StackFootprint& footprint) const {
    const CilkOptions o = cilk_for(caps, footprint);
    return {.capacity = o.capacity_per_level, .wg_size = o.wg_size, .policy = policy, .sweeps = cilk.device_sweeps,
            .trace_path = trace_path};
  }
};

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
  std::optional<RunStats> stats;  ///< chanflow implementations only
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
  /// Throws std::invalid_argument naming the limit when `size` cannot run (its result would
  /// overflow, it would run more than kMaxTasks tasks, or its data or channels would not fit
  /// the device): checked before anything runs.
  virtual void check_size(std::uint64_t size, const DeviceCaps& caps, const ChanflowSettings& settings) const = 0;
  virtual std::unique_ptr<Instance> prepare(const Runtime& runtime, std::uint64_t size, std::uint64_t seed,
                                            const ChanflowSettings& settings) const = 0;
};

/// Every workload, in the order the benchmark reports them.
const std::vector<const Workload*>& all_workloads();
/// The workload called `name`; std::invalid_argument listing the names otherwise.
const Workload& find_workload(std::string_view name);

/// The policy `name` ("levelized" or "greedy"), owned by the caller.
std::unique_ptr<SchedulingPolicy> make_policy(std::string_view name);

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
