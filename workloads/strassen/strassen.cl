/* strassen.c lowered by hand to a channel-flow graph (DESIGN.md decision 8). With
 * STRASSEN_DATA_TASKS (a GPU) per-work-item tasks do the control and work-group tasks
 * (CHANFLOW_GROUP_KERNEL_NODE) the data, as drawn below; without (a CPU device) every loop runs in
 * the work-item task that needs it (see strassen_pre_sync). REAL, STRASSEN_BASE,
 * STRASSEN_ATOMIC_ADD, STRASSEN_JOIN (0 or 1) and the base case's tiling (STRASSEN_TK, _TX, _TY,
 * _RB, _CB) are defined by the graph. strassen_base and strassen_add are strassen_serial.h's, the
 * text strassen.c includes: the graph builds it before this file.
 *
 *   void strassen(n, A, B, C) {            strassen_spawn (yielding, one work-item): a product
 *     if (n <= STRASSEN_BASE) {               of order n; its factors are quadrants of its
 *       C = A·B by the definition;            parent's factors, or sums of two that the parent
 *       return;                               materialized in its frame's scratch. It spawns its
 *     }                                       frame (strassen_combine) and, where its children
 *     t = malloc(17 (n/2)²);                  are products above the base order, work-group tasks
 *     S0..S9 = sums of quadrants;             that form S0..S9 in bands of rows (PREPARE); else
 *     spawn strassen(M1 = S0·S1) ... (M7);    its seven products at once, as work-group tasks.
 *     sync;                                strassen_combine (the frame, waiting in place):
 *     C quadrants = ±M1 ... ±M7;              stage 0: spawn the seven products; stage 1:
 *     free(t);                                spawn work-group tasks that combine them in bands
 *   }                                         (COMBINE); stage 2: return (t is given back).
 *                                          strassen_group (one work-group per CE): PREPARE or
 *                                             COMBINE a band, or multiply a base-order product
 *                                             (tiled, its factors' sums formed as loaded).
 *
 * Without STRASSEN_JOIN (the thesis' scheme, 4.5.1), a product is accumulated instead: each base
 * case adds its product atomically into its one or two quadrants of its parent's product P (zeroed
 * by PREPARE), and a frame's COMBINE adds its P into its parent's quadrants the same way. */

/* Per product k (M1..M7): factor X is quadrant xa (+ xsign · quadrant xb when xb >= 0) of the
 * parent's X, formed in scratch block xsum; likewise Y; the product is added into the
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

__global REAL* strassen_quadrant(__global REAL* m, long stride, long h, int q) {
  return m + (q >> 1) * h * stride + (q & 1) * h;
}

/* A factor of product k, as its task reads it: quadrant a of m (h×h), or the sum of quadrants a
 * and b that the parent's PREPARE left in scratch block `sum` (row stride h). */
__global REAL* strassen_factor(__global REAL* m, long stride, long h, int a, int b, int sum, __global REAL* scratch,
                               long* out_stride) {
  *out_stride = b < 0 ? stride : h;
  return b < 0 ? strassen_quadrant(m, stride, h, a) : scratch + sum * h * h;
}

/* The same factor, formed by the task that reads it (without STRASSEN_DATA_TASKS). */
__global REAL* strassen_form_factor(__global REAL* m, long stride, long h, int a, int b, int sign, int sum,
                                    __global REAL* scratch, long* out_stride) {
  __global REAL* z = strassen_factor(m, stride, h, a, b, sum, scratch, out_stride);
  if (b >= 0) strassen_add(h, strassen_quadrant(m, stride, h, a), stride, strassen_quadrant(m, stride, h, b), stride, (REAL)sign, z);
  return z;
}

/* Work-group tasks of a frame of order n cover its h = n/2 rows in bands (at most
 * STRASSEN_MAX_BANDS, a power of two from 8 to 32 the graph defines, each of at least 16,384
 * elements of h × h where h allows): the top frames' sums and combinations are spread over that
 * many work-groups (H100, Strassen 2048: with at most 8 bands of at least 64 rows, the first
 * 1.7 ms of a 9.1 ms run had 8 work-groups busy). */
uint strassen_bands(long h) { return (uint)clamp(h * h / 16384, 1L, (long)STRASSEN_MAX_BANDS); }

/* A device's share across devices (StrassenArgs): the products numbered [share_first,
 * share_last) at share_depth. A frame numbers itself by its place among its parents' products. */
typedef struct {
  ulong number;
  uint depth;
} StrassenPlace;

StrassenPlace strassen_place(__global const StrassenCont* c) {
  StrassenPlace at = {0ul, 0u};
  for (ulong scale = 1; c->product != STRASSEN_ROOT; scale *= 7, c = (__global const StrassenCont*)c->frame.ret_frame) {
    at.number += scale * c->product;
    ++at.depth;
  }
  return at;
}

/* Whether product k of the frame at `at` holds some of the share (below the share's depth, every
 * product of a frame that does). */
int strassen_in_share(__global const StrassenArgs* args, StrassenPlace at, uint k) {
  if (at.depth >= args->share_depth) return 1;
  ulong first = at.number * 7 + k, count = 1;
  for (uint d = at.depth + 1; d < args->share_depth; ++d) {
    first *= 7;
    count *= 7;
  }
  return first < args->share_last && first + count > args->share_first;
}

/* The seven products of the frame at `at` (children of order n/2), those of the share: tasks, or
 * base cases. */
void strassen_spawn_products(chanflow_ctx* ctx, long n, uint tasks_port, uint leaves_port, StrassenPlace at) {
  __global const StrassenArgs* args = CHANFLOW_ARGS(ctx, StrassenArgs);
  for (uint k = 0; k < 7u; ++k) {
    if (!strassen_in_share(args, at, k)) continue;
    const StrassenTask child = {CHANFLOW_TASK_INIT, k, 0u};
    chanflow_spawn_void_child(ctx, n / 2 <= STRASSEN_BASE ? leaves_port : tasks_port, child);
  }
}

void strassen_spawn_bands(chanflow_ctx* ctx, long n, uint what, uint leaves_port) {
  for (uint b = 0; b < strassen_bands(n / 2); ++b) {
    const StrassenTask band = {CHANFLOW_TASK_INIT, what, b};
    chanflow_spawn_void_child(ctx, leaves_port, band);
  }
}

/* Whether a frame of order n forms its children's factors first: they read them from its
 * scratch (children above the base order; base cases form theirs as they load them), and without
 * STRASSEN_JOIN its P must be zero before they add into it. */
int strassen_prepares(long n) { return n / 2 > STRASSEN_BASE; }


/* How `lanes` work-items share a band of rows × w elements: work-item `lane` takes rows r0,
 * r0 + rs, ... and in each the columns c0, c0 + cs, ... (consecutive work-items, consecutive
 * columns; with one lane, plain nested loops whose inner one vectorizes). A work-item past the
 * last whole row of lanes takes none (r0 = LONG_MAX). */
typedef struct {
  long r0, rs, c0, cs;
} StrassenSpread;

StrassenSpread strassen_spread(uint lane, uint lanes, long w) {
  const long cols = min((long)lanes, w), per_row = (long)lanes / cols;
  StrassenSpread s = {(long)lane / cols, per_row, (long)lane % cols, cols};
  if ((long)lane >= cols * per_row) s.r0 = LONG_MAX;
  return s;
}

/* Rows of one band of a frame whose children have order h. */
long strassen_band_rows(long h) { return h / strassen_bands(h); }

/* PREPARE, band b of frame c: the sums its children read (strassen.c's S0..S9), and without
 * STRASSEN_JOIN its product's rows zeroed. */
void strassen_prepare(__global const StrassenCont* c, uint b, uint lane, uint lanes) {
  const long h = (long)c->n / 2, xs = (long)c->xs, ys = (long)c->ys, ps = (long)c->ps;
  __global REAL* scratch = (__global REAL*)chanflow_frame_scratch(&c->frame);
  const long rows = strassen_band_rows(h), row0 = b * rows;
  StrassenSpread sp = strassen_spread(lane, lanes, h);
  for (long r = sp.r0; r < rows; r += sp.rs) {
    const long i = row0 + r;
    for (long j = sp.c0; j < h; j += sp.cs)
      for (uint k = 0; k < 7u; ++k) {
        if (strassen_xb[k] >= 0)
          scratch[strassen_xsum[k] * h * h + i * h + j] =
              strassen_quadrant(c->x, xs, h, strassen_xa[k])[i * xs + j] +
              (REAL)strassen_xsign[k] * strassen_quadrant(c->x, xs, h, strassen_xb[k])[i * xs + j];
        if (strassen_yb[k] >= 0)
          scratch[strassen_ysum[k] * h * h + i * h + j] =
              strassen_quadrant(c->y, ys, h, strassen_ya[k])[i * ys + j] +
              (REAL)strassen_ysign[k] * strassen_quadrant(c->y, ys, h, strassen_yb[k])[i * ys + j];
      }
  }
  sp = strassen_spread(lane, lanes, 2 * h);
  for (long r = sp.r0; r < rows && !STRASSEN_JOIN; r += sp.rs) {
    const long i = row0 + r;
    for (long j = sp.c0; j < 2 * h; j += sp.cs) {
      c->p[i * ps + j] = 0;
      c->p[(i + h) * ps + j] = 0;
    }
  }
}

/* COMBINE, band b of frame c: with STRASSEN_JOIN the seven products (temporaries in its scratch)
 * into its P's quadrants, as strassen.c does; else its P added into its parent's quadrants. */
void strassen_combine_band(__global const StrassenCont* c, uint b, uint lane, uint lanes) {
  const long h = (long)c->n / 2, q = h * h, cs = (long)c->ps;
  const long rows = strassen_band_rows(h), row0 = b * rows;
  if (STRASSEN_JOIN) {
    __global const REAL* M = (__global const REAL*)chanflow_frame_scratch(&c->frame) + 10 * q;
    __global REAL* C = c->p;
    const StrassenSpread sp = strassen_spread(lane, lanes, h);
    for (long r = sp.r0; r < rows; r += sp.rs) {
      const long i = row0 + r;
      for (long j = sp.c0; j < h; j += sp.cs) {
        const long k = i * h + j;
        const REAL m1 = M[k], m2 = M[q + k], m3 = M[2 * q + k], m4 = M[3 * q + k];
        const REAL m5 = M[4 * q + k], m6 = M[5 * q + k], m7 = M[6 * q + k];
        C[i * cs + j] = m1 + m4 - m5 + m7;
        C[i * cs + j + h] = m3 + m5;
        C[(i + h) * cs + j] = m2 + m4;
        C[(i + h) * cs + j + h] = m1 - m2 + m3 + m6;
      }
    }
    return;
  }
  const uint k = c->product;
  __global const StrassenCont* parent = (__global const StrassenCont*)c->frame.ret_frame;
  const long n = 2 * h, pps = (long)parent->ps;
  __global REAL* d0 = strassen_quadrant(parent->p, pps, n, strassen_d0[k]);
  __global REAL* d1 = strassen_d1[k] >= 0 ? strassen_quadrant(parent->p, pps, n, strassen_d1[k]) : 0;
  const StrassenSpread sp = strassen_spread(lane, lanes, n);
  for (long r = sp.r0; r < rows; r += sp.rs)
    for (long i = row0 + r; i < n; i += h) /* row i of the top half, then of the bottom */
      for (long j = sp.c0; j < n; j += sp.cs) {
        STRASSEN_ATOMIC_ADD(d0 + i * pps + j, (REAL)strassen_s0[k] * c->p[i * cs + j]);
        if (d1) STRASSEN_ATOMIC_ADD(d1 + i * pps + j, (REAL)strassen_s1[k] * c->p[i * cs + j]);
      }
}

/* A base case, X·Y of order n <= STRASSEN_BASE; its factors are quadrants of the parent's, or
 * sums of two formed as they are read. */
typedef struct {
  __global const REAL *xa, *xb, *ya, *yb; /* xb, yb: 0 where the factor is one quadrant */
  REAL xsign, ysign;
  long n, xs, ys;
} StrassenFactors;

StrassenFactors strassen_leaf_factors(__global const StrassenCont* parent, uint k) {
  StrassenFactors f;
  f.n = (long)parent->n / 2;
  f.xs = (long)parent->xs;
  f.ys = (long)parent->ys;
  f.xa = strassen_quadrant(parent->x, f.xs, f.n, strassen_xa[k]);
  f.xb = strassen_xb[k] >= 0 ? strassen_quadrant(parent->x, f.xs, f.n, strassen_xb[k]) : 0;
  f.ya = strassen_quadrant(parent->y, f.ys, f.n, strassen_ya[k]);
  f.yb = strassen_yb[k] >= 0 ? strassen_quadrant(parent->y, f.ys, f.n, strassen_yb[k]) : 0;
  f.xsign = (REAL)strassen_xsign[k];
  f.ysign = (REAL)strassen_ysign[k];
  return f;
}

/* Element (i, j) of a factor: quadrant a of m, plus sign · quadrant b where b is not 0. */
REAL strassen_factor_at(__global const REAL* qa, __global const REAL* qb, REAL sign, long stride, long i, long j) {
  const REAL v = qa[i * stride + j];
  return qb ? v + sign * qb[i * stride + j] : v;
}

/* Where product k of `parent` goes: its temporary (STRASSEN_JOIN: m), or its one or two
 * quadrants of the parent's P (d0, d1, added into atomically with signs s0, s1). */
typedef struct {
  __global REAL *m, *d0, *d1;
  REAL s0, s1;
  long ds;
} StrassenDest;

StrassenDest strassen_leaf_dest(__global const StrassenCont* parent, uint k) {
  StrassenDest d;
  const long n = (long)parent->n / 2;
  d.ds = (long)parent->ps;
  d.m = STRASSEN_JOIN ? (__global REAL*)chanflow_frame_scratch(&parent->frame) + (10 + k) * n * n : 0;
  d.d0 = strassen_quadrant(parent->p, d.ds, n, strassen_d0[k]);
  d.d1 = strassen_d1[k] >= 0 ? strassen_quadrant(parent->p, d.ds, n, strassen_d1[k]) : 0;
  d.s0 = (REAL)strassen_s0[k];
  d.s1 = (REAL)strassen_s1[k];
  return d;
}

/* Entry (i, j) of the product, stored or added. */
void strassen_leaf_put(const StrassenDest* d, long n, long i, long j, REAL v) {
  if (STRASSEN_JOIN) {
    d->m[i * n + j] = v;
  } else {
    STRASSEN_ATOMIC_ADD(d->d0 + i * d->ds + j, d->s0 * v);
    if (d->d1) STRASSEN_ATOMIC_ADD(d->d1 + i * d->ds + j, d->s1 * v);
  }
}

/* By one work-item (a CPU device, in its task), X·Y from factors it formed: row by row in private
 * memory, each entry summed in the order of k as strassen_base does, then added. */
void strassen_leaf_rows(long n, __global const REAL* x, long xs, __global const REAL* y, long ys,
                        const StrassenDest* d) {
  REAL row[STRASSEN_BASE];
  for (long i = 0; i < n; i++) {
    for (long j = 0; j < n; j++) row[j] = 0;
    for (long k = 0; k < n; k++) {
      const REAL a = x[i * xs + k];
      for (long j = 0; j < n; j++) row[j] += a * y[k * ys + j];
    }
    for (long j = 0; j < n; j++) strassen_leaf_put(d, n, i, j, row[j]);
  }
}

/* By a work-group (a GPU, strassen_leaves): k-tiles of both factors in local memory; work-item
 * (tx, ty) of a STRASSEN_TX × STRASSEN_TY grid keeps the STRASSEN_RB × STRASSEN_CB entries
 * (ty + TY r, tx + TX c) in registers, each summed in the order of k. */
typedef struct {
  REAL x[STRASSEN_BASE][STRASSEN_TK];
  REAL y[STRASSEN_TK][STRASSEN_BASE];
} StrassenTiles;

void strassen_leaf_tiles(const StrassenFactors* f, const StrassenDest* d, __local StrassenTiles* tiles) {
  const long n = f->n;
  const uint lid = chanflow_local_id(), tx = lid % STRASSEN_TX, ty = lid / STRASSEN_TX;
  REAL acc[STRASSEN_RB][STRASSEN_CB];
  for (uint r = 0; r < STRASSEN_RB; ++r)
    for (uint c = 0; c < STRASSEN_CB; ++c) acc[r][c] = 0;
  for (long k0 = 0; k0 < n; k0 += STRASSEN_TK) {
    for (uint e = lid; e < STRASSEN_BASE * STRASSEN_TK; e += CHANFLOW_WG_SIZE) {
      const long i = e / STRASSEN_TK, kk = k0 + e % STRASSEN_TK;
      tiles->x[i][e % STRASSEN_TK] = i < n && kk < n ? strassen_factor_at(f->xa, f->xb, f->xsign, f->xs, i, kk) : 0;
    }
    for (uint e = lid; e < STRASSEN_TK * STRASSEN_BASE; e += CHANFLOW_WG_SIZE) {
      const long kk = k0 + e / STRASSEN_BASE, j = e % STRASSEN_BASE;
      tiles->y[e / STRASSEN_BASE][j] = kk < n && j < n ? strassen_factor_at(f->ya, f->yb, f->ysign, f->ys, kk, j) : 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint kk = 0; kk < STRASSEN_TK; ++kk) {
      REAL a[STRASSEN_RB];
      for (uint r = 0; r < STRASSEN_RB; ++r) a[r] = ty + STRASSEN_TY * r < STRASSEN_BASE ? tiles->x[ty + STRASSEN_TY * r][kk] : 0;
      for (uint c = 0; c < STRASSEN_CB; ++c) {
        const REAL b = tx + STRASSEN_TX * c < STRASSEN_BASE ? tiles->y[kk][tx + STRASSEN_TX * c] : 0;
        for (uint r = 0; r < STRASSEN_RB; ++r) acc[r][c] += a[r] * b;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (uint r = 0; r < STRASSEN_RB; ++r)
    for (uint c = 0; c < STRASSEN_CB; ++c) {
      const long i = ty + STRASSEN_TY * r, j = tx + STRASSEN_TX * c;
      if (i < n && j < n) strassen_leaf_put(d, n, i, j, acc[r][c]);
    }
}

/* The data tasks (a band of PREPARE or COMBINE, or a base case), each by a work-group and
 * returning into the frame it works for. */
void strassen_data(__global StrassenTask* t, __local StrassenTiles* tiles, chanflow_ctx* ctx) {
  __global const StrassenCont* c = (__global const StrassenCont*)chanflow_parent_frame(ctx);
  if (t->product == STRASSEN_PREPARE) {
    strassen_prepare(c, t->band, chanflow_local_id(), CHANFLOW_WG_SIZE);
  } else if (t->product == STRASSEN_COMBINE) {
    strassen_combine_band(c, t->band, chanflow_local_id(), CHANFLOW_WG_SIZE);
  } else {
    const StrassenFactors f = strassen_leaf_factors(c, t->product);
    const StrassenDest d = strassen_leaf_dest(c, t->product);
    strassen_leaf_tiles(&f, &d, tiles);
  }
}

CHANFLOW_GROUP_KERNEL_NODE(strassen_leaves, StrassenTask, StrassenTiles, strassen_data)


/* The control: strassen.c's recursion, a product per work-item. With STRASSEN_DATA_TASKS (a GPU)
 * its data goes to work-group tasks, as the comment at the top says; without (a CPU device, whose
 * work-group is a loop on one core, vectorized across its work-items) every loop runs in the task
 * that needs it, a task per work-item: a product forms its own factors' sums into its parent's
 * scratch, a base case multiplies in its task, and the frame combines after its one sync. */
void strassen_pre_sync(__global StrassenTask* t, chanflow_ctx* ctx) {
  __global const StrassenArgs* args = CHANFLOW_ARGS(ctx, StrassenArgs);
  const uint k = t->product;
  __global REAL *x, *y, *p;
  long xs, ys, ps, n;
  StrassenPlace at = {0ul, 0u}; /* of this task's frame */
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
    at = strassen_place(parent);
    at.number = at.number * 7 + k;
    ++at.depth;
#if STRASSEN_DATA_TASKS
    x = strassen_factor(parent->x, (long)parent->xs, n, strassen_xa[k], strassen_xb[k], strassen_xsum[k], scratch, &xs);
    y = strassen_factor(parent->y, (long)parent->ys, n, strassen_ya[k], strassen_yb[k], strassen_ysum[k], scratch, &ys);
#else
    x = strassen_form_factor(parent->x, (long)parent->xs, n, strassen_xa[k], strassen_xb[k], strassen_xsign[k],
                             strassen_xsum[k], scratch, &xs);
    y = strassen_form_factor(parent->y, (long)parent->ys, n, strassen_ya[k], strassen_yb[k], strassen_ysign[k],
                             strassen_ysum[k], scratch, &ys);
    if (n <= STRASSEN_BASE && STRASSEN_JOIN) { /* a base case, in this work-item, into its temporary */
      strassen_base(n, x, xs, y, ys, scratch + (10 + k) * n * n, n);
      return;
    }
    if (n <= STRASSEN_BASE) { /* a base case, in this work-item, added into the parent's product */
      const StrassenDest d = strassen_leaf_dest(parent, k);
      strassen_leaf_rows(n, x, xs, y, ys, &d);
      return;
    }
#endif
    p = scratch + (10 + k) * n * n; /* a temporary of the parent's */
    ps = n;
  }
  /* P is zeroed here unless PREPARE does it (a base cases' parent's is 2 STRASSEN_BASE square). */
  const int prepares = STRASSEN_DATA_TASKS && strassen_prepares(n);
  for (long i = 0; i < n && !STRASSEN_JOIN && !prepares; i++)
    for (long j = 0; j < n; j++) p[i * ps + j] = 0;
  const StrassenCont cont = {CHANFLOW_FRAME_INIT, x, y, p, (ulong)xs, (ulong)ys, (ulong)ps, (ulong)n, k,
                             prepares ? 0u : 1u};
  chanflow_spawn_continuation(ctx, cont);
#if STRASSEN_DATA_TASKS
  if (prepares)
    strassen_spawn_bands(ctx, n, STRASSEN_PREPARE, CHANFLOW_PORT(strassen_spawn, strassen_base));
  else
    strassen_spawn_products(ctx, n, CHANFLOW_NO_PORT, CHANFLOW_PORT(strassen_spawn, strassen_base), at);
#else
  /* Every product a task of this node, base cases included. */
  strassen_spawn_products(ctx, n, CHANFLOW_PORT(strassen_spawn, strassen), CHANFLOW_PORT(strassen_spawn, strassen), at);
#endif
}
CHANFLOW_YIELDING_KERNEL_NODE(strassen_spawn, StrassenTask, strassen_pre_sync)

/* The frame after each sync, waiting again in place until its last stage. */
void strassen_post_sync(__global StrassenCont* c, chanflow_ctx* ctx) {
#if !STRASSEN_DATA_TASKS
  /* The products are in: combine them here, in this work-item. */
  for (uint b = 0; b < strassen_bands((long)c->n / 2) && (STRASSEN_JOIN || c->product != STRASSEN_ROOT); ++b)
    strassen_combine_band(c, b, 0u, 1u);
  (void)ctx;
#else
  StrassenCont next = *c;
  next.stage = c->stage + 1u;
  const long n = (long)c->n;
  if (c->stage == 0u) {
    strassen_spawn_products(ctx, n, CHANFLOW_PORT(strassen_combine, strassen), CHANFLOW_PORT(strassen_combine, strassen_base),
                            strassen_place(c));
  } else if (c->stage == 1u && (STRASSEN_JOIN || c->product != STRASSEN_ROOT)) {
    strassen_spawn_bands(ctx, n, STRASSEN_COMBINE, CHANFLOW_PORT(strassen_combine, strassen_base));
  } else {
    return; /* done: the products are in C (the root accumulates straight into it) */
  }
  chanflow_continue_in_place(ctx, next);
#endif
}
CHANFLOW_CONTINUATION_NODE(strassen_combine, StrassenCont, strassen_post_sync)
