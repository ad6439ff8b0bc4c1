// Inside the channel's host side: the words channel.cpp and channel_handoff.cpp both write.
#pragma once

#include "chanflow/channel.hpp"

#include <cstddef>
#include <cstdint>

namespace chanflow::detail {

/// Words of a channel's checked-frees bitmap: a bit per slot.
inline std::size_t live_words(const ChannelConfig& c) { return (std::size_t{c.capacity} + 31) / 32; }

/// The control entry at control position `cpos` naming the CE at physical index `index`: its
/// lap's tag above the index, so a reader tells a written entry from last lap's.
inline std::uint64_t ctrl_entry(std::uint64_t cpos, std::uint32_t ctrl_capacity, std::uint32_t index) {
  const auto tag = static_cast<std::uint32_t>(cpos / ctrl_capacity + 1);
  return (std::uint64_t{tag} << CHANFLOW_CTRL_TAG_SHIFT) | index;
}

}  // namespace chanflow::detail
