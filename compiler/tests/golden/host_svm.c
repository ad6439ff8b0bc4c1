/* The golden test's input: host variables whose address host code takes move to SVM cells (a
 * local through a pointer variable and a struct field, an array of pointers, a global, a host
 * function's parameter), every use of them naming the cell. Addresses only a library function
 * gets that returns no pointer (a timer's, sscanf's) leave their variables where they are; one
 * that returns a pointer (memset) does not. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char *argv[]) {
  long x = 0, y = 0, k = 1;
  char z[8];
  if (argc > 1) sscanf(argv[1], "%ld", &k);
  memset(z, 0, sizeof z);
  const double start = now_ms();
  long *p = &x;
  Target t = {&y};
  long *both[2] = {&x, &y};
  add(p, 5);
  add(t.out, 6);
  add(both[1], 2);
  add(&total, 4);
  printf("%ld %ld %ld %ld%s\n", x, y, total, twice(k), z);
  if (now_ms() < start) return 1;
  return 0;
}
