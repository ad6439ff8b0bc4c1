/* Helpers that call themselves, where chanflowc cannot put them on an explicit stack. */
#include <cilk/cilk.h>
#include <stdlib.h>

/* The call sits in a branch of ?: outside a return (made only when n > 0): it cannot be made first. */
int countdown(int n) { int r = n <= 0 ? 0 : countdown(n - 1); return r; }

/* On the right of && (made only when the left holds). */
int all_even(int *a, int n) { return n == 0 || (a[0] % 2 == 0 && all_even(a + 1, n - 1)); }

/* In a loop's condition. */
int steps(int n) {
  int k = 0;
  while (steps(n / 2) >= 0 && n > 1) {
    n /= 2;
    k++;
  }
  return k;
}

/* In a declaration of several variables whose second initializer reads the first: the calls are
 * made before the declarators, so the second call could not see it. */
int chain(int n) {
  if (n < 2) return n;
  int a = chain(n - 1), b = chain(a / 2);
  return a + b;
}

/* A pointer to a local: the activations share one copy of it. */
void fill(int *out, int n) {
  int mine = n;
  if (n > 0) fill(&mine, n - 1);
  *out = mine;
}

/* Calling each other. */
int odd(int n);
int even(int n) { return n == 0 ? 1 : odd(n - 1); }
int odd(int n) { return n == 0 ? 0 : even(n - 1); }

/* alloca in one: its blocks are released per activation. */
int scratch(int n) {
  int *b = alloca(n * sizeof(int));
  if (n > 1) {
    int r = scratch(n - 1);
    return r + b[0];
  }
  return 0;
}

int use(int n) {
  int a[4] = {0, 2, 4, 6}, out;
  int x = cilk_spawn use(n - 1);
  cilk_sync;
  fill(&out, n);
  return x + countdown(n) + all_even(a, 4) + steps(n) + even(n) + scratch(n) + out + chain(n);
}

int main(void) { return use(3); }
