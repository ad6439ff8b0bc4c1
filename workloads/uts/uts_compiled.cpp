// uts.c as chanflowc compiles it (impl chanflow-compiled): the generated graph, called as uts.c's
// host stub would call uts_tree.
#include "uts.hpp"

#include <chanflow/cilk_runtime.hpp>

#include "uts.types.h"

extern "C" long uts_tree__call_on_device(const uts_tree__task* task);

namespace chanflow::workloads {

std::uint64_t uts_compiled_call(std::uint64_t seed, std::uint32_t heavy) {
  uts_tree__task task{};
  task.seed = seed;
  task.heavy = heavy;
  return static_cast<std::uint64_t>(uts_tree__call_on_device(&task));
}

UtsResult uts_compiled(const Runtime& runtime, std::uint64_t seed, std::uint32_t heavy, const RunSettings& settings) {
  cilk::use(runtime, settings);
  UtsResult r;
  r.value = uts_compiled_call(seed, heavy);
  r.stats = cilk::last_stats();
  return r;
}

}  // namespace chanflow::workloads
