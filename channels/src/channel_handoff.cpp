// The channel's host side for work that moves between devices (multidevice/): ready CEs taken
// out whole, frames placed to be published later, a placed frame published. Host calls made
// while no kernel uses the channel, as every host call of channel.hpp.
#include "chanflow/channel.hpp"

#include "channel_words.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace chanflow {

std::vector<std::byte> Channel::take_ready(std::uint32_t max,
                                           const std::function<bool(std::span<const std::byte>)>& may_go) {
  const Runtime& rt = table_.runtime();
  table_.refresh(id_);
  const auto& h = table_.mirror(id_);
  const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(max, h.ctrl_published - h.ctrl_head));
  if (n == 0) return {};
  // The control entries of the first n ready positions (at most two copies: they may wrap).
  const std::uint32_t ccap = h.ctrl_capacity;
  std::vector<std::uint64_t> entries(n);
  const auto first = static_cast<std::uint32_t>(h.ctrl_head % ccap);
  const std::uint32_t before_wrap = std::min(n, ccap - first);
  rt.svm_read(entries.data(), ctrl_ + first, before_wrap * sizeof(std::uint64_t));
  if (n > before_wrap) rt.svm_read(entries.data() + before_wrap, ctrl_, (n - before_wrap) * sizeof(std::uint64_t));
  const std::uint32_t bytes = config_.ce_bytes;
  std::vector<std::byte> out(std::size_t{n} * bytes);
  // Where the CEs lie close together (a launch's reservations fill adjacent slots, in whatever
  // order they were published), one copy of the slots they span; otherwise one copy per run of
  // adjacent slots (a work-group's reservation is one run). Never one per CE.
  std::uint32_t lowest = UINT32_MAX, highest = 0;
  for (const std::uint64_t entry : entries) {
    const auto index = static_cast<std::uint32_t>(entry & CHANFLOW_CTRL_INDEX_MASK);
    lowest = std::min(lowest, index);
    highest = std::max(highest, index);
  }
  if (std::uint64_t{highest} - lowest + 1 <= 2 * std::uint64_t{n}) {
    std::vector<std::byte> span((std::size_t{highest} - lowest + 1) * bytes);
    rt.svm_read(span.data(), data_ + std::size_t{lowest} * bytes, span.size());
    for (std::uint32_t k = 0; k < n; ++k) {
      const auto index = static_cast<std::uint32_t>(entries[k] & CHANFLOW_CTRL_INDEX_MASK);
      std::memcpy(out.data() + std::size_t{k} * bytes, span.data() + std::size_t{index - lowest} * bytes, bytes);
    }
  } else {
    for (std::uint32_t k = 0; k < n;) {
      const auto index = static_cast<std::uint32_t>(entries[k] & CHANFLOW_CTRL_INDEX_MASK);
      std::uint32_t run = 1;
      while (k + run < n && static_cast<std::uint32_t>(entries[k + run] & CHANFLOW_CTRL_INDEX_MASK) == index + run) ++run;
      rt.svm_read(out.data() + std::size_t{k} * bytes, data_ + std::size_t{index} * bytes, std::size_t{run} * bytes);
      k += run;
    }
  }
  std::vector<std::uint32_t> indices;
  for (std::uint32_t k = 0; k < n; ++k) {
    if (may_go && !may_go(std::span<const std::byte>(out.data() + std::size_t{k} * bytes, bytes))) break;
    indices.push_back(static_cast<std::uint32_t>(entries[k] & CHANFLOW_CTRL_INDEX_MASK));
  }
  out.resize(indices.size() * bytes);
  if (indices.empty()) return out;
  mark_dispatched(indices.size());
  // The host's tfree: each CE's done count, and its checked-frees bit.
  const std::uint32_t groups = config_.capacity / config_.done_group;
  std::vector<std::uint32_t> done(groups);
  rt.svm_read(done.data(), done_, groups * sizeof(std::uint32_t));
  for (const std::uint32_t index : indices) ++done[(index % config_.capacity) / config_.done_group];
  rt.svm_write(done_, done.data(), groups * sizeof(std::uint32_t));
  if (live_) {
    std::vector<std::uint32_t> bits(detail::live_words(config_));
    rt.svm_read(bits.data(), live_, bits.size() * sizeof(std::uint32_t));
    for (const std::uint32_t index : indices) {
      const std::uint32_t slot = index % config_.capacity;
      if (!(bits[slot / 32] & (1u << (slot % 32))))
        throw ChannelError(fmt::format("channel '{}': a ready CE at slot {} is not allocated", config_.name, slot));
      bits[slot / 32] &= ~(1u << (slot % 32));
    }
    rt.svm_write(live_, bits.data(), bits.size() * sizeof(std::uint32_t));
  }
  return out;
}

void Channel::place(HostReservation&& r) {
  if (r.ces.size() != std::size_t{r.n} * config_.ce_bytes)
    throw ChannelError(fmt::format("channel '{}': place of a reservation whose buffer was resized", config_.name));
  if (r.n == 0) return;
  table_.runtime().svm_write(data_ + std::size_t{r.index} * config_.ce_bytes, r.ces.data(), r.ces.size());
  r.n = 0;
  r.ces.clear();
}

void Channel::enq_at(std::uint32_t index) {
  if (index >= config_.capacity + config_.max_reservation)
    throw ChannelError(fmt::format("channel '{}': enq_at of CE index {} outside its data array ({} + {} spare)",
                                   config_.name, index, config_.capacity, config_.max_reservation));
  table_.refresh(id_);
  auto& h = table_.mirror(id_);
  const std::uint64_t entry = detail::ctrl_entry(h.ctrl_reserve_tail, h.ctrl_capacity, index);
  table_.runtime().svm_write(ctrl_ + h.ctrl_reserve_tail % h.ctrl_capacity, &entry, sizeof entry);
  ++h.ctrl_reserve_tail;
  ++h.ctrl_published;
  table_.write_u64_field(id_, offsetof(chanflow_channel, ctrl_reserve_tail));
  table_.write_u64_field(id_, offsetof(chanflow_channel, ctrl_published));
}

std::uint64_t Channel::ce_address(std::uint32_t index) const {
  return reinterpret_cast<std::uint64_t>(data_ + std::size_t{index} * config_.ce_bytes);
}

}  // namespace chanflow
