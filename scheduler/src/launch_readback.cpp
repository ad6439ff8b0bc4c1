// What the host writes before a device-scheduler launch and reads after it, each at most one
// command in the common case. Behind a launch it reads one block, which the readback kernel
// (scheduler/cl/readback.cl) gathers on the device; before one it writes only the blocks whose
// contents changed since they were last written, since the readback kernel puts back what a
// launch changes in them (the header's counts, the launch counters). A re-run of an unchanged
// graph writes nothing before its launch and makes one copy after it: on NVIDIA's OpenCL each
// copy between host and device cost ~20 us (`chanflow bench launch`, its copy table), and
// Strassen 2048's ~8 ms runs spent 0.3-0.4 ms of them on the host.
#include "aggregator.hpp"

#include "chanflow_channels_sources.hpp"
#include "chanflow_scheduler_sources.hpp"

#include <fmt/format.h>

#include <cstring>

namespace chanflow {

namespace {
constexpr std::size_t kWord = sizeof(std::uint32_t);
std::size_t align8(std::size_t bytes) { return (bytes + 7) / 8 * 8; }

// `count` Ts from the read block into `to` (none: nothing to copy, and `to` may have no storage).
template <class T>
void take(std::vector<T>& to, const std::byte* from, std::size_t count) {
  to.resize(count);
  if (count) std::memcpy(to.data(), from, count * sizeof(T));
}
}  // namespace

void Aggregator::write_if_changed(DeviceImage& image, void* svm, const void* host, std::size_t bytes) {
  if (bytes == 0 || (image.at == svm && image.bytes.size() == bytes && std::memcmp(image.bytes.data(), host, bytes) == 0))
    return;
  image.at = svm;
  image.bytes.assign(static_cast<const std::byte*>(host), static_cast<const std::byte*>(host) + bytes);
  // From the image, which stays as it is until the next lay-out (every launch ends with a wait).
  rt_.svm_write_async(svm, image.bytes.data(), bytes);
  ++blocks_written_;
}

void Aggregator::forget_device_images() {
  for (DeviceImage* image : {&images_.envs, &images_.entries, &images_.case_envs, &images_.head,
                             &images_.head_template, &images_.pieces})
    image->at = nullptr;
  counters_zeroed_ = 0;
}

void Aggregator::zero_launch_counters(std::size_t launches) {
  if (counters_zeroed_at_ == counters_.get() && counters_zeroed_ >= launches) return;
  check(clEnqueueSVMMemFill(rt_.queue()(), counters_.get(), &kZeroWord, sizeof kZeroWord,
                            launches * sizeof(chanflow_launch_counters), 0, nullptr, nullptr),
        "clEnqueueSVMMemFill (launch counters)");
  counters_zeroed_at_ = counters_.get();
  counters_zeroed_ = launches;
  ++blocks_written_;
}

const cl::Kernel& Aggregator::readback_kernel() {
  if (!readback_kernel_()) {
    // A program of its own: the layouts it reads and the kernel, nothing of the graph's.
    const cl::Program program = rt_.build({channels_cl::channel_layout_h(), scheduler_cl::heap_layout_h(),
                                           scheduler_cl::node_layout_h(), scheduler_cl::readback_cl()},
                                          "");
    readback_kernel_ = rt_.kernel(program, "chanflow_readback");
  }
  return readback_kernel_;
}

void Aggregator::launch_readback(const void* pieces, std::size_t count, const void* pools, std::size_t pool_count,
                                 void* taken) {
  const cl::Kernel& k = readback_kernel();
  // The pools' headers, bitmaps and blocks, the control area; blocks that did not fit there.
  std::vector<void*> svm = graph_.table_.svm_allocations();
  for (const ControlBlock* b : {&readback_pieces_, &readback_block_, &sched_template_, &census_pools_, &census_taken_,
                                &sched_block_, &counters_, &status_, &resumable_})
    if (b->allocation()) svm.push_back(b->allocation());
  if (readback_svm_ != svm) {
    set_indirect_svm(k, svm);
    readback_svm_ = svm;
  }
  set_arg_svm(k, 0, pieces);
  set_arg(k, 1, static_cast<cl_uint>(count));
  set_arg_svm(k, 2, pools);
  set_arg(k, 3, static_cast<cl_uint>(pool_count));
  set_arg_svm(k, 4, taken);
  const std::size_t local = std::min<std::size_t>(wg_, 256);
  launch(rt_, k, (pool_count + 1) * local, local, false);
}

void Aggregator::census_pools() {
  census_levels_.clear();
  census_pool_list_.clear();
  for (const auto& stack : graph_.stacks())
    for (std::uint32_t d = 0; d < stack->depth(); ++d)
      if (const chanflow_scratch_pool* pool = stack->scratch_pool(d)) {
        census_levels_.emplace_back(stack.get(), d);
        census_pool_list_.push_back(reinterpret_cast<std::uint64_t>(pool));
      }
}

void Aggregator::lay_out_readback() {
  census_pools();
  const std::size_t pools = census_pool_list_.size();
  ChannelTable& table = graph_.table_;
  ReadbackLayout& at = readback_layout_;
  at.launches = launches_.size();
  at.header_bytes = table.headers_bytes();
  at.resumable_words = resumable_.size() / kWord;
  at.pools = pools;
  at.head = 0;
  at.recall = align8(at.head + sizeof(chanflow_sched));
  at.counters = align8(at.recall + sizeof(std::uint64_t));
  at.headers = align8(at.counters + at.launches * sizeof(chanflow_launch_counters));
  at.resumable = align8(at.headers + at.header_bytes);
  at.status = align8(at.resumable + at.resumable_words * kWord);
  at.taken = align8(at.status + sizeof(chanflow_status));
  at.bytes = align8(at.taken + pools * kWord);
  ensure<std::uint64_t>(readback_block_, at.bytes / 8);
  auto* block = static_cast<std::byte*>(readback_block_.get());
  auto piece = [&](const void* src, std::size_t offset, std::size_t bytes, std::uint64_t reset) {
    return chanflow_readback_piece{reinterpret_cast<std::uint64_t>(src), reinterpret_cast<std::uint64_t>(block + offset),
                                   reset, static_cast<std::uint32_t>(bytes / kWord), 0};
  };
  // The header goes back to the template lay_out_device wrote beside it, the recall word and the
  // counters to zero.
  readback_pieces_host_ = {
      piece(sched_block_.get(), at.head, sizeof(chanflow_sched), reinterpret_cast<std::uint64_t>(sched_template_.get())),
      piece(sched_recall_.get(), at.recall, sizeof(std::uint64_t), CHANFLOW_READBACK_ZERO),
      piece(counters_.get(), at.counters, at.launches * sizeof(chanflow_launch_counters), CHANFLOW_READBACK_ZERO),
      piece(table.headers_allocation(), at.headers, at.header_bytes, 0),
      piece(resumable_.get(), at.resumable, at.resumable_words * kWord, 0),
      piece(status_.get(), at.status, sizeof(chanflow_status), 0)};
  // The pieces, then the pools the census counts: one block, written when it changed.
  const std::size_t piece_bytes = readback_pieces_host_.size() * sizeof(chanflow_readback_piece);
  std::vector<std::byte>& list = readback_list_host_;
  list.resize(piece_bytes + pools * sizeof(std::uint64_t));
  std::memcpy(list.data(), readback_pieces_host_.data(), piece_bytes);
  if (pools) std::memcpy(list.data() + piece_bytes, census_pool_list_.data(), pools * sizeof(std::uint64_t));
  ensure<std::uint64_t>(readback_pieces_, list.size() / 8);
  write_if_changed(images_.pieces, readback_pieces_.get(), list.data(), list.size());

}

void Aggregator::enqueue_readback() {
  // Queued behind the launch; its kernel was made before it (adopt_scheduler).
  const ReadbackLayout& at = readback_layout_;
  auto* pieces_at = static_cast<std::byte*>(readback_pieces_.get());
  launch_readback(pieces_at, readback_pieces_host_.size(), pieces_at + readback_pieces_host_.size() * sizeof(chanflow_readback_piece),
                  at.pools, static_cast<std::byte*>(readback_block_.get()) + at.taken);
  // What the kernel reset is as lay_out_device last wrote it (the counters as this launch's).
  counters_zeroed_at_ = counters_.get();
  counters_zeroed_ = at.launches;
}

void Aggregator::read_readback() {
  const ReadbackLayout& at = readback_layout_;
  readback_host_.resize(at.bytes / 8);
  rt_.svm_read(readback_host_.data(), readback_block_.get(), at.bytes);
  const auto* from = reinterpret_cast<const std::byte*>(readback_host_.data());
  LaunchReadback& r = readback_;
  std::memcpy(&r.head, from + at.head, sizeof r.head);
  take(r.counters, from + at.counters, at.launches);
  graph_.table_.load_headers(from + at.headers, at.header_bytes);
  take(r.resumable, from + at.resumable, at.resumable_words);
  std::memcpy(&r.status, from + at.status, sizeof r.status);
  take(r.taken, from + at.taken, at.pools);
  r.read = true;
}

}  // namespace chanflow
