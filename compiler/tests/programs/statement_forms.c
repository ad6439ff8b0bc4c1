/* C's statement forms in Cilk functions and in their serial forms, written as people write them:
 * loops nested without braces whose heads assign variables declared earlier (`int i, k;
 * for (i = 0; ...) for (k = 0; ...) {...}`), a loop as the body of an if and of an else, a while
 * and a do-while as a for's body, a comma in a for's head, a switch whose cases fall through, and
 * a spawn's or a call's result added in (`s += cilk_spawn f()`, `s -= f()`). Each function's result is checked against the serial elision. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

/* c[i][k] = sum over j of a[i][j] * b[j][k] on an m x m block, split by rows as matmul splits. */
void block_product(const long *a, const long *b, long *c, int rows, int m) {
  if (rows <= 2) {
    int i, j, k;
    for (i = 0; i < rows; i++)
      for (k = 0; k < m; k++) {
        long s = 0;
        for (j = 0; j < m; j++)
          s += a[i * m + j] * b[j * m + k];
        c[i * m + k] = s;
      }
    return;
  }
  int half = rows >> 1;
  cilk_spawn block_product(a, b, c, half, m);
  block_product(a + half * m, b, c + half * m, rows - half, m);
  return;
}

long shapes(long n, int depth) {
  long total = 0;
  int i, j;
  if (depth <= 0) {
    if (n % 2 == 0)
      for (i = 0, j = (int)n; i < j; i++, j--)
        total += i * j;
    else
      for (i = 0, j = 0; i < 5; i++)
        while (j < i)
          i > 2 ? (void)(total += j) : (void)0, j++;
    for (i = 0; i < 3; i++)
      do
        total += i;
      while (0);
    switch (n % 4) {
      case 0: total += 1;
      case 1: total += 10; break;
      case 2:
        for (i = 0; i < 2; i++)
          total *= 2;
        break;
      default: total -= 3;
    }
    return total;
  }
  long x = cilk_spawn shapes(n + 1, depth - 1);
  long y = shapes(n + 2, depth - 1);
  cilk_sync;
  for (i = 0; i < depth; i++)
    for (j = 0; j < depth; j++)
      if (i != j)
        total += i * j;
  return x + y + total;
}

long folds(long n, int depth) {
  long s = n;
  if (depth <= 0) return n % 5;
  s += cilk_spawn folds(n + 1, depth - 1);
  s -= folds(n * 2 % 11, depth - 1);
  cilk_sync;
  return s;
}

int main(int argc, char **argv) {
  const int m = argc > 1 ? atoi(argv[1]) : 24;
  const int depth = argc > 2 ? atoi(argv[2]) : 10;
  long *a = malloc(sizeof(long) * m * m), *b = malloc(sizeof(long) * m * m), *c = malloc(sizeof(long) * m * m);
  for (int i = 0; i < m * m; i++) a[i] = i % 13 - 6, b[i] = i % 7 + 1, c[i] = -1;
  block_product(a, b, c, m, m);
  long checksum = 0;
  for (int i = 0; i < m * m; i++) checksum = checksum * 31 % 1000000007 + c[i];
  printf("block product of %d x %d: %ld\n", m, m, checksum);
  printf("shapes(0, %d) = %ld\n", depth, shapes(0, depth));
  printf("folds(1, %d) = %ld\n", depth, folds(1, depth));
  free(a), free(b), free(c);
  return 0;
}
