/* `#pragma chanflow serial_below` without its closing parenthesis: said where the line ends. */
#include <cilk/cilk.h>

#pragma chanflow serial_below(n < 4
long fib(long n) {
  if (n < 2) return n;
  long x = cilk_spawn fib(n - 1);
  long y = fib(n - 2);
  cilk_sync;
  return x + y;
}
