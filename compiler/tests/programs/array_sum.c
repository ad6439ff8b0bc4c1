/* Divide-and-conquer sum over an array main allocates: pointer arithmetic on user data, a spawn
 * and a plain call of the same Cilk function, a serial base case loop. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

long array_sum(const int *a, long n) {
  if (n <= 100) {
    long s = 0;
    for (long i = 0; i < n; i++) s += a[i];
    return s;
  }
  long left = cilk_spawn array_sum(a, n / 2);
  long right = array_sum(a + n / 2, n - n / 2);
  cilk_sync;
  return left + right;
}

int main(int argc, char *argv[]) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  int *a = malloc(n * sizeof(int));
  for (long i = 0; i < n; i++) a[i] = (int)((i * 7919) % 1000) - 500;
  printf("sum = %ld\n", array_sum(a, n));
  free(a);
  return 0;
}
