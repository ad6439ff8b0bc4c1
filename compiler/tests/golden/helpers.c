/* The golden test's input: a helper called with a private and a global pointer (two copies), a
 * spawn in a loop into an array element, and a void spawn. */
#include <cilk/cilk.h>

int total(const int *v, int n) {
  int t = 0;
  for (int i = 0; i < n; i++) t += v[i];
  return t;
}

void clear(int *out, int n) {
  for (int i = 0; i < n; i++) out[i] = 0;
}

int visit(int *data, int n) {
  if (n <= 4) return total(data, n);
  int parts[3];
  for (int k = 0; k < 3; k++) parts[k] = cilk_spawn visit(data + k * (n / 3), n / 3);
  cilk_spawn clear(data, 1);
  cilk_sync;
  return total(parts, 3);
}
