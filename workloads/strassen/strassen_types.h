/* The CEs of strassen.cl's graph, declared once for the host (strassen_cilk.cpp) and the
 * kernels. The element type is REAL (float or double): the graph defines it before this file on
 * the device; the host never reads matrix elements through these structs, so its pointers are
 * untyped. Matrices and temporaries live in SVM (CHANFLOW_PTR). */
#ifndef CHANFLOW_WORKLOADS_STRASSEN_TYPES_H
#define CHANFLOW_WORKLOADS_STRASSEN_TYPES_H

#ifdef __OPENCL_VERSION__
#define STRASSEN_PTR CHANFLOW_PTR(REAL)
#else
#include "chanflow/node_layout.h"
#define STRASSEN_PTR CHANFLOW_PTR(void)
#endif

/* Which of its parent's seven products a task computes (0..6: M1..M7), or the root's product;
 * or, for a work-group task, a band of its frame's sums to form or of its products to combine. */
#define STRASSEN_ROOT 7u
#define STRASSEN_PREPARE 8u
#define STRASSEN_COMBINE 9u

/* strassen(n, A, B, C): a task is one product (or a band of work for its frame); everything else
 * it needs is in the frame it returns into (the operands to take its factors from, the product
 * to put its result in). */
typedef struct {
  chanflow_task task;
  chanflow_u32 product;
  chanflow_u32 band; /* STRASSEN_PREPARE and STRASSEN_COMBINE: which band of rows */
} StrassenTask;
CHANFLOW_CHECK_SIZE(StrassenTask, 32);

/* The frame of an internal task, live until its seven products are in: its factors X and Y
 * (n×n, row strides xs and ys; the children's operands are their quadrants), and P, its
 * product, which the children accumulate into (row stride ps). The frame's scratch block holds
 * the children's temporaries: 10 operand sums and 7 products of (n/2)² elements, laid out as
 * strassen.c's `t`. */
typedef struct {
  chanflow_frame frame;
  STRASSEN_PTR x;
  STRASSEN_PTR y;
  STRASSEN_PTR p;
  chanflow_u64 xs;
  chanflow_u64 ys;
  chanflow_u64 ps;
  chanflow_u64 n;
  chanflow_u32 product; /* which product of its own parent this task is (STRASSEN_ROOT: C) */
  chanflow_u32 stage;   /* syncs passed: 0 factors formed, 1 products in, 2 combined */
} StrassenCont;
CHANFLOW_CHECK_SIZE(StrassenCont, 104);

/* The root's operands and result, n×n with row stride n; and the products this graph computes:
 * of the 7^share_depth products at that depth (product k of the one numbered p is 7p + k), those
 * numbered [share_first, share_last), added into c (strassen_across.hpp: a device's share; alone,
 * depth 0: the root, all of it). */
typedef struct {
  STRASSEN_PTR a;
  STRASSEN_PTR b;
  STRASSEN_PTR c;
  chanflow_u64 n;
  chanflow_u32 share_depth;
  chanflow_u32 share_first;
  chanflow_u32 share_last;
  chanflow_u32 unused;
} StrassenArgs;
CHANFLOW_CHECK_SIZE(StrassenArgs, 48);

#endif /* CHANFLOW_WORKLOADS_STRASSEN_TYPES_H */
