// A channel whose consumer is another rank (DESIGN.md decision 17): kernels enqueue CEs into an
// outbound channel with the channel's own leader-level reservations, as into any channel; between
// launches the host ships every ready CE to the consuming rank through the transport, a packed
// run per call (send_packed), and frees their slots. On the consuming rank the CEs land in a
// channel of the same CE size as ready CEs (the host's talloc/enq), where its kernels deq them as
// any others. The network sees the transport's batches, never a message per CE.
#pragma once

#include "chanflow/channel.hpp"
#include "chanflow/rank_transport.hpp"

#include <cstdint>
#include <deque>
#include <vector>

namespace chanflow {

/// The sending end: `channel`'s ready CEs go to rank `to` as messages of `kind`.
class OutboundChannel {
 public:
  OutboundChannel(Channel& channel, RankTransport& transport, int to, std::uint32_t kind);

  /// Between launches (no kernel uses the channel): takes every ready CE, in channel order, hands
  /// them to the transport (runs of at most `kMostPerSend`), and reclaims their slots. Returns
  /// how many went.
  std::uint64_t ship();
  std::uint64_t shipped() const noexcept { return shipped_; }

  /// Most CEs one send_packed carries (the transport splits them at its batches' edges).
  static constexpr std::uint32_t kMostPerSend = 16384;

 private:
  Channel& channel_;
  RankTransport& transport_;
  int to_;
  std::uint32_t kind_;
  std::uint64_t shipped_ = 0;
};

/// The receiving end: CEs of messages of `kind` become ready CEs of `channel` (whose CE size
/// must be theirs).
class InboundChannel {
 public:
  InboundChannel(Channel& channel, std::uint32_t kind);

  /// Between launches: takes the messages of this kind out of `messages` (others stay, in
  /// order), and places their CEs, and any that waited, in the channel as ready CEs, as many as
  /// fit (reservations of at most the channel's max_reservation); the rest wait for the next
  /// call. Returns how many were placed. Throws ChannelError for a message whose size is not the
  /// channel's CE size.
  std::uint64_t land(std::vector<RankMessage>& messages);
  /// CEs that arrived and did not fit yet.
  std::uint64_t waiting() const noexcept { return waiting_ces_; }
  std::uint64_t landed() const noexcept { return landed_; }

 private:
  Channel& channel_;
  std::uint32_t kind_;
  std::deque<RankMessage> waiting_;  // whole messages, the first perhaps partly placed
  std::size_t first_placed_ = 0;     // CEs of waiting_.front() already placed
  std::uint64_t waiting_ces_ = 0;
  std::uint64_t landed_ = 0;
};

}  // namespace chanflow
