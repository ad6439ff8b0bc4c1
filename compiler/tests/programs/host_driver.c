// A driver that only main reaches and that needs the host (it reads the clock, prints, fills the
// input from a generator whose state is a global) spawns the computation: it stays host code, its
// spawns graph runs one after another, in a loop and in a cilk_scope, and a cilk_for of its own.
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static unsigned long state = 88172645463325252UL;

static unsigned long next(void) {  // xorshift64: the input's generator, host code's alone
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

static double seconds(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec;
}

long sum(const long* a, long n) {
  if (n <= 32) {
    long s = 0;
    for (long i = 0; i < n; i++) s += a[i];
    return s;
  }
  long x = cilk_spawn sum(a, n / 2);
  long y = sum(a + n / 2, n - n / 2);
  cilk_sync;
  return x + y;
}

long run(long n, int rounds) {
  long* a = malloc((size_t)n * sizeof *a);
  cilk_for (long i = 0; i < n; i++) a[i] = (long)(i % 97);
  for (long i = 0; i < n; i += 7) a[i] = (long)(next() % 1000);
  const double start = seconds();
  long parts[8];
  for (int r = 0; r < rounds && r < 8; r++) parts[r] = cilk_spawn sum(a, n - r);
  long whole = 0;
  cilk_scope {
    whole = cilk_spawn sum(a, n);
  }
  cilk_sync;
  fprintf(stderr, "%d rounds in %.3f s\n", rounds, seconds() - start);
  long total = whole;
  for (int r = 0; r < rounds && r < 8; r++) {
    printf("part %d: %ld\n", r, parts[r]);
    total += parts[r];
  }
  free(a);
  return total;
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 10000;
  printf("total: %ld\n", run(n, 3));
  return 0;
}
