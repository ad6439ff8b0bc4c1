/* The timer of fib-timed.c, built by the system C compiler (its timespec's address is not a Cilk
 * program's: chanflowc would place it in an SVM cell). */
#include <time.h>
double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
