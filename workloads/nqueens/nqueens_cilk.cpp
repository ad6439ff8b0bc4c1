// Builds and runs the bitmask N-queens flow graph of nqueens.cl, and nqueens.c as chanflowc
// compiles it (its generated graph, called as the program's host stub would).
#include "nqueens.hpp"

#include "chanflow_workloads_sources.hpp"

#include <algorithm>

#include "nqueens.types.h"

extern "C" unsigned long long nqueens__call_on_device(const nqueens__task* task);

namespace chanflow::workloads {

NQueensCilk::NQueensCilk(const Runtime& runtime, std::uint32_t n, const RunSettings& options, std::uint32_t spawn_rows)
    : runtime_(runtime),
      n_(n),
      settings_(options.for_device(runtime.caps())),
      graph_(runtime, settings_.graph_options()),
      tasks_((graph_.add_source(std::string(workloads_cl::nqueens_serial_h())),
              graph_.add_source(std::string(workloads_cl::nqueens_cl())),
              graph_.channel_stack<NQueensFrame>("nqueens", settings_.capacity))),
      result_(runtime, sizeof(std::uint64_t)) {
  auto& conts = graph_.channel_stack<NQueensCont>("nqueens_cont", settings_.capacity, StackKind::Continuations);
  auto& spawn = graph_.kernel<NQueensFrame>("nqueens_spawn", "nqueens_spawn");
  auto& sync = graph_.kernel<NQueensCont>("nqueens_sync", "nqueens_sync");
  make_edge(tasks_, spawn);
  make_edge(spawn, tasks_, Children{.max_per_item = n});  // one child per open column
  make_edge(spawn, conts, Continuation{});
  make_edge(conts, sync);
  if (settings_.preallocate_levels) {
    tasks_.level(std::min(n, spawn_rows));
    conts.level(std::min(n, spawn_rows));
  }
  struct Args {
    std::uint32_t spawn_rows;
  };
  spawn.set_args(Args{spawn_rows});
  spawn.uses(result_);
  sync.uses(result_);
}

void NQueensCilk::seed() {
  runtime_.svm_fill_zero_async(result_.get(), result_.size());
  tasks_.push(0, NQueensFrame{{reinterpret_cast<std::uint64_t>(result_.get()), 0, 0, 0}, n_, 0, 0, 0, 0, 0});
}

std::uint64_t NQueensCilk::result() const {
  std::uint64_t value = 0;
  runtime_.svm_read(&value, result_.get(), sizeof value);
  return value;
}

NQueensResult NQueensCilk::run(SchedulingPolicy& policy, const RunOptions& run_options) {
  seed();
  NQueensResult r;
  r.stats = graph_.run(policy, run_options);
  r.value = result();
  return r;
}

NQueensResult nqueens_compiled(const Runtime& runtime, std::uint32_t n, const RunSettings& settings) {
  cilk::use(runtime, settings);
  nqueens__task task{};  // row 0, the empty board
  task.n = static_cast<int>(n);
  NQueensResult r;
  r.value = static_cast<std::uint64_t>(static_cast<int>(nqueens__call_on_device(&task)));
  r.stats = cilk::last_stats();
  return r;
}

}  // namespace chanflow::workloads
