/* -Rserial-form: a remark at each Cilk function that spawns and gets no serial form, saying why,
 * and none at those that get one (a boxed local, a spawned leaf). */
#include <cilk/cilk.h>

void add(long* into, long v) { *into += v; }

long boxed(long n) {
  long local = 0;
  if (n < 2) return n;
  cilk_spawn add(&local, n);
  long y = cilk_spawn boxed(n - 1);
  cilk_sync;
  return local + y;
}

/* A pointer to a local that no child gets: the activations of a serial form share one copy. */
long pointed(long n) {
  long x = n;
  long* p = &x;
  *p += 1;
  if (n < 2) return x;
  long y = cilk_spawn pointed(n - 1);
  cilk_sync;
  return y + x;
}

long pong(long n);

long ping(long n) {
  if (n < 2) return n;
  long y = cilk_spawn pong(n - 1);
  cilk_sync;
  return y + 1;
}

long pong(long n) {
  long y = cilk_spawn ping(n / 2);
  cilk_sync;
  return y;
}

long jumps(long n) {
again:
  if (n > 100) {
    n /= 2;
    goto again;
  }
  if (n < 2) return n;
  long y = cilk_spawn jumps(n - 1);
  cilk_sync;
  return y;
}

long uses(long n) {
  long y = cilk_spawn ping(n);
  cilk_sync;
  return y;
}

long all(long n) { return boxed(n) + pointed(n) + jumps(n) + uses(n); }
