/* The A/B of fib's serial form (docs/compiler.md, "Compiled ÷ hand-built with spilling stacks"): a Cilk fib
 * called reps + 20 times by main, printing the median and minimum of the last reps calls.
 *   chanflowc fibtime.c -o fibtime && CHANFLOW_DEVICE=nvidia ./fibtime 30 60 */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
long fib(long n) {
  if (n < 2) return n;
  long x = cilk_spawn fib(n - 1);
  long y = fib(n - 2);
  cilk_sync;
  return x + y;
}
static double now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static int cmp(const void* a, const void* b) { double x = *(const double*)a, y = *(const double*)b; return x < y ? -1 : x > y; }
int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 30;
  int reps = argc > 2 ? atoi(argv[2]) : 40;
  double t[1000];
  long r = 0;
  for (int i = 0; i < reps + 20; i++) { double s = now_ms(); r = fib(n); t[i] = now_ms() - s; }
  qsort(t + 20, reps, sizeof(double), cmp);  /* the first 20 calls let the serial depth settle */
  printf("fib(%ld) = %ld: median %.3f ms, min %.3f ms over %d calls after 20\n", n, r, t[20 + reps / 2], t[20], reps);
  return 0;
}
