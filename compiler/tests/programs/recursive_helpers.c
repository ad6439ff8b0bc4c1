/* Helpers that call themselves, the way the classic Cilk programs write their serial base cases
 * (chanflowc runs each on an explicit stack: OpenCL C has no recursion):
 * - a quicksort that sorts its left part by a call of itself and loops on the right (the shape of
 *   cilksort's sequential sort), under a Cilk sort that splits the array;
 * - a serial divide-and-conquer multiply by quadrants, eight calls and no result (the shape of a
 *   matrix multiply's base case), under a Cilk multiply;
 * - calls whose results are used inside expressions: a Fibonacci below a cut-off, a bitmask
 *   N-queens counting in a loop (`count += ...`), a walk that keeps a local array across its calls;
 * - a binary search returning a pointer from a call of itself in `return`.
 * usage: recursive_helpers [N] [M]  (N keys to sort, an M x M multiply, M a power of two) */
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

typedef long ELM;

static void insertion_sort(ELM *low, ELM *high) {
  for (ELM *p = low + 1; p <= high; p++) {
    ELM v = *p;
    ELM *q = p - 1;
    while (q >= low && *q > v) {
      q[1] = *q;
      q--;
    }
    q[1] = v;
  }
}

/* Sorts [low, high]: the left part by a call of itself, the right part by going round again. */
static void quick(ELM *low, ELM *high) {
  while (high - low >= 16) {
    ELM pivot = low[(high - low) / 2];
    ELM *i = low, *j = high;
    while (i <= j) {
      while (*i < pivot) i++;
      while (*j > pivot) j--;
      if (i <= j) {
        ELM t = *i;
        *i = *j;
        *j = t;
        i++;
        j--;
      }
    }
    quick(low, j);
    low = i;
  }
  insertion_sort(low, high);
}

/* Sorts blocks of a[0 .. n) in parallel; the blocks are merged by the host. */
void sort_blocks(ELM *a, long n, long block) {
  if (n <= block) {
    quick(a, a + n - 1);
    return;
  }
  cilk_spawn sort_blocks(a, n / 2, block);
  sort_blocks(a + n / 2, n - n / 2, block);
  cilk_sync;
}

/* C += A B for n x n blocks of rows `row` floats long, n a power of two: by quadrants. */
static void mul_add(float *C, float *A, float *B, int n, int row) {
  if (n <= 4) {
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        float s = C[i * row + j];
        for (int k = 0; k < n; k++) s += A[i * row + k] * B[k * row + j];
        C[i * row + j] = s;
      }
    return;
  }
  int h = n / 2;
  mul_add(C, A, B, h, row);
  mul_add(C, A + h, B + h * row, h, row);
  mul_add(C + h, A, B + h, h, row);
  mul_add(C + h, A + h, B + h * row + h, h, row);
  mul_add(C + h * row, A + h * row, B, h, row);
  mul_add(C + h * row, A + h * row + h, B + h * row, h, row);
  mul_add(C + h * row + h, A + h * row, B + h, h, row);
  mul_add(C + h * row + h, A + h * row + h, B + h * row + h, h, row);
}

/* C += A B: the four quadrants of C in parallel, twice; blocks of 16 by the serial helper. */
void multiply(float *C, float *A, float *B, int n, int row) {
  if (n <= 16) {
    mul_add(C, A, B, n, row);
    return;
  }
  int h = n / 2;
  cilk_spawn multiply(C, A, B, h, row);
  cilk_spawn multiply(C + h, A, B + h, h, row);
  cilk_spawn multiply(C + h * row, A + h * row, B, h, row);
  multiply(C + h * row + h, A + h * row, B + h, h, row);
  cilk_sync;
  cilk_spawn multiply(C, A + h, B + h * row, h, row);
  cilk_spawn multiply(C + h, A + h, B + h * row + h, h, row);
  cilk_spawn multiply(C + h * row, A + h * row + h, B + h * row, h, row);
  multiply(C + h * row + h, A + h * row + h, B + h * row + h, h, row);
  cilk_sync;
}

static long fib_serial(int n) {
  if (n < 2) return n;
  return fib_serial(n - 1) + fib_serial(n - 2);
}

long fib(int n) {
  if (n < 14) return fib_serial(n);
  long x, y;
  x = cilk_spawn fib(n - 1);
  y = fib(n - 2);
  cilk_sync;
  return x + y;
}

/* Placements of queens on the rows left, with the columns and diagonals taken as bits. */
static int queens_bits(int n, unsigned cols, unsigned left, unsigned right) {
  const unsigned all = (1u << n) - 1;
  if (cols == all) return 1;
  int count = 0;
  unsigned avail = ~(cols | left | right) & all;
  while (avail) {
    unsigned bit = avail & -avail;
    avail -= bit;
    count += queens_bits(n, cols | bit, (left | bit) << 1, (right | bit) >> 1);
  }
  return count;
}

/* The placements with the first row's queen in column `col`. */
int queens_at(int n, int col) {
  const unsigned bit = 1u << col;
  return queens_bits(n, bit, bit << 1, bit >> 1);
}

/* The first row's columns in parallel; the rest by the serial count. */
int queens(int n, int col) {
  if (col == n) return 0;
  int here, rest;
  here = cilk_spawn queens_at(n, col);
  rest = queens(n, col + 1);
  cilk_sync;
  return here + rest;
}

/* A walk whose activations each keep four digits in a local array across their calls. */
static long walk(long x, int depth) {
  int d[4];
  for (int i = 0; i < 4; i++) d[i] = (int)((x >> (4 * i)) & 15);
  if (depth == 0) return d[0] + 3 * d[1] + 5 * d[2] + 7 * d[3];
  long s = 0;
  for (int i = 0; i < 4; i++) s = (s + d[i] * walk(x * 31 + d[i] + i, depth - 1)) % 1000003;
  return s;
}

long walks(long x, int depth, int n) {
  if (n == 1) return walk(x, depth);
  long a, b;
  a = cilk_spawn walks(x, depth, n / 2);
  b = walks(x + n / 2, depth, n - n / 2);
  cilk_sync;
  return (a + b) % 1000003;
}

/* Found by review: a call in an `else if` condition; a parameter named `resume`; locals x, x__1
 * and an inner x (each kept under a name of its own). */
static long steps(long n, long resume) {
  long x = n, x__1 = resume;
  if (n <= 0) return resume;
  else if (steps(n - 1, resume + 1) > 3 * n) return x + x__1;
  {
    long x = n * 2;
    long r = steps(n / 2, resume);
    return x + r + x__1;
  }
}

long count_steps(long n) { return steps(n, 0); }

/* The first element of [lo, hi) not below v (the range sorted). */
static ELM *lower_bound(ELM *lo, ELM *hi, ELM v) {
  if (hi <= lo) return lo;
  ELM *mid = lo + (hi - lo) / 2;
  if (*mid < v) return lower_bound(mid + 1, hi, v);
  return lower_bound(lo, mid, v);
}

/* The sum of each query's rank in the sorted a[0 .. n). */
long ranks(ELM *a, long n, ELM *q, long m) {
  if (m == 1) return lower_bound(a, a + n, q[0]) - a;
  long x, y;
  x = cilk_spawn ranks(a, n, q, m / 2);
  y = ranks(a, n, q + m / 2, m - m / 2);
  cilk_sync;
  return x + y;
}

static unsigned long long seed = 12345;
static long next_random(void) {
  seed = seed * 6364136223846793005ull + 1442695040888963407ull;
  return (long)(seed >> 33);
}

static int compare(const void *a, const void *b) {
  ELM x = *(const ELM *)a, y = *(const ELM *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char *argv[]) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  int m = argc > 2 ? atoi(argv[2]) : 64;
  ELM *a = malloc(n * sizeof(ELM));
  for (long i = 0; i < n; i++) a[i] = next_random() % 1000000;
  const long block = 1024;
  sort_blocks(a, n, block);
  long descents = 0, checksum = 0; /* at most one where each block meets the next */
  for (long i = 1; i < n; i++) descents += a[i - 1] > a[i];
  for (long i = 0; i < n; i++) checksum = (checksum * 31 + a[i]) % 1000000007;
  qsort(a, n, sizeof(ELM), compare);
  printf("sort: %ld descents, checksum %ld\n", descents, checksum);

  float *A = malloc(m * m * sizeof(float)), *B = malloc(m * m * sizeof(float)), *C = malloc(m * m * sizeof(float));
  for (int i = 0; i < m * m; i++) {
    A[i] = (float)(next_random() % 7) - 3;
    B[i] = (float)(next_random() % 5) - 2;
    C[i] = 1;
  }
  multiply(C, A, B, m, m);
  double trace = 0, total = 0;
  for (int i = 0; i < m; i++) trace += C[i * m + i];
  for (int i = 0; i < m * m; i++) total += C[i];
  printf("multiply %d: trace %.1f, sum %.1f\n", m, trace, total);

  printf("fib(24) = %ld\n", fib(24));
  printf("queens(8) = %d, queens(10) = %d\n", queens(8, 0), queens(10, 0));
  printf("walks = %ld\n", walks(7, 4, 100));
  long a1 = cilk_spawn count_steps(20);
  long a2 = count_steps(33);
  cilk_sync;
  printf("steps = %ld %ld\n", a1, a2);
  ELM *q = malloc(1000 * sizeof(ELM));
  for (int i = 0; i < 1000; i++) q[i] = next_random() % 1000000;
  printf("ranks = %ld\n", ranks(a, n, q, 1000));
  free(a);
  free(A);
  free(B);
  free(C);
  free(q);
  return 0;
}
