// Sort across the devices RunSettings::devices names. A sort's tasks point into its arrays, so
// they cannot move between devices (each has a context of its own); the keys move instead:
// 1. each device sorts a run of its own share of the keys (its SortCilk graph, as alone);
// 2. the runs are cut into parts of nearly equal size, each a range of the output
//    (sort_split.hpp: a sample of each run chooses the cuts, a window per run places them);
// 3. each device receives its part of every run, staged through pinned host memory of its own,
//    in chunks, both directions of every device's link busy at once (device_copies.hpp);
// 4. and merges them, pairs at a time (its graph's merges, ceil(log2 devices) passes).
// The output is the devices' parts in order.
#pragma once

#include "chanflow/device_copies.hpp"
#include "chanflow/device_set.hpp"
#include "common/workload.hpp"
#include "sort/sort.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace chanflow::workloads {

template <class Key>
class SortAcrossDevices {
 public:
  /// Opens the devices of `settings.devices` and builds each one's graph for n keys' share. Keys
  /// move between devices in chunks of `chunk_bytes` (copy_between_devices).
  SortAcrossDevices(const RunSettings& settings, bool profiling, std::uint64_t n,
                    std::uint64_t chunk_bytes = kCopyChunkBytes);
  ~SortAcrossDevices();
  SortAcrossDevices(const SortAcrossDevices&) = delete;
  SortAcrossDevices& operator=(const SortAcrossDevices&) = delete;

  /// Sorts `input` into `output` (n keys each, on the host). The shares are written to the devices
  /// and the parts read back outside the time; `m` gets the time from the first sort's start to
  /// the last merge's end, each device's sort (m.across, with the bytes it sent to the others)
  /// and their sum (m.stats).
  void measure(Measurement& m, const std::vector<Key>& input, std::vector<Key>& output);

 private:
  struct Device;
  void sort_runs(DeviceRunStats& stats);
  /// Where each part starts in each run: cuts[k][j] for parts k = 0 .. devices (the last: the runs' ends).
  std::vector<std::vector<std::uint64_t>> cut_runs();
  void exchange(const std::vector<std::vector<std::uint64_t>>& cuts, DeviceRunStats& stats);
  void merge_parts();

  RunSettings settings_;
  std::uint64_t n_;
  std::uint64_t chunk_bytes_;
  std::uint64_t capacity_;  // keys each device holds: its share, or any part (split_bound)
  DeviceSet set_;
  std::vector<std::unique_ptr<Device>> devices_;  // after set_: released before its runtimes
};

}  // namespace chanflow::workloads
