// Settings for a graph's copies across devices (across_devices.hpp).
#include "common/across_devices.hpp"

namespace chanflow::workloads {

RunSettings across_devices_settings(RunSettings settings) {
  settings.scheduler = Scheduler::Rounds;
  return settings;
}

}  // namespace chanflow::workloads
