// Data moved between devices through pinned host memory, in chunks (device_copies.hpp).
#include "chanflow/device_copies.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace chanflow {

std::vector<std::uint64_t> copy_between_devices(const DeviceSet& set, const std::vector<DeviceCopy>& copies,
                                                std::uint64_t chunk_bytes) {
  const std::size_t d = set.size();
  chunk_bytes = std::max<std::uint64_t>(chunk_bytes, 1);
  std::vector<std::uint64_t> sent(d, 0);
  for (const DeviceCopy& c : copies)
    if (c.from >= d || c.to >= d)
      throw std::invalid_argument(fmt::format("a copy from device {} to device {} in a set of {}", c.from, c.to, d));
  // A chunk on its way: where it waits, where it goes, and the event of its leaving.
  struct Arrival {
    std::size_t from;
    const void* stage;
    void* dst;
    std::uint64_t bytes;
    cl::Event left;
  };
  std::vector<std::vector<Arrival>> arrivals(d);  // per destination, in the order they leave
  for (const DeviceCopy& c : copies)
    if (c.from == c.to && c.bytes) set.runtime(c.from).svm_copy_async(c.dst, c.src, c.bytes);
  for (std::uint64_t at = 0, more = 1; more; at += chunk_bytes) {
    more = 0;
    for (const DeviceCopy& c : copies) {
      if (c.from == c.to || at >= c.bytes) continue;
      const std::uint64_t bytes = std::min(chunk_bytes, c.bytes - at);
      auto* stage = static_cast<unsigned char*>(c.stage) + at;
      cl::Event left = set.runtime(c.from).svm_read_beside(stage, static_cast<const unsigned char*>(c.src) + at, bytes);
      arrivals[c.to].push_back({c.from, stage, static_cast<unsigned char*>(c.dst) + at, bytes, std::move(left)});
      sent[c.from] += bytes;
      more = 1;
    }
  }
  // Each destination takes its chunks in as they arrive, while its own leave beside them.
  try {
    on_each_device(set, [&](std::size_t k) {
      for (Arrival& a : arrivals[k]) {
        if (const cl_int err = clWaitForEvents(1, &a.left()); err != CL_SUCCESS)
          throw OpenCLError(fmt::format("clWaitForEvents (data on its way from device {})", a.from), err);
        set.runtime(k).svm_write_async(a.dst, a.stage, a.bytes);
      }
      set.runtime(k).finish();
    });
  } catch (...) {
    for (std::size_t j = 0; j < d; ++j) set.runtime(j).finish_quietly();  // nothing left writing the stages
    throw;
  }
  for (std::size_t j = 0; j < d; ++j) set.runtime(j).finish_beside();
  return sent;
}

}  // namespace chanflow
