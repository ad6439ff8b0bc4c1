// Strassen on oneTBB (strassen.c's recursion through task_group), the blocked GEMM reference
// time and the wide-precision reference product.
#include "strassen.hpp"

#include <tbb/task_group.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

namespace chanflow::workloads {
namespace {

// strassen.c's functions for each precision (its two serial elisions).
void elision(long n, const float* a, long as, const float* b, long bs, float* c, long cs) {
  strassen_f32(n, a, as, b, bs, c, cs);
}
void elision(long n, const double* a, long as, const double* b, long bs, double* c, long cs) {
  strassen_f64(n, a, as, b, bs, c, cs);
}
void base_case(long n, const float* a, long as, const float* b, long bs, float* c, long cs) {
  strassen_base_f32(n, a, as, b, bs, c, cs);
}
void base_case(long n, const double* a, long as, const double* b, long bs, double* c, long cs) {
  strassen_base_f64(n, a, as, b, bs, c, cs);
}
void add(long n, const float* x, long xs, const float* y, long ys, float s, float* z) {
  strassen_add_f32(n, x, xs, y, ys, s, z);
}
void add(long n, const double* x, long xs, const double* y, long ys, double s, double* z) {
  strassen_add_f64(n, x, xs, y, ys, s, z);
}

// strassen.c's strassen() with its seven spawns on a task_group; at or below `cut` the serial
// code: the base case (tbb-fine, the same granularity as chanflow) or the elision (tbb-cutoff).
template <class Real>
void strassen_tasks(long n, const Real* A, long as, const Real* B, long bs, Real* C, long cs, long cut, bool elide) {
  if (n <= cut) {
    if (elide)
      elision(n, A, as, B, bs, C, cs);
    else
      base_case(n, A, as, B, bs, C, cs);
    return;
  }
  const long h = n / 2, q = h * h;
  const Real *A11 = A, *A12 = A + h, *A21 = A + h * as, *A22 = A + h * as + h;
  const Real *B11 = B, *B12 = B + h, *B21 = B + h * bs, *B22 = B + h * bs + h;
  const std::unique_ptr<Real[]> t(new Real[static_cast<std::size_t>(q) * 17]);  // uninitialized, as malloc
  Real *S = t.get(), *M = t.get() + 10 * q;
  add(h, A11, as, A22, as, Real(1), S + 0 * q);
  add(h, B11, bs, B22, bs, Real(1), S + 1 * q);
  add(h, A21, as, A22, as, Real(1), S + 2 * q);
  add(h, B12, bs, B22, bs, Real(-1), S + 3 * q);
  add(h, B21, bs, B11, bs, Real(-1), S + 4 * q);
  add(h, A11, as, A12, as, Real(1), S + 5 * q);
  add(h, A21, as, A11, as, Real(-1), S + 6 * q);
  add(h, B11, bs, B12, bs, Real(1), S + 7 * q);
  add(h, A12, as, A22, as, Real(-1), S + 8 * q);
  add(h, B21, bs, B22, bs, Real(1), S + 9 * q);
  tbb::task_group g;
  auto product = [&](const Real* x, long xs, const Real* y, long ys, Real* m) {
    g.run([=] { strassen_tasks(h, x, xs, y, ys, m, h, cut, elide); });
  };
  product(S + 0 * q, h, S + 1 * q, h, M + 0 * q);
  product(S + 2 * q, h, B11, bs, M + 1 * q);
  product(A11, as, S + 3 * q, h, M + 2 * q);
  product(A22, as, S + 4 * q, h, M + 3 * q);
  product(S + 5 * q, h, B22, bs, M + 4 * q);
  product(S + 6 * q, h, S + 7 * q, h, M + 5 * q);
  product(S + 8 * q, h, S + 9 * q, h, M + 6 * q);
  g.wait();
  for (long i = 0; i < h; i++)
    for (long j = 0; j < h; j++) {
      const long k = i * h + j;
      const Real m1 = M[k], m2 = M[q + k], m3 = M[2 * q + k], m4 = M[3 * q + k];
      const Real m5 = M[4 * q + k], m6 = M[5 * q + k], m7 = M[6 * q + k];
      C[i * cs + j] = m1 + m4 - m5 + m7;
      C[i * cs + j + h] = m3 + m5;
      C[(i + h) * cs + j] = m2 + m4;
      C[(i + h) * cs + j + h] = m1 - m2 + m3 + m6;
    }
}

}  // namespace

template <class Real>
void strassen_tbb_fine(std::uint64_t n, const Real* a, const Real* b, Real* c) {
  const auto ln = static_cast<long>(n);
  strassen_tasks(ln, a, ln, b, ln, c, ln, kStrassenBase, false);
}

template <class Real>
void strassen_tbb_cutoff(std::uint64_t n, const Real* a, const Real* b, Real* c) {
  const auto ln = static_cast<long>(n);
  strassen_tasks(ln, a, ln, b, ln, c, ln, static_cast<long>(kStrassenTbbCutoff), true);
}

// Blocks of 64×64 (three float blocks fit a 48 KiB L1 data cache with room to spare; doubles
// fit L2), i-k-j order inside so the innermost loop runs over contiguous rows of b and c and
// vectorizes.
template <class Real>
void gemm_blocked(std::uint64_t n, const Real* a, const Real* b, Real* c) {
  constexpr std::uint64_t kBlock = 64;
  std::fill(c, c + n * n, Real(0));
  for (std::uint64_t i0 = 0; i0 < n; i0 += kBlock)
    for (std::uint64_t k0 = 0; k0 < n; k0 += kBlock)
      for (std::uint64_t j0 = 0; j0 < n; j0 += kBlock) {
        const std::uint64_t i1 = std::min(i0 + kBlock, n), k1 = std::min(k0 + kBlock, n), j1 = std::min(j0 + kBlock, n);
        for (std::uint64_t i = i0; i < i1; ++i)
          for (std::uint64_t k = k0; k < k1; ++k) {
            const Real aik = a[i * n + k];
            Real* ci = c + i * n;
            const Real* bk = b + k * n;
            for (std::uint64_t j = j0; j < j1; ++j) ci[j] += aik * bk[j];
          }
      }
}

// Serial, so that it shares nothing with the implementations it checks (and ThreadSanitizer,
// which cannot see inside libtbb, has no task results to misread).
template <class Real, class Wide>
void gemm_reference(std::uint64_t n, const Real* a, const Real* b, Wide* c) {
  auto rows = [&](std::uint64_t first, std::uint64_t last) {
    for (std::uint64_t i = first; i < last; ++i) {
      Wide* ci = c + i * n;
      std::fill(ci, ci + n, Wide(0));
      for (std::uint64_t k = 0; k < n; ++k) {
        const Wide aik = a[i * n + k];
        const Real* bk = b + k * n;
        for (std::uint64_t j = 0; j < n; ++j) ci[j] += aik * static_cast<Wide>(bk[j]);
      }
    }
  };
  // Bands of rows on the host's cores, each row summed in the serial order (the same result):
  // order 4096 in long double takes seconds of a benchmark's set-up rather than minutes. Plain
  // threads, not oneTBB: ThreadSanitizer sees their joins (libtbb is not instrumented).
  const std::uint64_t bands = std::min<std::uint64_t>(std::max(1u, std::thread::hardware_concurrency()), n);
  std::vector<std::thread> threads;
  for (std::uint64_t t = 1; t < bands; ++t) threads.emplace_back(rows, t * n / bands, (t + 1) * n / bands);
  rows(0, n / bands);
  for (auto& thread : threads) thread.join();
}

template void strassen_tbb_fine<float>(std::uint64_t, const float*, const float*, float*);
template void strassen_tbb_fine<double>(std::uint64_t, const double*, const double*, double*);
template void strassen_tbb_cutoff<float>(std::uint64_t, const float*, const float*, float*);
template void strassen_tbb_cutoff<double>(std::uint64_t, const double*, const double*, double*);
template void gemm_blocked<float>(std::uint64_t, const float*, const float*, float*);
template void gemm_blocked<double>(std::uint64_t, const double*, const double*, double*);
template void gemm_reference<float, double>(std::uint64_t, const float*, const float*, double*);
template void gemm_reference<double, long double>(std::uint64_t, const double*, const double*, long double*);

}  // namespace chanflow::workloads
