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

/// CEs per level for channel stacks on `caps`: `cpu_default` on a CPU device; on a GPU the largest
/// power of two from `cpu_default` up to 2^20 that keeps `levels` levels of `bytes_per_slot` bytes
/// per slot (every stack's CE at that slot, its control entries included) within the budget, and
/// at most 4x the device's resident work-items (beyond that, passes no longer shrink).
std::uint32_t stack_capacity(const DeviceCaps& caps, std::uint64_t bytes_per_slot, std::uint32_t levels,
                             std::uint32_t cpu_default);

}  // namespace chanflow
