// The two ends of a channel whose consumer is another rank (remote_channel.hpp).
#include "chanflow/remote_channel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>

namespace chanflow {

OutboundChannel::OutboundChannel(Channel& channel, RankTransport& transport, int to, std::uint32_t kind)
    : channel_(channel), transport_(transport), to_(to), kind_(kind) {
  if (to < 0 || to >= transport.ranks())
    throw RankError(-1, fmt::format("channel '{}' bound for rank {}: the job has {}", channel.config().name, to,
                                    transport.ranks()));
}

std::uint64_t OutboundChannel::ship() {
  const std::uint32_t size = channel_.config().ce_bytes;
  std::uint64_t went = 0;
  for (;;) {
    const std::vector<std::byte> ces = channel_.take_ready(kMostPerSend);
    if (ces.empty()) break;
    transport_.send_packed(to_, kind_, size, ces);
    went += ces.size() / size;
    if (ces.size() / size < kMostPerSend) break;
  }
  if (went) channel_.deallocate();  // their slots back for the next launch's reservations
  shipped_ += went;
  return went;
}

InboundChannel::InboundChannel(Channel& channel, std::uint32_t kind) : channel_(channel), kind_(kind) {}

std::uint64_t InboundChannel::land(std::vector<RankMessage>& messages) {
  const std::uint32_t size = channel_.config().ce_bytes;
  auto mine = std::stable_partition(messages.begin(), messages.end(), [&](const RankMessage& m) { return m.kind != kind_; });
  for (auto it = mine; it != messages.end(); ++it) {
    if (it->bytes.size() != std::size_t{it->count} * size)
      throw ChannelError(fmt::format("channel '{}': rank {} sent CEs of {} bytes, where its CEs are {}", channel_.config().name,
                                     it->from, it->count ? it->bytes.size() / it->count : 0, size));
    waiting_ces_ += it->count;
    waiting_.push_back(std::move(*it));
  }
  messages.erase(mine, messages.end());

  std::uint64_t placed = 0;
  while (!waiting_.empty()) {
    const RankMessage& m = waiting_.front();
    // Straight from the message into the channel's slots, as many as fit in one reservation.
    const std::uint32_t n = channel_.put(std::span(m.bytes).subspan(first_placed_ * size));
    if (n == 0) break;  // full: the rest waits for the channel's consumers
    placed += n;
    first_placed_ += n;
    if (first_placed_ == m.count) {
      waiting_.pop_front();
      first_placed_ = 0;
    }
  }
  waiting_ces_ -= placed;
  landed_ += placed;
  return placed;
}

}  // namespace chanflow
