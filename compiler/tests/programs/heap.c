/* Memory as the classic Cilk programs use it, inside Cilk functions and their helpers: a board
 * copied into alloca'd memory for each child (N-queens, in a loop), malloc'd temporaries reached
 * with pointer arithmetic and freed after the sync (a merge sort), a calloc'd table grown with
 * realloc in a helper, memmove, and a block a Cilk function allocates and returns to main, which
 * reads it and frees it. The output is the serial elision's. */
#include <alloca.h>
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether a queen at (row, col) is safe from those in rows[0..row). */
static int safe(const char *rows, int row, int col) {
  for (int r = 0; r < row; r++) {
    int c = rows[r];
    if (c == col || c - col == row - r || col - c == row - r) return 0;
  }
  return 1;
}

/* Solutions with rows[0..row) placed: each child gets its own copy of the board. */
int queens(int n, int row, const char *rows) {
  if (row == n) return 1;
  int *count = alloca(n * sizeof(int));
  memset(count, 0, n * sizeof(int));
  for (int col = 0; col < n; col++) {
    if (!safe(rows, row, col)) continue;
    char *next = alloca(row + 1);
    memcpy(next, rows, row);
    next[row] = (char)col;
    count[col] = cilk_spawn queens(n, row + 1, next);
  }
  cilk_sync;
  int total = 0;
  for (int col = 0; col < n; col++) total += count[col];
  return total;
}

static void insertion(long *a, long n) {
  for (long i = 1; i < n; i++) {
    long v = a[i], j = i;
    for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
    a[j] = v;
  }
}

static void merge(const long *x, long nx, const long *y, long ny, long *out) {
  while (nx > 0 && ny > 0) {
    if (*y < *x) {
      *out++ = *y++;
      ny--;
    } else {
      *out++ = *x++;
      nx--;
    }
  }
  memcpy(out, x, nx * sizeof(long));
  memcpy(out + nx, y, ny * sizeof(long));
}

/* Sorts a[0..n): halves in parallel, merged through a temporary. */
void msort(long *a, long n) {
  if (n <= 12) {
    insertion(a, n);
    return;
  }
  long h = n / 2;
  cilk_spawn msort(a, h);
  msort(a + h, n - h);
  cilk_sync;
  long *t = malloc(n * sizeof(long));
  merge(a, h, a + h, n - h, t);
  memcpy(a, t, n * sizeof(long));
  free(t);
}

/* The distinct values of sorted v[0..n), in a table grown as it fills; its length in *len. */
static long *distinct(const long *v, long n, long *len) {
  long cap = 4, k = 0;
  long *out = calloc(cap, sizeof(long));
  for (long i = 0; i < n; i++) {
    if (i > 0 && v[i] == v[i - 1]) continue;
    if (k == cap) {
      cap *= 2;
      out = realloc(out, cap * sizeof(long));
    }
    out[k++] = v[i];
  }
  *len = k;
  return out;
}

/* Sorts a copy of a[0..n) and returns its distinct values, shifted down over a dropped first one
 * (memmove), in a block the caller frees; their number in *len. */
long *sorted_distinct(const long *a, long n, long *len) {
  long *copy = malloc(n * sizeof(long));
  memcpy(copy, a, n * sizeof(long));
  cilk_spawn msort(copy, n);
  cilk_sync;
  long *d = distinct(copy, n, len);
  free(copy);
  if (*len > 1) {
    memmove(d, d + 1, (*len - 1) * sizeof(long));
    *len -= 1;
  }
  return d;
}

int main(int argc, char *argv[]) {
  int n = argc > 1 ? atoi(argv[1]) : 7;
  long m = argc > 2 ? atol(argv[2]) : 3000;
  char *board = malloc(1);
  printf("queens(%d) = %d\n", n, queens(n, 0, board));
  free(board);
  long *a = malloc(m * sizeof(long));
  unsigned long x = 12345;
  for (long i = 0; i < m; i++) {
    x = x * 6364136223846793005ul + 1442695040888963407ul;
    a[i] = (long)(x >> 33) % (m / 3 + 1);
  }
  long len = 0;
  long *d = sorted_distinct(a, m, &len);
  long sum = 0, ordered = 1;
  for (long i = 0; i < len; i++) {
    sum += d[i] * (i + 1);
    if (i > 0 && d[i] <= d[i - 1]) ordered = 0;
  }
  printf("%ld distinct values after the first, in order: %s, weighted sum %ld\n", len, ordered ? "yes" : "no", sum);
  free(d);
  free(a);
  return 0;
}
