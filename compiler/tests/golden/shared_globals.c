// Globals device code shares with host code: a size main sets, a pointer, a bound tasks lower.
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

int width;
long* data;
long lowest = 1L << 40;

long smallest(int lo, int hi) {
  if (hi - lo == 1) {
    if (data[lo] < lowest) lowest = data[lo];
    return data[lo] * width;
  }
  long a = cilk_spawn smallest(lo, (lo + hi) / 2);
  long b = smallest((lo + hi) / 2, hi);
  cilk_sync;
  return a < b ? a : b;
}

int main(int argc, char** argv) {
  width = argc > 1 ? atoi(argv[1]) : 10;
  data = malloc(sizeof(long) * (size_t)width);
  for (int i = 0; i < width; i++) data[i] = (i * 7919) % 101;
  printf("%ld %ld\n", smallest(0, width), lowest);
  return 0;
}
