// Globals device code cannot share with the host: one defined in another file, and one whose type
// device code cannot name.
#include <cilk/cilk.h>

extern int elsewhere;
struct { int lo, hi; } unnamed = {0, 1};

int leaf(int n) { return n + elsewhere + unnamed.hi; }

int tree(int n) {
  if (n < 2) return leaf(n);
  int a = cilk_spawn tree(n - 1);
  int b = tree(n - 2);
  cilk_sync;
  return a + b;
}

int main(void) { return tree(5); }
