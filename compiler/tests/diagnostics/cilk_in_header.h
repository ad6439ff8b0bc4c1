/* A Cilk function defined in a header: chanflowc refuses it (see cilk_in_header.c). */
#include <cilk/cilk.h>
long count(long n) {
  if (n < 2) return 1;
  long a = cilk_spawn count(n - 1);
  long b = count(n - 2);
  cilk_sync;
  return a + b;
}
