/* The Cilk-5 dialect's keywords for C compilers (MIT Cilk 5.4: `cilk` functions, `spawn`,
 * `sync`, SYNCHED). chanflowc includes this header ahead of every `.cilk` file, as MIT's cilkc
 * includes its cilk.h; a plain C compiler given `-include cilk/cilk5.h` compiles the same file to
 * its serial elision. SYNCHED is 0 under chanflowc: a conservative answer, always correct (it
 * only lets a program reuse memory its children may still write), and 1 in the elision, where
 * nothing is ever outstanding. Inlets and `abort` have no lowering: chanflowc refuses them where
 * they are written. FILE_IDENTITY (which the classic files name before including anything) is
 * <cilk-lib.cilkh>'s. */
#ifndef CHANFLOW_CILK_CILK5_H
#define CHANFLOW_CILK_CILK5_H

#ifdef __chanflowc__
void __chanflow_sync(void);
#define cilk
#define spawn
#define sync __chanflow_sync()
#define inlet
#define SYNCHED 0
/* Cilk-5's interface for calling Cilk from C: refused by name where used (the front end). */
#define CilkContext CilkContext
#define EXPORT(f) f
#define Cilk_init(argc, argv) 0
#define Cilk_terminate(context) ((void)0)
#else
#define cilk
#define spawn
#define sync
#define SYNCHED 1
#endif

#ifndef FILE_IDENTITY
#define FILE_IDENTITY(name, text) static const char name[] __attribute__((unused)) = text
#endif

#endif /* CHANFLOW_CILK_CILK5_H */
