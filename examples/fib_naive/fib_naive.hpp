// The thesis' Figure 4-5 naive Fibonacci flow graph, reusable by the example, tests and bench.
#pragma once

#include "chanflow/chanflow.hpp"

#include <cstdint>

namespace chanflow::examples {

struct FibObj {
  std::uint32_t n;
};

struct FibArgs {
  std::uint32_t* result;  // an SVM pointer: __global uint* on the device
};

struct FibNaiveResult {
  std::uint64_t value = 0;
  RunStats stats;
};

/// Builds the graph of Figure 4-4 (one channel, one kernel node feeding it) and runs fib(n).
FibNaiveResult fib_naive(const Runtime& runtime, std::uint32_t n, SchedulingPolicy& policy,
                         const RunOptions& options = {}, std::uint32_t capacity = 1u << 20,
                         std::uint32_t wg_size = 64);

/// The serial reference.
std::uint64_t fib_serial(std::uint32_t n);

}  // namespace chanflow::examples
