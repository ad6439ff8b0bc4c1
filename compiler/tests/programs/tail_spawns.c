/* Void Cilk functions whose last act is to spawn, and a sync followed only by a return: their
 * children return where the function returns (a tail sync forwards them, no continuation runs),
 * so whoever waits for the function waits for them. Each pass over the array must end before
 * the next begins, or the values come out different. The output is the serial elision's. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

/* Both halves spawned and nothing after: the implicit sync at the end is a tail sync. */
void mark(long *v, long lo, long hi, long pass) {
  if (hi - lo == 1) {
    v[lo] = v[lo] * 3 + pass + lo % 5;
    return;
  }
  long mid = lo + (hi - lo) / 2;
  cilk_spawn mark(v, lo, mid, pass);
  cilk_spawn mark(v, mid, hi, pass);
}

/* A branch that syncs and returns (a tail sync in an if), and after a sync that resumes, a pass
 * of its own over the array (it must see every value the forwarded children wrote: with the
 * greedy policy it runs as soon as its frame is ready), then a last pass spawned as it ends. */
void passes(long *v, long n, int depth) {
  if (depth == 0) {
    cilk_spawn mark(v, 0, n / 2, 0);
    cilk_spawn mark(v, n / 2, n, 0);
    cilk_sync;
    return;
  }
  cilk_spawn passes(v, n, depth - 1);
  cilk_sync;
  for (long i = 0; i < n; i++) v[i] = v[i] % 1000003 * 7 + depth;
  if (depth % 2) {
    mark(v, 0, n, depth); /* a plain call: spawn and sync, then nothing but the return */
    return;
  }
  cilk_spawn mark(v, 0, n, depth);
}

int main(int argc, char *argv[]) {
  long n = argc > 1 ? atol(argv[1]) : 5000;
  int depth = argc > 2 ? atoi(argv[2]) : 6;
  long *v = calloc(n, sizeof(long));
  passes(v, n, depth);
  long sum = 0;
  for (long i = 0; i < n; i++) sum = (sum * 31 + v[i]) % 1000000007;
  printf("tail_spawns(%ld, %d): %ld\n", n, depth, sum);
  free(v);
  return 0;
}
