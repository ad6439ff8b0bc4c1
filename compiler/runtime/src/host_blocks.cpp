// main's SVM blocks, mapped for the host between runs where the device needs it (host_blocks.hpp).
#include "host_blocks.hpp"

#include <cerrno>
#include <optional>
#include <utility>

namespace chanflow::cilk {

void* HostBlocks::allocate(const Runtime& rt, std::size_t bytes) {
  std::optional<SvmBuffer> block;
  try {
    block.emplace(rt, bytes ? bytes : 1, 64);
    if (mapped_) rt.svm_map(block->get(), block->size());
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
  if (mapped_) rt.svm_unmap(p);
  blocks_.erase(it);
  return true;
}

void HostBlocks::lend(const Runtime& rt) {
  if (mapped_)
    for (auto& [p, block] : blocks_) rt.svm_unmap(p);
}

void HostBlocks::take_back(const Runtime& rt) {
  if (mapped_)
    for (auto& [p, block] : blocks_) rt.svm_map(p, block.size());
}

}  // namespace chanflow::cilk
