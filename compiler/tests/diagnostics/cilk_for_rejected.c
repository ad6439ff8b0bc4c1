/* cilk_for loops chanflowc cannot split into a range of iterations, each reported where it is. */
#include <cilk/cilk.h>

void bad_loops(int *v, int n) {
  int i;
  cilk_for (i = 0; i < n; i++) v[i] = 0;
  cilk_for (int j = 0; v[j] < n; j++) v[j] = 1;
  cilk_for (int k = 1; k < n; k *= 2) v[k] = 2;
  cilk_for (int a = 0; a < n; a++) {
    if (v[a] < 0) break;
    v[a] = 3;
  }
  cilk_for (int b = 0; b < n; b++) {
    for (int c = 0; c < b; c++)
      if (v[c] == b) break; /* an inner loop's break is fine */
    if (v[b] == 7) return;
  }
}

int main(void) {
  int v[8] = {0};
  bad_loops(v, 8);
  return v[0];
}
