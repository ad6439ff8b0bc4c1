/* cilk_scope: spawns inside a scope are synced at its end; a void function spawned in a loop
 * writes its results through a pointer into main's memory. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

void square_block(const int *in, long *out, int n) {
  for (int i = 0; i < n; i++) out[i] = (long)in[i] * in[i];
}

long squares(const int *in, long *out, int n, int blocks) {
  int per = n / blocks;
  cilk_scope {
    for (int b = 0; b < blocks; b++) {
      int count = b == blocks - 1 ? n - b * per : per;
      cilk_spawn square_block(in + b * per, out + b * per, count);
    }
  }
  long total = 0;
  for (int i = 0; i < n; i++) total += out[i];
  return total;
}

int main(int argc, char *argv[]) {
  int n = argc > 1 ? atoi(argv[1]) : 10000;
  int *in = malloc(n * sizeof(int));
  long *out = calloc(n, sizeof(long));
  for (int i = 0; i < n; i++) in[i] = i % 1000 - 500;
  printf("sum of squares = %ld\n", squares(in, out, n, 16));
  free(in);
  free(out);
  return 0;
}
