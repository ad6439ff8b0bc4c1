// Runs sized to the device: the work-group size, how many work-items it runs at once, and how
// much memory one graph's channels may take, from what the device reports (compute units, work-group
// limits, global memory), so that a dispatch can fill a GPU and a CPU device keeps the sizes it was
// measured best at. Flags and options still override.
#pragma once

#include "chanflow/opencl.hpp"

#include <cstdint>

namespace chanflow {

struct DeviceSizing {
  std::uint32_t wg_size = 64;          ///< work-items per work-group
  std::uint64_t resident_items = 0;    ///< work-items the device runs at once (an estimate)
  std::uint64_t channel_budget = 0;    ///< bytes one graph's channels may take
  bool gpu = false;
};

/// - CPU devices (PoCL): work-groups of 64 (measured best on 2 and 16 cores), resident items
///   compute units x 64, a budget of 1/16 of global memory.
/// - GPUs: work-groups of 256 where the device allows (on an H100, fib 30, queens 15 and sort 2^24
///   ran fastest at 256 of 64, 128 and 256), resident items compute units x 2,048 (an NVIDIA
///   SM's limit since Volta; a lower bound elsewhere), a budget of 1/16 of global memory (SVM
///   allocations cost the host ~0.45 ms per MiB on NVIDIA's OpenCL, once per graph).
DeviceSizing device_sizing(const DeviceCaps& caps);

/// Whether kernel sources take a CPU device's shape on `caps` (a graph's program is built with
/// -DCHANFLOW_CPU_DEVICE; compiled cilk_for loops run per work-item there): a CPU device's type,
/// unless CHANFLOW_SHAPE=gpu|cpu in the environment says otherwise (the tests run a GPU's on PoCL).
bool cpu_shaped(const DeviceCaps& caps);

/// What a graph's channel stacks take per level, for sizing them to the device: the bytes of one
/// slot over every stack (each stack's CE and its two control entries), how many levels a run
/// reaches, and the capacity per level measured best on CPU devices. The default says nothing
/// (no bytes per slot): such a graph keeps cpu_capacity on every device.
struct StackFootprint {
  /// A slot's control entries (a channel keeps two 8-byte entries per data slot).
  static constexpr std::uint64_t kControlBytes = 16;
  std::uint64_t bytes_per_slot = 0;
  std::uint32_t levels = 1;
  std::uint32_t cpu_capacity = 1u << 12;
  /// The largest work-group the device's default may give (a graph with few, large tasks wants
  /// more work-groups rather than wider ones); 0: no limit.
  std::uint32_t max_wg = 0;
  /// Most tasks a level can hold at once, if known (fib(n): its call tree's widest level); the
  /// device's capacity is not made larger than that. 0: unknown.
  std::uint64_t max_width = 0;
};

/// CEs per level for a graph's channel stacks on `caps`: the footprint's cpu_capacity on a CPU
/// device (or where its bytes per slot are unknown); on a GPU the largest power of two from there
/// up to 2^20 that keeps its levels of its bytes per slot within the budget, at most 4x the
/// device's resident work-items (beyond that, passes no longer shrink) and no more than its widest
/// level needs.
std::uint32_t stack_capacity(const DeviceCaps& caps, const StackFootprint& footprint);

}  // namespace chanflow
