// The blocks main allocates (C's malloc, calloc and realloc through <chanflow/cilk_host.h>, and the
// SVM cells of its variables): SVM of the process's first device. Where that device lacks
// fine-grain SVM buffers, the host may touch a block only while it is mapped: each is mapped from
// its allocation on, unmapped while a graph runs and mapped again after. The caller serializes.
#pragma once

#include "chanflow/opencl.hpp"

#include <cstddef>
#include <map>

namespace chanflow::cilk {

class HostBlocks {
 public:
  /// Whether blocks are mapped for the host between runs (a device without fine-grain SVM buffers).
  void set_mapped(bool mapped) { mapped_ = mapped; }

  /// A block of `bytes` (at least 1) of `rt`'s SVM, mapped if need be; null (errno ENOMEM) where
  /// the device cannot give it, as C's malloc says.
  void* allocate(const Runtime& rt, std::size_t bytes);
  /// The block's size, or 0 if `p` is not one of these blocks.
  std::size_t size_of(void* p) const;
  /// Frees the block (unmapped first if need be); false if `p` is not one of these blocks.
  bool release(const Runtime& rt, void* p);

  /// Before a graph runs: every block the device's (unmapped, if mapped).
  void lend(const Runtime& rt);
  /// After it: every block the host's again (mapped, if need be).
  void take_back(const Runtime& rt);

  /// `f(const SvmBuffer&)` for each block (a graph's nodes declare them: KernelNode::uses).
  template <typename F>
  void each(F f) const {
    for (const auto& [p, block] : blocks_) f(block);
  }

 private:
  bool mapped_ = false;
  std::map<void*, SvmBuffer> blocks_;
};

}  // namespace chanflow::cilk
