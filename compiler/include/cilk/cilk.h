/* <cilk/cilk.h> as chanflow provides it (OpenCilk's keyword spellings).
 *
 * Read by an ordinary C compiler, this header defines the keywords away, so that a Cilk program
 * compiles to its serial elision: every spawn an ordinary call, every sync a no-op. That elision is
 * the reference chanflow's workloads and compiler tests compare against. chanflowc reads the same
 * spellings through Clang's preprocessor (DESIGN.md decision 9): there __chanflowc__ is defined,
 * a sync becomes a call the compiler recognises, and the spawn and scope keywords expand to
 * nothing while its preprocessor callbacks record the token each one precedes. */
#ifndef CHANFLOW_CILK_CILK_H
#define CHANFLOW_CILK_CILK_H

#ifdef __chanflowc__
void __chanflow_sync(void);
/* What a cilk_for's rewriting asks of the device it runs on (chanflowc's cilk_for.cpp): whether a
 * loop of n iterations runs in its task, and the grain its range splits down to. */
long __chanflow_loop_inline(long n);
long __chanflow_loop_grain(long n);
#define cilk_spawn
#define cilk_sync __chanflow_sync()
#define cilk_scope
#define cilk_for for
#define cilk_reducer(identity, reduce) /* rejected: reducers */
#else
#define cilk_spawn
#define cilk_sync
#define cilk_scope
#define cilk_for for
#endif

#endif /* CHANFLOW_CILK_CILK_H */
