/* Included first by the host code chanflowc generates (<name>.host.c): memory that main gets
 * from malloc, calloc, realloc, free and alloca is SVM, so the pointers it passes to Cilk functions mean
 * the same on the device (DESIGN.md decision 10), and so are the variables whose address host
 * code takes (chanflowc names an SVM cell instead of each: chanflow_cilk_svm_place). The user's
 * source is not changed: the names are redirected here, for this translation unit only. */
#ifndef CHANFLOW_CILK_HOST_H
#define CHANFLOW_CILK_HOST_H

#include <alloca.h>
#include <stddef.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

void* chanflow_cilk_malloc(size_t bytes);
void* chanflow_cilk_calloc(size_t count, size_t bytes);
void* chanflow_cilk_realloc(void* block, size_t bytes);
void chanflow_cilk_free(void* block);
/* alloca's block, of SVM (magic.cilk's main passes its grid, from Cilk_alloca, to a Cilk
 * function), kept until the function that took it returns: chanflowc opens each host function
 * that calls alloca and may run a graph while it is active with `cf_alloca_svm` (1, hiding the
 * file's 0 below) and a mark (how many blocks this thread holds) whose cleanup releases the
 * blocks taken since. Other functions' blocks stay on the stack. */
void* chanflow_cilk_alloca(size_t bytes);
size_t chanflow_cilk_alloca_mark(void);
void chanflow_cilk_alloca_release(const size_t* mark);
/* An SVM cell holding a copy of `bytes` bytes at `value`: where a host variable whose address is
 * taken lives (chanflowc names the cell wherever the source names the variable). */
void* chanflow_cilk_svm_place(const void* value, size_t bytes);
/* Frees the cell a pointer variable holds, at the end of its scope (the cleanup attribute's
 * argument is the variable's address). */
void chanflow_cilk_svm_release(void* cell_pointer);
/* A cilk_for in host code runs on the device (never inline on the host), its range split down to
 * the grain the device's shape asks for (as CHANFLOW_LOOP_GRAIN in device code). */
long __chanflow_loop_inline(long n);
long __chanflow_loop_grain(long n);

#ifdef __cplusplus
}
#endif

#define malloc(bytes) chanflow_cilk_malloc(bytes)
#define calloc(count, bytes) chanflow_cilk_calloc(count, bytes)
#define realloc(block, bytes) chanflow_cilk_realloc(block, bytes)
#define free(block) chanflow_cilk_free(block)
enum { cf_alloca_svm = 0 };
#undef alloca
#define alloca(bytes) (cf_alloca_svm ? chanflow_cilk_alloca(bytes) : __builtin_alloca(bytes))

#endif /* CHANFLOW_CILK_HOST_H */
