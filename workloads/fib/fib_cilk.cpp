// Builds and runs the Cilk Fibonacci flow graph of thesis Figure 4-10.
#include "fib.hpp"

#include "chanflow_workloads_sources.hpp"

namespace chanflow::workloads {

FibResult fib_cilk(const Runtime& runtime, std::uint32_t n, SchedulingPolicy& policy,
                       const CilkOptions& options, const RunOptions& run_options) {
  Graph g(runtime, {.wg_size = options.wg_size, .device_sweeps = options.device_sweeps, .sweep_groups = options.sweep_groups, .sweep_room_check = options.sweep_room_check});
  g.add_source(std::string(workloads_cl::fib_cilk_cl()));
  auto& tasks = g.channel_stack<FibFrame>("fib", options.capacity_per_level);
  auto& conts = g.channel_stack<FibCont>("fib_cont", options.capacity_per_level, StackKind::Continuations);
  auto& spawn = g.kernel<FibFrame>("fib_spawn", "fib_spawn");  // yields: CHANFLOW_YIELDING_KERNEL_NODE
  auto& sync = g.kernel<FibCont>("fib_sync", "fib_sync");
  make_edge(tasks, spawn);
  make_edge(spawn, tasks, Children{.max_per_item = 2});  // CHANFLOW_PORT(fib_spawn, fib), depth + 1
  make_edge(spawn, conts, Continuation{});               // always port 0, whatever the edge order
  make_edge(conts, sync);
  if (options.preallocate_levels) {
    tasks.level(n);
    conts.level(n);
  }

  SvmBuffer result(runtime, sizeof(std::uint64_t));
  runtime.svm_fill_zero(result.get(), result.size());
  spawn.uses(result);
  sync.uses(result);
  tasks.push(0, FibFrame{{reinterpret_cast<std::uint64_t>(result.get()), 0, 0, 0}, n, 0});

  FibResult r;
  r.stats = g.run(policy, run_options);
  runtime.svm_read(&r.value, result.get(), sizeof r.value);
  return r;
}

}  // namespace chanflow::workloads
