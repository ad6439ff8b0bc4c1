// Strassen across the devices RunSettings::devices names. Its tasks point into the matrices and
// their frames' scratch, so they cannot move between devices (each has a context of its own);
// the products are shared out instead:
// 1. every device holds A and B (written before the time starts, as they are alone) and runs the
//    whole graph on a share of the products at one depth (StrassenShare: of the 7^depth there, at
//    least 12 per device, a contiguous range each), their contributions added into a C of its own;
// 2. the devices' Cs are summed, each device summing one band of rows: the other devices' parts
//    of that band staged through pinned host memory of its own, and added by a small kernel.
// The product is the devices' bands in order.
#pragma once

#include "chanflow/device_set.hpp"
#include "common/workload.hpp"
#include "strassen/strassen.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace chanflow::workloads {

/// Device `device`'s share of the products of order n among `devices` (strassen_across.hpp).
StrassenShare strassen_share(std::uint64_t n, std::size_t device, std::size_t devices);

template <class Real>
class StrassenAcrossDevices {
 public:
  /// Opens the devices of `settings.devices`, writes a and b (n×n) to each, and builds each one's
  /// graph for its share.
  StrassenAcrossDevices(const RunSettings& settings, bool profiling, std::uint64_t n, const std::vector<Real>& a,
                        const std::vector<Real>& b);
  ~StrassenAcrossDevices();
  StrassenAcrossDevices(const StrassenAcrossDevices&) = delete;
  StrassenAcrossDevices& operator=(const StrassenAcrossDevices&) = delete;

  /// c = a·b (n×n, on the host): the bands read back outside the time; `m` gets the time from the
  /// first device's start to the last band's sum, each device's run (m.across, with the bytes it
  /// sent to the others) and their sum (m.stats).
  void measure(Measurement& m, std::vector<Real>& c);

 private:
  struct Device;
  void sum_bands(DeviceRunStats& stats);

  RunSettings settings_;
  std::uint64_t n_;
  DeviceSet set_;
  std::vector<std::unique_ptr<Device>> devices_;  // after set_: released before its runtimes
};

}  // namespace chanflow::workloads
