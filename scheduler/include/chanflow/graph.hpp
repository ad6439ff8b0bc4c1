// The channel-flow graph API (thesis 4.2.2, Figures 4-4, 4-5, 4-9): channel nodes, channel-stack
// nodes and kernel nodes bound to a Graph, explicit edges, a run to quiescence.
#pragma once

#include "chanflow/channel.hpp"
#include "chanflow/kernel_node.hpp"
#include "chanflow/node_layout.h"
#include "chanflow/opencl.hpp"
#include "chanflow/policy.hpp"
#include "chanflow/run_stats.hpp"

#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace chanflow {

class Aggregator;
class Graph;
class DeviceHeap;
class KernelNode;

/// A malformed graph, rejected before it runs; the message names the nodes.
class GraphError : public std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// The run could not finish: a device-side error, or no dispatch can ever be made while work
/// remains ("no progress"). The message lists the channels and why they are stuck.
class RunError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An assertion of device code failed: what() is C's words for it (Graph::name_assertions).
class AssertionError : public RunError {
  using RunError::RunError;
};

/// Device code called exit(status) or abort(): a compiled program's process ends as C's would.
class ExitRequest : public RunError {
 public:
  ExitRequest(int status, bool aborts)
      : RunError(aborts ? "device code called abort()" : "device code called exit(" + std::to_string(status) + ")"),
        status_(status), aborts_(aborts) {}
  int status() const noexcept { return status_; }
  bool aborts() const noexcept { return aborts_; }

 private:
  int status_;
  bool aborts_;
};

/// A channel stack could not grow another level: every slot of the graph's channel table is
/// taken (each level of each stack takes one; GraphOptions::max_channels). Usually a recursion
/// that misses its base case; stack() and level() say where it was.
class StackDepthError : public RunError {
 public:
  StackDepthError(const std::string& message, std::string stack, std::uint32_t level)
      : RunError(message), stack_(std::move(stack)), level_(level) {}
  const std::string& stack() const noexcept { return stack_; }
  std::uint32_t level() const noexcept { return level_; }

 private:
  std::string stack_;
  std::uint32_t level_;
};

/// A bounded channel of fixed-size CEs, consumed by exactly one kernel node.
class ChannelNode {
 public:
  const std::string& name() const noexcept { return name_; }
  std::uint32_t ce_bytes() const noexcept { return channel_.config().ce_bytes; }
  std::uint32_t capacity() const noexcept { return channel_.config().capacity; }
  KernelNode* consumer() const noexcept { return consumer_; }
  Channel& channel() noexcept { return channel_; }
  /// Replaces the default predicate (see ChannelPredicate).
  ChannelNode& set_predicate(ChannelPredicate predicate) {
    predicate_ = std::move(predicate);
    return *this;
  }
  const ChannelPredicate& predicate() const noexcept { return predicate_; }

  /// Seeds one CE from the host (thesis Figure 4-5, lines 32-34). Throws if it does not fit.
  template <class CE>
  void push(const CE& value) {
    static_assert(std::is_trivially_copyable_v<CE>);
    push_bytes(&value, sizeof(CE));
  }
  void push_bytes(const void* ce, std::size_t bytes);

 private:
  friend class Graph;
  friend class KernelNode;
  ChannelNode(std::string name, ChannelTable& table, const ChannelConfig& config);
  friend void make_edge(ChannelNode&, KernelNode&);
  friend class Aggregator;
  /// Gives every slot `bytes` of yield state (a yielding consumer's; see chanflow_node_env), made
  /// by yield_state() when first needed.
  void set_yield_state(std::uint32_t bytes);
  void* yield_state(ChannelTable& table);
  std::string name_;
  Channel channel_;
  KernelNode* consumer_ = nullptr;
  ChannelPredicate predicate_;
  std::uint32_t yield_state_bytes_ = 0;
  void* yield_state_ = nullptr;
};

/// What a channel stack holds: tasks (pre-sync sub-kernels), or continuations (post-sync
/// sub-kernels, CEs starting with chanflow_frame, consumed by a CHANFLOW_CONTINUATION_NODE).
/// A continuation frame is reserved by its task but enqueued by the last of its children to
/// return (a join counter in the frame), so a continuation stack only ever holds ready frames
/// and results are right whatever the policy.
enum class StackKind { Tasks, Continuations };

/// Per-frame scratch memory of a continuation stack (the temporaries a Cilk function keeps until
/// its sync: the `malloc` ... `free` around classic Strassen's spawns). Each frame gets a block
/// of bytes(level) bytes when its task's flush reserves it, and gives it back when its
/// continuation has run; the task's children reach it through chanflow_parent_scratch, the
/// continuation through chanflow_frame_scratch (scheduler/cl/scratch.cl).
struct FrameScratch {
  /// Bytes per frame at a level (rounded up to 128); 0: that level's frames have none.
  std::function<std::size_t(std::uint32_t level)> bytes;
  /// Frames live at once at a level, at most: the blocks its pool holds. Unset, or larger than
  /// the level's capacity: the capacity (a frame never waits for a block). A smaller bound
  /// saves memory where the recursion cannot fill a level (Strassen: 7^level frames at most);
  /// a frame that finds no block fails the run with a device-side error.
  std::function<std::uint32_t(std::uint32_t level)> max_frames;
  /// Whether tasks take their blocks themselves, at the start of their bodies
  /// (chanflow_task_scratch: locals whose address a Cilk function passes to its children),
  /// rather than the flush when it reserves the frame. The flush hands such a block to the frame,
  /// or gives it back if it reserves none; a level's pool then also holds a block for every task
  /// its task level can hold (the same capacity again), so a task never waits for one either.
  bool taken_by_tasks = false;

  /// What a level's pool holds, for a stack of `capacity` CEs per level: its block size (bytes
  /// rounded up to 128), its block count, and their product, the memory the pool allocates
  /// (so a caller can size a run before building its graph).
  std::size_t block_bytes(std::uint32_t level) const;
  std::uint32_t blocks(std::uint32_t level, std::uint32_t capacity) const;
  std::size_t pool_bytes(std::uint32_t level, std::uint32_t capacity) const {
    return block_bytes(level) * blocks(level, capacity);
  }
};

/// A stack of channels indexed by recursion depth (thesis 4.3.2, Figure 4-8), all of one CE
/// size and per-level capacity. Levels are created on demand, when a dispatch could reach them.
class ChannelStackNode {
 public:
  const std::string& name() const noexcept { return name_; }
  StackKind kind() const noexcept { return kind_; }
  std::uint32_t ce_bytes() const noexcept { return config_.ce_bytes; }
  /// CEs the first level holds (and every level, unless grow_levels was called).
  std::uint32_t capacity_per_level() const noexcept { return config_.capacity; }
  KernelNode* consumer() const noexcept { return consumer_; }
  std::uint32_t depth() const noexcept { return static_cast<std::uint32_t>(levels_.size()); }
  /// Level d, created (with every level below it) if it does not exist yet.
  Channel& level(std::uint32_t d);
  /// Levels deeper down hold more, for a recursion whose width grows with its depth: level d is
  /// made to hold fan_out^d CEs (what level d of a recursion from one root whose tasks spawn at
  /// most `fan_out` children each can hold at once), never fewer than capacity_per_level() and at
  /// most `most_per_level`, in whole multiples of capacity_per_level(), smaller while the channel
  /// table's storage would pass `budget_bytes` with it. So a deep level that a binary recursion
  /// fills does not wrap while long tasks hold its oldest slots (in-order deallocation), within
  /// what the device gives channels (a compiled program's stacks on a GPU: cilk::ProgramGraph).
  /// Levels made already keep their size.
  ChannelStackNode& grow_levels(std::uint32_t fan_out, std::uint32_t most_per_level, std::uint64_t budget_bytes);
  /// CEs level d holds: made, its own; not made yet, what it would get if made now.
  std::uint32_t capacity_of(std::uint32_t d) const;
  /// The most CEs any level made so far holds.
  std::uint32_t largest_level() const;
  /// Replaces the default predicate for every level (see ChannelPredicate).
  ChannelStackNode& set_predicate(ChannelPredicate predicate) {
    predicate_ = std::move(predicate);
    return *this;
  }
  const ChannelPredicate& predicate() const noexcept { return predicate_; }
  /// Gives every frame of this continuation stack a scratch block (see FrameScratch); set
  /// before the graph runs. Throws GraphError on a task stack.
  ChannelStackNode& set_frame_scratch(FrameScratch scratch);
  /// Scratch bytes allocated so far over the levels made (the pools' blocks).
  std::size_t scratch_bytes() const noexcept;

  /// Seeds one CE at level d from the host.
  template <class CE>
  void push(std::uint32_t d, const CE& value) {
    static_assert(std::is_trivially_copyable_v<CE>);
    push_bytes(d, &value, sizeof(CE));
  }
  void push_bytes(std::uint32_t d, const void* ce, std::size_t bytes);

 private:
  friend class Graph;
  friend class KernelNode;
  friend class Aggregator;
  ChannelStackNode(std::string name, ChannelTable& table, const ChannelConfig& config, StackKind kind);
  friend void make_edge(ChannelStackNode&, KernelNode&);
  std::string name_;
  StackKind kind_;
  ChannelTable& table_;
  ChannelConfig config_;
  std::deque<Channel> levels_;
  std::uint32_t fan_out_ = 0;         // grow_levels: children per task (below 2: every level alike)
  std::uint32_t most_per_level_ = 0;  // ... the deepest levels' capacity
  std::uint64_t budget_bytes_ = 0;    // ... and the table's storage they stay within
  double making_levels_us_ = 0;  // host time spent making levels, over the stack's life
  KernelNode* consumer_ = nullptr;
  ChannelPredicate predicate_;
  // One pool per level when set_frame_scratch was called: a chanflow_scratch_pool followed by
  // its bitmap, and the blocks (both empty for a level whose frames have no scratch).
  // Carved out of the channel table's arena (ChannelTable::allocate_side_storage): a launch names
  // the arena's few chunks, not two allocations per level.
  struct ScratchPool {
    void* header = nullptr;
    void* blocks = nullptr;
    std::size_t bytes = 0;  // of the blocks
  };
  void make_scratch_pool(std::uint32_t d);
  /// The pool of level d on the device, or nullptr.
  const chanflow_scratch_pool* scratch_pool(std::uint32_t d) const;
  std::optional<FrameScratch> scratch_;
  std::deque<ScratchPool> pools_;
  /// Gives every slot of every level `bytes` of yield state (a yielding consumer's; see
  /// chanflow_node_env); a level's is made by yield_state(d) when a dispatch that may yield there
  /// is laid out (not for planned sweeps, which never yield).
  void set_yield_state(std::uint32_t bytes);
  void* yield_state(std::uint32_t d);
  std::size_t yield_state_allocated() const noexcept;  ///< bytes made so far
  std::uint32_t yield_state_bytes_ = 0;
  std::deque<void*> yield_states_;  // per level (null until made), from the table's storage arena
};

/// How a channel stack is dispatched when its consumer yields (or has no output ports).
enum class Sweeps {
  Auto,     ///< Claimed on CPU devices, Planned elsewhere
  Claimed,  ///< one launch over all levels; each work-group claims ready CEs when it starts (claimed_sweeps_hold)
  Planned,  ///< one launch over all levels, its ranges planned on the device before each pass (any device)
  Off,      ///< host-sized range dispatches of each level, restarts kept by the host
};

/// Where the aggregator's loop runs (scheduler/README.md, "The device scheduler").
enum class Scheduler {
  /// On a GPU that holds it, Device once the scheduler's program, built beside the graph's (in the
  /// background where this machine has not built it before: its first build grows with the
  /// graph's node bodies, scheduler/README.md), is ready, Rounds before; Rounds on CPU devices and
  /// for host policies; Device for a DevicePolicy without a host form. CHANFLOW_SCHEDULER in the
  /// environment decides for a graph left at Auto.
  Auto,
  Device,  ///< one persistent launch takes batches of every channel on the device; the host only watches
  Rounds,  ///< the host reads every channel and launches each round's dispatches (any device, any policy)
};
/// "auto", "device" or "rounds"; scheduler_from_string throws std::invalid_argument for any other.
const char* to_string(Scheduler scheduler);
Scheduler scheduler_from_string(std::string_view name);

/// Where a work-item keeps what its node's body spawns until the flush (the spawn record:
/// scheduler/cl/spawn.cl's chanflow_ctx). Indexed by port at run time, a GPU compiler keeps it in
/// the work-item's stack, which spills beyond L1 once a work-group's records outgrow it.
enum class SpawnStaging {
  /// Local on a GPU where the graph has no work-group node (whose own local memory shares the
  /// budget) and the records leave 12 KiB of the device's local memory; Private elsewhere.
  /// CHANFLOW_SPAWN_STAGING in the environment decides for a graph left at Auto.
  Auto,
  Private,  ///< in each work-item's private memory
  Local,    ///< in the work-group's local memory, a column per work-item (refused where it does not fit)
};
/// "auto", "private" or "local"; spawn_staging_from_string throws std::invalid_argument for any other.
const char* to_string(SpawnStaging staging);
SpawnStaging spawn_staging_from_string(std::string_view name);

/// "auto", "claimed", "planned" or "host" (Off); sweeps_from_string throws std::invalid_argument
/// for any other name.
const char* to_string(Sweeps sweeps);
Sweeps sweeps_from_string(std::string_view name);
/// Whether Sweeps::Claimed (and the device scheduler) is allowed on this device: a claim reads
/// CEs that other work-groups wrote in the same launch, which holds only where the device orders
/// stores at device scope (device_order: NVIDIA from compute capability 7 through PTX
/// release/acquire, a CPU device of an x86-64 host).
bool claimed_sweeps_hold(const DeviceCaps& caps);
/// Whether Scheduler::Device may run on this device: its claims need the same ordering.
inline bool device_scheduler_holds(const DeviceCaps& caps) { return claimed_sweeps_hold(caps); }

struct GraphOptions {
  std::uint32_t wg_size = 64;
  std::uint32_t max_channels = 1024;  ///< channel-table slots (stack levels count one each)
  ScanPath scan = ScanPath::Auto;
  /// Checked frees for every channel and stack level of the graph (ChannelConfig::check_frees).
  bool check_frees = false;
  SpawnStaging spawn_staging = SpawnStaging::Auto;
  /// Device sweeps: a channel stack the policy chose in a round whose consumer yields (or has
  /// no output ports) is dispatched as one sweep over all its levels, and rounds that only sweep
  /// are chained on the device (up to max_sweep_chain sweeps and deallocations per host round
  /// trip); a yielded CE is published again in its own channel, and a later pass restarts it.
  /// - Claimed: work-groups each claim, when they start, a work-group's worth of ready CEs from
  ///   the deepest level whose outputs have room, so later work-groups take what earlier ones
  ///   produced in the same launch. That reads CEs other work-groups wrote in the same launch,
  ///   which OpenCL 1.2 does not make visible without atomics: CPU caches are coherent, a GPU's
  ///   L1 is not (on an H200 claimed sweeps gave wrong fib-cilk results at n = 30 with OpenCL's
  ///   mem_fence, which NVIDIA compiles to a work-group-scope membar.cta). So Claimed needs the
  ///   device-scope release/acquire of channels/cl/order.cl and is refused where the device has
  ///   none (claimed_sweeps_hold); Auto picks it on CPU devices only.
  /// - Planned: a one-work-group planning kernel before each pass gives every level the range
  ///   of ready CEs its outputs can take in the worst case (deepest first), and the pass's
  ///   work-groups take their share of those ranges. A pass reads only what earlier launches
  ///   wrote, so it is coherent on any device.
  /// - Off: every dispatch is a host-sized range of one level, and restarts are host-kept
  ///   records.
  Sweeps device_sweeps = Sweeps::Auto;
  std::uint32_t sweep_groups = 0;      ///< work-groups per sweep; 0: sized from the last sweeps' batches
  /// A sweep's work-group claims a level's CEs only after taking the credits a full work-group
  /// request needs in every output (the continuation port aside while the level holds resumed
  /// tasks), so concurrent work-groups never claim more than the outputs take. Off: it claims
  /// whatever is ready and yields what does not fit (many more yields, and yielded CEs holding
  /// their place can stall in-order deallocation at a capacity of one request per level: a
  /// knob to exercise restarts, not to run with).
  bool sweep_room_check = true;
  std::uint32_t max_sweep_chain = 16;  ///< most sweeps of a stack per host round
  /// A round that only sweeps also sweeps the stacks that its swept nodes without a
  /// continuation (they only forward: a cilk_for part) spawn into, and so on, as far as one
  /// planning kernel reaches, so that their children run in the chain's next passes instead of
  /// in rounds of their own. Off where the environment says CHANFLOW_SWEEP_SPAWNED=0 (to compare).
  bool sweep_spawned = true;
  /// Where the aggregator's loop runs: on the device (a persistent launch whose work-groups take
  /// batches of every channel under the policy's device form) or in host rounds.
  Scheduler scheduler = Scheduler::Auto;
  /// Device scheduler: work-groups per launch (0: as many as the device keeps resident), and the
  /// empty polls in a row after which a work-group leaves while others still hold work.
  std::uint32_t scheduler_groups = 0;
  std::uint32_t scheduler_polls = 4096;
  /// Device scheduler: empty polls in a row in which no work-group of the launch holds a batch
  /// or finishes one, after which a work-group leaves (what is ready waits for the host's
  /// deallocation and the next launch).
  std::uint32_t scheduler_quiet = 64;
  /// Device scheduler: polls in a row in which a work-group takes only full batches (a
  /// work-group's worth of ready CEs) before it takes what it finds; a CPU device takes what it
  /// finds at once (its work-groups poll once).
  std::uint32_t scheduler_patience = 0;
  /// Device scheduler: the fewest work-groups that poll while some hold batches; those beyond
  /// what is ready and held plus this many doze (sleep without touching the channels) until a
  /// poll wants them. 0: a sixteenth of the launch's work-groups; the launch's count or more:
  /// every work-group polls. The environment's CHANFLOW_SCHED_AWAKE overrides it.
  std::uint32_t scheduler_awake = 0;
  /// Device scheduler: seconds a launch may run with no batch finishing and no work-group
  /// leaving before the run is taken for stuck (a node body that never returns): the host,
  /// which cannot stop a kernel, says what it saw and ends the process. 0: no watch. The
  /// environment's CHANFLOW_SCHED_WATCHDOG overrides it.
  std::uint32_t scheduler_watchdog_s = 60;
};

/// A channel-flow graph: build nodes and edges, add the OpenCL C sources holding the kernel
/// nodes, seed channels, then run() to quiescence under a scheduling policy.
class Graph {
 public:
  explicit Graph(const Runtime& runtime, GraphOptions options = {});
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  ChannelNode& channel(std::string name, std::uint32_t ce_bytes, std::uint32_t capacity);
  template <class CE>
  ChannelNode& channel(std::string name, std::uint32_t capacity) {
    return channel(std::move(name), sizeof(CE), capacity);
  }
  /// `max_reservation`: the most CEs one work-group's talloc may take (ChannelConfig's; 0: its default).
  ChannelStackNode& channel_stack(std::string name, std::uint32_t ce_bytes, std::uint32_t capacity_per_level,
                                  StackKind kind = StackKind::Tasks, std::uint32_t max_reservation = 0);
  template <class CE>
  ChannelStackNode& channel_stack(std::string name, std::uint32_t capacity_per_level,
                                  StackKind kind = StackKind::Tasks) {
    return channel_stack(std::move(name), sizeof(CE), capacity_per_level, kind);
  }
  /// A kernel node running kernel `kernel_name` (made with CHANFLOW_KERNEL_NODE) over CEs of
  /// input_ce_bytes bytes.
  KernelNode& kernel(std::string name, std::string kernel_name, std::uint32_t input_ce_bytes);
  template <class CE>
  KernelNode& kernel(std::string name, std::string kernel_name) {
    return kernel(std::move(name), std::move(kernel_name), sizeof(CE));
  }

  /// OpenCL C source holding kernel nodes; the graph builds all sources into one program.
  void add_source(std::string source);

  /// The device heap every kernel node of the graph allocates from (ctx->env->heap; heap.cl). It
  /// may be shared by several graphs (one run at a time) and must outlive the graph's runs;
  /// without one, an allocation fails the run (CHANFLOW_ERR_NO_HEAP).
  void set_heap(DeviceHeap& heap) noexcept { heap_ = &heap; }
  DeviceHeap* heap() const noexcept { return heap_; }

  /// Names the functions device code runs on explicit stacks of their own (chanflowc's recursive
  /// helpers): one that overflows its stack reports CHANFLOW_ERR_HELPER_STACK with its index here,
  /// and the run's error names it.
  void name_recursive_functions(std::vector<std::string> names) { recursive_functions_ = std::move(names); }
  const std::vector<std::string>& recursive_functions() const noexcept { return recursive_functions_; }

  /// The assertions of device code, as C's assert words a failure (`file:line: function:
  /// Assertion `expr' failed.`): one that fails reports CHANFLOW_ERR_ASSERT with its index here, and
  /// the run throws AssertionError with its words.
  void name_assertions(std::vector<std::string> assertions) { assertions_ = std::move(assertions); }
  const std::vector<std::string>& assertions() const noexcept { return assertions_; }

  /// Throws GraphError naming the nodes if the graph is malformed. Builds the graph's program
  /// (node kinds come from it; a failed build throws OpenCLError with the log). run() calls it.
  void validate();
  /// Runs until no CE is ready, nothing is in flight and nothing is blocked. Throws RunError
  /// for device-side errors and when no progress is possible.
  /// A graph runs again as often as it is seeded (push, new arguments through set_args): its
  /// channels, stack levels, kernels and pools are made once and reused, as oneTBB keeps its
  /// arena, so a second run costs the host nothing that grows with the channels' capacity.
  /// After a run that threw, the graph refuses to run again (RunError): make a new one.
  RunStats run(SchedulingPolicy& policy, const RunOptions& options = {});
  RunStats run();  ///< with Greedy

  /// The channel-flow graph in Graphviz DOT.
  std::string to_dot() const;
  /// The options the device took its paths from when the graph's program was last built
  /// (validate): the device's atomics, whether idle work-groups leave a node kernel at once
  /// (-DCHANFLOW_IDLE_GROUPS_LEAVE, not on a CPU device), and so on. Empty before the first build.
  const std::string& device_build_options() const noexcept { return build_extra_; }

  const Runtime& runtime() const noexcept { return runtime_; }
  const GraphOptions& options() const noexcept { return options_; }
  const std::vector<std::unique_ptr<ChannelNode>>& channels() const noexcept { return channels_; }
  const std::vector<std::unique_ptr<ChannelStackNode>>& stacks() const noexcept { return stacks_; }
  const std::vector<std::unique_ptr<KernelNode>>& kernels() const noexcept { return kernels_; }
  ChannelTable& table() noexcept { return table_; }

 private:
  friend class Aggregator;
  void check_new_name(const std::string& name) const;
  const cl::Program& program();
  /// Whether the spawn records go in local memory (SpawnStaging), `record_bytes` a work-group's.
  bool spawn_staging_local(std::uint64_t record_bytes) const;
  /// `#define`s giving every kernel's ports their indices by name (CHANFLOW_PORT).
  std::string port_defines(std::vector<std::string>& problems) const;
  std::string port_defines_;  // what program_ was built with
  std::string build_extra_;
  std::string scheduler_source_;  // the device scheduler's generated part, or empty: not in the program
  /// Whether the program holds the device scheduler: asked for (or Auto) and the device orders
  /// stores at device scope.
  bool scheduler_wanted() const;
  /// The device scheduler's part of the program that depends on the graph (schedule.cl).
  std::string scheduler_source() const;
  /// Scheduler::Auto on a GPU whose device orders stores at device scope, a built-in policy and
  /// the dispatch left to Auto: the scheduler is built as a program of its own beside the graph's,
  /// in the background where this machine has not built it before (Runtime::built_before), and
  /// runs take it once it is ready (rounds until then).
  bool scheduler_beside_wanted() const;
  void prepare_scheduler_beside(const std::vector<std::string_view>& sources, const ChannelProgramOptions& build);
  void start_scheduler_build(double last_run_ms);
  void finish_scheduler_build() noexcept;
  /// The program built beside, once its build is done (nullptr before, or if it failed).
  const cl::Program* scheduler_program();
  std::string scheduler_beside_source_;  // its generated part, or empty: none is built beside
  std::vector<std::string> beside_parts_;  // its sources, until its build starts
  ChannelProgramOptions beside_options_;
  std::future<cl::Program> scheduler_build_;  // its build in the background
  std::optional<cl::Program> scheduler_program_;
  std::uint64_t runs_ = 0;  // runs started
  std::string device_policy_;  // the user's device policy (DevicePolicy) the program is built with
  bool device_policy_only_ = false;  // ...and it has no host form
  std::string scheduler_error_;  // why the program was built without the scheduler it wanted
  /// The kernel functions the scheduler kernel's switch calls, one case each, and node `k`'s case.
  std::vector<std::string> scheduler_kernels() const;
  std::uint32_t scheduler_case(const KernelNode& k) const;

  const Runtime& runtime_;
  GraphOptions options_;
  DeviceHeap* heap_ = nullptr;
  std::vector<std::string> recursive_functions_;
  std::vector<std::string> assertions_;
  ChannelTable table_;
  std::vector<std::unique_ptr<ChannelNode>> channels_;
  std::vector<std::unique_ptr<ChannelStackNode>> stacks_;
  std::vector<std::unique_ptr<KernelNode>> kernels_;
  std::vector<std::string> sources_;
  std::optional<cl::Program> program_;
  std::string unfinished_;  // why the last run threw; empty if it finished
  // Last, so it goes first: it waits for the queue before the channels' storage is freed.
  std::unique_ptr<Aggregator> aggregator_;
};

}  // namespace chanflow
