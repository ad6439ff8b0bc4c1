// queens.c as chanflowc compiles it (impl chanflow-compiled): the generated graph
// (queens.graph.cpp, built by chanflow_add_cilk_graphs), called as queens.c's host stub would.
#include "queens.hpp"

#include <chanflow/cilk_runtime.hpp>

#include "queens.types.h"

extern "C" unsigned long long queens__call_on_device(const queens__task* task);

namespace chanflow::workloads {

QueensResult queens_compiled(const Runtime& runtime, std::uint32_t n, const RunSettings& settings) {
  cilk::use(runtime, settings);
  queens__task task{};  // row 0, the empty board
  task.n = static_cast<int>(n);
  QueensResult r;
  r.value = static_cast<std::uint64_t>(static_cast<int>(queens__call_on_device(&task)));
  r.stats = cilk::last_stats();
  return r;
}

}  // namespace chanflow::workloads
