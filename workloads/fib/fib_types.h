/* The CEs of fib_cilk.cl's graph (the Cilk lowering, thesis Figures 4-9 and 4-10), declared once
 * for the host (fib_cilk.cpp seeds the root) and the kernels (the graph builds this file before
 * fib_cilk.cl), their sizes checked by both compilers. */
#ifndef CHANFLOW_WORKLOADS_FIB_TYPES_H
#define CHANFLOW_WORKLOADS_FIB_TYPES_H

#ifndef __OPENCL_VERSION__
#include "chanflow/node_layout.h"
#endif

typedef struct {
  chanflow_task task; /* where the result goes: a slot of the parent's continuation frame */
  chanflow_u32 n;
  chanflow_u32 pad;
} FibFrame;
CHANFLOW_CHECK_SIZE(FibFrame, 32);

typedef struct {
  chanflow_frame frame; /* filled by the library: return link, join counter */
  chanflow_u64 x;       /* slot 0 */
  chanflow_u64 y;       /* slot 1 */
} FibCont;
CHANFLOW_CHECK_SIZE(FibCont, 56);

#endif /* CHANFLOW_WORKLOADS_FIB_TYPES_H */
