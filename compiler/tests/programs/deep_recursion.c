// Recursions as deep as the data says: a list walked by a Cilk function that spawns the walk of
// its rest, a skewed tree (a spine whose every node holds a small subtree) searched by spawning
// both children, and plain helpers recursing down the list and the spine. The depth is the
// list's length (20,000 by default; 100,000 runs too): below the serial depth chanflowc runs each
// on an explicit stack whose older frames go to the device heap, so no limit is set by hand. Two
// walks keep memory their children point to at every level: a local the child writes through a
// pointer (a boxed local), and a block from alloca the child reads; their serial forms take those
// from a LIFO of blocks on the heap.
#include <alloca.h>
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct cell {
  long value;
  struct cell* next;
} cell;

typedef struct tree {
  long key;
  struct tree* left;
  struct tree* right;
} tree;

// The list folded from its end: every level waits for the walk of the rest.
long fold(const cell* c) {
  if (!c) return 7;
  long rest = cilk_spawn fold(c->next);
  cilk_sync;
  return (rest * 31 + c->value) % 1000003;
}

// Both children spawned; the spine makes it as deep as the list is long.
long search(const tree* t, int depth) {
  if (!t) return 0;
  long left = cilk_spawn search(t->left, depth + 1);
  long right = cilk_spawn search(t->right, depth + 1);
  cilk_sync;
  long here = t->key % 7 == 3 ? depth : 0;
  return (left * 3 + right + here) % 1000000007L;
}

// Helpers that call themselves: the longest run of rising values ahead, the spine's height (both
// calls in one declaration, made before its variables, as C orders them here).
static long rising(const cell* c, long run, long best) {
  if (!c) return run > best ? run : best;
  if (c->next && c->next->value > c->value) return rising(c->next, run + 1, best);
  return rising(c->next, 0, run + 1 > best ? run + 1 : best);
}

static int height(const tree* t) {
  if (!t) return 0;
  int l = height(t->left), r = height(t->right);
  return 1 + (l > r ? l : r);
}

// The rest's result written by the child into its parent's local, through a pointer; a local
// array the child fills too; leaves spawned beside it (one with an alloca block) and after it,
// writing the same local. `below` and `above` name nothing of chanflowc's (its stack's chunks once
// had fields of those names).
void mix(long* acc, long v) { *acc = (*acc * 31 + v) % 1000003; }

long weight(long v) {
  char* digits = alloca(4);
  for (int i = 0; i < 4; i++, v /= 10) digits[i] = (char)(v % 10);
  return digits[0] + 2 * digits[1] + 3 * digits[2];
}

void walk_into(const cell* c, long* out, long above[2]) {
  if (!c) {
    *out = 7;
    above[0] += 1;
    return;
  }
  long below;
  long counts[2] = {0, c->value % 2};
  cilk_spawn walk_into(c->next, &below, counts);
  long w = cilk_spawn weight(c->value);
  cilk_sync;
  cilk_spawn mix(&below, c->value + counts[0] + w);
  cilk_sync;
  above[0] += counts[0] + 1;
  above[1] += counts[1];
  *out = below;
}

// A block per level from alloca, each child reading its parent's and filling its own.
long prefix(const cell* c, const char* above, int n) {
  if (!c) {
    long s = 0;
    for (int i = 0; i < n; i++) s += above[i];
    return s;
  }
  char* here = alloca(n);
  for (int i = 0; i < n; i++) here[i] = (char)((above[i] + c->value + i) % 101);
  long r = cilk_spawn prefix(c->next, here, n);
  cilk_sync;
  return (r * 3 + here[n - 1]) % 1000003;
}

long measure(const cell* c, const tree* t) {
  long a = cilk_spawn rising(c, 0, 0);
  long b = height(t);
  cilk_sync;
  return a * 1000000 + b;
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 20000;
  cell* cells = malloc(n * sizeof *cells);
  tree* nodes = malloc(4 * n * sizeof *nodes);
  if (!cells || !nodes) return 2;
  unsigned long seed = 12345;
  for (long i = 0; i < n; i++) {
    seed = seed * 6364136223846793005UL + 1442695040888963407UL;
    cells[i].value = (long)(seed >> 40) % 1000;
    cells[i].next = i + 1 < n ? &cells[i + 1] : 0;
  }
  // Spine node i at 4i, its subtree (a root and two leaves) at 4i+1 .. 4i+3.
  for (long i = 0; i < n; i++) {
    tree* spine = &nodes[4 * i];
    tree* sub = &nodes[4 * i + 1];
    for (int k = 0; k < 4; k++) nodes[4 * i + k].key = (i * 4 + k) * 2654435761L % 1000;
    spine->left = sub;
    spine->right = i + 1 < n ? &nodes[4 * (i + 1)] : 0;
    sub->left = &nodes[4 * i + 2];
    sub->right = &nodes[4 * i + 3];
    sub->left->left = sub->left->right = sub->right->left = sub->right->right = 0;
  }
  printf("fold %ld\n", fold(cells));
  printf("search %ld\n", search(nodes, 0));
  printf("measure %ld\n", measure(cells, nodes));
  long into = 0, levels[2] = {0, 0};
  walk_into(cells, &into, levels);
  printf("walk_into %ld %ld %ld\n", into, levels[0], levels[1]);
  const char start[5] = {1, 2, 3, 4, 5};
  printf("prefix %ld\n", prefix(cells, start, 5));
  free(cells);
  free(nodes);
  return 0;
}
