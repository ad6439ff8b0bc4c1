// Fibonacci on oneTBB: the same recursion as fib.c, spawned through task_group.
#include "fib.hpp"

#include <tbb/task_group.h>

namespace chanflow::workloads {

std::uint64_t fib_tbb_fine(std::uint32_t n) {
  if (n <= 2) return n == 0 ? 0 : 1;
  std::uint64_t x = 0, y = 0;
  tbb::task_group g;
  g.run([&] { x = fib_tbb_fine(n - 1); });  // both calls are spawns, as in fib.c
  g.run([&] { y = fib_tbb_fine(n - 2); });
  g.wait();
  return x + y;
}

std::uint64_t fib_tbb_cutoff(std::uint32_t n) {
  if (n <= kFibTbbCutoff) return static_cast<std::uint64_t>(fib(static_cast<long>(n)));
  std::uint64_t x = 0, y = 0;
  tbb::task_group g;
  g.run([&] { x = fib_tbb_cutoff(n - 1); });
  y = fib_tbb_cutoff(n - 2);  // the second call runs in this task, as a CPU programmer writes it
  g.wait();
  return x + y;
}

}  // namespace chanflow::workloads
