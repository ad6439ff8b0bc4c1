/* <cilk/cilk_stub.h> as chanflow provides it: what OpenCilk programs include under -DSERIAL to
 * compile without Cilk, every keyword defined away (the serial elision, whichever compiler reads
 * it: chanflowc then finds no Cilk function and the program stays host code). */
#ifndef CHANFLOW_CILK_CILK_STUB_H
#define CHANFLOW_CILK_CILK_STUB_H

#undef cilk_spawn
#undef cilk_sync
#undef cilk_scope
#undef cilk_for
#define cilk_spawn
#define cilk_sync
#define cilk_scope
#define cilk_for for

#endif /* CHANFLOW_CILK_CILK_STUB_H */
