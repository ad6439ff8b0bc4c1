/* printf and fprintf(stdout, ...) in device code with C's formats (`%lf`, `%lld`, `%zu`, widths,
 * flags, `%%`), from a Cilk function and from a helper it calls, after what host code printed.
 * Only the root task prints, so the order is the elision's.
 * usage: device_printf N */
#include <cilk/cilk.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static void report(long long total, size_t n, double mean) {
  printf("total %lld (%llu unsigned, %#llx), n %zu, mean %lf = %.3e = %8.2f|%-6d|%%\n", total,
         (unsigned long long)total, (unsigned long long)total, n, mean, mean, mean, (int)n);
}

long long sum(const int *a, size_t n, int top) {
  long long s;
  if (n <= 8) {
    s = 0;
    for (size_t i = 0; i < n; i++) s += a[i];
    return s;
  }
  long long left = cilk_spawn sum(a, n / 2, 0);
  long long right = sum(a + n / 2, n - n / 2, 0);
  cilk_sync;
  s = left + right;
  if (top) {
    report(s, n, (double)s / n);
    fprintf(stdout, "%s: %c%c %ld %lu %hd\n", "halves", 'o', 'k', (long)left, (unsigned long)right, (short)n);
  }
  return s;
}

int main(int argc, char **argv) {
  const size_t n = argc > 1 ? (size_t)atol(argv[1]) : 1000;
  int *a = malloc(sizeof(int) * n);
  for (size_t i = 0; i < n; i++) a[i] = (int)(i * 7919 % 1000) - 300;
  printf("summing %zu\n", n);
  long long s = sum(a, n, 1);
  printf("sum = %lld\n", s);
  free(a);
  return 0;
}
