// File-scope globals that Cilk functions and their helpers read and write, as the classic programs
// use them: a size main sets from the command line and every task reads, a matrix reached through
// a global pointer, a bound tasks read to prune and write (racy, as on a CPU: the search stays
// right whatever order they see, and the bound ends as some block's cost, not always the least), a generator's state written by the code that fills the input, a
// global array of counters each task writes its own element of, a struct of parameters; and the
// size named in a macro's body that host code expands inside another macro's arguments; and host
// code naming globals after a function declared inside its body (magic.cilk's compile_program);
// and spawns' results stored and added into globals (`spawned_total += cilk_spawn f()`).
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

int n_blocks;                 // set by main, read by every task
static long* matrix;          // a global pointer to SVM main allocated
long best_so_far = 1L << 40;  // a pruning bound the tasks lower
unsigned long seed = 12345;   // the input generator's state
int visits[64];               // each leaf counts its own block
typedef struct { int lo, hi; double scale; } Params;
Params params = {0, 100, 0.5};  // a struct of parameters
long spawned_total, last_cost;  // children's results added and stored into globals
#define CELL(m, i, j) ((m)[(i) * n_blocks + (j)])
#define TWICE(x) (2 * (x))

static unsigned long next_random(void) {
  seed = seed * 6364136223846793005UL + 1442695040888963407UL;
  return seed >> 33;
}

static long block_cost(int b) {
  long s = 0;
  for (int i = 0; i < n_blocks; i++) s += matrix[b * n_blocks + i] * (i % 3 + 1);
  return s;
}

// The cheapest block of [lo, hi), pruning against best_so_far.
long search(int lo, int hi) {
  if (hi - lo == 1) {
    visits[lo % 64] += 1;
    const long c = block_cost(lo);
    if (c < best_so_far) best_so_far = c;  // a race another task may win: a later write of a dearer cost
    return c;
  }
  const int mid = lo + (hi - lo) / 2;
  long a = cilk_spawn search(lo, mid);
  long b = search(mid, hi);
  cilk_sync;
  return a < b ? a : b;
}

long scaled(int n) {
  if (n <= params.lo) return (long)(params.scale * params.hi);
  long x = cilk_spawn scaled(n - 1);
  cilk_sync;
  return x + 1;
}

void into_globals(int n) {
  for (int b = 0; b < n; b++) spawned_total += cilk_spawn search(b, b + 1);
  last_cost = cilk_spawn search(n - 1, n);
  cilk_sync;
}

static void fill_matrix(void) {
  long first_cell(void);  // declared in the body; defined below
  for (int i = 0; i < n_blocks * n_blocks; i++) matrix[i] = (long)(next_random() % 1000);
  printf("first cell %ld of %d\n", first_cell(), n_blocks * n_blocks);
}

long first_cell(void) { return matrix[0]; }

int main(int argc, char** argv) {
  n_blocks = argc > 1 ? atoi(argv[1]) : 40;
  matrix = malloc(sizeof(long) * (size_t)n_blocks * (size_t)n_blocks);
  fill_matrix();
  const long best = search(0, n_blocks);
  int visited = 0;
  for (int i = 0; i < 64; i++) visited += visits[i];
  int bound_is_a_cost = 0;  // the tasks' writes reached the host; which one won is the race's
  for (int b = 0; b < n_blocks; b++) bound_is_a_cost |= block_cost(b) == best_so_far && best_so_far >= best;
  printf("cheapest block: %ld (bound %s), %d leaves\n", best, bound_is_a_cost ? "a block's cost" : "lost", visited);
  params.hi = 300;
  printf("corner cells: %ld\n", TWICE(CELL(matrix, 1, 1)) + CELL(matrix, n_blocks - 1, 0));
  printf("scaled: %ld, next random %lu\n", scaled(20), next_random());
  into_globals(n_blocks);
  printf("into globals: %ld, %ld\n", spawned_total, last_cost);
  free(matrix);
  return 0;
}
