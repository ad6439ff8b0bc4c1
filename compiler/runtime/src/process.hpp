// The runtime's process (cilk_runtime.cpp) as the C entry points of a compiled program's host code
// reach it (host_alloc.cpp): the SVM blocks main allocates, the device heap's blocks handed to it,
// and the device's kind.
#pragma once

#include <cstddef>

namespace chanflow::cilk::process {

/// A block of SVM, or null (errno ENOMEM) where the device cannot give it, as C's malloc says.
void* allocate(std::size_t bytes);
/// The block's size, or 0 if `p` is not from this heap or the device heap.
std::size_t size_of(void* p);
/// Whether `p` lies in the device heap (a block the device allocated, or inside one).
bool in_device_heap(void* p);
/// Gives the block back; false if neither heap handed it out (the C library's, then).
bool release(void* p);
/// Whether the process's device is a CPU (the loop grains of cilk_for differ).
bool cpu_device();

}  // namespace chanflow::cilk::process
