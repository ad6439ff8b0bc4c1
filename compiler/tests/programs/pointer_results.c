/* Spawned results stored through pointers into main's memory (a[i] = cilk_spawn ..., *p = ...),
 * a run-time number of children from a loop, and a second sync after a spawn decided by the
 * first results. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

int digits(long x) {
  int d = 1;
  while (x >= 10) {
    x /= 10;
    d++;
  }
  return d;
}

long fill(long *out, int n, long seed) {
  if (n <= 4) {
    long s = 0;
    for (int i = 0; i < n; i++) {
      out[i] = seed * (i + 1) % 9973;
      s += out[i];
    }
    return s;
  }
  int parts = 2 + (int)(seed % 3);
  int per = n / parts;
  long partial[4];
  for (int p = 0; p < parts; p++) {
    int count = p == parts - 1 ? n - p * per : per;
    partial[p] = cilk_spawn fill(out + p * per, count, seed * 7 + p);
  }
  cilk_sync;
  long sum = 0;
  for (int p = 0; p < parts; p++) sum += partial[p];
  if (digits(sum) % 2 == 0) *(out + n - 1) = cilk_spawn fill(out, 1, sum);
  cilk_sync;
  return sum + out[n - 1];
}

int main(int argc, char *argv[]) {
  int n = argc > 1 ? atoi(argv[1]) : 3000;
  long *out = calloc(n, sizeof(long));
  long total = fill(out, n, 1);
  long check = 0;
  for (int i = 0; i < n; i++) check = (check * 31 + out[i]) % 1000003;
  printf("fill = %ld, check = %ld\n", total, check);
  free(out);
  return 0;
}
