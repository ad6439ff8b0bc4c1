// The workload registry and what the workloads share.
#include "workload.hpp"

#include <fmt/format.h>
#include <tbb/info.h>

#include <stdexcept>

namespace chanflow::workloads {

// Each workload folder defines its own (fib/fib_workload.cpp, ...).
const Workload& fib_workload();
const Workload& queens_workload();
const Workload& nqueens_workload();
const Workload& sort_workload();
const Workload& sort_u64_workload();
const Workload& strassen_workload();
const Workload& strassen_f64_workload();
const Workload& uts_workload();

const std::vector<const Workload*>& all_workloads() {
  static const std::vector<const Workload*> all{&fib_workload(), &queens_workload(), &nqueens_workload(), &sort_workload(), &sort_u64_workload(),
                                                     &strassen_workload(), &strassen_f64_workload(), &uts_workload()};
  return all;
}

const Workload& find_workload(std::string_view name) {
  std::vector<std::string_view> names;
  for (const Workload* w : all_workloads()) {
    if (w->name() == name) return *w;
    names.push_back(w->name());
  }
  throw std::invalid_argument(fmt::format("no workload '{}' (there are: {})", name, fmt::join(names, ", ")));
}

unsigned tbb_threads() { return static_cast<unsigned>(tbb::info::default_concurrency()); }

}  // namespace chanflow::workloads
