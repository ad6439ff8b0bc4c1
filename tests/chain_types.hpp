// The host twins of the chain recursion's CE types in kernels/graph_test_kernels.cl
// (chain(n) = n + chain(n - 1), one child per call), shared by the suites that build it.
#pragma once

#include "chanflow/node_layout.h"

#include <cstdint>

namespace chanflow::test {

struct ChainFrame {
  chanflow_task task;
  std::uint32_t n, pad;
};
struct ChainCont {
  chanflow_frame frame;
  std::uint64_t x, n;
};

}  // namespace chanflow::test
