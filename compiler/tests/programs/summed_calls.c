/* Recursions whose return adds to the value of a call of itself: chanflowc's serial forms (and its
 * helpers that call themselves) go on as such a call instead of pushing a frame, the addend kept in
 * a sum (analysis/summed_calls.cpp). The call's value declared, assigned, on either side of the
 * `+`, in a plain helper's `return h(n - 1) + h(n - 2)` (the addend an earlier call's value), an
 * addend that reads a parameter the call then changes, negative addends, an unsigned sum that wraps,
 * a chain of thousands of frames (spilled to the heap and filled back, each frame's sum with it)
 * whose activations alternate between summing and pushing; and forms that must not be summed: an
 * addend read through a pointer, a sum of shorts (computed in int), a product. The list's cell type
 * is declared after the first Cilk function (the host code's task types follow it). Each runs as
 * its serial form below the serial depth and as tasks above it; the output is the serial elision's.
 * usage: summed_calls N */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

/* Declared: `long y = f(...); cilk_sync; return x + y;` */
long fib(long n) {
  if (n < 2) return n;
  long x = cilk_spawn fib(n - 1);
  long y = cilk_spawn fib(n - 2);
  cilk_sync;
  return x + y;
}

/* Assigned, the call's value on the left, an addend with a parameter the call changes. */
long tribonacci(long n) {
  long a, b, c;
  if (n < 3) return n == 2;
  a = cilk_spawn tribonacci(n - 1);
  b = cilk_spawn tribonacci(n - 2);
  c = cilk_spawn tribonacci(n - 3);
  cilk_sync;
  return c + (a + b - n % 3);
}

/* Negative addends: partial sums of either sign. */
long alternate(long n) {
  if (n <= 1) return n * 3 - 1;
  long x = cilk_spawn alternate(n - 1);
  long y = cilk_spawn alternate(n - 2);
  cilk_sync;
  return -x + y;
}

/* An unsigned sum that wraps. */
unsigned hash(unsigned n) {
  if (n < 2) return 2654435761u * (n + 1);
  unsigned x = cilk_spawn hash(n - 1);
  unsigned y = cilk_spawn hash(n - 2);
  cilk_sync;
  return x * 40503u + (n ^ 0x9e3779b9u) + y;
}

/* A plain helper: both calls in the return, the first one's value the second one's addend. */
static long paths(long n) {
  if (n < 2) return 1;
  return paths(n - 1) + paths(n - 2);
}

long with_paths(long n) {
  if (n < 2) return paths(n + 10);
  long x = cilk_spawn with_paths(n - 1);
  long y = cilk_spawn with_paths(n - 2);
  cilk_sync;
  return x + y;
}

/* Thousands deep: odd levels sum their call, even ones push a frame (a product is no sum), so the
 * frames spilled to the heap carry the sums of the activations that went on as calls. */
long zigzag(long n) {
  if (n <= 0) return 1;
  if (n % 2) {
    long r = cilk_spawn zigzag(n - 1);
    cilk_sync;
    return n % 7 + r;
  }
  long r = cilk_spawn zigzag(n - 1);
  cilk_sync;
  return r * 3 % 1000003;
}

typedef struct cell {
  long value;
  struct cell* next;
} cell;

/* The addend read through a pointer (the call might change it): not summed. */
long total(cell* c) {
  if (!c) return 0;
  long rest = cilk_spawn total(c->next);
  cilk_sync;
  return c->value + rest;
}

/* A sum of shorts is computed in int: not summed in short. */
short narrow(short n) {
  if (n < 2) return n;
  short x = cilk_spawn narrow(n - 1);
  short y = cilk_spawn narrow(n - 2);
  cilk_sync;
  return x + y;
}

int main(int argc, char* argv[]) {
  long n = argc > 1 ? atol(argv[1]) : 20;
  printf("fib(%ld) = %ld\n", n, fib(n));
  printf("tribonacci(%ld) = %ld\n", n, tribonacci(n));
  printf("alternate(%ld) = %ld\n", n, alternate(n));
  printf("hash(%ld) = %u\n", n, hash((unsigned)n));
  printf("with_paths(%ld) = %ld\n", n / 2, with_paths(n / 2));
  printf("zigzag(%ld) = %ld\n", 200 * n, zigzag(200 * n));
  cell* cells = malloc(sizeof(cell) * (size_t)(10 * n));
  for (long i = 0; i < 10 * n; ++i) cells[i] = (cell){i * 7 % 13 - 6, i + 1 < 10 * n ? &cells[i + 1] : 0};
  printf("total = %ld\n", total(cells));
  free(cells);
  printf("narrow(%d) = %d\n", (int)(n % 20), narrow((short)(n % 20)));
  return 0;
}
