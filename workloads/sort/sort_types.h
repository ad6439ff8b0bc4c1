/* The CEs of sort.cl's graph, declared once for the host (sort_cilk.cpp) and the kernels (the
 * graph builds this file before sort.cl). Keys are SORT_KEY on the device (uint or ulong, defined
 * by the graph); the host only seeds the root, so its key pointers are untyped. User data lives
 * in SVM, so the pointers mean the same on both sides (CHANFLOW_PTR). */
#ifndef CHANFLOW_WORKLOADS_SORT_TYPES_H
#define CHANFLOW_WORKLOADS_SORT_TYPES_H

#ifdef __OPENCL_VERSION__
#define SORT_KEY_PTR CHANFLOW_PTR(SORT_KEY)
#else
#include "chanflow/node_layout.h"
#define SORT_KEY_PTR CHANFLOW_PTR(void)
#endif

/* cilksort(data, tmp, n): a task, and the frame its continuations share (the live locals). */
typedef struct {
  chanflow_task task;
  SORT_KEY_PTR data;
  SORT_KEY_PTR tmp;
  chanflow_u64 n;
} SortFrame;
CHANFLOW_CHECK_SIZE(SortFrame, 48);

typedef struct {
  chanflow_frame frame;
  SORT_KEY_PTR data;
  SORT_KEY_PTR tmp;
  chanflow_u64 n;
} SortCont;
CHANFLOW_CHECK_SIZE(SortCont, 64);

/* cilkmerge(a, na, b, nb, dest): a task; its continuation holds nothing but the join. */
typedef struct {
  chanflow_task task;
  SORT_KEY_PTR a;
  SORT_KEY_PTR b;
  SORT_KEY_PTR dest;
  chanflow_u64 na;
  chanflow_u64 nb;
  chanflow_u64 d0, d1; /* with SORT_GROUPS (sort.cl): the outputs [d0, d1) of the merge this task makes */
} MergeFrame;
CHANFLOW_CHECK_SIZE(MergeFrame, 80);

typedef struct {
  chanflow_frame frame;
} MergeCont;
CHANFLOW_CHECK_SIZE(MergeCont, 40);

typedef struct {
  chanflow_u32 sort_base;  /* SORT_BASE */
  chanflow_u32 merge_base; /* MERGE_BASE */
} SortArgs;
CHANFLOW_CHECK_SIZE(SortArgs, 8);

#endif /* CHANFLOW_WORKLOADS_SORT_TYPES_H */
