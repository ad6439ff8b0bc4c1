/* cilksort's serial helpers: one text for sort.c (its serial elision on the host, and chanflowc's
 * device code) and the hand-built graph (built before sort.cl). Keys are SORT_KEY, defined by the
 * includer; SORT_GLOBAL is where they live: global memory on an OpenCL device, plain memory on
 * the host (chanflowc finds the address spaces itself, from the host's reading). */
#ifndef SORT_SERIAL_H
#define SORT_SERIAL_H

#ifdef __OPENCL_VERSION__
#define SORT_GLOBAL __global
#else
#define SORT_GLOBAL
#endif

void sort_insertion(SORT_GLOBAL SORT_KEY *a, long n) {
  for (long i = 1; i < n; i++) {
    SORT_KEY key = a[i];
    long j = i - 1;
    while (j >= 0 && a[j] > key) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = key;
  }
}

/* The first index in b[0 .. n) whose key is not below `key`. */
long sort_lower_bound(SORT_GLOBAL const SORT_KEY *b, long n, SORT_KEY key) {
  long lo = 0, hi = n;
  while (lo < hi) {
    long mid = lo + (hi - lo) / 2;
    if (b[mid] < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Merges the sorted runs a[0 .. na) and b[0 .. nb) into dest, one key at a time. */
void sort_merge_serially(SORT_GLOBAL const SORT_KEY *a, long na, SORT_GLOBAL const SORT_KEY *b, long nb,
                         SORT_GLOBAL SORT_KEY *dest) {
  long i = 0, j = 0, k = 0;
  while (i < na && j < nb) dest[k++] = b[j] < a[i] ? b[j++] : a[i++];
  while (i < na) dest[k++] = a[i++];
  while (j < nb) dest[k++] = b[j++];
}

#endif /* SORT_SERIAL_H */
