// Host memory that a device copies at the rate of its DMA engines ("pinned"). A copy between SVM
// and pageable memory (a std::vector) goes through a bounce buffer the driver pins for it, a copy
// more on the host; one from this memory does not. Used to stage data moved between devices
// (each has a context of its own, so nothing else is shared); `chanflow bench transfers` measures
// what it gains, and what it gains for a context other than the one that pinned it.
#pragma once

#include "chanflow/opencl.hpp"

#include <cstddef>

namespace chanflow {

/// An OpenCL buffer the driver allocates in host memory (CL_MEM_ALLOC_HOST_PTR), mapped for the
/// buffer's life: get() is an ordinary host pointer, valid as either side of an SVM copy on any
/// queue. Unmapped and released when the object dies, after the runtime's queue has finished.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const Runtime& runtime, std::size_t bytes);
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer();

  void* get() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return bytes_; }

 private:
  void reset() noexcept;
  cl_mem buffer_ = nullptr;
  cl_command_queue queue_ = nullptr;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace chanflow
