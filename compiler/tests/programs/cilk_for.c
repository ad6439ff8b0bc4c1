/* cilk_for as OpenCilk's programs write it: over an array in host code and in a Cilk function,
 * a body that spawns, loops nested, counting down and by steps, with `continue`, a local array
 * and a flag the body writes, and a loop whose body calls the C library (it stays serial where it
 * is). The output is the serial elision's. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

long fib(long n) {
  if (n < 2) return n;
  long x = cilk_spawn fib(n - 1);
  long y = fib(n - 2);
  cilk_sync;
  return x + y;
}

/* Host code: a loop over an array, and one nested in it. */
void fill(double *m, long rows, long cols) {
  cilk_for (long i = 0; i < rows; i++) {
    cilk_for (long j = 0; j < cols; j++) m[i * cols + j] = (double)(i * 31 + j * 7) / 16.0;
  }
}

/* A Cilk function: a loop whose body spawns, then one counting down by threes with continue. */
long fib_table(long *out, int n) {
  cilk_for (int i = 0; i < n; ++i) {
    out[i] = cilk_spawn fib(i % 20);
    cilk_sync;
  }
  long odd = 0, kept = 0;
  long parts[40]; /* n <= 40 */
  int negative = 0;
  cilk_for (int k = 3 * (n - 1); k >= 0; k -= 3) {
    if (out[k / 3] < 0) negative = 1; /* every writer writes 1 */
    parts[k / 3] = 0;
    if (k % 2 == 0) continue;
    parts[k / 3] = k;
  }
  cilk_for (int j = 0; j != n; j++) out[j] += j;
  for (int i = 0; i < n; i++) {
    odd += out[i] % 2;
    kept += parts[i];
  }
  return odd * 100000 + kept * 10 + negative;
}

int main(int argc, char *argv[]) {
  long rows = argc > 1 ? atol(argv[1]) : 300, cols = argc > 2 ? atol(argv[2]) : 200;
  double *m = malloc(rows * cols * sizeof(double));
  fill(m, rows, cols);
  double sum = 0;
  for (long i = 0; i < rows * cols; i++) sum += m[i];
  long *t = malloc(40 * sizeof(long));
  long r = fib_table(t, 40);
  /* A range wider than int holds (its count computed in long), and a long stepped down by an unsigned. */
  long wide[8];
  cilk_for (int i = -(1 << 30); i < (1 << 30); i += 1 << 28) wide[(i >> 28) + 4] = i / 1024;
  cilk_for (long d = 8; d > 0; d -= 1u) wide[d - 1] += d;
  long wide_sum = 0;
  for (int i = 0; i < 8; i++) wide_sum += wide[i];
  /* A pair run as one range of rows times columns, counting down and by twos; and a triangle,
   * whose inner range names the outer variable, run row by row. */
  long *grid = calloc(rows * cols, sizeof(long));
  cilk_for (long i = rows - 1; i >= 1; i -= 2)
    cilk_for (long j = 1; j < cols; j += 2) grid[i * cols + j] = i * 3 - j;
  cilk_for (long i = 0; i < rows; i++)
    cilk_for (long j = 0; j < (i < cols ? i + 1 : cols); j++) grid[i * cols + j] += 1;
  long grid_sum = 0;
  for (long i = 0; i < rows * cols; i++) grid_sum += grid[i] * (i % 13);
  free(grid);
  srand(7);
  long noise = 0;
  cilk_for (int i = 0; i < 10; i++) noise += rand() % 3; /* serial: rand has no device definition */
  printf("sum %.3f, table %ld, t[39] %ld, noise %ld, wide %ld, grid %ld\n", sum, r, t[39], noise, wide_sum, grid_sum);
  free(m);
  free(t);
  return 0;
}
