/* fib timed in one process: WARM calls, then REPS calls timed; -DCUT=K cuts by work (n < K).
 * -DNOW_MS_OUTSIDE takes the timer from now_ms.c, built by the system compiler and linked as an
 * object: built here, its timespec's address makes chanflowc place it in an SVM cell, which on a
 * GPU costs ~0.5 ms a call (docs/granularity.md). */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef CUT
#pragma chanflow serial_below(n < CUT)
#endif
long fib(long n) {
  if (n <= 2) return n == 0 ? 0 : 1;
  long x = cilk_spawn fib(n - 1);
  long y = cilk_spawn fib(n - 2);
  cilk_sync;
  return x + y;
}

static long serial_fib(long n) { return n <= 2 ? (n == 0 ? 0 : 1) : serial_fib(n - 1) + serial_fib(n - 2); }

#ifdef NOW_MS_OUTSIDE
double now_ms(void);
#else
static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
#endif

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char *argv[]) {
  long n = argc > 1 ? atol(argv[1]) : 30;
  int warm = argc > 2 ? atoi(argv[2]) : 12, reps = argc > 3 ? atoi(argv[3]) : 7;
  long want = serial_fib(n);
  for (int i = 0; i < warm; ++i)
    if (fib(n) != want) { printf("WRONG\n"); return 1; }
  double t[64];
  for (int i = 0; i < reps && i < 64; ++i) {
    double a = now_ms();
    long r = fib(n);
    t[i] = now_ms() - a;
    if (r != want) { printf("WRONG\n"); return 1; }
  }
  qsort(t, reps, sizeof t[0], cmp);
  printf("fib %ld: min %.3f median %.3f max %.3f ms\n", n, t[0], t[reps / 2], t[reps - 1]);
  return 0;
}
