// The compiled program across devices (across_devices.hpp).
#include "common/across_devices.hpp"

namespace chanflow::workloads {

CompiledAcrossDevices::~CompiledAcrossDevices() {
  if (set_) cilk::forget(set_->runtime(0));
}

void CompiledAcrossDevices::use() {
  if (!set_) set_ = std::make_unique<DeviceSet>(settings_.devices, profiling_);
  cilk::use(*set_, cilk::settings_for(settings_, set_->caps(0), footprint_));
}

}  // namespace chanflow::workloads
