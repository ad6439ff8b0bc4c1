/* Host memory a Cilk function reaches however its address travels: through a pointer variable, a
 * struct field, an array of pointers, a global, a parameter of a host function, a static local,
 * the heap (malloc, calloc, realloc), and alloca's blocks (magic.cilk's main takes its grid from
 * Cilk_alloca), taken again by each call of a host function. On a GPU the device reaches none of the host's stack or
 * data, so chanflowc keeps every host variable whose address is taken in SVM. */
#include <alloca.h>
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  long *sum;   /* where the result goes */
  long *count;
} Target;

long table[16];          /* a global the device fills through a pointer */
long global_total = 0;   /* a global reached through a pointer variable */

void add_range(long lo, long hi, long *sum) {
  if (hi - lo <= 4) {
    for (long i = lo; i < hi; i++) *sum += i;
    return;
  }
  long left = 0, right = 0;
  cilk_spawn add_range(lo, (lo + hi) / 2, &left);
  add_range((lo + hi) / 2, hi, &right);
  cilk_sync;
  *sum += left + right;
}

void into_target(Target t, long n) {
  long s = 0;
  add_range(0, n, &s);
  *t.sum = s;
  *t.count = n;
}

void fill_all(long **slots, long k) {
  for (long i = 0; i < k; i++) cilk_spawn add_range(0, i + 1, slots[i]);
  cilk_sync;
}

void squares(long *out, long n) {
  for (long i = 0; i < n; i++) out[i] = i * i;
}

/* A host function whose parameter's address goes to the device. */
long through_parameter(long n) {
  add_range(0, n, &n);
  return n;
}

long with_static(long n) {
  static long kept = 100;
  add_range(0, n, &kept);
  return kept;
}

/* A block of the host function's own, from alloca, that the device writes. */
long from_stack(long n) {
  long *cell = alloca(2 * sizeof(long));
  cell[0] = cell[1] = 0;
  add_range(0, n, cell + 1);
  return cell[0] + cell[1];
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  long sum = 0, count = 0;
  long *p = &sum;                 /* a pointer variable */
  add_range(0, n, p);
  Target t = {&sum, &count};      /* struct fields */
  into_target(t, n / 2);
  long a = 0, b = 0, c = 0;
  long *slots[3] = {&a, &b, &c};  /* an array of pointers */
  fill_all(slots, 3);
  long *g = &global_total;        /* a global through a variable */
  add_range(0, n, g);
  squares(table, 16);             /* a global array */
  long *heap = malloc(4 * sizeof(long));
  heap = realloc(heap, 8 * sizeof(long));
  long *zeros = calloc(2, sizeof(long));
  heap[7] = 0;
  add_range(0, 10, &heap[7]);
  add_range(0, 20, zeros + 1);
  long local[2] = {5, 6};         /* a local array, decayed */
  add_range(0, 4, local);
  printf("sum %ld count %ld slots %ld %ld %ld global %ld table %ld heap %ld zeros %ld local %ld %ld\n", sum, count,
         a, b, c, global_total, table[15], heap[7], zeros[1], local[0], local[1]);
  long once = with_static(10);
  long twice = with_static(10);
  printf("parameter %ld static %ld %ld\n", through_parameter(n), once, twice);
  long stacked = 0;
  for (long i = 0; i < 50; i++) stacked += from_stack(i);
  printf("alloca %ld\n", stacked);
  free(heap);
  free(zeros);
  return 0;
}
