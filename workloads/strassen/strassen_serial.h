/* Strassen's serial helpers: one text for strassen.c (its serial elision) and the hand-built graph
 * (built before strassen.cl, where the root is at most the base order and, on a CPU device, where
 * tasks form their factors). Elements are REAL, defined by the includer; STRASSEN_GLOBAL is where
 * matrices live: global memory on an OpenCL device, plain memory on the host. */
#ifndef STRASSEN_SERIAL_H
#define STRASSEN_SERIAL_H

#ifdef __OPENCL_VERSION__
#define STRASSEN_GLOBAL __global
#else
#define STRASSEN_GLOBAL
#endif

/* C = A·B by the definition (i-k-j order: unit stride in B and C). */
void strassen_base(long n, STRASSEN_GLOBAL const REAL *A, long as, STRASSEN_GLOBAL const REAL *B, long bs,
                   STRASSEN_GLOBAL REAL *C, long cs) {
  for (long i = 0; i < n; i++) {
    for (long j = 0; j < n; j++) C[i * cs + j] = 0;
    for (long k = 0; k < n; k++) {
      REAL a = A[i * as + k];
      for (long j = 0; j < n; j++) C[i * cs + j] += a * B[k * bs + j];
    }
  }
}

/* Z = X + s·Y (s = 1 or -1), n×n; Z's rows are n apart. */
void strassen_add(long n, STRASSEN_GLOBAL const REAL *X, long xs, STRASSEN_GLOBAL const REAL *Y, long ys, REAL s,
                  STRASSEN_GLOBAL REAL *Z) {
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) Z[i * n + j] = X[i * xs + j] + s * Y[i * ys + j];
}

#endif /* STRASSEN_SERIAL_H */
