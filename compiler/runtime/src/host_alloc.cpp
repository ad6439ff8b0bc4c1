// C's allocation calls in a compiled program's host code (cilk_host.h renames malloc, calloc,
// realloc, free and alloca to these): blocks of SVM, so that device code reads what main allocates, with
// C's contract kept (NULL and ENOMEM where the device cannot give a block, realloc's block left
// as it was), and the other host entry points generated code calls.
#include "chanflow/cilk_host.h"
#include "chanflow/node_layout.h"
#include "process.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#undef malloc
#undef calloc
#undef realloc
#undef free
#undef alloca

namespace {

// alloca's blocks of this thread, the newest last (chanflow_cilk_alloca_mark).
thread_local std::vector<void*> stack_blocks;

}  // namespace

extern "C" {

long __chanflow_loop_inline(long) { return 0; }

long __chanflow_loop_grain(long n) {
  // As CHANFLOW_LOOP_GRAIN in device code, for the device the calls run on.
  return chanflow::cilk::process::cpu_device() ? CHANFLOW_LOOP_GRAIN_CPU(n) : CHANFLOW_LOOP_GRAIN_GPU(n);
}

void* chanflow_cilk_malloc(size_t bytes) { return chanflow::cilk::process::allocate(bytes); }

void* chanflow_cilk_calloc(size_t count, size_t bytes) {
  if (bytes && count > SIZE_MAX / bytes) return nullptr;
  void* p = chanflow_cilk_malloc(count * bytes);
  if (p) std::memset(p, 0, count * bytes);
  return p;
}

void* chanflow_cilk_realloc(void* block, size_t bytes) {
  if (!block) return chanflow_cilk_malloc(bytes);
  namespace process = chanflow::cilk::process;
  const std::size_t old = process::size_of(block);
  if (old == 0 && process::in_device_heap(block))  // freed already, or inside a block: as free() says
    process::release(block);
  if (old == 0) return std::realloc(block, bytes);  // not from this heap (strdup's, say)
  void* p = chanflow_cilk_malloc(bytes);
  if (!p) return nullptr;  // the block stays, as C's realloc leaves it
  std::memcpy(p, block, std::min(old, bytes));
  process::release(block);
  return p;
}

void chanflow_cilk_free(void* block) {
  if (block && !chanflow::cilk::process::release(block)) std::free(block);
}

void* chanflow_cilk_svm_place(const void* value, size_t bytes) {
  void* cell = chanflow_cilk_malloc(bytes);
  std::memcpy(cell, value, bytes);
  return cell;
}

void* chanflow_cilk_alloca(size_t bytes) {
  void* block = chanflow_cilk_malloc(bytes ? bytes : 1);
  if (block) stack_blocks.push_back(block);
  return block;
}

size_t chanflow_cilk_alloca_mark(void) { return stack_blocks.size(); }

void chanflow_cilk_alloca_release(const size_t* mark) {
  while (stack_blocks.size() > *mark) {
    chanflow::cilk::process::release(stack_blocks.back());
    stack_blocks.pop_back();
  }
}

void chanflow_cilk_svm_release(void* cell_pointer) { chanflow_cilk_free(*static_cast<void**>(cell_pointer)); }
}
