/* The device heap (heap_layout.h; scheduler/README.md, "The device heap"): malloc, calloc,
 * realloc and free for kernel bodies, alloca-style blocks released together when their frame
 * ends, and memcpy, memmove and memset for every pair of address spaces a body's pointers have.
 *
 *   __global float* t = (__global float*)chanflow_malloc(ctx->env, n * sizeof(float));
 *   ...
 *   chanflow_free(ctx->env, t);
 *
 * A request the heap cannot meet reports CHANFLOW_ERR_HEAP_FULL (the run fails, naming the node,
 * the request and the heap's size) and gets the heap's sink, a scratch area whose contents mean
 * nothing, so that the body can run to its end without writing anyone's memory (a request larger
 * than the sink gets 0). A free of memory the heap did not hand out, or handed out and took
 * back already, reports CHANFLOW_ERR_HEAP_FREE and changes nothing.
 *
 * Every word that another work-group may change in the same launch (a free list's head, a free
 * block's link, a block's state) is read and written with atomics, which a GPU performs in its
 * coherent last-level cache: a plain load there may see a stale line of the SM's own cache. */

__global chanflow_heap_block* chanflow_heap_block_at(__global const chanflow_heap* h, ulong unit) {
  return (__global chanflow_heap_block*)(h->base + unit * CHANFLOW_HEAP_UNIT);
}

/* The shard a work-item allocates from and frees to: a hash of its global id, so that the items
 * of one work-group (which a task node's tasks are: compiled Strassen's 49 tasks of a level in one
 * group, each taking its temporaries) spread over the lists instead of retrying one head's
 * exchange in turn, and so do the first items of groups (a work-group task's leader freeing its
 * loop's block: 16,807 of them in one wave of compiled Strassen; by the global id alone they all
 * pushed on shard 0, which every allocation then came to pop). Not get_group_id: PoCL 3.1
 * mis-runs it in these noinline functions (the heap's lists were corrupted: DESIGN.md). */
uint chanflow_heap_shard(void) { return (uint)(((ulong)get_global_id(0) * 0x9E3779B97F4A7C15ul) >> 32) % CHANFLOW_HEAP_SHARDS; }

/* Pushes the block at `unit` on free list `list`. */
void chanflow_heap_push(__global chanflow_heap* h, uint list, ulong unit) {
  volatile __global ulong* head = h->heads + list;
  __global chanflow_heap_block* b = chanflow_heap_block_at(h, unit);
  ulong old = atom_add(head, 0ul);
  for (;;) {
    atom_xchg(&b->next, old & CHANFLOW_HEAP_UNIT_MASK);
    chanflow_fence_acq_rel(); /* release: the block's payload and link before the head that publishes it */
    const ulong tag = (old >> CHANFLOW_HEAP_UNIT_BITS) + 1ul;
    const ulong seen = atom_cmpxchg(head, old, (tag << CHANFLOW_HEAP_UNIT_BITS) | (unit + 1ul));
    if (seen == old) return;
    old = seen;
  }
}

/* The unit + 1 of a block popped from free list `list`, or 0 if it is empty. */
ulong chanflow_heap_pop(__global chanflow_heap* h, uint list) {
  volatile __global ulong* head = h->heads + list;
  ulong old = atom_add(head, 0ul);
  for (;;) {
    const ulong top = old & CHANFLOW_HEAP_UNIT_MASK;
    if (top == 0ul) return 0ul;
    /* Read before the pop is certain: if another work-group takes the block first, the head's
     * tag has changed and the exchange below is refused, whatever this read saw. */
    const ulong next = atom_add(&chanflow_heap_block_at(h, top - 1ul)->next, 0ul) & CHANFLOW_HEAP_UNIT_MASK;
    const ulong tag = (old >> CHANFLOW_HEAP_UNIT_BITS) + 1ul;
    const ulong seen = atom_cmpxchg(head, old, (tag << CHANFLOW_HEAP_UNIT_BITS) | next);
    if (seen == old) {
      chanflow_fence_acq_rel(); /* acquire: after the stores of the block's last owner (push) */
      return top;
    }
    old = seen;
  }
}

/* The unit + 1 of `units` fresh units, or 0 if the arena has no more. `bump` only grows, so the
 * ranges it hands out never overlap; a request that does not fit is not added (one that races
 * past the end with others may leave the arena's last units unused). */
ulong chanflow_heap_fresh(__global chanflow_heap* h, ulong units) {
  if (atom_add(&h->bump, 0ul) + units > h->units) return 0ul;
  const ulong first = atom_add(&h->bump, units);
  return first + units <= h->units ? first + 1ul : 0ul;
}

/* `bytes` of heap memory, 16-byte aligned, or 0 where the heap has no block left that large
 * (nothing reported: chanflow_malloc reports, an explicit stack spilling reports its own error). */
__attribute__((noinline)) __global void* chanflow_heap_take(__global chanflow_heap* h, ulong bytes) {
  const uint c = chanflow_heap_class_of(bytes);
  ulong unit1 = 0ul;
  if (c < CHANFLOW_HEAP_CLASSES) {
    const uint shard = chanflow_heap_shard();
    /* Its own shard first, then a few next to it, then fresh units. A wave of allocations at
     * once (16,807 base cases of compiled Strassen) meets ~130 per list, not the ~1,050 per list
     * that 16 shards made retry their exchanges in turn (1.3 ms of an H100's sweep). A freed
     * block goes back to its home shard's list whoever frees it (a frame freed by its
     * continuation, a loop's block by a leaf's leader), so a shard's lists hold what its own
     * allocations took: a program that frees what it allocates stops growing its arena once
     * every shard has held its peak, however often it runs. */
    for (uint k = 0; !unit1 && k < CHANFLOW_HEAP_PROBE; ++k)
      unit1 = chanflow_heap_pop(h, c * CHANFLOW_HEAP_SHARDS + (shard + k) % CHANFLOW_HEAP_SHARDS);
    if (!unit1) {
      unit1 = chanflow_heap_fresh(h, 1ul + chanflow_heap_class_bytes(c) / CHANFLOW_HEAP_UNIT);
      if (unit1) atomic_xchg(&chanflow_heap_block_at(h, unit1 - 1ul)->class_home, CHANFLOW_HEAP_CLASS_HOME(c, shard));
    }
    /* The arena is used up: any free block of this class, then of a larger one (it keeps its
     * class, and goes back to its own lists when freed), before the request fails. */
    for (uint d = c; !unit1 && d < CHANFLOW_HEAP_CLASSES; ++d)
      for (uint k = 0; !unit1 && k < CHANFLOW_HEAP_SHARDS; ++k) unit1 = chanflow_heap_pop(h, d * CHANFLOW_HEAP_SHARDS + k);
  }
  if (!unit1) return 0;
  __global chanflow_heap_block* b = chanflow_heap_block_at(h, unit1 - 1ul);
  atomic_xchg(&b->state, CHANFLOW_HEAP_USED);
  atom_inc(&h->live[chanflow_heap_shard() % CHANFLOW_HEAP_LIVE_SHARDS * CHANFLOW_HEAP_LIVE_STRIDE]);
  return (__global void*)(b + 1);
}

/* `bytes` of heap memory, 16-byte aligned; on failure (reported) the sink, or 0. */
__attribute__((noinline)) __global void* chanflow_malloc(__global const chanflow_node_env* env, ulong bytes) {
  __global chanflow_heap* h = env->heap;
  if (!h) {
    chanflow_report(env, CHANFLOW_ERR_NO_HEAP, 0u, 0u);
    return 0;
  }
  __global void* p = chanflow_heap_take(h, bytes);
  if (p) return p;
  chanflow_report(env, CHANFLOW_ERR_HEAP_FULL, (uint)bytes, (uint)(bytes >> 32));
  return bytes <= h->sink_bytes ? (__global void*)h->sink : 0;
}

/* A chunk of `bytes` for the frames an explicit stack spills (a helper that calls itself, compiled
 * by chanflowc), or 0 where the heap has none left: the helper reports how deep it went. */
__global void* chanflow_stack_chunk(__global const chanflow_node_env* env, ulong bytes) {
  if (!env->heap) {
    chanflow_report(env, CHANFLOW_ERR_NO_HEAP, 0u, 0u);
    return 0;
  }
  return chanflow_heap_take(env->heap, bytes);
}

/* The block of `p` if the heap handed it out and has not taken it back; else 0, reported. */
__global chanflow_heap_block* chanflow_heap_owner(__global const chanflow_node_env* env, __global const chanflow_heap* h,
                                                  ulong p) {
  const ulong end = h->base + h->units * CHANFLOW_HEAP_UNIT;
  const int inside = p >= h->base + CHANFLOW_HEAP_UNIT && p < end && (p - h->base) % CHANFLOW_HEAP_UNIT == 0ul;
  const uint w = inside ? atomic_add(&((__global chanflow_heap_block*)p - 1)->class_home, 0u) : 0u;
  if (!inside || atomic_add(&((__global chanflow_heap_block*)p - 1)->state, 0u) != CHANFLOW_HEAP_USED ||
      CHANFLOW_HEAP_CLASS(w) >= CHANFLOW_HEAP_CLASSES || CHANFLOW_HEAP_HOME(w) >= CHANFLOW_HEAP_SHARDS) {
    chanflow_report(env, CHANFLOW_ERR_HEAP_FREE, (uint)p, (uint)(p >> 32));
    return 0;
  }
  return (__global chanflow_heap_block*)p - 1;
}

__attribute__((noinline)) void chanflow_free(__global const chanflow_node_env* env, __global void* p) {
  __global chanflow_heap* h = env->heap;
  if (!p || (h && (ulong)p == h->sink)) return; /* the sink: the run has failed already */
  if (!h) {
    chanflow_report(env, CHANFLOW_ERR_NO_HEAP, 0u, 0u);
    return;
  }
  __global chanflow_heap_block* b = chanflow_heap_owner(env, h, (ulong)p);
  if (!b) return;
  if (atomic_cmpxchg(&b->state, CHANFLOW_HEAP_USED, CHANFLOW_HEAP_FREE) != CHANFLOW_HEAP_USED) { /* freed twice at once */
    chanflow_report(env, CHANFLOW_ERR_HEAP_FREE, (uint)(ulong)p, (uint)((ulong)p >> 32));
    return;
  }
  const ulong unit = ((ulong)b - h->base) / CHANFLOW_HEAP_UNIT;
  atom_dec(&h->live[chanflow_heap_shard() % CHANFLOW_HEAP_LIVE_SHARDS * CHANFLOW_HEAP_LIVE_STRIDE]);
  const uint w = atomic_add(&b->class_home, 0u);
  chanflow_heap_push(h, CHANFLOW_HEAP_CLASS(w) * CHANFLOW_HEAP_SHARDS + CHANFLOW_HEAP_HOME(w), unit);
}

/* A block shared by the tasks that read it, the last of them freeing it: a cilk_for's block of
 * what its leaves read (chanflowc), which its leaves and parts hold rather than the frame of the
 * function that started the loop, so that function's sync can forward (chanflow_forward_children).
 * Its first word counts its holders; 0: not counted (a block `main` keeps, in SVM). A holder
 * hands its hold on with `n` more (a part that spawns n + 1 children), before they are published. */
void chanflow_caps_hold(__global const void* block, long n) {
  volatile __global uint* holders = (volatile __global uint*)block;
  if (n != 0 && *holders != 0u) atomic_add(holders, (uint)n);
}

/* One holder of `block` is done with it (after all its work-items read it): the last one frees it. */
void chanflow_caps_release(__global const chanflow_node_env* env, __global const void* block) {
  volatile __global uint* holders = (volatile __global uint*)block;
  if (*holders != 0u && atomic_dec(holders) == 1u) chanflow_free(env, (__global void*)block);
}

__global void* chanflow_calloc(__global const chanflow_node_env* env, ulong count, ulong size) {
  if (size != 0ul && count > 0xfffffffffffffffful / size) {
    chanflow_report(env, CHANFLOW_ERR_HEAP_FULL, 0xffffffffu, 0xffffffffu);
    return 0;
  }
  const ulong bytes = count * size;
  __global ulong* p = (__global ulong*)chanflow_malloc(env, bytes);
  if (p && (ulong)p != env->heap->sink)
    for (ulong i = 0; i < (bytes + 7ul) / 8ul; ++i) p[i] = 0ul; /* the payload is whole 16-byte units */
  return p;
}

__global void* chanflow_realloc(__global const chanflow_node_env* env, __global void* p, ulong bytes) {
  if (!p) return chanflow_malloc(env, bytes);
  __global chanflow_heap* h = env->heap;
  if (!h || (ulong)p == h->sink) return chanflow_malloc(env, bytes);
  __global chanflow_heap_block* b = chanflow_heap_owner(env, h, (ulong)p);
  if (!b) return 0;
  const ulong have = chanflow_heap_class_bytes(CHANFLOW_HEAP_CLASS(atomic_add(&b->class_home, 0u)));
  if (bytes <= have) return p;
  __global ulong* q = (__global ulong*)chanflow_malloc(env, bytes);
  if (!q || (ulong)q == h->sink) return q;
  for (ulong i = 0; i < have / 8ul; ++i) q[i] = ((__global const ulong*)p)[i];
  chanflow_free(env, p);
  return q;
}

/* alloca: a block released with the others of `*chain` when the frame that took them ends
 * (chanflow_release_allocas, at the function's return: after its sync, so children spawned with
 * pointers into it have finished with it). */
__attribute__((noinline)) __global void* chanflow_alloca(__global const chanflow_node_env* env, ulong* chain, ulong bytes) {
  __global void* p = chanflow_malloc(env, bytes);
  if (p && (ulong)p != env->heap->sink) {
    ((__global chanflow_heap_block*)p - 1)->next = *chain;
    *chain = (ulong)p;
  }
  return p;
}

__attribute__((noinline)) void chanflow_release_allocas(__global const chanflow_node_env* env, ulong chain) {
  while (chain) {
    /* A block freed by hand (free of alloca'd memory) has a free list's link here: stop, reported. */
    if (!chanflow_heap_owner(env, env->heap, chain)) return;
    const ulong next = ((__global const chanflow_heap_block*)chain - 1)->next;
    chanflow_free(env, (__global void*)chain);
    chain = next;
  }
}

/* A LIFO of blocks: those of one explicit stack's activations (a Cilk function's serial form whose
 * locals its calls get pointers to, or that calls alloca; chanflowc). Each activation takes its
 * blocks above its caller's and gives them all back as it returns, by resetting the LIFO to the
 * mark it took first: no atomics, no heap call per activation. The chunks come from the heap the
 * first time the stack goes that deep, each twice the one below it (up to
 * CHANFLOW_LIFO_CHUNK_MAX), and stay, linked both ways, until the serial call ends
 * (chanflow_lifo_release): memory bounded by the deepest point's blocks, as the frames are. */
#define CHANFLOW_LIFO_CHUNK_MIN 512ul
#define CHANFLOW_LIFO_CHUNK_MAX 65536ul

typedef struct chanflow_lifo_chunk {
  __global struct chanflow_lifo_chunk* below; /* the chunk before it (0: the first) */
  __global struct chanflow_lifo_chunk* above; /* the one after it, kept once taken (0: none) */
  ulong end;                                   /* the address past its last byte */
  ulong bytes;                                 /* its size, header included */
} chanflow_lifo_chunk;                        /* 32 bytes: the blocks after it are 16-byte aligned */

typedef struct {
  __global chanflow_lifo_chunk* chunk; /* the newest chunk in use (0: none yet) */
  ulong top, end;                       /* its next free byte, and its end */
} chanflow_lifo;

/* A chunk for a block of `bytes` that the newest one cannot hold: the one kept above it if that is
 * large enough, else a new one from the heap. No room: reported as a full heap (the run fails,
 * naming the heap's setting), and the heap's sink or 0 handed back with the LIFO unchanged. */
__attribute__((noinline)) __global void* chanflow_lifo_grow(__global const chanflow_node_env* env, chanflow_lifo* a,
                                                             ulong bytes) {
  __global chanflow_lifo_chunk* c = a->chunk ? a->chunk->above : 0;
  if (c && c->end - (ulong)(c + 1) < bytes) { /* too small for this block: it and those above go back */
    a->chunk->above = 0;
    while (c) {
      __global chanflow_lifo_chunk* next = c->above;
      chanflow_free(env, c);
      c = next;
    }
  }
  if (!c) {
    ulong size = a->chunk ? min(a->chunk->bytes * 2ul, CHANFLOW_LIFO_CHUNK_MAX) : CHANFLOW_LIFO_CHUNK_MIN;
    while (size - sizeof(chanflow_lifo_chunk) < bytes) size *= 2ul;
    c = (__global chanflow_lifo_chunk*)chanflow_malloc(env, size);
    if (!c || (ulong)c == env->heap->sink) return c;
    c->below = a->chunk;
    c->above = 0;
    c->end = (ulong)c + size;
    c->bytes = size;
    if (a->chunk) a->chunk->above = c;
  }
  a->chunk = c;
  a->top = (ulong)(c + 1) + bytes;
  a->end = c->end;
  return c + 1;
}

/* `bytes` (rounded up to 16) above the LIFO's last block; 0 bytes: the mark an activation resets
 * the LIFO to when it returns. */
__global void* chanflow_lifo_take(__global const chanflow_node_env* env, chanflow_lifo* a, ulong bytes) {
  bytes = (bytes + 15ul) & ~15ul;
  if (a->chunk && a->top + bytes <= a->end) {
    const ulong p = a->top;
    a->top += bytes;
    return (__global void*)p;
  }
  return chanflow_lifo_grow(env, a, bytes);
}

/* Everything taken since `mark` (the returning activation's first block) given back. A mark no
 * chunk holds (the sink, after a reported failure) changes nothing. */
void chanflow_lifo_reset(chanflow_lifo* a, __global const void* mark) {
  const ulong m = (ulong)mark;
  if (a->chunk && m >= (ulong)(a->chunk + 1) && m <= a->end) {
    a->top = m;
    return;
  }
  __global chanflow_lifo_chunk* c = a->chunk;
  while (c && !(m >= (ulong)(c + 1) && m <= c->end)) c = c->below;
  if (!c) return;
  a->chunk = c;
  a->top = m;
  a->end = c->end;
}

/* The serial call's end: every chunk back to the heap. */
__attribute__((noinline)) void chanflow_lifo_release(__global const chanflow_node_env* env, chanflow_lifo* a) {
  __global chanflow_lifo_chunk* c = a->chunk;
  while (c && c->above) c = c->above;
  while (c) {
    __global chanflow_lifo_chunk* below = c->below;
    chanflow_free(env, c);
    c = below;
  }
  a->chunk = 0;
  a->top = a->end = 0ul;
}

/* memcpy, memmove and memset per address space of their pointers (g: __global, p: __private,
 * c: __constant for a source): word by word where both ends and the length allow. */
#define CHANFLOW_MEMCPY(name, dst_space, src_space)                                              \
  dst_space void* name(dst_space void* d, src_space const void* s, ulong n) {                    \
    if ((((ulong)d | (ulong)s | n) & 7ul) == 0ul) {                                              \
      for (ulong i = 0; i < n / 8ul; ++i) ((dst_space ulong*)d)[i] = ((src_space const ulong*)s)[i]; \
    } else {                                                                                     \
      for (ulong i = 0; i < n; ++i) ((dst_space uchar*)d)[i] = ((src_space const uchar*)s)[i];   \
    }                                                                                            \
    return d;                                                                                    \
  }
CHANFLOW_MEMCPY(chanflow_memcpy_gg, __global, __global)
CHANFLOW_MEMCPY(chanflow_memcpy_gp, __global, __private)
CHANFLOW_MEMCPY(chanflow_memcpy_gc, __global, __constant)
CHANFLOW_MEMCPY(chanflow_memcpy_pg, __private, __global)
CHANFLOW_MEMCPY(chanflow_memcpy_pp, __private, __private)
CHANFLOW_MEMCPY(chanflow_memcpy_pc, __private, __constant)

/* Overlap is possible only within one address space. */
#define CHANFLOW_MEMMOVE(name, space)                                                            \
  space void* name(space void* d, space const void* s, ulong n) {                                \
    if ((ulong)d <= (ulong)s) {                                                                  \
      for (ulong i = 0; i < n; ++i) ((space uchar*)d)[i] = ((space const uchar*)s)[i];           \
    } else {                                                                                     \
      for (ulong i = n; i > 0ul; --i) ((space uchar*)d)[i - 1ul] = ((space const uchar*)s)[i - 1ul]; \
    }                                                                                            \
    return d;                                                                                    \
  }
CHANFLOW_MEMMOVE(chanflow_memmove_gg, __global)
CHANFLOW_MEMMOVE(chanflow_memmove_pp, __private)
#define chanflow_memmove_gp chanflow_memcpy_gp
#define chanflow_memmove_gc chanflow_memcpy_gc
#define chanflow_memmove_pg chanflow_memcpy_pg
#define chanflow_memmove_pc chanflow_memcpy_pc

#define CHANFLOW_MEMSET(name, space)                                                             \
  space void* name(space void* d, int value, ulong n) {                                          \
    const uchar v = (uchar)value;                                                                \
    for (ulong i = 0; i < n; ++i) ((space uchar*)d)[i] = v;                                      \
    return d;                                                                                    \
  }
CHANFLOW_MEMSET(chanflow_memset_g, __global)
CHANFLOW_MEMSET(chanflow_memset_p, __private)
