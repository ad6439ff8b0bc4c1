/* cilksort: sort an array of keys (SORT_KEY, 32-bit unsigned unless defined otherwise) by
 * splitting it into four quarters recursively, sorting the base cases, then merging pairs of
 * quarters and the two halves with a parallel divide-and-conquer merge (split the larger run at its middle, find that key's place in the
 * other run by binary search, merge both sides in parallel). Derived from the `cilksort` example
 * distributed with MIT Cilk 5 (thesis 4.5.1), written with half-open index ranges, an insertion
 * sort as the base case (the thesis' base case is 64 keys) and no recursion outside the Cilk
 * functions.
 *
 * chanflow compiles this file as plain C with the keywords defined away (its serial elision, the
 * `serial` implementation) and by hand into the graph of sort.cl. */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef SORT_BASE
#define SORT_BASE 64 /* keys a base case sorts serially: see workloads/README.md */
#endif
#ifndef MERGE_BASE
#define MERGE_BASE 256 /* keys a merge handles serially */
#endif
#ifndef SORT_KEY
#define SORT_KEY unsigned
#endif

#include "sort_serial.h" /* sort_insertion, sort_lower_bound, sort_merge_serially */

/* Merges the sorted runs a[0 .. na) and b[0 .. nb) into dest. */
void cilkmerge(const SORT_KEY *a, long na, const SORT_KEY *b, long nb, SORT_KEY *dest) {
  if (na < nb) { /* a is the longer run */
    const SORT_KEY *t = a;
    a = b;
    b = t;
    long tn = na;
    na = nb;
    nb = tn;
  }
  if (na + nb <= MERGE_BASE) {
    sort_merge_serially(a, na, b, nb, dest);
    return;
  }
  long ma = na / 2;
  long mb = sort_lower_bound(b, nb, a[ma]);
  dest[ma + mb] = a[ma];
  cilk_spawn cilkmerge(a, ma, b, mb, dest);
  cilk_spawn cilkmerge(a + ma + 1, na - ma - 1, b + mb, nb - mb, dest + ma + mb + 1);
  cilk_sync;
}

/* Sorts data[0 .. n), with tmp[0 .. n) as scratch. */
void cilksort(SORT_KEY *data, SORT_KEY *tmp, long n) {
  if (n <= SORT_BASE) {
    sort_insertion(data, n);
    return;
  }
  long q = n / 4;
  cilk_spawn cilksort(data, tmp, q);
  cilk_spawn cilksort(data + q, tmp + q, q);
  cilk_spawn cilksort(data + 2 * q, tmp + 2 * q, q);
  cilk_spawn cilksort(data + 3 * q, tmp + 3 * q, n - 3 * q);
  cilk_sync;
  cilk_spawn cilkmerge(data, q, data + q, q, tmp);
  cilk_spawn cilkmerge(data + 2 * q, q, data + 3 * q, n - 3 * q, tmp + 2 * q);
  cilk_sync;
  cilk_spawn cilkmerge(tmp, 2 * q, tmp + 2 * q, n - 2 * q, data);
  cilk_sync;
}

int main(int argc, char *argv[]) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  if (n < 1) {
    fprintf(stderr, "sort: n must be at least 1\n");
    return 1;
  }
  SORT_KEY *data = malloc(n * sizeof(SORT_KEY));
  SORT_KEY *tmp = malloc(n * sizeof(SORT_KEY));
  if (!data || !tmp) {
    fprintf(stderr, "sort: out of memory\n");
    return 1;
  }
  unsigned x = 12345u;
  for (long i = 0; i < n; i++) { /* xorshift keys */
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    data[i] = x;
  }
  cilksort(data, tmp, n);
  long wrong = 0;
  for (long i = 1; i < n; i++) wrong += data[i - 1] > data[i];
  printf("sort(%ld): %s\n", n, wrong ? "NOT sorted" : "sorted");
  free(data);
  free(tmp);
  return wrong != 0;
}
