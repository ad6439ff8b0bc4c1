/* `#pragma chanflow serial_below` checked where it is written: its expression may name only the
 * parameters of the Cilk function defined next, which must have a serial form. */
#include <cilk/cilk.h>

#pragma chanflow serial_below(n < limit)
long fib(long n) {
  if (n < 2) return n;
  long x = cilk_spawn fib(n - 1);
  long y = fib(n - 2);
  cilk_sync;
  return x + y;
}

#pragma chanflow serial_below(k > 2)
long twice(long k) { return 2 * k; }

void add(long* into, long v) { *into += v; }

/* A boxed local and a spawned leaf: it has a serial form (its activations' blocks on a LIFO). */
#pragma chanflow serial_below(n < 3)
long boxed(long n) {
  long local = 0;
  if (n < 2) return n;
  cilk_spawn add(&local, n);
  long y = cilk_spawn boxed(n - 1);
  cilk_sync;
  return local + y;
}

/* Functions that spawn each other have none. */
long pong(long n);

#pragma chanflow serial_below(n < 3)
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

long use(long n) { return fib(n) + boxed(n) + twice(n) + ping(n); }
