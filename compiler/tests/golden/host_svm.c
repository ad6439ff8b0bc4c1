/* The golden test's input: host variables whose address host code takes move to SVM cells (a
 * local through a pointer variable and a struct field, an array of pointers, a global, a host
 * function's parameter), every use of them naming the cell. */
#include <cilk/cilk.h>
#include <stdio.h>

typedef struct {
  long *out;
} Target;

long total;

long fib(long n) {
  if (n < 2) return n;
  long a, b;
  a = cilk_spawn fib(n - 1);
  b = fib(n - 2);
  cilk_sync;
  return a + b;
}

void add(long *out, long n) {
  long f;
  f = cilk_spawn fib(n);
  cilk_sync;
  *out += f;
}

long twice(long n) {
  add(&n, 3);
  return n;
}

int main(void) {
  long x = 0, y = 0;
  long *p = &x;
  Target t = {&y};
  long *both[2] = {&x, &y};
  add(p, 5);
  add(t.out, 6);
  add(both[1], 2);
  add(&total, 4);
  printf("%ld %ld %ld %ld\n", x, y, total, twice(1));
  return 0;
}
