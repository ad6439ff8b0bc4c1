// cilksort on oneTBB: sort.c's recursion, spawned through task_group.
#include "sort.hpp"

#include <tbb/task_group.h>

namespace chanflow::workloads {
namespace {

// sort.c's functions for each key width (its two serial elisions).
void elided_merge(const std::uint32_t* a, long na, const std::uint32_t* b, long nb, std::uint32_t* d) { cilkmerge(a, na, b, nb, d); }
void elided_merge(const std::uint64_t* a, long na, const std::uint64_t* b, long nb, std::uint64_t* d) { cilkmerge_u64(a, na, b, nb, d); }
void serial_merge(const std::uint32_t* a, long na, const std::uint32_t* b, long nb, std::uint32_t* d) { sort_merge_serially(a, na, b, nb, d); }
void serial_merge(const std::uint64_t* a, long na, const std::uint64_t* b, long nb, std::uint64_t* d) { sort_merge_serially_u64(a, na, b, nb, d); }
long lower_bound(const std::uint32_t* b, long n, std::uint32_t key) { return sort_lower_bound(b, n, key); }
long lower_bound(const std::uint64_t* b, long n, std::uint64_t key) { return sort_lower_bound_u64(b, n, key); }
void elided_sort(std::uint32_t* data, std::uint32_t* tmp, long n) { cilksort(data, tmp, n); }
void elided_sort(std::uint64_t* data, std::uint64_t* tmp, long n) { cilksort_u64(data, tmp, n); }
void insertion(std::uint32_t* a, long n) { sort_insertion(a, n); }
void insertion(std::uint64_t* a, long n) { sort_insertion_u64(a, n); }

// `sort_cut` and `merge_cut`: sizes at or below which the serial code runs (sort.c's base cases
// for tbb-fine; larger for tbb-cutoff, where the serial code is sort.c's elision).
struct Cutoffs {
  std::uint64_t sort_cut, merge_cut;
  bool elision;  // below the cut-offs: the elision (true) or the base cases (false)
};

template <class Key>
void merge_tasks(const Key* a, std::uint64_t na, const Key* b, std::uint64_t nb, Key* dest, const Cutoffs& c) {
  if (na < nb) {
    std::swap(a, b);
    std::swap(na, nb);
  }
  if (na + nb <= c.merge_cut) {
    if (c.elision)
      elided_merge(a, static_cast<long>(na), b, static_cast<long>(nb), dest);
    else
      serial_merge(a, static_cast<long>(na), b, static_cast<long>(nb), dest);
    return;
  }
  const std::uint64_t ma = na / 2;
  const auto mb = static_cast<std::uint64_t>(lower_bound(b, static_cast<long>(nb), a[ma]));
  dest[ma + mb] = a[ma];
  tbb::task_group g;
  g.run([=] { merge_tasks(a, ma, b, mb, dest, c); });
  g.run([=] { merge_tasks(a + ma + 1, na - ma - 1, b + mb, nb - mb, dest + ma + mb + 1, c); });
  g.wait();
}

template <class Key>
void sort_tasks(Key* data, Key* tmp, std::uint64_t n, const Cutoffs& c) {
  if (n <= c.sort_cut) {
    if (c.elision)
      elided_sort(data, tmp, static_cast<long>(n));
    else
      insertion(data, static_cast<long>(n));
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

template <class Key>
void sort_tbb_fine(Key* data, Key* tmp, std::uint64_t n) {
  sort_tasks(data, tmp, n, {kSortBase, kMergeBase, false});
}

template <class Key>
void sort_tbb_cutoff(Key* data, Key* tmp, std::uint64_t n) {
  sort_tasks(data, tmp, n, {kSortTbbCutoff, kSortTbbCutoff, true});
}

void sort_serial(std::uint32_t* data, std::uint32_t* tmp, std::uint64_t n) { elided_sort(data, tmp, static_cast<long>(n)); }
void sort_serial(std::uint64_t* data, std::uint64_t* tmp, std::uint64_t n) { elided_sort(data, tmp, static_cast<long>(n)); }

template void sort_tbb_fine<std::uint32_t>(std::uint32_t*, std::uint32_t*, std::uint64_t);
template void sort_tbb_fine<std::uint64_t>(std::uint64_t*, std::uint64_t*, std::uint64_t);
template void sort_tbb_cutoff<std::uint32_t>(std::uint32_t*, std::uint32_t*, std::uint64_t);
template void sort_tbb_cutoff<std::uint64_t>(std::uint64_t*, std::uint64_t*, std::uint64_t);

}  // namespace chanflow::workloads
