/* strassen.c lowered by hand to a channel-flow graph (DESIGN.md decision 8), with the combine
 * step done by atomic addition as in the thesis (4.5.1), or, with STRASSEN_JOIN, after the sync
 * as strassen.c does it (impl chanflow-join). REAL, STRASSEN_BASE, STRASSEN_ATOMIC_ADD and
 * STRASSEN_JOIN (0 or 1) are defined by the graph.
 *
 *   void strassen(n, A, B, C) {            strassen_spawn (yielding), one task per product:
 *     if (n <= STRASSEN_BASE) {               its factors are quadrants of its parent's factors
 *       C = A·B by the definition;            (X, Y in the parent frame), or sums of two, which
 *       return;                               the task materializes into the parent frame's
 *     }                                       scratch (strassen.c's S blocks); a base case adds
 *     t = malloc(17 (n/2)²);                  its product straight into its one or two quadrants
 *     S0..S9 = sums of quadrants;             of the parent's product P, atomically.
 *     spawn strassen(M1 = S0·S1) ... (M7);    An internal task zeroes its own product (block
 *     sync;                                   10 + k of the parent's scratch, or C) and spawns
 *     C quadrants = ±M1 ... ±M7;              its continuation and seven children (void: they
 *     free(t);                                join, no slot).
 *   }                                      strassen_combine (continuation): the seven products
 *                                             are in P; add ±P into its quadrants of the parent's
 *                                             product, atomically; the frame's scratch (t) is
 *                                             given back when it returns.
 *
 * So each of the seven products is a temporary of its own (the parent frame's scratch), and the
 * four quadrant sums are formed by atomic additions into the parent's product as the products
 * complete, rather than by one loop after the sync. STRASSEN_JOIN keeps strassen.c's scheme
 * instead: a base case stores its product in its temporary, and the continuation combines the
 * seven temporaries into the task's product (no atomics, no zeroing). */

/* Per product k (M1..M7): factor X is quadrant xa (+ xsign · quadrant xb when xb >= 0) of the
 * parent's X, materialized as scratch block xsum; likewise Y; the product is added into the
 * parent's quadrants d0 (sign s0) and d1 (s1, when d1 >= 0). Quadrants: 0 = 11, 1 = 12,
 * 2 = 21, 3 = 22. */
__constant int strassen_xa[7] = {0, 2, 0, 3, 0, 2, 1};
__constant int strassen_xb[7] = {3, 3, -1, -1, 1, 0, 3};
__constant int strassen_xsign[7] = {1, 1, 0, 0, 1, -1, -1};
__constant int strassen_xsum[7] = {0, 2, -1, -1, 5, 6, 8};
__constant int strassen_ya[7] = {0, 0, 1, 2, 3, 0, 2};
__constant int strassen_yb[7] = {3, -1, 3, 0, -1, 1, 3};
__constant int strassen_ysign[7] = {1, 0, -1, -1, 0, 1, 1};
__constant int strassen_ysum[7] = {1, -1, 3, 4, -1, 7, 9};
__constant int strassen_d0[7] = {0, 2, 1, 0, 0, 3, 0};
__constant int strassen_s0[7] = {1, 1, 1, 1, -1, 1, 1};
__constant int strassen_d1[7] = {3, 3, 3, 2, 1, -1, -1};
__constant int strassen_s1[7] = {1, -1, 1, 1, 1, 0, 0};

/* strassen.c's helpers, as written. */
void strassen_base(long n, __global const REAL* A, long as, __global const REAL* B, long bs, __global REAL* C, long cs) {
  for (long i = 0; i < n; i++) {
    for (long j = 0; j < n; j++) C[i * cs + j] = 0;
    for (long k = 0; k < n; k++) {
      REAL a = A[i * as + k];
      for (long j = 0; j < n; j++) C[i * cs + j] += a * B[k * bs + j];
    }
  }
}

void strassen_add(long n, __global const REAL* X, long xs, __global const REAL* Y, long ys, REAL s, __global REAL* Z) {
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) Z[i * n + j] = X[i * xs + j] + s * Y[i * ys + j];
}

__global REAL* strassen_quadrant(__global REAL* m, long stride, long h, int q) {
  return m + (q >> 1) * h * stride + (q & 1) * h;
}

/* A factor of a product: quadrant a of m (h×h), or quadrant a + sign · quadrant b materialized
 * in scratch block `sum` (row stride h). */
__global REAL* strassen_factor(__global REAL* m, long stride, long h, int a, int b, int sign, int sum,
                               __global REAL* scratch, long* out_stride) {
  __global REAL* qa = strassen_quadrant(m, stride, h, a);
  if (b < 0) {
    *out_stride = stride;
    return qa;
  }
  __global REAL* z = scratch + sum * h * h;
  strassen_add(h, qa, stride, strassen_quadrant(m, stride, h, b), stride, (REAL)sign, z);
  *out_stride = h;
  return z;
}

/* d += s · m, atomically, for each destination (n×n, row stride ds; d1 may be 0). */
void strassen_accumulate_row(long n, const REAL* row, __global REAL* d0, REAL s0, __global REAL* d1, REAL s1) {
  for (long j = 0; j < n; j++) {
    STRASSEN_ATOMIC_ADD(d0 + j, s0 * row[j]);
    if (d1) STRASSEN_ATOMIC_ADD(d1 + j, s1 * row[j]);
  }
}

/* A base case: X·Y (n <= STRASSEN_BASE) row by row in private memory, each row added into the
 * destinations as soon as it is complete. */
void strassen_leaf(long n, __global const REAL* X, long xs, __global const REAL* Y, long ys, __global REAL* d0, REAL s0,
                   __global REAL* d1, REAL s1, long ds) {
  REAL row[STRASSEN_BASE];
  for (long i = 0; i < n; i++) {
    for (long j = 0; j < n; j++) row[j] = 0;
    for (long k = 0; k < n; k++) {
      const REAL a = X[i * xs + k];
      for (long j = 0; j < n; j++) row[j] += a * Y[k * ys + j];
    }
    strassen_accumulate_row(n, row, d0 + i * ds, s0, d1 ? d1 + i * ds : 0, s1);
  }
}

void strassen_pre_sync(__global StrassenTask* t, chanflow_ctx* ctx) {
  __global const StrassenArgs* args = CHANFLOW_ARGS(ctx, StrassenArgs);
  const uint k = t->product;
  __global REAL *x, *y, *p;
  long xs, ys, ps, n;
  if (k == STRASSEN_ROOT) {
    n = (long)args->n;
    x = args->a;
    y = args->b;
    p = args->c;
    xs = ys = ps = n;
    if (n <= STRASSEN_BASE) {
      strassen_base(n, x, xs, y, ys, p, ps);
      return;
    }
  } else {
    __global const StrassenCont* parent = (__global const StrassenCont*)chanflow_parent_frame(ctx);
    __global REAL* scratch = (__global REAL*)chanflow_parent_scratch(ctx);
    if (!scratch) return; /* the flush reported CHANFLOW_ERR_SCRATCH; the run fails */
    n = (long)parent->n / 2;
    x = strassen_factor(parent->x, (long)parent->xs, n, strassen_xa[k], strassen_xb[k], strassen_xsign[k],
                        strassen_xsum[k], scratch, &xs);
    y = strassen_factor(parent->y, (long)parent->ys, n, strassen_ya[k], strassen_yb[k], strassen_ysign[k],
                        strassen_ysum[k], scratch, &ys);
    if (n <= STRASSEN_BASE && STRASSEN_JOIN) { /* the product is a temporary of the parent's */
      strassen_base(n, x, xs, y, ys, scratch + (10 + k) * n * n, n);
      return;
    }
    if (n <= STRASSEN_BASE) {
      const long pps = (long)parent->ps;
      __global REAL* d1 = strassen_d1[k] >= 0 ? strassen_quadrant(parent->p, pps, n, strassen_d1[k]) : 0;
      strassen_leaf(n, x, xs, y, ys, strassen_quadrant(parent->p, pps, n, strassen_d0[k]), (REAL)strassen_s0[k], d1,
                    (REAL)strassen_s1[k], pps);
      return;
    }
    p = scratch + (10 + k) * n * n;
    ps = n;
  }
  for (long i = 0; i < n && !STRASSEN_JOIN; i++)
    for (long j = 0; j < n; j++) p[i * ps + j] = 0;
  const StrassenCont cont = {CHANFLOW_FRAME_INIT, x, y, p, (ulong)xs, (ulong)ys, (ulong)ps, (ulong)n, k, 0u};
  chanflow_spawn_continuation(ctx, cont);
  for (uint c = 0; c < 7u; ++c) {
    const StrassenTask child = {CHANFLOW_TASK_INIT, c, 0u};
    chanflow_spawn_void_child(ctx, CHANFLOW_PORT(strassen_spawn, strassen), child);
  }
}
CHANFLOW_YIELDING_KERNEL_NODE(strassen_spawn, StrassenTask, strassen_pre_sync)

/* After the sync, STRASSEN_JOIN: the seven products are temporaries of this frame; combine them
 * into the quadrants of this task's product, as strassen.c does. */
void strassen_join(__global StrassenCont* c) {
  __global const REAL* M = (__global const REAL*)chanflow_frame_scratch(&c->frame) + 10 * (c->n / 2) * (c->n / 2);
  __global REAL* C = c->p;
  const long h = (long)c->n / 2, q = h * h, cs = (long)c->ps;
  for (long i = 0; i < h; i++)
    for (long j = 0; j < h; j++) {
      const long k = i * h + j;
      const REAL m1 = M[k], m2 = M[q + k], m3 = M[2 * q + k], m4 = M[3 * q + k];
      const REAL m5 = M[4 * q + k], m6 = M[5 * q + k], m7 = M[6 * q + k];
      C[i * cs + j] = m1 + m4 - m5 + m7;
      C[i * cs + j + h] = m3 + m5;
      C[(i + h) * cs + j] = m2 + m4;
      C[(i + h) * cs + j + h] = m1 - m2 + m3 + m6;
    }
}

/* After the sync: this task's product is complete (the children added into it); add it into
 * the parent's. */
void strassen_post_sync(__global StrassenCont* c, chanflow_ctx* ctx) {
  (void)ctx;
  if (STRASSEN_JOIN) {
    strassen_join(c);
    return;
  }
  const uint k = c->product;
  if (k == STRASSEN_ROOT) return;
  __global const StrassenCont* parent = (__global const StrassenCont*)c->frame.ret_frame;
  const long n = (long)c->n, ps = (long)c->ps, pps = (long)parent->ps;
  __global REAL* d0 = strassen_quadrant(parent->p, pps, n, strassen_d0[k]);
  __global REAL* d1 = strassen_d1[k] >= 0 ? strassen_quadrant(parent->p, pps, n, strassen_d1[k]) : 0;
  REAL row[STRASSEN_BASE];
  for (long i = 0; i < n; i++)
    for (long j0 = 0; j0 < n; j0 += STRASSEN_BASE) {
      for (long j = 0; j < STRASSEN_BASE; j++) row[j] = c->p[i * ps + j0 + j];
      strassen_accumulate_row(STRASSEN_BASE, row, d0 + i * pps + j0, (REAL)strassen_s0[k], d1 ? d1 + i * pps + j0 : 0,
                              (REAL)strassen_s1[k]);
    }
}
CHANFLOW_CONTINUATION_NODE(strassen_combine, StrassenCont, strassen_post_sync)
