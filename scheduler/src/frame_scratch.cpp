// Frame scratch: one pool of blocks per level of a continuation stack (FrameScratch), taken by
// the flush that reserves a frame and given back by the frame's continuation node
// (scheduler/cl/scratch.cl).
#include "chanflow/graph.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace chanflow {

std::size_t FrameScratch::block_bytes(std::uint32_t level) const {
  constexpr std::size_t kAlign = 128;
  return (bytes(level) + kAlign - 1) / kAlign * kAlign;
}

std::uint32_t FrameScratch::blocks(std::uint32_t level, std::uint32_t capacity) const {
  const std::uint32_t frames = max_frames ? std::min(capacity, std::max<std::uint32_t>(max_frames(level), 1)) : capacity;
  return taken_by_tasks ? frames + capacity : frames;
}

ChannelStackNode& ChannelStackNode::set_frame_scratch(FrameScratch scratch) {
  if (kind_ != StackKind::Continuations)
    throw GraphError(fmt::format("channel stack '{}' holds tasks: frame scratch belongs to a continuation stack", name_));
  if (!scratch.bytes) throw GraphError(fmt::format("channel stack '{}': frame scratch needs a size per level", name_));
  if (!pools_.empty()) throw GraphError(fmt::format("channel stack '{}' already has frame scratch", name_));
  scratch_ = std::move(scratch);
  for (std::uint32_t d = 0; d < levels_.size(); ++d) make_scratch_pool(d);
  return *this;
}

void ChannelStackNode::make_scratch_pool(std::uint32_t d) {
  const Runtime& rt = table_.runtime();
  ScratchPool& pool = pools_.emplace_back();
  const std::size_t bytes = scratch_->block_bytes(d);
  if (bytes == 0) return;
  const std::uint32_t blocks = scratch_->blocks(d, capacity_of(d));
  const std::uint32_t words = (blocks + 31) / 32;
  const std::size_t total = bytes * blocks;
  if (total > rt.caps().max_alloc_bytes)
    throw GraphError(fmt::format("channel stack '{}' level {}: frame scratch of {} blocks of {} bytes ({:.1f} MiB) is "
                                 "larger than one allocation on '{}' may be ({:.1f} MiB)",
                                 name_, d, blocks, bytes, total / 1048576.0, rt.caps().name,
                                 rt.caps().max_alloc_bytes / 1048576.0));
  pool.blocks = table_.allocate_side_storage(total);
  pool.bytes = total;
  pool.header = table_.allocate_side_storage(sizeof(chanflow_scratch_pool) + std::size_t{words} * 4);
  std::vector<std::uint32_t> idle(words, 0u);  // no block taken
  if (blocks % 32 != 0) idle.back() = ~((1u << (blocks % 32)) - 1u);  // bits past the last block
  const auto* bitmap = static_cast<std::uint8_t*>(pool.header) + sizeof(chanflow_scratch_pool);
  const chanflow_scratch_pool header{reinterpret_cast<std::uint64_t>(pool.blocks), bytes,
                                     reinterpret_cast<std::uint64_t>(bitmap), blocks, words};
  rt.svm_write(pool.header, &header, sizeof(header));
  rt.svm_write(const_cast<std::uint8_t*>(bitmap), idle.data(), std::size_t{words} * 4);
}

const chanflow_scratch_pool* ChannelStackNode::scratch_pool(std::uint32_t d) const {
  if (d >= pools_.size() || !pools_[d].header) return nullptr;
  return static_cast<const chanflow_scratch_pool*>(pools_[d].header);
}

std::size_t ChannelStackNode::scratch_bytes() const noexcept {
  std::size_t total = 0;
  for (const auto& p : pools_) total += p.bytes;
  return total;
}

}  // namespace chanflow
