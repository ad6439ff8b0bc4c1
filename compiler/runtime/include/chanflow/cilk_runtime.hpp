// What the graph code chanflowc generates (<name>.graph.cpp) builds on: a ProgramGraph to declare
// the stacks and kernel nodes of a compiled Cilk program, and call(), which runs one call of a
// Cilk function from host code on the OpenCL device and returns its result's bits.
//
// One process-wide device (CHANFLOW_DEVICE, else PoCL), chosen at the first call or allocation,
// or a set of them (CHANFLOW_DEVICES: all, 0,1, 0-3, nvidia; multidevice/), the first holding
// what main allocates, with the tasks that carry no address moving to devices that run dry.
// How calls run is a RunSettings (chanflow/run_settings.hpp) read from the environment that
// `chanflow run FILE.c` sets from its flags (RunSettings::from_environment): CHANFLOW_CAPACITY
// (CEs per stack level, default 4096), CHANFLOW_WG (work-group size; default the device's: 64 on
// CPUs, 256 on GPUs, at most 64 for a program with cilk_for leaves), CHANFLOW_POLICY (levelized | greedy), CHANFLOW_DISPATCH (auto | claimed |
// planned | host), CHANFLOW_SWEEP_GROUPS, CHANFLOW_MAX_CHANNELS (channel-table slots, 1024: every
// level of every Cilk function's stacks takes one, so it bounds the recursion depth),
// CHANFLOW_HEAP (the device heap of a program whose device code allocates: bytes, or 512M, 2G;
// 256M by default), CHANFLOW_TRACE=file.json (a Chrome trace of the last call),
// CHANFLOW_SERIAL_CUTOFF (granularity control: a depth, auto, off, or program: the depth chanflowc
// was given, else auto, where the runtime picks it per function, run by run). Besides: CHANFLOW_STATS=1
// (statistics on standard error at exit), CHANFLOW_QUIET=1 (no progress line: a call past
// CHANFLOW_PROGRESS_AFTER_MS, 2000, shows one on a terminal's standard error). A run that fails
// prints why and exits with status 1.
#pragma once

#include "chanflow/chanflow.hpp"

#include <cstdint>
#include <algorithm>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace chanflow {
class DeviceSet;
struct DeviceRunStats;
}  // namespace chanflow

namespace chanflow::cilk {

/// CEs per level of a compiled program's stack of `ce_bytes` CEs whose capacity was left to the
/// device (no CHANFLOW_CAPACITY): on a GPU the largest power of two from `floor` (the CPU's 4,096,
/// or a work-group's request) that keeps every slot of the channel table (`max_channels`: each
/// level of each stack takes one) within the device's channel budget, up to what stack_capacity
/// allows (4x the resident work-items); `floor` on a CPU. A compiled program has no footprint to
/// say how deep or wide it goes, and 4,096 a level held a GPU to a fraction of its width (compiled
/// fib 40 on an H100: 162 ms, 21 with this; docs/granularity.md). Levels are made when first
/// reached, so a shallow run takes less.
std::uint32_t device_stack_capacity(const DeviceCaps& caps, std::size_t ce_bytes, std::uint32_t max_channels,
                                    std::uint32_t floor);

class ProgramGraph {
 public:
  /// `capacity_fixed`: the capacity was asked for (not left to the device), and stays as it is.
  ProgramGraph(Graph& graph, std::uint32_t capacity, bool capacity_fixed = true)
      : graph_(graph), capacity_(capacity), capacity_fixed_(capacity_fixed) {}

  /// The most children one work-item spawns into a stack: where the capacity was left to the
  /// device, every level is made to hold a work-group's worth (a GPU's work-groups of 256 spawning
  /// a batch of 32 each need 8,192 CEs, more than the default 4,096). Before the stacks are made.
  void spawns_per_item(std::uint32_t n) {
    request_ = n * graph_.options().wg_size;
    if (!capacity_fixed_) capacity_ = std::max(capacity_, request_);
  }

  void add_source(const char* source) { graph_.add_source(source); }
  ChannelStackNode& task_stack(const char* name, std::size_t ce_bytes);
  ChannelStackNode& continuation_stack(const char* name, std::size_t ce_bytes);
  /// A kernel node running the OpenCL kernel of the same name.
  KernelNode& kernel(const char* name, std::size_t input_ce_bytes);

  /// The program's device code allocates (malloc, alloca): its graphs get the process's device
  /// heap (RunSettings::heap_bytes, CHANFLOW_HEAP), made at the first such call, and the host maps
  /// it between calls (a block the device allocated may reach host code).
  void uses_heap() { heap_ = true; }
  /// Its device code allocates only the chunks its explicit stacks spill (helpers that call
  /// themselves, serial forms): the heap is the device's alone, never mapped for the host.
  void spills_to_heap() { spill_heap_ = true; }
  /// The SVM cells of the globals device code shares with the host (chanflowc's `<name>__globals`):
  /// every kernel node's argument block holds their addresses, in this order.
  void shares_globals(void* const* cells, std::size_t n) { globals_.assign(cells, cells + n); }
  const std::vector<void*>& shared_globals() const { return globals_; }
  bool wants_heap() const { return heap_ || spill_heap_; }
  bool heap_for_host() const { return heap_; }

  /// Granularity control: these Cilk functions have serial forms, which their tasks run from a
  /// serial depth on (RunOptions::serial_depth): `depth` where the program was compiled with one
  /// (chanflowc --serial-cutoff=N) and the settings leave it to the program, else the runtime's
  /// choice (SerialDepthChooser), or what the settings say (CHANFLOW_SERIAL_CUTOFF).
  void serial_forms(std::vector<std::string> functions, std::optional<std::uint32_t> depth = std::nullopt) {
    serial_functions_ = std::move(functions);
    compiled_depth_ = depth;
  }
  const std::vector<std::string>& serial_functions() const { return serial_functions_; }
  /// These Cilk functions' tasks run their serial forms where their own condition holds
  /// (`#pragma chanflow serial_below`), at any depth, unless the run turns granularity control off.
  void serial_conditions(std::vector<std::string> functions) { serial_conditions_ = std::move(functions); }
  const std::vector<std::string>& serial_conditions() const { return serial_conditions_; }
  std::optional<std::uint32_t> compiled_serial_depth() const { return compiled_depth_; }

  /// Across devices (CHANFLOW_DEVICES): these Cilk functions' tasks carry no address, so they may
  /// run on any device of the run; the others stay on the device that spawned them, each for the
  /// reason chanflowc gives (said by CHANFLOW_STATS).
  void movable(std::vector<std::string> functions) { movable_ = std::move(functions); }
  void stays(const char* function, const char* why) { stays_.emplace_back(function, why); }
  const std::vector<std::string>& movable() const { return movable_; }
  const std::vector<std::pair<std::string, std::string>>& staying() const { return stays_; }

  /// Once the graph is built: on a GPU, its stacks' deeper levels as wide as the recursion can
  /// make them (program_graph.cpp).
  void size_levels();

  Graph& graph() { return graph_; }
  const std::deque<KernelNode*>& kernels() const { return kernels_; }
  const std::deque<ChannelStackNode*>& stacks() const { return stacks_; }

 private:
  std::uint32_t max_reservation() const;
  std::uint32_t stack_capacity_for(std::size_t ce_bytes) const;
  Graph& graph_;
  std::uint32_t capacity_;
  std::uint32_t request_ = 0;  // a work-group's largest request: one talloc reserves up to it
  bool capacity_fixed_;
  bool heap_ = false, spill_heap_ = false;
  std::vector<void*> globals_;
  std::vector<std::string> serial_functions_, serial_conditions_, movable_;
  std::vector<std::pair<std::string, std::string>> stays_;
  std::optional<std::uint32_t> compiled_depth_;
  std::deque<KernelNode*> kernels_;
  std::deque<ChannelStackNode*> stacks_;
};

using BuildFunction = void (*)(ProgramGraph&);

/// For a program that embeds compiled Cilk functions in its own C++ (chanflow bench): the calls
/// that follow run on `runtime` with `settings` (what they leave to the device filled in), instead of the process's own device and the
/// environment. Each function's graph is built by its first call and run again by later ones
/// (until use() is called with another runtime or other settings), so the runtime must outlive
/// them: call forget() before destroying it.
/// `capacity` says what settings.capacity is: exactly what each level holds (a graph one
/// work-group's request does not fit is refused: tests ask for tiny capacities), or at least that
/// (an embedding program sized it for its own graphs; a compiled level is made as large as one
/// work-group's request where that is more, as for a capacity left to the device).
enum class Capacity { Exactly, AtLeast };
/// The settings an embedding program passes to use(): the capacity its own `footprint` gives on
/// this device, and the work-group size only if `asked` has one (else each compiled program's:
/// the device's, and at most CHANFLOW_LOOP_WG_GPU items where it has cilk_for leaves, whose
/// work-items share a loop's iterations).
RunSettings settings_for(const RunSettings& asked, const DeviceCaps& caps, const StackFootprint& footprint);
void use(const Runtime& runtime, const RunSettings& settings, Capacity capacity = Capacity::Exactly);
/// The same across `devices` (multidevice/'s DeviceSet, device_set.hpp): each call runs a copy of
/// its graph on each, in rounds, the root and what uses() names on the first; tasks of the
/// functions chanflowc found movable (ProgramGraph::movable) move to devices that run dry.
void use(const DeviceSet& devices, const RunSettings& settings, Capacity capacity = Capacity::Exactly);
/// For such a program: the calls that follow may reach `buffer`, SVM of its own (an array to sort)
/// that their arguments point into (a device without fine-grain SVM must be told), until forget().
void uses(const SvmBuffer& buffer);
/// Drops the graphs kept for calls on `runtime` and stops using it (nothing if use() named
/// another).
void forget(const Runtime& runtime);

/// The statistics of the last call (across devices, every device's summed: DeviceRunStats::total).
RunStats last_stats();
/// Across devices, each device's part of the last call (work_router.hpp); none on one device.
DeviceRunStats last_across();

/// What chanflowc knows of a program's device code that a run needs.
struct ProgramTraits {
  bool loop_leaves = false;  ///< it has cilk_for leaves (work-group tasks): its work-groups are narrower
  bool prints = false;       ///< it calls printf: what host code printed is flushed before a run
};

/// Runs `root_stack`'s function on `task` (a task CE, its chanflow_task header zero) and returns
/// the 64 bits of its result.
std::uint64_t call(BuildFunction build, const char* root_stack, const void* task, std::size_t task_bytes,
                   ProgramTraits traits = {});

}  // namespace chanflow::cilk
