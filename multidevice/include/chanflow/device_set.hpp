// The devices one run spans (the multi-device layer, above the one-device runtime): chosen from
// a spec the way a user writes it (`--devices all`, `--devices 1,2`, `--devices nvidia`), checked
// before anything runs, and opened as one Runtime (a context and an in-order queue) each.
#pragma once

#include "chanflow/opencl.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace chanflow {

/// A device spec that names no device, a device twice, devices that cannot run together, or a
/// device that cannot take part; what() names the devices and why.
class DeviceSetError : public std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// The devices `spec` names among `listed` (list_devices(): every device of every platform, each
/// with its index), in the order named. `spec` is
/// - "all": every device that can take part, of the platform the run's devices come from (the
///   first platform with a GPU that can, else the platform of PoCL's CPU device, else the first);
/// - a comma-separated list of items, each an index ("2"), a range of indices ("1-3") or part of
///   a device's name, vendor, platform or type ("nvidia", "gpu"), which names every device it
///   matches.
/// Throws DeviceSetError when the spec is empty or malformed, an index is out of range, a name
/// part matches nothing, a device is named twice, the devices are of different platforms (one run
/// spans one platform's devices), or a device lacks what a run across devices needs: what
/// chanflow's channels need (DeviceCaps::missing_requirements) and device-scope store order
/// (device_order: work another device sent is claimed by work-groups that did not write it).
std::vector<DeviceCaps> choose_devices(std::string_view spec, const std::vector<DeviceCaps>& listed);

/// Why `caps` cannot take part in a run across devices; empty if it can.
std::vector<std::string> multi_device_missing(const DeviceCaps& caps);

/// The groups of devices that can run together: for each platform, the indices of its devices
/// that can take part, in order (`chanflow devices` prints them). Platforms without any are left out.
struct DeviceGroup {
  std::string platform;
  std::vector<unsigned> indices;
};
std::vector<DeviceGroup> device_groups(const std::vector<DeviceCaps>& listed);

/// The chosen devices, each opened as a Runtime of its own (a context per device: NVIDIA's
/// OpenCL crashed mapping SVM in a context of two GPUs, DESIGN.md's device facts). Runtimes are
/// independent: each may run its graphs from a host thread of its own.
class DeviceSet {
 public:
  /// Chooses the devices `spec` names (choose_devices) and opens each.
  explicit DeviceSet(std::string_view spec, bool profiling = true);

  std::size_t size() const noexcept { return runtimes_.size(); }
  Runtime& runtime(std::size_t i) const { return *runtimes_.at(i); }
  const DeviceCaps& caps(std::size_t i) const { return runtimes_.at(i)->caps(); }
  /// "2 devices: [1] NVIDIA H100 80GB HBM3, [2] NVIDIA H100 80GB HBM3".
  std::string describe() const;

 private:
  std::vector<std::unique_ptr<Runtime>> runtimes_;
};

/// Runs `work(d)` for every device d of `set` at once, a host thread each (work that needs no
/// router: a graph run per device on its own part of the data). After every thread has ended,
/// throws the first failure as a RunError naming its device: "device 1 (NVIDIA H200): ...".
/// Build each device's programs before (Graph::validate, in_turn_on_each_device): PoCL's
/// caches of what it compiled are not to be filled by several threads at once.
void on_each_device(const DeviceSet& set, const std::function<void(std::size_t)>& work);
/// Runs `work(d)` for every device d of `set`, one after another on this thread (building each
/// device's programs before on_each_device); a failure is thrown as a RunError naming its device.
void in_turn_on_each_device(const DeviceSet& set, const std::function<void(std::size_t)>& work);

}  // namespace chanflow
