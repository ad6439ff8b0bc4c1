/* Results through the addresses of locals, the style of classic Cilk code where a void function
 * writes its result through a pointer (`spawn fib(n - 1, &x)`): the locals must stay where they
 * are until the sync although the kernel that declared them has ended. Scalars, array elements
 * (also as `half + 1`), a struct field, a parameter, a loop of spawns into an array, a plain call,
 * two different callees before one sync, and a local written by a child, synced, then passed
 * again after the sync. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  long sum;
  int count;
} stats;

/* *r = fib(n), written through the pointer. */
void fib_into(int n, long *r) {
  if (n < 2) {
    *r = n;
    return;
  }
  long x, y;
  cilk_spawn fib_into(n - 1, &x);
  fib_into(n - 2, &y); /* a plain call given the address of a local */
  cilk_sync;
  *r = x + y;
}

/* Sum and count of the values of a[lo .. hi) above `floor`, the halves into a local array. */
void range_stats(const int *a, int lo, int hi, int floor, stats *s) {
  if (hi - lo <= 8) {
    s->sum = 0;
    s->count = 0;
    for (int i = lo; i < hi; i++)
      if (a[i] > floor) {
        s->sum += a[i];
        s->count++;
      }
    return;
  }
  stats half[2] = {{0, 0}, {0, 0}};
  int mid = lo + (hi - lo) / 2;
  cilk_spawn range_stats(a, lo, mid, floor, &half[0]);
  cilk_spawn range_stats(a, mid, hi, floor, half + 1);
  cilk_sync;
  s->sum = half[0].sum + half[1].sum;
  s->count = half[0].count + half[1].count;
}

/* How many of a[lo .. hi) have remainder `digit` modulo 10, into *out. */
void count_digit(const int *a, int lo, int hi, int digit, int *out) {
  if (hi - lo <= 64) {
    int c = 0;
    for (int i = lo; i < hi; i++) c += a[i] % 10 == digit;
    *out = c;
    return;
  }
  int left = 0, right = 0;
  cilk_spawn count_digit(a, lo, (lo + hi) / 2, digit, &left);
  cilk_spawn count_digit(a, (lo + hi) / 2, hi, digit, &right);
  cilk_sync;
  *out = left + right;
}

/* Adds fib(n) to *p (the parent's local, or its parameter). */
void add_fib(int n, long *p) {
  long f;
  fib_into(n, &f);
  *p += f;
}

/* A parameter whose address a child gets, then a spawn into a local: two callees, one sync. */
long offset_fib(long base, int n) {
  cilk_spawn add_fib(n, &base);
  long check = 0;
  cilk_spawn fib_into(n, &check);
  cilk_sync;
  return base - check; /* the original base again */
}

/* A digit histogram: one child per digit, each into its own element; then the total through a
 * struct field, and a local written by a child, synced, and passed on again after the sync. */
long histogram(const int *a, int n, int *counts) {
  int local_counts[10];
  for (int d = 0; d < 10; d++) cilk_spawn count_digit(a, 0, n, d, &local_counts[d]);
  stats all;
  all.sum = 0;
  cilk_spawn range_stats(a, 0, n, -1, &all);
  cilk_sync;
  long total = 0;
  for (int d = 0; d < 10; d++) {
    counts[d] = local_counts[d];
    total += local_counts[d];
  }
  long twice = total;
  cilk_spawn add_fib(10, &twice); /* after the sync: the same local, passed again */
  cilk_sync;
  return (twice - 55 == total && all.count == n) ? all.sum : -1;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20000;
  int fib_n = argc > 2 ? atoi(argv[2]) : 20;
  int *a = malloc(sizeof(int) * (size_t)n);
  int *counts = malloc(sizeof(int) * 10);
  srand(7);
  for (int i = 0; i < n; i++) a[i] = rand() % 1000;
  long f = 0;
  fib_into(fib_n, &f);
  printf("fib(%d) = %ld\n", fib_n, f);
  stats s;
  range_stats(a, 0, n, 500, &s);
  printf("above 500: %d values, sum %ld\n", s.count, s.sum);
  long sum = histogram(a, n, counts);
  printf("sum %ld, digits", sum);
  for (int d = 0; d < 10; d++) printf(" %d", counts[d]);
  printf("\n");
  printf("offset_fib: %ld\n", offset_fib(1000, fib_n - 5));
  free(counts);
  free(a);
  return 0;
}
