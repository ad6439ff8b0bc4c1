// sort.c as chanflowc compiles it (impl chanflow-compiled, 32-bit keys): the generated graph
// (sort.graph.cpp, built by chanflow_add_cilk_graphs), called as sort.c's host stub would call it.
#include "sort.hpp"

#include <chanflow/cilk_runtime.hpp>

#include "sort.types.h"

extern "C" unsigned long long cilksort__call_on_device(const cilksort__task* task);

namespace chanflow::workloads {

RunStats sort_compiled(const Runtime& runtime, const SvmBuffer& data, const SvmBuffer& tmp, std::uint64_t n,
                       const RunSettings& settings) {
  cilk::use(runtime, settings);
  cilk::uses(data);
  cilk::uses(tmp);
  cilksort__task task{};
  task.data = static_cast<unsigned*>(data.get());
  task.tmp = static_cast<unsigned*>(tmp.get());
  task.n = static_cast<long>(n);
  cilksort__call_on_device(&task);
  return cilk::last_stats();
}

}  // namespace chanflow::workloads
