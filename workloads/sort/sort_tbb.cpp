// cilksort on oneTBB: sort.c's recursion, spawned through task_group.
#include "sort.hpp"

#include <tbb/task_group.h>

namespace chanflow::workloads {
namespace {

// `sort_cut` and `merge_cut`: sizes at or below which the serial code runs (sort.c's base cases
// for tbb-fine; larger for tbb-cutoff, where the serial code is sort.c's elision).
struct Cutoffs {
  std::uint64_t sort_cut, merge_cut;
  bool elision;  // below the cut-offs: the elision (true) or the base cases (false)
};

void merge_tasks(const std::uint32_t* a, std::uint64_t na, const std::uint32_t* b, std::uint64_t nb,
                 std::uint32_t* dest, const Cutoffs& c) {
  if (na < nb) {
    std::swap(a, b);
    std::swap(na, nb);
  }
  if (na + nb <= c.merge_cut) {
    if (c.elision)
      cilkmerge(a, static_cast<long>(na), b, static_cast<long>(nb), dest);
    else
      sort_merge_serially(a, static_cast<long>(na), b, static_cast<long>(nb), dest);
    return;
  }
  const std::uint64_t ma = na / 2;
  const auto mb = static_cast<std::uint64_t>(sort_lower_bound(b, static_cast<long>(nb), a[ma]));
  dest[ma + mb] = a[ma];
  tbb::task_group g;
  g.run([=] { merge_tasks(a, ma, b, mb, dest, c); });
  g.run([=] { merge_tasks(a + ma + 1, na - ma - 1, b + mb, nb - mb, dest + ma + mb + 1, c); });
  g.wait();
}

void sort_tasks(std::uint32_t* data, std::uint32_t* tmp, std::uint64_t n, const Cutoffs& c) {
  if (n <= c.sort_cut) {
    if (c.elision)
      cilksort(data, tmp, static_cast<long>(n));
    else
      sort_insertion(data, static_cast<long>(n));
    return;
  }
  const std::uint64_t q = n / 4;
  tbb::task_group g;
  for (std::uint64_t i = 0; i < 4; ++i)
    g.run([=] { sort_tasks(data + i * q, tmp + i * q, i < 3 ? q : n - 3 * q, c); });
  g.wait();
  g.run([=] { merge_tasks(data, q, data + q, q, tmp, c); });
  g.run([=] { merge_tasks(data + 2 * q, q, data + 3 * q, n - 3 * q, tmp + 2 * q, c); });
  g.wait();
  merge_tasks(tmp, 2 * q, tmp + 2 * q, n - 2 * q, data, c);
}

}  // namespace

void sort_tbb_fine(std::uint32_t* data, std::uint32_t* tmp, std::uint64_t n) {
  sort_tasks(data, tmp, n, {kSortBase, kMergeBase, false});
}

void sort_tbb_cutoff(std::uint32_t* data, std::uint32_t* tmp, std::uint64_t n) {
  sort_tasks(data, tmp, n, {kSortTbbCutoff, kSortTbbCutoff, true});
}

}  // namespace chanflow::workloads
