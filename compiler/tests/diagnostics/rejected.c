#include <cilk/cilk.h>
#include <stdlib.h>

int counter;

int leaf(int n) { return n; }

int spawn_in_expression(int n) {
  int x = 1 + cilk_spawn leaf(n);
  cilk_sync;
  return x;
}

int writes_global(int n) {
  int y = cilk_spawn leaf(n);
  cilk_sync;
  counter = y;
  return y;
}

int recursive_helper(int n) { return n > 0 && recursive_helper(n - 1); }

int calls_recursive(int n) {
  int y = cilk_spawn leaf(n);
  cilk_sync;
  return y + recursive_helper(n);
}

int main(void) { return spawn_in_expression(1); }
