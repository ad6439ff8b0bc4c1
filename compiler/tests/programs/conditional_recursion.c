// Helpers whose calls of themselves sit in a branch of `?:` in a return, as C is written (the
// length of a list, a weight whose branches recurse differently): run on explicit stacks, the
// return split into an if statement by chanflowc.
#include <cilk/cilk.h>
#include <stdio.h>
#include <stdlib.h>
typedef struct node { int value; struct node* next; } node;
static int depth(const node* p) { return p == 0 ? 0 : 1 + depth(p->next); }
static long weigh(const node* p, int k) { return !p ? 0L : k > 3 ? p->value + weigh(p->next, k - 1) : weigh(p->next, k + 2) * 2 % 1000003; }
long walk(node** lists, int lo, int hi) {
  if (hi - lo == 1) return depth(lists[lo]) * 1000L + weigh(lists[lo], 0);
  long a = cilk_spawn walk(lists, lo, (lo + hi) / 2);
  long b = walk(lists, (lo + hi) / 2, hi);
  cilk_sync;
  return a + b;
}
int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20;
  node** lists = malloc(n * sizeof *lists);
  for (int i = 0; i < n; i++) {
    lists[i] = 0;
    for (int j = 0; j < i % 9 + 1; j++) { node* x = malloc(sizeof *x); x->value = i * j; x->next = lists[i]; lists[i] = x; }
  }
  printf("%ld\n", walk(lists, 0, n));
  return 0;
}
