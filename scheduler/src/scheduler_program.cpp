// The device scheduler's program: the part of its kernel that depends on the graph (a case per
// node body), built into the graph's program where asked for, or beside it where Auto may switch
// to it: at once where this machine built it before, otherwise in the background after a run
// worth it, and waited for before the graph, or the process, goes.
#include "chanflow/graph.hpp"

#include "chanflow_scheduler_sources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>
#include <string_view>

namespace chanflow {

namespace {

// Background builds still in flight, which the process's exit waits for. A graph waits for its
// own when it goes, but one a static holds (a compiled program's) goes after the driver's
// libraries have torn down their state: the build thread then crashed inside NVIDIA's compiler
// (H100, a compiled fib(32) whose run started the build just before main returned). The wait is
// registered once the graph's program has been built, so after the driver loaded its compiler,
// and runs before the compiler's own exit handlers.
std::mutex builds_mutex;
std::condition_variable builds_done;
unsigned builds_in_flight = 0;

void wait_for_builds_at_exit() {
  std::unique_lock lock(builds_mutex);
  if (builds_in_flight == 0) return;
  fmt::print(stderr, "chanflow: waiting for the device scheduler's first build on this machine before exiting (later "
                     "runs find it in the driver's cache; CHANFLOW_SCHEDULER=rounds does without it)\n");
  builds_done.wait(lock, [] { return builds_in_flight == 0; });
}
}  // namespace

bool Graph::scheduler_wanted() const {
  // In the graph's program where asked for, or where Auto runs a device policy without a host
  // form (nothing else could run it); elsewhere Auto builds it beside the program, on a GPU.
  const bool asked = options_.scheduler == Scheduler::Device ||
                     (options_.scheduler == Scheduler::Auto && device_policy_only_);
  return asked && device_scheduler_holds(runtime_.caps());
}

bool Graph::scheduler_beside_wanted() const {
  const DeviceCaps& caps = runtime_.caps();
  // A CPU device keeps the rounds under Auto, but CHANFLOW_SCHED_BESIDE_ON_CPU=1 builds the
  // scheduler beside there too: the tests run the background build and the switch on PoCL with it.
  const char* on_cpu = std::getenv("CHANFLOW_SCHED_BESIDE_ON_CPU");
  const bool cpu_too = on_cpu && std::string_view(on_cpu) == "1";
  return options_.scheduler == Scheduler::Auto && options_.device_sweeps == Sweeps::Auto && !device_policy_only_ &&
         (!(caps.type & CL_DEVICE_TYPE_CPU) || cpu_too) && device_scheduler_holds(caps);
}

// The graph's sources and the scheduler's, as a program of their own: built at once where this
// machine built it before (NVIDIA's driver then finds it in its cache: 0.5 s where the first build
// of Sort's took 53 s on an H100); otherwise kept for start_scheduler_build, after the first run
// that is worth it.
void Graph::prepare_scheduler_beside(const std::vector<std::string_view>& sources, const ChannelProgramOptions& build) {
  beside_parts_.clear();
  if (scheduler_beside_source_.empty()) return;
  beside_parts_.assign(sources.begin(), sources.end());  // the graph may change while it builds
  beside_parts_.emplace_back(scheduler_beside_source_);
  beside_parts_.emplace_back(scheduler_cl::claim_cl());
  beside_parts_.emplace_back(scheduler_cl::policies_cl());
  beside_parts_.emplace_back(scheduler_cl::schedule_cl());
  beside_options_ = build;
  if (runtime_.caps().type & CL_DEVICE_TYPE_CPU) beside_options_.extra += " -DCHANFLOW_SCHED_ONE_POLL";  // schedule.cl
  const std::vector<std::string_view> views(beside_parts_.begin(), beside_parts_.end());
  if (channel_program_built_before(runtime_, views, beside_options_)) {
    std::promise<cl::Program> now;
    try {
      now.set_value(build_channel_program(runtime_, views, beside_options_));
    } catch (...) {
      now.set_exception(std::current_exception());
    }
    scheduler_build_ = now.get_future();
    beside_parts_.clear();
  }
}

// A build nobody may use costs a graph's owner a wait when the graph goes (it cannot be stopped):
// it starts after a run in rounds that took 50 ms or more, or when a graph runs a second time.
void Graph::start_scheduler_build(double last_run_ms) {
  if (beside_parts_.empty() || (last_run_ms < 50 && runs_ < 2)) return;
  static std::once_flag registered;
  std::call_once(registered, [] { std::atexit(wait_for_builds_at_exit); });
  {
    const std::lock_guard lock(builds_mutex);
    ++builds_in_flight;
  }
  scheduler_build_ = std::async(std::launch::async, [&rt = runtime_, build = beside_options_, parts = std::move(beside_parts_)] {
    struct Done {  // counted out however the build ends
      ~Done() {
        const std::lock_guard lock(builds_mutex);
        --builds_in_flight;
        builds_done.notify_all();
      }
    } done;
    const std::vector<std::string_view> views(parts.begin(), parts.end());
    return build_channel_program(rt, views, build);
  });
  beside_parts_.clear();
}

// A graph may not go while its scheduler builds: the compiler runs in the driver, whose state the
// process's exit tears down. The first process of a machine to run a graph of this shape waits.
void Graph::finish_scheduler_build() noexcept {
  using namespace std::chrono_literals;
  if (!scheduler_build_.valid() || scheduler_build_.wait_for(0s) == std::future_status::ready) return;
  static std::once_flag told;
  std::call_once(told, [] {
    fmt::print(stderr, "chanflow: waiting for the device scheduler's first build on this machine (later runs find it "
                       "in the driver's cache; CHANFLOW_SCHEDULER=rounds does without it)\n");
  });
  scheduler_build_.wait();
}

const cl::Program* Graph::scheduler_program() {
  using namespace std::chrono_literals;
  if (!scheduler_program_ && scheduler_build_.valid() && scheduler_build_.wait_for(0s) == std::future_status::ready) {
    try {
      scheduler_program_ = scheduler_build_.get();
    } catch (const std::exception& e) {  // Auto keeps the rounds; a run asking for the scheduler says why
      scheduler_error_ = fmt::format("the device scheduler's program did not build: {}", e.what());
    }
  }
  return scheduler_program_ ? &*scheduler_program_ : nullptr;
}

std::vector<std::string> Graph::scheduler_kernels() const {
  std::vector<std::string> names;
  for (const auto& k : kernels_)
    if (std::find(names.begin(), names.end(), k->kernel_name()) == names.end()) names.push_back(k->kernel_name());
  return names;
}

std::uint32_t Graph::scheduler_case(const KernelNode& k) const {
  const auto names = scheduler_kernels();
  return static_cast<std::uint32_t>(std::find(names.begin(), names.end(), k.kernel_name()) - names.begin());
}

// The scheduler kernel's part that depends on the graph: the local memory its work-group nodes
// need (one union: a work-group runs one node's batch at a time), the user's device policy, and the
// switch from a watched channel's case to its node's body (one case per kernel function).
std::string Graph::scheduler_source() const {
  const std::vector<std::string> names = scheduler_kernels();
  std::string locals = "typedef union {\n  uchar none;\n";
  std::string cases, every;
  for (std::size_t i = 0; i < names.size(); ++i) {
    // PoCL 3.1 mis-runs barriers under a condition, a switch's too: on a CPU device every node's
    // body runs its collectives, all but the chosen one's inactive, on an environment of its own.
    every += fmt::format("  {0}__chanflow_run(body == {1}u ? env : (__global const chanflow_node_env*)envs[{1}], pos, index,\n"
                         "      active && body == {1}u, body == {1}u ? prepaid : none, wg, group_local, group_ce, keep);\n",
                         names[i], i);
    locals += fmt::format("  {}__chanflow_local n{};\n", names[i], i);
    cases += fmt::format("    case {}u: {}__chanflow_run(env, pos, index, active, prepaid, wg, group_local, group_ce, keep); break;\n",
                         i, names[i]);
  }
  locals += "} chanflow_sched_group_local;\n";
  const std::string policy =
      device_policy_.empty() ? "int chanflow_user_policy_score(const chanflow_policy_view* v) { (void)v; return -1; }\n"
                             : device_policy_ + "\n";
  return fmt::format(
      "/* The device scheduler's part for this graph (Graph::scheduler_source). */\n{}{}"
      "void chanflow_sched_run(uint body, __global const chanflow_node_env* env, ulong pos, uint index, int active,\n"
      "                        __local const uint* prepaid, __local chanflow_wg_scratch* wg, __local void* group_local,\n"
      "                        __local ulong* group_ce, __local const uint* none, __global const ulong* envs,\n"
      "                        __local chanflow_keep* keep) {{\n"
      "#ifdef CHANFLOW_SCHED_ONE_POLL\n{}#else\n  (void)none;\n  (void)envs;\n  switch (body) {{\n{}    default: break;\n  }}\n#endif\n}}\n",
      locals, policy, every, cases);
}

}  // namespace chanflow
