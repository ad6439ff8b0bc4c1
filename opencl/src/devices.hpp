// Inside the OpenCL layer: the devices the platforms offer, and the one a selection names
// (devices.cpp); Runtime opens it.
#pragma once

#include "chanflow/opencl.hpp"

#include <string>
#include <vector>

namespace chanflow {

struct FoundDevice {
  cl_device_id id;
  DeviceCaps caps;
};

/// Every device of every platform, probed (once per process); throws DeviceNotFound (saying what
/// to install) if none.
std::vector<FoundDevice> discover();
/// The device `spec` names: an index, or part of a name, vendor, platform or type; empty:
/// CHANFLOW_DEVICE's, else PoCL's CPU device, else the first. Throws DeviceNotFound (listing the
/// devices) if none matches.
const FoundDevice& choose(const std::vector<FoundDevice>& devices, std::string spec);

}  // namespace chanflow
