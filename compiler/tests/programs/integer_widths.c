// Every C integer type and literal suffix in Cilk functions and their helpers, meaning on the device
// what it means on the host: `long long` (128 bits in OpenCL C), <stdint.h>'s and <stddef.h>'s
// types, bool, sizeof, a hash in unsigned long long arithmetic whose high bits matter, tasks with
// 64-bit fields spawned by a loop whose bound the data sets. Prints what the serial elision prints.
#include <cilk/cilk.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef unsigned long long u64;

typedef struct {
  unsigned long long seed;
  long long offset;
  uint32_t lanes;
  int8_t sign;
} Work;

static unsigned long long mix(unsigned long long x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The high half of a 64-bit product, as a 128-bit intermediate would not give it.
static u64 high_bits(u64 a, u64 b) {
  const u64 lo_a = a & 0xffffffffu, hi_a = a >> 32, lo_b = b & 0xffffffffu, hi_b = b >> 32;
  const u64 cross = (lo_a * lo_b >> 32) + (hi_a * lo_b & 0xffffffffULL) + lo_a * hi_b;
  return hi_a * hi_b + (hi_a * lo_b >> 32) + (cross >> 32);
}

// What each type is on the side running this code.
static long sizes(void) {
  return (long)(sizeof(char) + 2 * sizeof(short) + 3 * sizeof(int) + 5 * sizeof(long) + 7 * sizeof(long long) +
                11 * sizeof(unsigned long long) + 13 * sizeof(int64_t) + 17 * sizeof(uint8_t) + 19 * sizeof(size_t) +
                23 * sizeof(ptrdiff_t) + 29 * sizeof(uintptr_t) + 31 * sizeof(bool) + 37 * sizeof(Work) +
                41 * sizeof(0LL) + 43 * sizeof(1ULL) + 47 * sizeof(2L) + 53 * sizeof(3u) + 59 * _Alignof(long long));
}

// Literals of every suffix, and conversions where widths decide the answer.
static long long literals(long long x) {
  long long r = x * 3LL + 07l + 0x10L + 1ll + (long long)1u + (long long)2ul + (long long)3ull + (long long)4LLU;
  r += -9223372036854775807LL / (x + 2);        // a signed 64-bit division
  r ^= (long long)((unsigned long long)-1 >> 1); // a logical shift of all-ones: 2^63 - 1, not 2^127 - 1
  r += (long long)(int8_t)(x * 37) + (int16_t)(x * 1001) + (uint16_t)(x * 70001);
  return r;
}

unsigned long long walk(Work w, unsigned long long lo, unsigned long long hi) {
  if (hi - lo <= 4) {
    unsigned long long sum = 0;
    for (unsigned long long i = lo; i < hi; i++) {
      const unsigned long long h = mix(w.seed + i);
      sum += (h % 1000 < 321 ? 1 : 0) + high_bits(h, w.seed | 1) % 7 + (u64)(literals((long long)(i % 50) + w.offset) & 0xff);
    }
    return sum * (unsigned long long)w.lanes + (unsigned long long)(long long)w.sign;
  }
  // A loop of spawns whose bound the data sets: 2 to 5 parts.
  const unsigned parts = 2 + (unsigned)(mix(lo ^ w.seed) % 4);
  unsigned long long r[5] = {0, 0, 0, 0, 0};
  const unsigned long long step = (hi - lo + parts - 1) / parts;
  for (unsigned k = 0; k < parts; k++) {
    const unsigned long long a = lo + k * step, b = a + step < hi ? a + step : hi;
    if (a < b) r[k] = cilk_spawn walk(w, a, b);
  }
  cilk_sync;
  return r[0] + r[1] + r[2] + r[3] + r[4];
}

// <stdint.h> types as parameters and results of a Cilk function.
int64_t signed_sum(const int32_t* v, size_t n, uint8_t depth) {
  if (n <= 8 || depth == 0) {
    int64_t s = 0;
    for (size_t i = 0; i < n; i++) s += (int64_t)v[i] * (int64_t)v[i] - (int64_t)INT32_MAX;
    return s;
  }
  const ptrdiff_t half = (ptrdiff_t)(n / 2);
  int64_t a = cilk_spawn signed_sum(v, (size_t)half, (uint8_t)(depth - 1));
  int64_t b = signed_sum(v + half, n - (size_t)half, (uint8_t)(depth - 1));
  cilk_sync;
  return a + b;
}

long device_sizes(int n) {
  if (n == 0) return sizes();
  long a = cilk_spawn device_sizes(n - 1);
  cilk_sync;
  return a;
}

long long device_literals(long long x) {
  if (x <= 0) return literals(x);
  long long a = cilk_spawn device_literals(x - 1);
  long long b = literals(x);
  cilk_sync;
  return a ^ b;
}

int main(int argc, char** argv) {
  const unsigned long long n = argc > 1 ? strtoull(argv[1], 0, 10) : 2000;
  const Work w = {0x9e3779b97f4a7c15ULL, -12345678901LL, 3, -2};
  printf("walk: %llu\n", walk(w, 0, n));
  int32_t* v = malloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++) v[i] = (int32_t)(mix(i) >> 33) - (1 << 30);
  printf("signed_sum: %lld\n", (long long)signed_sum(v, (size_t)n, 20));
  free(v);
  printf("sizes: %ld (host %ld)\n", device_sizes(3), sizes());
  printf("literals: %lld\n", device_literals(40));
  return 0;
}
