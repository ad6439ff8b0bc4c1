// Pinned host memory: a buffer in host memory, mapped for its life (pinned.hpp).
#include "chanflow/pinned.hpp"

#include <fmt/format.h>

#include <utility>

namespace chanflow {

PinnedBuffer::PinnedBuffer(const Runtime& runtime, std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  cl_int err = CL_SUCCESS;
  buffer_ = clCreateBuffer(runtime.context()(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &err);
  if (err != CL_SUCCESS) throw OpenCLError(fmt::format("clCreateBuffer (pinned host memory, {} bytes)", bytes), err);
  queue_ = runtime.queue()();
  clRetainCommandQueue(queue_);
  ptr_ = clEnqueueMapBuffer(queue_, buffer_, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) {
    ptr_ = nullptr;
    reset();
    throw OpenCLError(fmt::format("clEnqueueMapBuffer (pinned host memory, {} bytes)", bytes), err);
  }
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : buffer_(std::exchange(other.buffer_, nullptr)),
      queue_(std::exchange(other.queue_, nullptr)),
      ptr_(std::exchange(other.ptr_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    std::swap(buffer_, other.buffer_);
    std::swap(queue_, other.queue_);
    std::swap(ptr_, other.ptr_);
    std::swap(bytes_, other.bytes_);
  }
  return *this;
}

PinnedBuffer::~PinnedBuffer() { reset(); }

void PinnedBuffer::reset() noexcept {
  // Copies into or out of the memory may still be queued (on any queue: the owner waits for
  // those it made); this runtime's finish before the unmap.
  if (queue_) clFinish(queue_);
  if (ptr_) {
    clEnqueueUnmapMemObject(queue_, buffer_, ptr_, 0, nullptr, nullptr);
    clFinish(queue_);
  }
  if (buffer_) clReleaseMemObject(buffer_);
  if (queue_) clReleaseCommandQueue(queue_);
  buffer_ = nullptr;
  queue_ = nullptr;
  ptr_ = nullptr;
  bytes_ = 0;
}

}  // namespace chanflow
