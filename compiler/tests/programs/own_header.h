/* A header of own_header.c's own: the type, constants and helpers it holds reach device code as
 * the file's own do, and SALT (given with -D) reaches both the device and the host code. */
#ifndef OWN_HEADER_H
#define OWN_HEADER_H

#ifndef SALT
#error "compile with -DSALT=<number>"
#endif

#define LEAF 8 /* ranges this short are summed serially */

typedef struct {
  long lo, hi;
} range;

static const long kModulus = 13;

/* The weight of item i: a helper device code calls, defined in this header. */
static long weight(long i) { return (i * 7 + SALT) % kModulus; }

/* The serial sum of a leaf range. */
static long leaf_sum(range r) {
  long sum = 0;
  for (long i = r.lo; i < r.hi; i++) sum += weight(i);
  return sum;
}

#endif
