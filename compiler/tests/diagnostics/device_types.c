// Types with no OpenCL C counterpart, used by device code: refused where first used, by name.
#include <cilk/cilk.h>

typedef struct {
  long double weight;
  int n;
} Item;

static unsigned __int128 square(unsigned long x) { return (unsigned __int128)x * x; }

static double total(const Item* items, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += (double)items[i].weight;
  return s;
}

long double mean(const Item* items, int n) {
  if (n == 1) return items[0].weight;
  long double a = cilk_spawn mean(items, n / 2);
  long double b = mean(items + n / 2, n - n / 2);
  cilk_sync;
  return (a + b) / 2;
}

unsigned long roots(unsigned long n, double _Complex z) {
  if (n < 2) return (unsigned long)square(n) + (unsigned long)__real__ z;
  unsigned long a = cilk_spawn roots(n - 1, z);
  cilk_sync;
  return a + (unsigned long)total(0, 0);
}

int main(void) {
  Item items[2] = {{1.0L, 1}, {2.0L, 2}};
  return (int)mean(items, 2) + (int)roots(3, 0);
}
