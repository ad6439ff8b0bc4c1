/* Frame scratch (see chanflow_scratch_pool in node_layout.h) and atomic floating-point addition,
 * the two pieces a task needs to keep temporaries until its sync and to combine children's
 * results into them.
 *
 * A continuation stack made with ChannelStackNode::set_frame_scratch gives every frame a block
 * of memory, taken when its task's flush reserves the frame and given back after its
 * continuation's body has run. The task's children reach it through their parent frame, the
 * continuation through its own:
 *
 *   __global float* t = (__global float*)chanflow_parent_scratch(ctx);  // in a child task
 *   __global float* t = (__global float*)chanflow_frame_scratch(&c->frame); // in the continuation
 *
 * A continuation that spawns another continuation gets a fresh block for it.
 *
 * The task itself cannot reach that block: its frame is reserved at the flush, after its body.
 * A stack made with FrameScratch::taken_by_tasks instead lets the task take its block first,
 * with chanflow_task_scratch (for a Cilk function's locals whose address goes to a child: they
 * must live until the sync). The flush hands the block to the frame it reserves, or gives it
 * back if it reserves none (a base case); a task that yields before its frame keeps the block in
 * its yield state, and its resumed flush hands it on. */

/* A free block of `pool`, or 0. `hint` spreads the search (a frame's slot). */
ulong chanflow_scratch_take(__global const chanflow_scratch_pool* pool, uint hint) {
  const uint words = pool->words;
  for (uint i = 0; i < words; ++i) {
    const uint w = (hint / 32u + i) % words;
    volatile __global uint* word = pool->bitmap + w;
    uint bits = *word;
    while (bits != 0xffffffffu) {
      const uint free_bits = ~bits;
      const uint bit = 31u - clz(free_bits & (0u - free_bits)); /* the lowest free bit */
      const uint old = atomic_or(word, 1u << bit);
      if ((old & (1u << bit)) == 0u) {
        chanflow_fence_acq_rel(); /* acquire: after the last holder's stores (chanflow_scratch_give) */
        return pool->base + (ulong)(w * 32u + bit) * pool->block_bytes;
      }
      bits = old;
    }
  }
  return 0ul;
}

/* Gives `block` (from chanflow_scratch_take on `pool`) back, after the stores made in it. */
void chanflow_scratch_give(__global const chanflow_scratch_pool* pool, ulong block) {
  const uint b = (uint)((block - pool->base) / pool->block_bytes);
  chanflow_fence_acq_rel(); /* release: the stores made in it, before another frame may take it */
  atomic_and(pool->bitmap + b / 32u, ~(1u << (b % 32u)));
}

/* The block of a task's body (see above; its continuation stack needs
 * FrameScratch::taken_by_tasks), taken on the first call: the body keeps its locals there and
 * passes their addresses to its children. 0 after reporting CHANFLOW_ERR_SCRATCH (the run
 * fails): the body should return. A body runs once (a yield keeps its spawns, see spawn.cl), so
 * the addresses its children get are those of the block its frame keeps. */
__global void* chanflow_task_scratch(chanflow_ctx* ctx) {
  if (ctx->task_scratch) return (__global void*)ctx->task_scratch;
  __global const chanflow_node_env* env = ctx->env;
  __global const chanflow_scratch_pool* pool = env->cont_scratch;
  if (!pool || !ctx->link) {
    chanflow_report(env, CHANFLOW_ERR_SCRATCH, env->depth, 0u);
    return 0;
  }
  const ulong block = chanflow_scratch_take(pool, (uint)get_global_id(0));
  if (!block) {
    chanflow_report(env, CHANFLOW_ERR_SCRATCH, env->depth, pool->blocks);
    return 0;
  }
  ctx->task_scratch = block;
  return (__global void*)block;
}

/* The scratch block of a frame (0 if its stack has no scratch). */
__global void* chanflow_frame_scratch(__global const chanflow_frame* frame) {
  return (__global void*)frame->scratch;
}

/* The frame this task returns into (its parent's continuation), or 0 for a root task. */
__global chanflow_frame* chanflow_parent_frame(const chanflow_ctx* ctx) {
  return ctx->link ? (__global chanflow_frame*)ctx->link[1] : 0;
}

/* The scratch block of the frame this task returns into, or 0. */
__global void* chanflow_parent_scratch(const chanflow_ctx* ctx) {
  __global chanflow_frame* parent = chanflow_parent_frame(ctx);
  return parent ? chanflow_frame_scratch(parent) : 0;
}

/* *p += v atomically (relaxed). OpenCL 1.2 has no floating-point atomic addition: the graph
 * defines CHANFLOW_NATIVE_FP32_ATOMIC_ADD (and _FP64_) where the device advertises global
 * addition through cl_ext_float_atomics; on NVIDIA (CHANFLOW_ORDER_PTX, order.cl) PTX's red.add
 * does it where the line lives, in L2, and returns nothing (Strassen 2048's base cases add their
 * products into shared quadrants so, where a compare-and-swap loop took a round trip per try);
 * a compare-and-swap loop on the bits does it elsewhere. */
void chanflow_atomic_add_float(volatile __global float* p, float v) {
#if defined(CHANFLOW_NATIVE_FP32_ATOMIC_ADD)
  atomic_fetch_add_explicit((volatile __global atomic_float*)p, v, memory_order_relaxed, memory_scope_device);
#elif defined(CHANFLOW_ORDER_PTX)
  asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
#else
  volatile __global uint* bits = (volatile __global uint*)p;
  uint seen = *bits;
  for (;;) {
    const uint old = seen;
    seen = atomic_cmpxchg(bits, old, as_uint(as_float(old) + v));
    if (seen == old) break;
  }
#endif
}

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
void chanflow_atomic_add_double(volatile __global double* p, double v) {
#if defined(CHANFLOW_NATIVE_FP64_ATOMIC_ADD)
  atomic_fetch_add_explicit((volatile __global atomic_double*)p, v, memory_order_relaxed, memory_scope_device);
#elif defined(CHANFLOW_ORDER_PTX)
  asm volatile("red.global.add.f64 [%0], %1;" ::"l"(p), "d"(v) : "memory");
#else
  volatile __global long* bits = (volatile __global long*)p;
  long seen = *bits;
  for (;;) {
    const long old = seen;
    seen = atom_cmpxchg(bits, old, as_long(as_double(old) + v));
    if (seen == old) break;
  }
#endif
}
#endif
