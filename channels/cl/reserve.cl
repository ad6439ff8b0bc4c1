/* Work-group collectives for leader-level reservation (thesis Figure 4-3, Figure 5-2b):
 * an exclusive scan of every work-item's request, so one leader can reserve for all.
 * Needs CHANFLOW_WG_SIZE (the launch's local size, set by the runtime as a build option).
 * Three interchangeable implementations, chosen at build time from the device's abilities;
 * all give identical results (tests/test_channel.cpp runs each on PoCL):
 *  - CHANFLOW_SCAN_COLLECTIVE: work_group_scan_exclusive_add (OpenCL C 2.0 collectives);
 *  - CHANFLOW_SCAN_SEQUENTIAL: the leader scans local memory alone (cheapest where a
 *    work-group runs on one CPU thread, as on PoCL);
 *  - default: a Hillis-Steele scan in local memory, log2(CHANFLOW_WG_SIZE) steps. */
#ifndef CHANFLOW_WG_SIZE
#error "CHANFLOW_WG_SIZE must be defined to the work-group size the kernels are launched with"
#endif

#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

/* The parts of a batch a profiled build times (below): the body; the flush's reservations, writes
 * (CEs, frames, children's links) and publishing; the join; the free. */
#define CHANFLOW_SCHED_PHASES_N 6
#define CHANFLOW_PART_BODY 0
#define CHANFLOW_PART_RESERVE 1
#define CHANFLOW_PART_WRITE 2
#define CHANFLOW_PART_PUBLISH 3
#define CHANFLOW_PART_JOIN 4
#define CHANFLOW_PART_FREE 5

/* Local scratch for one work-group's channel calls; declare one per kernel:
 *   __local chanflow_wg_scratch wg;
 * Every collective call must be reached by all work-items of the work-group. */
typedef struct {
  uint scan[2][CHANFLOW_WG_SIZE];
  ulong data_base; /* broadcast of talloc's reservation */
  ulong ctrl_base; /* broadcast of enq's reservation */
  uint total;
  int ok;
  uint bits; /* chanflow_wg_or's result */
#ifdef CHANFLOW_SCHED_PHASES
  ulong phase[CHANFLOW_SCHED_PHASES_N]; /* ns the leader spent in each part of the batch */
  ulong phase_at;                       /* the leader's clock where the last part ended */
#endif
#ifdef CHANFLOW_WG_ITEM_WORDS
  /* Words of each work-item's own, a column per item (word i of item l at i * CHANFLOW_WG_SIZE
   * + l): a layer above keeps there what it would index at run time (scheduler/cl/spawn.cl: the
   * spawn record). */
  uint per_item[CHANFLOW_WG_ITEM_WORDS * CHANFLOW_WG_SIZE];
#endif
} chanflow_wg_scratch;

/* A profiled build (CHANFLOW_BUILD_OPTIONS=-DCHANFLOW_SCHED_PHASES): where a part of a node's
 * batch ends (node_macros.cl, flush.cl), the leader adds the time since the last part ended to
 * that part's, and the device scheduler's traced run keeps them with the batch's span
 * (schedule.cl). Elsewhere nothing. */
#ifdef CHANFLOW_SCHED_PHASES
#define CHANFLOW_PHASE(wg, k)                         \
  do {                                                \
    if (chanflow_local_id() == 0) {                   \
      const ulong now_ = chanflow_clock_ns();         \
      (wg)->phase[k] += now_ - (wg)->phase_at;        \
      (wg)->phase_at = now_;                          \
    }                                                 \
  } while (0)
#else
#define CHANFLOW_PHASE(wg, k) \
  do {                        \
  } while (0)
#endif

#ifdef CHANFLOW_COUNT_ATOMICS
#define CHANFLOW_COUNT_ATOMIC(ch) atom_inc(&(ch)->atomic_ops)
#else
#define CHANFLOW_COUNT_ATOMIC(ch) ((void)0)
#endif

uint chanflow_local_id(void) { return (uint)get_local_id(0); }

/* Exclusive prefix sum of `v` across the work-group; the sum of all values goes to s->total.
 * Collective. Leaves a barrier behind it, so s->total is readable by every item on return. */
uint chanflow_wg_exclusive_scan(uint v, __local chanflow_wg_scratch* s) {
  const uint lid = chanflow_local_id();
#if defined(CHANFLOW_SCAN_COLLECTIVE)
  const uint excl = work_group_scan_exclusive_add(v);
  if (lid == CHANFLOW_WG_SIZE - 1) s->total = excl + v;
  barrier(CLK_LOCAL_MEM_FENCE);
  return excl;
#elif defined(CHANFLOW_SCAN_SEQUENTIAL)
  s->scan[0][lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    uint acc = 0;
    for (uint i = 0; i < CHANFLOW_WG_SIZE; ++i) {
      const uint x = s->scan[0][i];
      s->scan[0][i] = acc;
      acc += x;
    }
    s->total = acc;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  return s->scan[0][lid];
#else
  __local uint* in = s->scan[0];
  __local uint* out = s->scan[1];
  in[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint off = 1; off < CHANFLOW_WG_SIZE; off <<= 1) {
    out[lid] = in[lid] + (lid >= off ? in[lid - off] : 0u);
    barrier(CLK_LOCAL_MEM_FENCE);
    __local uint* t = in;
    in = out;
    out = t;
  }
  const uint inclusive = in[lid];
  if (lid == CHANFLOW_WG_SIZE - 1) s->total = inclusive;
  barrier(CLK_LOCAL_MEM_FENCE); /* total visible; scan buffers free for the next call */
  return inclusive - v;
#endif
}

/* The bitwise or of `v` across the work-group. Collective; every item gets it. */
uint chanflow_wg_or(uint v, __local chanflow_wg_scratch* s) {
  if (chanflow_local_id() == 0) s->bits = 0u;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (v) atomic_or(&s->bits, v);
  barrier(CLK_LOCAL_MEM_FENCE);
  const uint bits = s->bits;
  barrier(CLK_LOCAL_MEM_FENCE); /* read by all before a next call clears it */
  return bits;
}
