// Builds and runs the N-queens flow graph of queens.cl.
#include "queens.hpp"

#include "chanflow_workloads_sources.hpp"

namespace chanflow::workloads {

QueensResult queens_cilk(const Runtime& runtime, std::uint32_t n, SchedulingPolicy& policy,
                         const CilkOptions& options, const RunOptions& run_options, std::uint32_t serial_rows) {
  Graph g(runtime, {.wg_size = options.wg_size,
                    .device_sweeps = options.device_sweeps,
                    .sweep_groups = options.sweep_groups,
                    .sweep_room_check = options.sweep_room_check});
  g.add_source(std::string(workloads_cl::queens_cl()));
  auto& tasks = g.channel_stack<QueensFrame>("queens", options.capacity_per_level);
  auto& conts = g.channel_stack<QueensCont>("queens_cont", options.capacity_per_level, StackKind::Continuations);
  auto& spawn = g.kernel<QueensFrame>("queens_spawn", "queens_spawn");
  auto& sync = g.kernel<QueensCont>("queens_sync", "queens_sync");
  make_edge(tasks, spawn);
  make_edge(spawn, tasks, Children{.max_per_item = n});  // one child per safe column
  make_edge(spawn, conts, Continuation{});
  make_edge(conts, sync);
  const std::uint32_t depth = n > serial_rows ? n - serial_rows : 0;  // rows that spawn
  if (options.preallocate_levels) {
    tasks.level(depth);
    conts.level(depth);
  }

  struct Args {
    std::uint32_t serial_rows;
  };
  spawn.set_args(Args{serial_rows});
  SvmBuffer result(runtime, sizeof(std::uint64_t));
  runtime.svm_fill_zero(result.get(), result.size());
  spawn.uses(result);
  sync.uses(result);
  tasks.push(0, QueensFrame{{reinterpret_cast<std::uint64_t>(result.get()), 0, 0, 0}, n, 0, {}, {}});

  QueensResult r;
  r.stats = g.run(policy, run_options);
  runtime.svm_read(&r.value, result.get(), sizeof r.value);
  return r;
}

}  // namespace chanflow::workloads
