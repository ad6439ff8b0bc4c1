/* Loops that spawn far more children than a batch (--max-loop-spawns, 32): void children writing
 * through a pointer, results stored through a pointer, a result into one local from a while loop
 * (the last spawn's, as in the serial elision), nested loops, and statements between the spawns
 * that must run once each, and a boxed local filled from such a loop. chanflowc syncs such a loop
 * a batch at a time. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

void touch(long *cells, long i) { cells[i] += i % 7 + 1; }

long square(long i) { return i * i % 1000003; }

long fill(long *cells, long n) {
  long between = 0;
  for (long i = 0; i < n; i++) {
    between += i % 3;  /* runs once per iteration, also across a batch's sync */
    cilk_spawn touch(cells, i);
  }
  cilk_sync;
  return between;
}

long sum_squares(long n, long *out) {
  for (long i = 0; i < n; i++) out[i] = cilk_spawn square(i);
  cilk_sync;
  long s = 0;
  for (long i = 0; i < n; i++) s += out[i];
  return s;
}

long last_square(long n) {
  long last = -1, i = 0;
  while (i < n) {
    last = cilk_spawn square(i);
    i += 3;
  }
  cilk_sync;
  return last;
}

void grid(long *cells, long rows, long cols) {
  for (long r = 0; r < rows; r++)
    for (long c = 0; c < cols; c++) cilk_spawn touch(cells, r * cols + c);
  cilk_sync;
}

void count_multiples(const long *cells, long n, long m, long *out) {
  long c = 0;
  for (long i = 0; i < n; i++) c += cells[i] % m == 0;
  *out = c;
}

/* A local whose address children get, filled from a loop of more spawns than a batch: its batch
 * syncs resume in the middle of the loop, with the local kept in the task's scratch block. */
long histogram(const long *cells, long n, long buckets) {
  long counts[64];
  for (long b = 0; b < buckets; b++) cilk_spawn count_multiples(cells, n, b + 1, &counts[b]);
  cilk_sync;
  long total = 0;
  for (long b = 0; b < buckets; b++) total += counts[b] * (b + 1);
  return total;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  long *cells = calloc(n, sizeof(long));
  long between = fill(cells, n);
  long check = 0;
  for (long i = 0; i < n; i++) check = (check * 31 + cells[i]) % 1000003;
  printf("fill: between %ld check %ld\n", between, check);
  long *out = calloc(n, sizeof(long));
  printf("sum_squares: %ld\n", sum_squares(n, out));
  printf("last_square: %ld\n", last_square(n));
  long rows = 100, cols = n / 100;
  grid(cells, rows, cols);
  check = 0;
  for (long i = 0; i < n; i++) check = (check * 31 + cells[i]) % 1000003;
  printf("grid: check %ld\n", check);
  printf("histogram: %ld\n", histogram(cells, n, 50));
  free(cells);
  free(out);
  return 0;
}
