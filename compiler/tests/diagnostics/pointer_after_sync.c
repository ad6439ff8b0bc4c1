/* What only lowering finds: a pointer into a private local, used after a sync. */
#include <cilk/cilk.h>

int leaf(int n) { return n; }

int pointer_after_sync(int n) {
  int pair[2] = {n, n + 1};
  int *p = pair + 1;
  int y = cilk_spawn leaf(n);
  cilk_sync;
  return y + *p;
}

int main(void) { return pointer_after_sync(1); }
