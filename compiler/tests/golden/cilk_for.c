/* The golden test's input for cilk_for: a loop in host code over an array (a range split down to
 * a grain), and one in a Cilk function whose body spawns and writes a local it shares (passed by
 * address) and a local array. */
#include <cilk/cilk.h>

long square(long x) {
  long y = cilk_spawn square(x > 0 ? 0 : x);
  cilk_sync;
  return x * x + y;
}

void add_one(float *v, int n) {
  cilk_for (int i = 0; i < n; i++) v[i] += 1.0f;
}

long squares(long *out, int n) {
  long seen = 0;
  long last[2] = {0, 0};
  cilk_for (int i = n - 1; i >= 0; i -= 2) {
    out[i] = cilk_spawn square(i);
    cilk_sync;
    if (out[i] > 100) seen = 1;
    last[i % 2] = i;
  }
  return seen + last[0] + last[1];
}
