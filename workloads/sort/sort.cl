/* sort.c lowered by hand to a channel-flow graph (DESIGN.md decision 8), the scheme chanflowc
 * will emit. Keys are SORT_KEY (uint or ulong), defined by the graph. Two Cilk functions, each with its own levelized stacks; cilksort has three syncs,
 * so its frame has three continuations, and the later two spawn cilkmerge, a different function,
 * whose children go one level deeper on cilkmerge's own task stack:
 *
 *   void cilksort(data, tmp, n) {          sort_spawn (yielding), at depth d:
 *     if (n <= SORT_BASE) { insertion sort; return; }
 *     q = n / 4;                              continuation 1 (port 0), then four children on
 *     spawn cilksort(quarter 1..4);           "sort" at depth d + 1 (void: they join, no slot)
 *     sync;                                sort_halves (continuation 1), at depth d:
 *     spawn cilkmerge(q1, q2 -> tmp);         continuation 2, two children on "merge" at d + 1
 *     spawn cilkmerge(q3, q4 -> tmp + 2q);
 *     sync;                                sort_whole (continuation 2), at depth d:
 *     spawn cilkmerge(tmp halves -> data);    continuation 3, one child on "merge" at d + 1
 *     sync;                                sort_done (continuation 3): returns to the parent
 *   }
 *   void cilkmerge(a, na, b, nb, dest) {   merge_spawn (yielding), at depth d:
 *     swap so that na >= nb;
 *     if (na + nb <= MERGE_BASE) { serial merge; return; }
 *     split a at its middle, b by binary search; place the middle key;
 *     spawn cilkmerge(left halves);           continuation (port 0), two children on "merge"
 *     spawn cilkmerge(right halves);          at depth d + 1
 *     sync;                                merge_done (continuation): returns
 *   }
 *
 * The helpers (insertion sort, lower bound, serial merge) are sort_serial.h's, the text sort.c
 * includes: the graph builds it before this file. */

/* With SORT_GROUPS (a GPU), the sorts of at most SORT_BLOCK_KEYS keys and the merges of at most
 * SORT_BLOCK_MERGE are work-group tasks (sort_blocks, merge_blocks below) on ports sort_block and
 * merge_block; without (a CPU device), every task is a work-item's, as in sort.c. On a GPU a large
 * merge splits by its outputs into up to SORT_SPLIT parts at once (a power of two the graph
 * defines, up to 8: merge_pre_sync). */
#if SORT_GROUPS
#define SORT_BLOCK_PORT(kernel) CHANFLOW_PORT(kernel, sort_block)
#define MERGE_BLOCK_PORT(kernel) CHANFLOW_PORT(kernel, merge_block)
#else
#define SORT_BLOCK_PORT(kernel) CHANFLOW_NO_PORT
#define MERGE_BLOCK_PORT(kernel) CHANFLOW_NO_PORT
#endif

/* A cilkmerge child (void: it joins its parent's continuation): a work-group task where it is
 * small enough, else a task. */
void spawn_merge(chanflow_ctx* ctx, uint port, uint block_port, __global SORT_KEY* a, long na, __global SORT_KEY* b,
                 long nb, __global SORT_KEY* dest) {
  const MergeFrame m = {CHANFLOW_TASK_INIT, a, b, dest, (ulong)na, (ulong)nb, 0ul, (ulong)(na + nb)};
  const int block = SORT_GROUPS && na + nb <= SORT_BLOCK_MERGE;
  chanflow_spawn_void_child(ctx, block ? block_port : port, m);
}

void sort_pre_sync(__global SortFrame* f, chanflow_ctx* ctx) {
  __global SORT_KEY* data = f->data;
  __global SORT_KEY* tmp = f->tmp;
  const long n = (long)f->n;
  if (n <= (long)CHANFLOW_ARGS(ctx, SortArgs)->sort_base) {
    sort_insertion(data, n);
    return;
  }
  const SortCont cont = {CHANFLOW_FRAME_INIT, data, tmp, (ulong)n};
  chanflow_spawn_continuation(ctx, cont);
  const long q = n / 4;
  for (long i = 0; i < 4; i++) {
    const SortFrame child = {CHANFLOW_TASK_INIT, data + i * q, tmp + i * q, (ulong)(i < 3 ? q : n - 3 * q)};
    const int blocked = SORT_GROUPS && child.n <= SORT_BLOCK_KEYS;
    chanflow_spawn_void_child(ctx, blocked ? SORT_BLOCK_PORT(sort_spawn) : CHANFLOW_PORT(sort_spawn, sort), child);
  }
}
CHANFLOW_YIELDING_KERNEL_NODE(sort_spawn, SortFrame, sort_pre_sync)

/* After the first sync: merge the quarters pairwise into tmp. */
void sort_after_quarters(__global SortCont* c, chanflow_ctx* ctx) {
  const long n = (long)c->n, q = n / 4;
  const SortCont cont = {CHANFLOW_FRAME_INIT, c->data, c->tmp, c->n};
  chanflow_spawn_continuation(ctx, cont);
  spawn_merge(ctx, CHANFLOW_PORT(sort_halves, merge), MERGE_BLOCK_PORT(sort_halves), c->data, q, c->data + q, q, c->tmp);
  spawn_merge(ctx, CHANFLOW_PORT(sort_halves, merge), MERGE_BLOCK_PORT(sort_halves), c->data + 2 * q, q,
              c->data + 3 * q, n - 3 * q, c->tmp + 2 * q);
}
CHANFLOW_CONTINUATION_NODE(sort_halves, SortCont, sort_after_quarters)

/* After the second sync: merge the halves back into data. */
void sort_after_halves(__global SortCont* c, chanflow_ctx* ctx) {
  const long n = (long)c->n, q = n / 4;
  const SortCont cont = {CHANFLOW_FRAME_INIT, c->data, c->tmp, c->n};
  chanflow_spawn_continuation(ctx, cont);
  spawn_merge(ctx, CHANFLOW_PORT(sort_whole, merge), MERGE_BLOCK_PORT(sort_whole), c->tmp, 2 * q, c->tmp + 2 * q,
              n - 2 * q, c->data);
}
CHANFLOW_CONTINUATION_NODE(sort_whole, SortCont, sort_after_halves)

/* After the third sync: nothing left but to return. */
void sort_after_whole(__global SortCont* c, chanflow_ctx* ctx) {
  (void)c;
  (void)ctx;
}
CHANFLOW_CONTINUATION_NODE(sort_done, SortCont, sort_after_whole)

void merge_pre_sync(__global MergeFrame* f, chanflow_ctx* ctx) {
#if SORT_GROUPS
  /* On a GPU, a merge path (Green, McColl and Bader, 2012): the outputs [d0, d1) in up to
   * SORT_SPLIT equal parts, each a work-group task where it fits one (which finds where its
   * outputs start in a and b), and the children take this task's return (no continuation). So a
   * split costs no search, and no join waits for each level of the split tree on the way back:
   * with sort.c's split (a binary search per level, a continuation per split) the top merges of
   * sort 2^24 spent ~0.45 ms descending and ~0.1 ms returning before and after their blocks. */
  const ulong d0 = f->d0, total = f->d1 - f->d0;
  uint parts = 2u;
  while (2u * parts <= SORT_SPLIT && (ulong)parts * SORT_BLOCK_MERGE < total) parts *= 2u;
  for (uint i = 0; i < parts; ++i) {
    const MergeFrame m = {CHANFLOW_TASK_INIT, f->a, f->b, f->dest, f->na, f->nb, d0 + total * i / parts,
                          d0 + total * (i + 1u) / parts};
    const int block = m.d1 - m.d0 <= SORT_BLOCK_MERGE;
    chanflow_spawn_void_child(ctx, block ? MERGE_BLOCK_PORT(merge_spawn) : CHANFLOW_PORT(merge_spawn, merge), m);
  }
  chanflow_forward_children(ctx);
#else
  __global SORT_KEY* a = f->a;
  __global SORT_KEY* b = f->b;
  long na = (long)f->na, nb = (long)f->nb;
  if (na < nb) {
    __global SORT_KEY* t = a;
    a = b;
    b = t;
    const long tn = na;
    na = nb;
    nb = tn;
  }
  if (na + nb <= (long)CHANFLOW_ARGS(ctx, SortArgs)->merge_base) {
    sort_merge_serially(a, na, b, nb, f->dest);
    return;
  }
  const long ma = na / 2;
  const long mb = sort_lower_bound(b, nb, a[ma]);
  f->dest[ma + mb] = a[ma];
  const MergeCont cont = {CHANFLOW_FRAME_INIT};
  chanflow_spawn_continuation(ctx, cont);
  spawn_merge(ctx, CHANFLOW_PORT(merge_spawn, merge), MERGE_BLOCK_PORT(merge_spawn), a, ma, b, mb, f->dest);
  spawn_merge(ctx, CHANFLOW_PORT(merge_spawn, merge), MERGE_BLOCK_PORT(merge_spawn), a + ma + 1, na - ma - 1, b + mb,
              nb - mb, f->dest + ma + mb + 1);
#endif
}
CHANFLOW_YIELDING_KERNEL_NODE(merge_spawn, MergeFrame, merge_pre_sync)

void merge_after_halves(__global MergeCont* c, chanflow_ctx* ctx) {
  (void)c;
  (void)ctx;
}
CHANFLOW_CONTINUATION_NODE(merge_done, MergeCont, merge_after_halves)

/* The work-group tasks. SORT_BLOCK_KEYS keys of local memory hold a block (1 without
 * SORT_GROUPS: no block is sorted there). */
typedef struct {
  SORT_KEY keys[SORT_BLOCK_KEYS];
} SortBlock;

/* A cilksort of n <= SORT_BLOCK_KEYS keys by a work-group: a bitonic sort of the keys, padded with the
 * largest key to a power of two, in local memory. */
void sort_block(__global SortFrame* f, __local SortBlock* block, chanflow_ctx* ctx) {
  (void)ctx;
  const uint n = (uint)f->n, lid = chanflow_local_id();
  uint p = 1u;
  while (p < n) p <<= 1;
  for (uint i = lid; i < p; i += CHANFLOW_WG_SIZE) block->keys[i] = i < n ? f->data[i] : (SORT_KEY)~(SORT_KEY)0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint k = 2u; k <= p; k <<= 1)
    for (uint j = k >> 1; j > 0u; j >>= 1) {
      for (uint i = lid; i < p; i += CHANFLOW_WG_SIZE) {
        const uint l = i ^ j;
        if (l > i) {
          const SORT_KEY x = block->keys[i], y = block->keys[l];
          if ((x > y) == ((i & k) == 0u)) {
            block->keys[i] = y;
            block->keys[l] = x;
          }
        }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  for (uint i = lid; i < n; i += CHANFLOW_WG_SIZE) f->data[i] = block->keys[i];
}
CHANFLOW_GROUP_KERNEL_NODE(sort_blocks, SortFrame, SortBlock, sort_block)

/* Keys of a and b among the first d of their merge (a's first on ties, as sort_merge_serially
 * takes them): how many come from a. */
long merge_corank(__global const SORT_KEY* a, long na, __global const SORT_KEY* b, long nb, long d) {
  long lo = max(0L, d - nb), hi = min(d, na);
  while (lo < hi) {
    const long mid = lo + (hi - lo) / 2;
    if (a[mid] <= b[d - mid - 1])
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The outputs [d0, d1) of a cilkmerge (at most SORT_BLOCK_MERGE of them) by a work-group: each
 * work-item finds where its share of them starts in a and b (merge path) and merges that share
 * serially. */
typedef struct {
  uint unused;
} SortNoLocal;

void merge_block(__global MergeFrame* f, __local SortNoLocal* unused, chanflow_ctx* ctx) {
  (void)unused;
  (void)ctx;
  __global const SORT_KEY* a = f->a;
  __global const SORT_KEY* b = f->b;
  const long na = (long)f->na, nb = (long)f->nb, first = (long)f->d0, end = (long)f->d1;
  const long share = (end - first + CHANFLOW_WG_SIZE - 1) / CHANFLOW_WG_SIZE;
  const long d0 = min(first + (long)chanflow_local_id() * share, end), d1 = min(d0 + share, end);
  long i = merge_corank(a, na, b, nb, d0), j = d0 - i;
  for (long k = d0; k < d1; ++k) f->dest[k] = j < nb && (i >= na || b[j] < a[i]) ? b[j++] : a[i++];
}
CHANFLOW_GROUP_KERNEL_NODE(merge_blocks, MergeFrame, SortNoLocal, merge_block)
