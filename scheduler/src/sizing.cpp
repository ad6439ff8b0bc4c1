// Runs sized to the device (see chanflow/sizing.hpp).
#include "chanflow/sizing.hpp"

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace chanflow {

DeviceSizing device_sizing(const DeviceCaps& caps) {
  DeviceSizing s;
  s.gpu = (caps.type & CL_DEVICE_TYPE_GPU) != 0;
  const std::uint64_t units = std::max(1u, caps.compute_units);
  const std::uint32_t wanted = s.gpu ? 256 : 64;
  s.wg_size = static_cast<std::uint32_t>(std::min<std::size_t>(wanted, std::max<std::size_t>(caps.max_work_group_size, 1)));
  s.resident_items = units * (s.gpu ? 2048 : s.wg_size);
  s.channel_budget = caps.global_mem_bytes / 16;
  return s;
}

std::uint32_t stack_capacity(const DeviceCaps& caps, const StackFootprint& footprint) {
  const DeviceSizing s = device_sizing(caps);
  const std::uint64_t cpu = footprint.cpu_capacity;
  if (!s.gpu || footprint.bytes_per_slot == 0) return static_cast<std::uint32_t>(cpu);
  const std::uint64_t per_capacity_unit = footprint.bytes_per_slot * std::max(footprint.levels, 1u);
  const std::uint64_t most = std::min<std::uint64_t>(1u << 20, 4 * s.resident_items);
  std::uint64_t capacity = cpu;
  while (capacity * 2 <= most && capacity * 2 * per_capacity_unit <= s.channel_budget) capacity *= 2;
  if (footprint.max_width)  // no larger than the widest level, in whole powers of two
    while (capacity / 2 >= footprint.max_width && capacity / 2 >= cpu) capacity /= 2;
  return static_cast<std::uint32_t>(capacity);
}

bool cpu_shaped(const DeviceCaps& caps) {
  const char* shape = std::getenv("CHANFLOW_SHAPE");
  if (shape && *shape) return std::string_view(shape) == "cpu";
  return (caps.type & CL_DEVICE_TYPE_CPU) != 0;
}

}  // namespace chanflow
