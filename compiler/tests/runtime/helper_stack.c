/* A helper that calls itself as deep as its argument says: its explicit stack keeps the newest
 * frames in private memory (64 unless chanflowc is given --helper-stack) and older ones on the
 * device heap. 100,000 calls deep runs at the defaults; past what the heap holds (--heap), the run
 * stops naming the helper, the depth it reached, the heap's size and the flag that raises it. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

static long depth(long n) {
  if (n == 0) return 0;
  return 1 + depth(n - 1);
}

long measure(long n) { return depth(n); }

int main(int argc, char *argv[]) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  long d = cilk_spawn measure(n);
  cilk_sync;
  printf("depth(%ld) = %ld\n", n, d);
  return 0;
}
