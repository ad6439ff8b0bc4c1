/* <cilk/cilk_api.h> as chanflow provides it: OpenCilk's runtime queries, as host-side shims. A
 * Cilk function's graph runs on the OpenCL device, not on Cilk workers: the host has one worker
 * (number 0), and setting a parameter (the worker count) is accepted and changes nothing. */
#ifndef CHANFLOW_CILK_CILK_API_H
#define CHANFLOW_CILK_CILK_API_H

static inline int __cilkrts_get_nworkers(void) { return 1; }
static inline int __cilkrts_get_worker_number(void) { return 0; }
static inline int __cilkrts_set_param(const char *name, const char *value) {
  (void)name;
  (void)value;
  return 0;
}

#endif /* CHANFLOW_CILK_CILK_API_H */
