// Yield state: where a yielded task of a yielding kernel node keeps what it has not flushed, a
// slot per CE slot of its input level, made when a dispatch that may yield there is laid out
// (scheduler/cl/yield.cl lays a slot out; scheduler/README.md, "Wavefront-yield emulation").
#include "chanflow/graph.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <variant>

namespace chanflow {
namespace {
// Words a port's staged CEs take: its spawns per work-item, each a CE.
std::uint32_t staged_words(const PortTarget& port) {
  return port.max_per_item * (std::visit([](auto* n) { return n->ce_bytes(); }, port.node) / 4);
}
}  // namespace

// Yield state is written by a yield before it is read by the restart: never cleared, and made for
// a level only when a dispatch that may yield there is laid out (a planned sweep never yields: it
// admits what its outputs take in the worst case). A larger size (the ports changed between runs)
// gets new storage; nothing is yielded between runs.
void ChannelStackNode::set_yield_state(std::uint32_t bytes) {
  if (bytes <= yield_state_bytes_) return;
  yield_state_bytes_ = bytes;
  yield_states_.clear();
}

void* ChannelStackNode::yield_state(std::uint32_t d) {
  if (!yield_state_bytes_ || d >= levels_.size()) return nullptr;
  if (yield_states_.size() <= d) yield_states_.resize(d + 1, nullptr);
  if (!yield_states_[d]) yield_states_[d] = table_.allocate_side_storage(std::size_t{capacity_of(d)} * yield_state_bytes_);
  return yield_states_[d];
}

std::size_t ChannelStackNode::yield_state_allocated() const noexcept {
  std::size_t slots = 0;
  for (std::uint32_t d = 0; d < yield_states_.size(); ++d)
    if (yield_states_[d]) slots += capacity_of(d);
  return slots * yield_state_bytes_;
}

void ChannelNode::set_yield_state(std::uint32_t bytes) {
  if (bytes <= yield_state_bytes_) return;
  yield_state_bytes_ = bytes;
  yield_state_ = nullptr;
}

void* ChannelNode::yield_state(ChannelTable& table) {
  if (yield_state_bytes_ && !yield_state_) yield_state_ = table.allocate_side_storage(std::size_t{capacity()} * yield_state_bytes_);
  return yield_state_;
}

std::uint32_t KernelNode::yield_state_bytes() const {
  std::uint32_t words = 2 + static_cast<std::uint32_t>(ports_.size());  // task scratch block, counts
  for (const auto& port : ports_) words += port.max_per_item;            // return slots
  words += staging_words();
  return (words * 4 + 7) / 8 * 8;
}

KernelNode& KernelNode::spawns_together(std::vector<std::uint32_t> together) {
  if (together.size() != ports_.size() || ports_.size() > 32)
    throw std::invalid_argument(fmt::format("kernel node '{}': spawns_together names {} ports; it has {} (at most 32)", name_,
                                            together.size(), ports_.size()));
  for (std::size_t p = 0; p < together.size(); ++p)
    for (std::size_t q = 0; q < together.size(); ++q)
      if (((together[p] >> q) & 1u) != ((together[q] >> p) & 1u) || !((together[p] >> p) & 1u))
        throw std::invalid_argument(fmt::format("kernel node '{}': spawns_together must be symmetric, each port with itself "
                                                "(ports {} and {})", name_, p, q));
  together_ = std::move(together);
  lay_out_staging();
  return *this;
}

void KernelNode::lay_out_staging() {
  // Each port after every earlier one it may spawn together with (first fit in port order).
  staging_at_.assign(ports_.size(), 0);
  staging_words_ = 0;
  for (std::size_t p = 0; p < ports_.size(); ++p) {
    for (std::size_t q = 0; q < p; ++q)
      if (together_.empty() || ((together_[p] >> q) & 1u))
        staging_at_[p] = std::max(staging_at_[p], staging_at_[q] + staged_words(ports_[q]));
    staging_words_ = std::max(staging_words_, staging_at_[p] + staged_words(ports_[p]));
  }
}

}  // namespace chanflow
