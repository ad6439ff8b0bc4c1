// C's contract for host allocation under chanflowc: a malloc, calloc or realloc the device cannot
// satisfy returns NULL (and realloc leaves its block as it was), so a program that checks for NULL
// goes on: here to a smaller size, which the Cilk function then sums.
#include <cilk/cilk.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

long sum(const int* a, long n) {
  if (n <= 16) {
    long s = 0;
    for (long i = 0; i < n; i++) s += a[i];
    return s;
  }
  long x = cilk_spawn sum(a, n / 2);
  long y = sum(a + n / 2, n - n / 2);
  cilk_sync;
  return x + y;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  const size_t impossible = SIZE_MAX / 4;
  int* a = malloc(impossible);
  printf("malloc of %zu bytes: %s\n", impossible, a ? "granted" : "NULL");
  if (!a) a = malloc((size_t)n * sizeof *a);
  if (!a) return 1;
  printf("calloc overflowing size_t: %s\n", calloc(SIZE_MAX / 2, 4) ? "granted" : "NULL");
  printf("calloc of %zu bytes: %s\n", impossible, calloc(impossible, 1) ? "granted" : "NULL");
  for (long i = 0; i < n; i++) a[i] = (int)(i % 7);
  int* b = realloc(a, impossible);
  printf("realloc to %zu bytes: %s\n", impossible, b ? "granted" : "NULL");
  if (!b) b = a;  // still the program's, unchanged
  printf("sum: %ld\n", sum(b, n));
  free(b);
  return 0;
}
