/* <cilk/cilk.h> as chanflow provides it (OpenCilk's keyword spellings).
 *
 * Read by an ordinary C compiler, this header defines the keywords away, so that a Cilk program
 * compiles to its serial elision: every spawn an ordinary call, every sync a no-op. That elision is
 * the reference chanflow's workloads and compiler tests compare against. chanflowc (the compiler
 * issue) reads the same spellings through Clang's preprocessor and lowers them to channel-flow
 * graphs instead (DESIGN.md decision 9). */
#ifndef CHANFLOW_CILK_CILK_H
#define CHANFLOW_CILK_CILK_H

#ifndef __chanflowc__
#define cilk_spawn
#define cilk_sync
#define cilk_scope
#endif

#endif /* CHANFLOW_CILK_CILK_H */
