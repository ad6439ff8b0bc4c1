/* The kernel-node convention: a user writes a body that runs once per CE; the wrapper that
 * CHANFLOW_KERNEL_NODE generates hands each work-item its CE (deq), runs the body, flushes the
 * spawns it recorded at one uniform point (talloc/enq per output port), and frees the CE
 * (tfree). Spawns are recorded per work-item, so a body may spawn inside divergent code
 * (the thesis' software predication, 5.3.1).
 *
 *   typedef struct { uint n; } FibTask;
 *   typedef struct { __global uint* result; } FibArgs;
 *   void fib_body(__global const FibTask* task, chanflow_ctx* ctx) {
 *     if (task->n <= 2) { atomic_inc(CHANFLOW_ARGS(ctx, FibArgs)->result); return; }
 *     FibTask a = {task->n - 1}, b = {task->n - 2};
 *     chanflow_spawn(ctx, 0, a);
 *     chanflow_spawn(ctx, 0, b);
 *   }
 *   CHANFLOW_KERNEL_NODE(fib, FibTask, fib_body)
 *
 * Build options set by the graph: CHANFLOW_WG_SIZE, CHANFLOW_MAX_PORTS (output ports of the
 * widest node) and CHANFLOW_SPAWN_WORDS (private staging per work-item, in 32-bit words). */
#ifndef CHANFLOW_MAX_PORTS
#define CHANFLOW_MAX_PORTS 1
#endif
#ifndef CHANFLOW_SPAWN_WORDS
#define CHANFLOW_SPAWN_WORDS 1
#endif

/* Error codes a dispatch reports through chanflow_status; mirrored in scheduler's C++. */
#define CHANFLOW_ERR_NONE 0u
#define CHANFLOW_ERR_CE_SIZE 1u        /* the body's CE type differs from the channel's CE size */
#define CHANFLOW_ERR_SPAWN_LIMIT 2u    /* more spawns on a port than its edge declared */
#define CHANFLOW_ERR_SPAWN_SIZE 3u     /* a spawned value's size differs from the port's CE size */
#define CHANFLOW_ERR_BAD_PORT 4u       /* a spawn on a port the node does not have */
#define CHANFLOW_ERR_CHANNEL_FULL 5u   /* a flush found no room despite admission control */

/* First error of a run wins; the aggregator reads it after each round. */
typedef struct {
  uint code;
  uint node;   /* kernel node index */
  uint detail; /* port, or size found */
  uint extra;  /* the expected value */
} chanflow_status;

/* Per-dispatch environment, written by the aggregator into SVM before each launch. */
typedef struct {
  __global chanflow_channel* port[CHANFLOW_MAX_PORTS]; /* resolved output channel per port */
  __global void* user_args;                            /* the node's argument block */
  __global chanflow_status* status;
  uint max_spawns[CHANFLOW_MAX_PORTS];                 /* per work-item, as declared on the edge */
  uint ce_words[CHANFLOW_MAX_PORTS];
  uint staging_offset[CHANFLOW_MAX_PORTS];             /* in words */
  uint ports;
  uint depth;                                          /* level of the input channel (0 if plain) */
  uint node;
  uint pad_;
} chanflow_node_env;

/* What a body sees: its environment and its private spawn record. */
typedef struct {
  __global const chanflow_node_env* env;
  uint count[CHANFLOW_MAX_PORTS];
  uint staging[CHANFLOW_SPAWN_WORDS];
} chanflow_ctx;

#define CHANFLOW_ARGS(ctx, type) ((__global type*)(ctx)->env->user_args)

uint chanflow_depth(const chanflow_ctx* ctx) { return ctx->env->depth; }

void chanflow_report(__global const chanflow_node_env* env, uint code, uint detail, uint extra) {
  if (atomic_cmpxchg(&env->status->code, CHANFLOW_ERR_NONE, code) == CHANFLOW_ERR_NONE) {
    env->status->node = env->node;
    env->status->detail = detail;
    env->status->extra = extra;
  }
}

/* Records one CE of `bytes` bytes for output `port`; flushed after the body returns. */
void chanflow_spawn_bytes(chanflow_ctx* ctx, uint port, const void* value, uint bytes) {
  __global const chanflow_node_env* env = ctx->env;
  if (port >= env->ports) {
    chanflow_report(env, CHANFLOW_ERR_BAD_PORT, port, env->ports);
    return;
  }
  if (bytes != env->ce_words[port] * 4u) {
    chanflow_report(env, CHANFLOW_ERR_SPAWN_SIZE, port, env->ce_words[port] * 4u);
    return;
  }
  const uint k = ctx->count[port];
  if (k >= env->max_spawns[port]) {
    chanflow_report(env, CHANFLOW_ERR_SPAWN_LIMIT, port, env->max_spawns[port]);
    return;
  }
  const uint words = env->ce_words[port];
  const uint at = env->staging_offset[port] + k * words;
  const uint* src = (const uint*)value;
  for (uint w = 0; w < words; ++w) ctx->staging[at + w] = src[w];
  ctx->count[port] = k + 1;
}

#define chanflow_spawn(ctx, port, value) chanflow_spawn_bytes((ctx), (port), &(value), sizeof(value))

void chanflow_ctx_init(chanflow_ctx* ctx, __global const chanflow_node_env* env) {
  ctx->env = env;
  for (uint p = 0; p < CHANFLOW_MAX_PORTS; ++p) ctx->count[p] = 0;
}

/* Moves every recorded spawn into its channel: one talloc/enq per port for the work-group.
 * Collective. */
void chanflow_flush(chanflow_ctx* ctx, __local chanflow_wg_scratch* wg) {
  __global const chanflow_node_env* env = ctx->env;
  for (uint p = 0; p < env->ports; ++p) {
    __global chanflow_channel* out = env->port[p];
    const uint n = ctx->count[p];
    const uint words = env->ce_words[p];
    chanflow_ticket t;
    __global uint* dst = (__global uint*)talloc(out, n, &t, wg);
    if (dst) {
      const uint base = env->staging_offset[p];
      for (uint w = 0; w < n * words; ++w) dst[w] = ctx->staging[base + w];
    } else if (chanflow_local_id() == 0) {
      chanflow_report(env, CHANFLOW_ERR_CHANNEL_FULL, p, 0);
    }
    enq(out, &t, wg);
  }
}

/* Defines kernel `name` consuming CEs of `ce_type` with `body(__global ce_type*, chanflow_ctx*)`. */
#define CHANFLOW_KERNEL_NODE(name, ce_type, body)                                                \
  __kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1))) void name(              \
      __global chanflow_channel* in, ulong begin, uint count,                                    \
      __global const chanflow_node_env* env) {                                                   \
    __local chanflow_wg_scratch wg;                                                              \
    chanflow_ctx ctx;                                                                            \
    chanflow_ctx_init(&ctx, env);                                                                \
    const uint g = (uint)get_global_id(0);                                                       \
    const int active = g < count;                                                                \
    if (g == 0 && in->ce_bytes != sizeof(ce_type))                                               \
      chanflow_report(env, CHANFLOW_ERR_CE_SIZE, in->ce_bytes, (uint)sizeof(ce_type));           \
    if (active && in->ce_bytes == sizeof(ce_type))                                               \
      body((__global ce_type*)deq(in, begin + g), &ctx);                                         \
    chanflow_flush(&ctx, &wg);                                                                   \
    tfree(in, begin + g, active, &wg);                                                           \
  }
