// strassen.c (REAL float) as chanflowc compiles it (impl chanflow-compiled): the generated graph
// (strassen.graph.cpp, built by chanflow_add_cilk_graphs), called as strassen.c's host stub would
// call it. Its temporaries come from the device heap (malloc in the Cilk function), sized here.
#include "strassen.hpp"

#include <chanflow/cilk_runtime.hpp>

#include "strassen.types.h"

extern "C" unsigned long long strassen__call_on_device(const strassen__task* task);

namespace chanflow::workloads {

std::uint64_t strassen_compiled_heap_bytes(std::uint64_t n) {
  // Every task above the base case holds 17 quarter-size temporaries (each padded by 64
  // elements) until it returns; in the worst case every task of every level is live at once: 7^l
  // tasks of order n / 2^l at level l.
  std::uint64_t bytes = 0, tasks = 1;
  for (std::uint64_t order = n; order > kStrassenBase; order /= 2, tasks *= 7) {
    const std::uint64_t request = 17 * ((order / 2) * (order / 2) + 64) * sizeof(float);
    bytes += tasks * (request + request / 4 + CHANFLOW_HEAP_UNIT);  // size classes waste at most a quarter
  }
  return bytes + (std::uint64_t{16} << 20);
}

RunStats strassen_compiled(const Runtime& runtime, const SvmBuffer& a, const SvmBuffer& b, const SvmBuffer& c,
                           std::uint64_t n, const RunSettings& settings, bool capacity_asked) {
  cilk::use(runtime, settings, capacity_asked ? cilk::Capacity::Exactly : cilk::Capacity::AtLeast);
  for (const SvmBuffer* m : {&a, &b, &c}) cilk::uses(*m);
  strassen__task task{};
  task.n = static_cast<long>(n);
  task.A = static_cast<const float*>(a.get());
  task.as = static_cast<long>(n);
  task.B = static_cast<const float*>(b.get());
  task.bs = static_cast<long>(n);
  task.C = static_cast<float*>(c.get());
  task.cs = static_cast<long>(n);
  strassen__call_on_device(&task);
  return cilk::last_stats();
}

}  // namespace chanflow::workloads
