/* Strassen's matrix multiplication, C = A·B for n×n matrices, n a power of two: seven recursive
 * products of half-size matrices down to a base case multiplied by the definition, combined into
 * the quadrants of C after the sync. Written after the classic Cilk `strassen` benchmark
 * (double precision, temporaries per product); REAL may be defined as float.
 *
 * chanflow compiles this file as plain C with the keywords defined away (its serial elision, the
 * `serial` implementation) and by hand into the graph of strassen.cl. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef REAL
#define REAL double
#endif
#ifndef STRASSEN_BASE
#define STRASSEN_BASE 64 /* order multiplied by the definition: measured, see workloads/README.md */
#endif

#include "strassen_serial.h" /* strassen_base, strassen_add */

void strassen(long n, const REAL *A, long as, const REAL *B, long bs, REAL *C, long cs) {
  if (n <= STRASSEN_BASE) {
    /* By the definition: a row of C per iteration, summed in acc; a matrix smaller than the base
     * order serially. */
    if (n < STRASSEN_BASE) {
      strassen_base(n, A, as, B, bs, C, cs);
      return;
    }
    cilk_for (long i = 0; i < n; i++) {
      REAL acc[STRASSEN_BASE];
      for (int j = 0; j < STRASSEN_BASE; j++) acc[j] = 0;
      for (long k = 0; k < n; k++) {
        REAL a = A[i * as + k];
        for (int j = 0; j < STRASSEN_BASE; j++) acc[j] += a * B[k * bs + j];
      }
      for (int j = 0; j < STRASSEN_BASE; j++) C[i * cs + j] = acc[j];
    }
    return;
  }
  long h = n / 2, q = h * h + 64; /* a block of the temporaries, padded: its streams fall in other cache sets */
  const REAL *A11 = A, *A12 = A + h, *A21 = A + h * as, *A22 = A + h * as + h;
  const REAL *B11 = B, *B12 = B + h, *B21 = B + h * bs, *B22 = B + h * bs + h;
  REAL *t = malloc(sizeof(REAL) * q * 17); /* 10 operand sums, 7 products */
  REAL *S = t, *M = t + 10 * q;
  cilk_for (long i = 0; i < h; i++)
    cilk_for (long j = 0; j < h; j++) {
      long k = i * h + j, a = i * as + j, b = i * bs + j;
      S[k] = A11[a] + A22[a];
      S[q + k] = B11[b] + B22[b];
      S[2 * q + k] = A21[a] + A22[a];
      S[3 * q + k] = B12[b] - B22[b];
      S[4 * q + k] = B21[b] - B11[b];
      S[5 * q + k] = A11[a] + A12[a];
      S[6 * q + k] = A21[a] - A11[a];
      S[7 * q + k] = B11[b] + B12[b];
      S[8 * q + k] = A12[a] - A22[a];
      S[9 * q + k] = B21[b] + B22[b];
    }
  cilk_spawn strassen(h, S + 0 * q, h, S + 1 * q, h, M + 0 * q, h); /* M1 = (A11+A22)(B11+B22) */
  cilk_spawn strassen(h, S + 2 * q, h, B11, bs, M + 1 * q, h);      /* M2 = (A21+A22) B11 */
  cilk_spawn strassen(h, A11, as, S + 3 * q, h, M + 2 * q, h);      /* M3 = A11 (B12-B22) */
  cilk_spawn strassen(h, A22, as, S + 4 * q, h, M + 3 * q, h);      /* M4 = A22 (B21-B11) */
  cilk_spawn strassen(h, S + 5 * q, h, B22, bs, M + 4 * q, h);      /* M5 = (A11+A12) B22 */
  cilk_spawn strassen(h, S + 6 * q, h, S + 7 * q, h, M + 5 * q, h); /* M6 = (A21-A11)(B11+B12) */
  cilk_spawn strassen(h, S + 8 * q, h, S + 9 * q, h, M + 6 * q, h); /* M7 = (A12-A22)(B21+B22) */
  cilk_sync;
  cilk_for (long i = 0; i < h; i++)
    cilk_for (long j = 0; j < h; j++) {
      long k = i * h + j;
      REAL m1 = M[k], m2 = M[q + k], m3 = M[2 * q + k], m4 = M[3 * q + k];
      REAL m5 = M[4 * q + k], m6 = M[5 * q + k], m7 = M[6 * q + k];
      C[i * cs + j] = m1 + m4 - m5 + m7;
      C[i * cs + j + h] = m3 + m5;
      C[(i + h) * cs + j] = m2 + m4;
      C[(i + h) * cs + j + h] = m1 - m2 + m3 + m6;
    }
  free(t);
}

/* C = A·B, all n×n with row stride n. */
void strassen_multiply(long n, const REAL *A, const REAL *B, REAL *C) { strassen(n, A, n, B, n, C, n); }

int main(int argc, char *argv[]) {
  long n = argc > 1 ? atol(argv[1]) : 512;
  if (n < 1 || (n & (n - 1)) != 0) {
    fprintf(stderr, "strassen: n must be a power of two\n");
    return 1;
  }
  REAL *A = malloc(sizeof(REAL) * n * n), *B = malloc(sizeof(REAL) * n * n), *C = malloc(sizeof(REAL) * n * n);
  if (!A || !B || !C) {
    fprintf(stderr, "strassen: out of memory\n");
    return 1;
  }
  for (long i = 0; i < n * n; i++) {
    A[i] = (REAL)((i * 7) % 11) / 11;
    B[i] = (REAL)((i * 5) % 13) / 13;
  }
  strassen_multiply(n, A, B, C);
  double trace = 0;
  for (long i = 0; i < n; i++) trace += C[i * n + i];
  printf("strassen(%ld): trace of A·B = %.6g\n", n, trace);
  free(A);
  free(B);
  free(C);
  return 0;
}
