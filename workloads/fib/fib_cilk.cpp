// Builds and runs the Cilk Fibonacci flow graph of thesis Figure 4-10.
#include "fib.hpp"

#include "chanflow_workloads_sources.hpp"

namespace chanflow::workloads {

FibCilk::FibCilk(const Runtime& runtime, const RunSettings& options)
    : runtime_(runtime),
      settings_(options.for_device(runtime.caps())),
      graph_(runtime, settings_.graph_options()),
      tasks_((graph_.add_source(std::string(workloads_cl::fib_types_h())), graph_.add_source(std::string(workloads_cl::fib_cilk_cl())),
              graph_.channel_stack<FibFrame>("fib", settings_.capacity))),
      conts_(graph_.channel_stack<FibCont>("fib_cont", settings_.capacity, StackKind::Continuations)),
      result_(runtime, sizeof(std::uint64_t)) {
  auto& spawn = graph_.kernel<FibFrame>("fib_spawn", "fib_spawn");  // yields: CHANFLOW_YIELDING_KERNEL_NODE
  auto& sync = graph_.kernel<FibCont>("fib_sync", "fib_sync");
  make_edge(tasks_, spawn);
  make_edge(spawn, tasks_, Children{.max_per_item = 2});  // CHANFLOW_PORT(fib_spawn, fib), depth + 1
  make_edge(spawn, conts_, Continuation{});               // always port 0, whatever the edge order
  make_edge(conts_, sync);
  spawn.uses(result_);
  sync.uses(result_);
}

void FibCilk::seed(std::uint32_t n) {
  if (settings_.preallocate_levels) {
    tasks_.level(n);
    conts_.level(n);
  }
  runtime_.svm_fill_zero_async(result_.get(), result_.size());
  tasks_.push(0, FibFrame{{reinterpret_cast<std::uint64_t>(result_.get()), 0, 0, 0}, n, 0});
}

std::uint64_t FibCilk::result() const {
  std::uint64_t value = 0;
  runtime_.svm_read(&value, result_.get(), sizeof value);
  return value;
}

FibResult FibCilk::run(std::uint32_t n, SchedulingPolicy& policy, const RunOptions& run_options) {
  seed(n);
  FibResult r;
  r.stats = graph_.run(policy, run_options);
  r.value = result();
  return r;
}

FibResult fib_cilk(const Runtime& runtime, std::uint32_t n, SchedulingPolicy& policy, const RunSettings& options,
                   const RunOptions& run_options) {
  return FibCilk(runtime, options).run(n, policy, run_options);
}

}  // namespace chanflow::workloads
