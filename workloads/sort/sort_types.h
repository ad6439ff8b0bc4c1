/* The CEs of sort.cl's graph, declared once for the host (sort_cilk.cpp) and the kernels (the
 * graph builds this file before sort.cl). Keys are 32-bit; user data lives in SVM, so the
 * pointers mean the same on both sides (CHANFLOW_PTR). */
#ifndef CHANFLOW_WORKLOADS_SORT_TYPES_H
#define CHANFLOW_WORKLOADS_SORT_TYPES_H

#ifndef __OPENCL_VERSION__
#include "chanflow/node_layout.h"
#endif

/* cilksort(data, tmp, n): a task, and the frame its continuations share (the live locals). */
typedef struct {
  chanflow_task task;
  CHANFLOW_PTR(chanflow_u32) data;
  CHANFLOW_PTR(chanflow_u32) tmp;
  chanflow_u64 n;
} SortFrame;

typedef struct {
  chanflow_frame frame;
  CHANFLOW_PTR(chanflow_u32) data;
  CHANFLOW_PTR(chanflow_u32) tmp;
  chanflow_u64 n;
} SortCont;

/* cilkmerge(a, na, b, nb, dest): a task; its continuation holds nothing but the join. */
typedef struct {
  chanflow_task task;
  CHANFLOW_PTR(chanflow_u32) a;
  CHANFLOW_PTR(chanflow_u32) b;
  CHANFLOW_PTR(chanflow_u32) dest;
  chanflow_u64 na;
  chanflow_u64 nb;
} MergeFrame;

typedef struct {
  chanflow_frame frame;
} MergeCont;

typedef struct {
  chanflow_u32 sort_base;  /* SORT_BASE */
  chanflow_u32 merge_base; /* MERGE_BASE */
} SortArgs;

#endif /* CHANFLOW_WORKLOADS_SORT_TYPES_H */
