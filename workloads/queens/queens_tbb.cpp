// N-queens on oneTBB: queens.c's recursion, spawned through task_group.
#include "queens.hpp"

#include <tbb/task_group.h>

#include <array>

namespace chanflow::workloads {
namespace {

// One task per safe column down to `task_rows` rows from the top; `leaf` counts below that.
template <class Leaf>
std::uint64_t queens_tasks(std::uint32_t n, std::uint32_t row, const QueensBoard& b, std::uint32_t task_rows,
                           Leaf leaf) {
  if (row >= task_rows) return leaf(n, row, b);
  std::array<std::uint64_t, kQueensMax> count{};
  tbb::task_group g;
  for (std::uint32_t col = 0; col < n; ++col) {
    if (!queens_safe(&b, static_cast<int>(row), static_cast<int>(col))) continue;
    g.run([&, col] {
      QueensBoard next = b;
      next.col[row] = static_cast<signed char>(col);
      count[col] = queens_tasks(n, row + 1, next, task_rows, leaf);
    });
  }
  g.wait();
  std::uint64_t total = 0;
  for (std::uint32_t col = 0; col < n; ++col) total += count[col];
  return total;
}

}  // namespace

std::uint64_t queens_tbb_fine(std::uint32_t n) {
  // Tasks wherever queens.c spawns: every row above the last kQueensSerialRows.
  const std::uint32_t task_rows = n > kQueensSerialRows ? n - kQueensSerialRows : 0;
  return queens_tasks(n, 0, QueensBoard{}, task_rows, [](std::uint32_t n, std::uint32_t row, const QueensBoard& b) {
    return static_cast<std::uint64_t>(queens_complete(static_cast<int>(n), static_cast<int>(row), b));
  });
}

std::uint64_t queens_tbb_cutoff(std::uint32_t n) {
  return queens_tasks(n, 0, QueensBoard{}, kQueensTbbTaskRows,
                      [](std::uint32_t n, std::uint32_t row, const QueensBoard& b) {
                        return static_cast<std::uint64_t>(queens(static_cast<int>(n), static_cast<int>(row), b));
                      });
}

std::uint64_t queens_known(std::uint32_t n) {
  static constexpr std::array<std::uint64_t, kQueensMax + 1> known{
      0, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512, 95815104, 666090624};
  return n <= kQueensMax ? known[n] : 0;
}

}  // namespace chanflow::workloads
