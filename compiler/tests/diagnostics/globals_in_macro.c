// A global device code shares, named in a macro's body: host code names its SVM cell there, in
// the macro itself, so an expansion where a local of the same name hides the global is refused
// (it would read the global).
#include <cilk/cilk.h>

int width = 3;
#define AT(row, col) ((row) * width + (col))

int leaf(int n) { return n + width; }

int tree(int n) {
  if (n < 2) return leaf(n);
  int a = cilk_spawn tree(n - 1);
  int b = tree(n - 2);
  cilk_sync;
  return a + b;
}

int hidden(int r) {
  int width = 5;
  return AT(r, 1);
}

int main(void) { return tree(5) + AT(2, 1) + hidden(1); }
