/* The Cilk-5 dialect's keywords for C compilers (MIT Cilk 5.4: `cilk` functions, `spawn`,
 * `sync`). chanflowc includes this header ahead of every `.cilk` file; a plain C compiler given
 * `-include cilk/cilk5.h` compiles the same file to its serial elision. Inlets, `abort` and
 * SYNCHED have no serial meaning chanflow supports: chanflowc rejects them where they are
 * written. */
#ifndef CHANFLOW_CILK_CILK5_H
#define CHANFLOW_CILK_CILK5_H

#ifdef __chanflowc__
void __chanflow_sync(void);
int __chanflow_synched(void);
#define cilk
#define spawn
#define sync __chanflow_sync()
#define inlet
#define SYNCHED __chanflow_synched()
#else
#define cilk
#define spawn
#define sync
#define SYNCHED 1
#endif

#endif /* CHANFLOW_CILK_CILK5_H */
