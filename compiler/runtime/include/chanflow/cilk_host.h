/* Included first by the host code chanflowc generates (<name>.host.c): memory that main gets
 * from malloc, calloc, realloc and free is SVM, so the pointers it passes to Cilk functions mean
 * the same on the device (DESIGN.md decision 10); the address of a variable passed to one is
 * lent as an SVM copy for the call (chanflow_cilk_borrow). The user's source is not changed: the names are
 * redirected here, for this translation unit only. */
#ifndef CHANFLOW_CILK_HOST_H
#define CHANFLOW_CILK_HOST_H

#include <stddef.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

void* chanflow_cilk_malloc(size_t bytes);
void* chanflow_cilk_calloc(size_t count, size_t bytes);
void* chanflow_cilk_realloc(void* block, size_t bytes);
void chanflow_cilk_free(void* block);
/* For a call of a Cilk function from host code given `address`, a pointer into the host variable
 * `object` (a local of main, a global: memory the device cannot reach): the same place in an
 * SVM copy of the variable, copied back into it when the call's graph has run. chanflowc writes
 * these calls around such arguments. */
void* chanflow_cilk_borrow(void* object, size_t bytes, void* address);

#ifdef __cplusplus
}
#endif

#define malloc(bytes) chanflow_cilk_malloc(bytes)
#define calloc(count, bytes) chanflow_cilk_calloc(count, bytes)
#define realloc(block, bytes) chanflow_cilk_realloc(block, bytes)
#define free(block) chanflow_cilk_free(block)

#endif /* CHANFLOW_CILK_HOST_H */
