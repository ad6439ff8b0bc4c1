// fib.c as chanflowc compiles it (impl chanflow-compiled): the generated graph (fib.graph.cpp,
// built by chanflow_add_cilk_graphs), called as fib.c's host stub would call it.
#include "fib.hpp"

#include <chanflow/cilk_runtime.hpp>

#include "fib.types.h"

extern "C" unsigned long long fib__call_on_device(const fib__task* task);

namespace chanflow::workloads {

std::uint64_t fib_compiled_call(std::uint32_t n) {
  fib__task task{};
  task.n = n;
  return fib__call_on_device(&task);
}

FibResult fib_compiled(const Runtime& runtime, std::uint32_t n, const RunSettings& settings) {
  cilk::use(runtime, settings);
  FibResult r;
  r.value = fib_compiled_call(n);
  r.stats = cilk::last_stats();
  return r;
}

}  // namespace chanflow::workloads
