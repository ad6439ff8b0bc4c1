/* assert in a Cilk function and in a helper it calls: a failed one stops the run as C's assert
 * does (file, line, function and expression on stderr, then abort); -DNDEBUG removes them.
 * usage: assert_fails N [BAD]: the helper's assertion fails where the walk reaches BAD (odd, > 2). */
#include <assert.h>
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

static int checked_half(int n) {
  assert(n % 2 == 0 || n < 3);
  return n / 2;
}

long walk(int n, int bad) {
  assert(n >= 0);
  if (n < 2) return 1;
  long a = cilk_spawn walk(n - 1, bad);
  long b = walk(checked_half(n == bad ? n : n - (n % 2)), bad);
  cilk_sync;
  return a + b;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 10;
  const int bad = argc > 2 ? atoi(argv[2]) : -1;
  printf("walk(%d): %ld\n", n, walk(n, bad));
  return 0;
}
