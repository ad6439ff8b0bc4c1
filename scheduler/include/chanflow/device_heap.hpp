#pragma once
/// \file
/// The device heap: memory kernel bodies allocate and free while a graph runs
/// (scheduler/cl/heap.cl: chanflow_malloc, chanflow_calloc, chanflow_realloc, chanflow_free,
/// chanflow_alloca), in one SVM allocation the host can read between runs, so a block allocated
/// on the device and handed to the host stays readable and freeable there. Layout and size
/// classes in heap_layout.h; scheduler/README.md, "The device heap".
///
///   DeviceHeap heap(rt, 64 << 20);
///   graph.set_heap(heap);       // every kernel node of the graph reaches it (ctx->env->heap)
///   graph.run(policy);          // a request it cannot meet fails the run (RunError, by name)

#include "chanflow/heap_layout.h"
#include "chanflow/opencl.hpp"

#include <cstddef>
#include <cstdint>

namespace chanflow {

class DeviceHeap {
 public:
  /// A heap whose arena holds `bytes` (16-byte units, block headers included), with a sink of
  /// bytes / 16 (at least 4 KiB, at most 1 MiB) that failed requests get.
  DeviceHeap(const Runtime& runtime, std::uint64_t bytes);

  std::uint64_t bytes() const noexcept { return units_ * CHANFLOW_HEAP_UNIT; }
  /// The chanflow_heap header a node environment names.
  void* device_ptr() const noexcept { return buffer_.get(); }
  const SvmBuffer& buffer() const noexcept { return buffer_; }
  /// Whether `p` lies in the arena (a block's payload, or inside one).
  bool contains(const void* p) const noexcept;

  /// Bytes of the arena handed out fresh so far, headers included: the heap's high-water mark
  /// (freed blocks are reused, never returned to the arena). Reads the device's header.
  std::uint64_t high_water_bytes() const;

  /// Blocks handed out (on the device or the host's side) and not given back. Reads the device's
  /// header unless mapped.
  std::uint64_t live_blocks() const;

  /// Host access between runs (coarse-grain SVM): map() makes the part of the heap in use
  /// readable and writable by the host until unmap(), which must come before the next run. With
  /// no block live only the header is mapped (nothing in the arena is the host's to read); a
  /// block the host frees then is one given back already.
  void map();
  void unmap();
  bool mapped() const noexcept { return mapped_bytes_ != 0; }

  /// With the heap mapped: the payload size of the live block at `p` (its size class's), or 0 if
  /// `p` is not one the heap handed out.
  std::size_t usable_size(const void* p) const noexcept;
  /// With the heap mapped: gives the block at `p` back (its free list, for the device to reuse).
  /// Throws std::invalid_argument if the heap did not hand `p` out, or took it back already.
  void free(void* p);

 private:
  chanflow_heap* header() const noexcept { return static_cast<chanflow_heap*>(buffer_.get()); }
  chanflow_heap_block* block_of(const void* p) const noexcept;

  const Runtime* runtime_;
  std::uint64_t units_ = 0;
  std::uint64_t arena_offset_ = 0;
  SvmBuffer buffer_;
  std::size_t mapped_bytes_ = 0;
};

}  // namespace chanflow
