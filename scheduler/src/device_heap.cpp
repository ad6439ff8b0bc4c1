// The device heap's host side: the SVM allocation and its header, the high-water mark, and what
// the host does with device-allocated blocks between runs (reads them, frees them).
#include "chanflow/device_heap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace chanflow {

namespace {
constexpr std::uint64_t kHeaderBytes = (sizeof(chanflow_heap) + 127) / 128 * 128;

std::uint64_t sink_bytes_for(std::uint64_t arena) {
  return std::clamp<std::uint64_t>(arena / 16, 4096, 1 << 20) / CHANFLOW_HEAP_UNIT * CHANFLOW_HEAP_UNIT;
}
}  // namespace

DeviceHeap::DeviceHeap(const Runtime& runtime, std::uint64_t bytes)
    : runtime_(&runtime), units_(std::max<std::uint64_t>(bytes / CHANFLOW_HEAP_UNIT, 2)), arena_offset_(kHeaderBytes) {
  if (units_ > CHANFLOW_HEAP_UNIT_MASK)
    throw std::invalid_argument(fmt::format("a device heap of {} bytes is larger than the {} a heap can hold", bytes,
                                            CHANFLOW_HEAP_UNIT_MASK * CHANFLOW_HEAP_UNIT));
  const std::uint64_t sink = sink_bytes_for(this->bytes());
  const std::uint64_t largest = runtime.caps().max_alloc_bytes;
  if (largest && kHeaderBytes + this->bytes() + sink > largest)
    throw std::invalid_argument(fmt::format("a device heap of {} MiB is more than {} allows in one allocation ({} MiB)",
                                            bytes >> 20, runtime.caps().name, largest >> 20));
  buffer_ = SvmBuffer(runtime, kHeaderBytes + this->bytes() + sink, 128);
  chanflow_heap h{};
  const auto base = reinterpret_cast<std::uint64_t>(buffer_.get());
  h.base = base + arena_offset_;
  h.units = units_;
  h.sink = h.base + this->bytes();
  h.sink_bytes = sink;
  runtime.svm_write(buffer_.get(), &h, sizeof h);
}

bool DeviceHeap::contains(const void* p) const noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(p), base = reinterpret_cast<std::uintptr_t>(buffer_.get()) + arena_offset_;
  return a >= base && a < base + bytes();
}

std::uint64_t DeviceHeap::live_blocks() const {
  std::uint64_t counts[CHANFLOW_HEAP_LIVE_SHARDS * CHANFLOW_HEAP_LIVE_STRIDE];
  if (mapped())
    std::memcpy(counts, header()->live, sizeof counts);
  else
    runtime_->svm_read(counts, header()->live, sizeof counts);
  std::uint64_t live = 0;  // modulo 2^64, as the shards count
  for (std::uint32_t s = 0; s < CHANFLOW_HEAP_LIVE_SHARDS; ++s) live += counts[s * CHANFLOW_HEAP_LIVE_STRIDE];
  return live;
}

std::uint64_t DeviceHeap::high_water_bytes() const {
  std::uint64_t bump = 0;
  if (mapped())
    bump = header()->bump;
  else
    runtime_->svm_read(&bump, &header()->bump, sizeof bump);
  return std::min(bump, units_) * CHANFLOW_HEAP_UNIT;
}

void DeviceHeap::map() {
  if (mapped()) return;
  // Mapping coarse-grain SVM copies the range to the host and unmapping copies it back: the
  // arena up to its high-water mark where blocks are live (the host may read them), else the
  // header alone (compiled Strassen 2048's 1.3 GB arena, all freed by each run, cost ~60 ms a
  // run on an H200 to map and unmap).
  std::uint64_t bump = 0;
  runtime_->svm_read(&bump, &header()->bump, sizeof bump);
  const std::size_t bytes = arena_offset_ + (live_blocks() ? std::min(bump, units_) * CHANFLOW_HEAP_UNIT : 0);
  runtime_->svm_map(buffer_.get(), bytes);
  mapped_bytes_ = bytes;
}

void DeviceHeap::unmap() {
  if (!mapped()) return;
  runtime_->svm_unmap(buffer_.get());
  mapped_bytes_ = 0;
}

chanflow_heap_block* DeviceHeap::block_of(const void* p) const noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const auto arena = reinterpret_cast<std::uintptr_t>(buffer_.get()) + arena_offset_;
  if (!mapped() || a < arena + CHANFLOW_HEAP_UNIT || a >= reinterpret_cast<std::uintptr_t>(buffer_.get()) + mapped_bytes_ ||
      (a - arena) % CHANFLOW_HEAP_UNIT != 0)
    return nullptr;
  auto* b = reinterpret_cast<chanflow_heap_block*>(a) - 1;
  return b->state == CHANFLOW_HEAP_USED && CHANFLOW_HEAP_CLASS(b->class_home) < CHANFLOW_HEAP_CLASSES &&
                 CHANFLOW_HEAP_HOME(b->class_home) < CHANFLOW_HEAP_SHARDS
             ? b
             : nullptr;
}

std::size_t DeviceHeap::usable_size(const void* p) const noexcept {
  const chanflow_heap_block* b = block_of(p);
  return b ? chanflow_heap_class_bytes(CHANFLOW_HEAP_CLASS(b->class_home)) : 0;
}

void DeviceHeap::free(void* p) {
  if (!mapped()) throw std::logic_error("DeviceHeap::free: the heap is not mapped for the host (map())");
  chanflow_heap_block* b = block_of(p);
  if (!b)
    throw std::invalid_argument(
        fmt::format("free({}): not a block the device heap handed out, or one given back already", p));
  b->state = CHANFLOW_HEAP_FREE;
  chanflow_heap* h = header();
  --h->live[0];  // one shard's count: only their sum means anything
  const std::uint64_t unit = (reinterpret_cast<std::uint64_t>(b) - h->base) / CHANFLOW_HEAP_UNIT;
  // Its home shard's list (no kernel runs now).
  std::uint64_t& head = h->heads[CHANFLOW_HEAP_CLASS(b->class_home) * CHANFLOW_HEAP_SHARDS + CHANFLOW_HEAP_HOME(b->class_home)];
  b->next = head & CHANFLOW_HEAP_UNIT_MASK;
  const std::uint64_t tag = (head >> CHANFLOW_HEAP_UNIT_BITS) + 1;
  head = (tag << CHANFLOW_HEAP_UNIT_BITS) | (unit + 1);
}

}  // namespace chanflow
