/* Kernel nodes for the graph soak (chanflow soak graphs). Every graph the soak draws computes a
 * sum the host checks: items flowing through pipelines and fan-out/fan-in, a self-feeding
 * countdown counting its leaves, and a Cilk-style recursive range sum with continuations. */

typedef struct {
  uint v;
  uint pad;
} SoakItem;

typedef struct {
  __global ulong* sum;
} SoakArgs;

uint soak_step(uint v) { return v * 2654435761u + 12345u; }

/* A pipeline stage: forwards step(v) on its one port. */
void soak_stage_body(__global const SoakItem* it, chanflow_ctx* ctx) {
  const SoakItem next = {soak_step(it->v), 0u};
  chanflow_spawn(ctx, 0u, next);
}
CHANFLOW_KERNEL_NODE(soak_stage, SoakItem, soak_stage_body)

/* A sink: adds v to the sum. */
void soak_sink_body(__global const SoakItem* it, chanflow_ctx* ctx) {
  atom_add(CHANFLOW_ARGS(ctx, SoakArgs)->sum, (ulong)it->v);
}
CHANFLOW_KERNEL_NODE(soak_sink, SoakItem, soak_sink_body)

/* Fan-out: one item on every port p, v + 1000003 * p. */
void soak_fanout_body(__global const SoakItem* it, chanflow_ctx* ctx) {
  for (uint p = 0; p < ctx->env->ports; ++p) {
    const SoakItem out = {it->v + 1000003u * p, 0u};
    chanflow_spawn(ctx, p, out);
  }
}
CHANFLOW_KERNEL_NODE(soak_fanout, SoakItem, soak_fanout_body)

/* A self-feeding countdown: v > 1 spawns v - 1 and v - 2 into its own channel; a leaf adds 1,
 * so a seed v counts fib(v + 1) leaves. */
void soak_countdown_body(__global const SoakItem* it, chanflow_ctx* ctx) {
  if (it->v <= 1u) {
    atom_add(CHANFLOW_ARGS(ctx, SoakArgs)->sum, 1ul);
    return;
  }
  const SoakItem a = {it->v - 1u, 0u}, b = {it->v - 2u, 0u};
  chanflow_spawn(ctx, 0u, a);
  chanflow_spawn(ctx, 0u, b);
}
CHANFLOW_KERNEL_NODE(soak_countdown, SoakItem, soak_countdown_body)

/* sum(lo, hi) = lo + ... + hi - 1, split into `ways` (2..4) ranges spawned in a loop, the
 * continuation adding the children's results. */
typedef struct {
  chanflow_task task;
  uint lo, hi, ways, pad;
} SoakRange;

typedef struct {
  chanflow_frame frame;
  ulong part[4]; /* slots 0..3 */
  uint ways, pad;
} SoakJoin;

void soak_split_body(__global SoakRange* r, chanflow_ctx* ctx) {
  const uint n = r->hi - r->lo;
  if (n <= 2u) {
    chanflow_return(ctx, n == 0u ? 0ul : n == 1u ? (ulong)r->lo : 2ul * r->lo + 1ul);
    return;
  }
  const uint ways = min(r->ways, n);
  const SoakJoin join = {CHANFLOW_FRAME_INIT, {0ul, 0ul, 0ul, 0ul}, ways, 0u};
  chanflow_spawn_continuation(ctx, join);
  for (uint k = 0; k < ways; ++k) {
    const SoakRange child = {{0ul, 0ul, 0u, 0u}, r->lo + n * k / ways, r->lo + n * (k + 1u) / ways, r->ways, 0u};
    chanflow_spawn_child(ctx, 1u, child, k); /* port 1: the continuation is port 0 */
  }
}
CHANFLOW_YIELDING_KERNEL_NODE(soak_split, SoakRange, soak_split_body)

void soak_join_body(__global SoakJoin* j, chanflow_ctx* ctx) {
  ulong total = 0;
  for (uint k = 0; k < j->ways; ++k) total += j->part[k];
  chanflow_return(ctx, total);
}
CHANFLOW_CONTINUATION_NODE(soak_join, SoakJoin, soak_join_body)

/* Seeds range tasks into a stack from a plain channel (a non-yielding producer of a stack's
 * level 1, beside the stack's own consumer). */
typedef struct {
  uint lo, hi, ways, slot;
} SoakSeed;

typedef struct {
  __global ulong* results;
} SoakSeedArgs;

void soak_seed_body(__global const SoakSeed* s, chanflow_ctx* ctx) {
  const SoakRange r = {{(ulong)(CHANFLOW_ARGS(ctx, SoakSeedArgs)->results + s->slot), 0ul, 0u, 0u}, s->lo, s->hi,
                       s->ways, 0u};
  chanflow_spawn(ctx, 0u, r);
}
CHANFLOW_KERNEL_NODE(soak_seed, SoakSeed, soak_seed_body)
