// Builds and runs the N-queens flow graph of queens.cl.
#include "queens.hpp"

#include "chanflow_workloads_sources.hpp"

namespace chanflow::workloads {

QueensCilk::QueensCilk(const Runtime& runtime, std::uint32_t n, const RunSettings& options, std::uint32_t serial_rows)
    : runtime_(runtime),
      n_(n),
      settings_(options.for_device(runtime.caps())),
      graph_(runtime, settings_.graph_options()),
      tasks_((graph_.add_source(std::string(workloads_cl::queens_board_h())),
              graph_.add_source(std::string(workloads_cl::queens_cl())),
              graph_.channel_stack<QueensFrame>("queens", settings_.capacity))),
      result_(runtime, sizeof(std::uint64_t)) {
  auto& conts = graph_.channel_stack<QueensCont>("queens_cont", settings_.capacity, StackKind::Continuations);
  auto& spawn = graph_.kernel<QueensFrame>("queens_spawn", "queens_spawn");
  auto& sync = graph_.kernel<QueensCont>("queens_sync", "queens_sync");
  make_edge(tasks_, spawn);
  make_edge(spawn, tasks_, Children{.max_per_item = n});  // one child per safe column
  make_edge(spawn, conts, Continuation{});
  make_edge(conts, sync);
  const std::uint32_t depth = n > serial_rows ? n - serial_rows : 0;  // rows that spawn
  if (settings_.preallocate_levels) {
    tasks_.level(depth);
    conts.level(depth);
  }
  struct Args {
    std::uint32_t serial_rows;
  };
  spawn.set_args(Args{serial_rows});
  spawn.uses(result_);
  sync.uses(result_);
}

void QueensCilk::seed() {
  runtime_.svm_fill_zero_async(result_.get(), result_.size());
  tasks_.push(0, QueensFrame{{reinterpret_cast<std::uint64_t>(result_.get()), 0, 0, 0}, n_, 0, {}, {}});
}

std::uint64_t QueensCilk::result() const {
  std::uint64_t value = 0;
  runtime_.svm_read(&value, result_.get(), sizeof value);
  return value;
}

QueensResult QueensCilk::run(SchedulingPolicy& policy, const RunOptions& run_options) {
  seed();
  QueensResult r;
  r.stats = graph_.run(policy, run_options);
  r.value = result();
  return r;
}

QueensResult queens_cilk(const Runtime& runtime, std::uint32_t n, SchedulingPolicy& policy,
                         const RunSettings& options, const RunOptions& run_options, std::uint32_t serial_rows) {
  return QueensCilk(runtime, n, options, serial_rows).run(policy, run_options);
}

}  // namespace chanflow::workloads
