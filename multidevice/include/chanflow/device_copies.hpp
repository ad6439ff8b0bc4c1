// Data moved between the devices of a set: each has a context of its own, so nothing is shared,
// and a piece goes from one device's memory to host memory (pinned: 55 GB/s each way on an H200
// where pageable memory gave 6-10, `chanflow bench transfers`) and on to the other's. Pieces
// leave and arrive in chunks, both directions of every device's link busy at once.
#pragma once

#include "chanflow/device_set.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace chanflow {

/// One piece of data to move: `bytes` from `src` in device `from`'s memory (SVM) to `dst` in
/// device `to`'s, through `stage`, host memory (pinned, PinnedBuffer) that holds it on the way.
/// Within one device (from == to) a copy in its memory, without staging.
struct DeviceCopy {
  std::size_t from = 0;
  std::size_t to = 0;
  const void* src = nullptr;
  void* stage = nullptr;
  void* dst = nullptr;
  std::uint64_t bytes = 0;
};

/// The chunks data moves in: 16 MiB is ~0.3 ms at the 55 GB/s of an H200's link, against ~15 µs a
/// copy costs to start.
inline constexpr std::uint64_t kCopyChunkBytes = std::uint64_t{16} << 20;

/// Makes every copy, in chunks of `chunk_bytes`: a chunk of each copy leaving a device in turn, on
/// its second queue (Runtime::svm_read_beside), so that every destination's first bytes come
/// early, and each taken in on its destination's first queue as soon as it has arrived, by a host
/// thread per destination. Returns when every copy is in, with the bytes each device sent to the
/// others. The caller has finished what wrote the sources; what reads the destinations comes after
/// (on the destination's first queue, or after this returns). A failure is thrown naming its device
/// after every copy has stopped.
std::vector<std::uint64_t> copy_between_devices(const DeviceSet& set, const std::vector<DeviceCopy>& copies,
                                                std::uint64_t chunk_bytes = kCopyChunkBytes);

}  // namespace chanflow
