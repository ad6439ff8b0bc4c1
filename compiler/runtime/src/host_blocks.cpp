// main's SVM blocks, mapped for the host between runs where the device needs it (host_blocks.hpp).
#include "host_blocks.hpp"

#include <cerrno>
#include <optional>
#include <utility>

namespace chanflow::cilk {
namespace {

void map(const Runtime& rt, void* p, std::size_t bytes) {
  const cl_int err = clEnqueueSVMMap(rt.queue()(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, p, bytes, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) throw OpenCLError("clEnqueueSVMMap", err);
}

void unmap(const Runtime& rt, void* p) {
  const cl_int err = clEnqueueSVMUnmap(rt.queue()(), p, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) throw OpenCLError("clEnqueueSVMUnmap", err);
  rt.finish();
}

}  // namespace

void* HostBlocks::allocate(const Runtime& rt, std::size_t bytes) {
  std::optional<SvmBuffer> block;
  try {
    block.emplace(rt, bytes ? bytes : 1, 64);
    if (mapped_) map(rt, block->get(), block->size());
  } catch (const OpenCLError&) {
    errno = ENOMEM;
    return nullptr;
  }
  void* p = block->get();
  blocks_.emplace(p, std::move(*block));
  return p;
}

std::size_t HostBlocks::size_of(void* p) const {
  auto it = blocks_.find(p);
  return it == blocks_.end() ? 0 : it->second.size();
}

bool HostBlocks::release(const Runtime& rt, void* p) {
  auto it = blocks_.find(p);
  if (it == blocks_.end()) return false;
  if (mapped_) unmap(rt, p);
  blocks_.erase(it);
  return true;
}

void HostBlocks::lend(const Runtime& rt) {
  if (mapped_)
    for (auto& [p, block] : blocks_) unmap(rt, p);
}

void HostBlocks::take_back(const Runtime& rt) {
  if (mapped_)
    for (auto& [p, block] : blocks_) map(rt, p, block.size());
}

}  // namespace chanflow::cilk
