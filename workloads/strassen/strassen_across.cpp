// Strassen across devices: a share of the products per device, the Cs summed band by band
// (strassen_across.hpp).
#include "strassen/strassen_across.hpp"

#include "chanflow/device_copies.hpp"
#include "chanflow/pinned.hpp"
#include "chanflow/work_router.hpp"
#include "chanflow_workloads_sources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

namespace chanflow::workloads {

StrassenShare strassen_share(std::uint64_t n, std::size_t device, std::size_t devices) {
  // Products exist at depths 1 .. levels (order n/2 .. the base's); the share's depth is the
  // first with at least 12 per device, so that the ranges differ by under a tenth, or the
  // deepest there is.
  std::uint32_t levels = 0;
  for (std::uint64_t order = n; order > kStrassenBase; order /= 2) ++levels;
  std::uint32_t depth = 0;
  std::uint64_t products = 1;
  while (devices > 1 && depth < levels && products < 12 * devices) {
    ++depth;
    products *= 7;
  }
  return {depth, static_cast<std::uint32_t>(products * device / devices),
          static_cast<std::uint32_t>(products * (device + 1) / devices)};
}

template <class Real>
struct StrassenAcrossDevices<Real>::Device {
  Device(const Runtime& runtime, std::uint64_t n, StrassenShare share, const RunSettings& settings)
      : a(runtime, n * n * sizeof(Real)),
        b(runtime, n * n * sizeof(Real)),
        c(runtime, n * n * sizeof(Real)),
        share(share),
        graph(runtime, a, b, c, n, std::is_same_v<Real, float> ? Precision::F32 : Precision::F64,
              settings.for_device(runtime.caps(), strassen_footprint(n)), StrassenCombine::Atomic, kStrassenBase,
              DataTasks::ForDevice, share) {}

  Real* row(const SvmBuffer& m, std::uint64_t n, std::uint64_t r) const { return static_cast<Real*>(m.get()) + r * n; }

  SvmBuffer a, b, c;
  StrassenShare share;
  StrassenCilk graph;
  std::uint64_t row0 = 0, rows = 0;  // its band of C, which it sums
  PinnedBuffer inbox;                // the other devices' parts of its band, on their way in
  SvmBuffer others;                  // the same, on the device
  cl::Kernel sum;
};

template <class Real>
StrassenAcrossDevices<Real>::StrassenAcrossDevices(const RunSettings& settings, bool profiling, std::uint64_t n,
                                                   const std::vector<Real>& a, const std::vector<Real>& b)
    : settings_(settings), n_(n), set_(settings.devices, profiling) {
  const std::size_t d = set_.size();
  const std::string sum_source(workloads_cl::strassen_sum_cl());
  for (std::size_t j = 0; j < d; ++j) {
    const Runtime& rt = set_.runtime(j);
    auto dev = std::make_unique<Device>(rt, n, strassen_share(n, j, d), settings_);
    rt.svm_write_async(dev->a.get(), a.data(), n * n * sizeof(Real));
    rt.svm_write_async(dev->b.get(), b.data(), n * n * sizeof(Real));
    dev->row0 = n * j / d;
    dev->rows = n * (j + 1) / d - dev->row0;
    if (d > 1) {
      const std::size_t bytes = (d - 1) * dev->rows * n * sizeof(Real);
      dev->inbox = PinnedBuffer(rt, bytes);
      dev->others = SvmBuffer(rt, std::max<std::size_t>(bytes, sizeof(Real)));
      const std::string real = std::is_same_v<Real, float> ? "float" : "double";
      dev->sum = rt.kernel(rt.build({sum_source}, "-DREAL=" + real), "strassen_sum_band");
    }
    devices_.push_back(std::move(dev));
  }
  in_turn_on_each_device(set_, [&](std::size_t j) {
    devices_[j]->graph.graph().validate();
    set_.runtime(j).finish();  // A and B are in
  });
}

template <class Real>
StrassenAcrossDevices<Real>::~StrassenAcrossDevices() = default;

template <class Real>
void StrassenAcrossDevices<Real>::measure(Measurement& m, std::vector<Real>& c) {
  const std::size_t d = set_.size();
  // A device with no products adds nothing (a root that is a base case, computed by one device):
  // its C is zero, the sum of its band so far.
  for (std::size_t j = 0; j < d; ++j)
    if (devices_[j]->share.first == devices_[j]->share.last) set_.runtime(j).svm_fill_zero(devices_[j]->c.get(), n_ * n_ * sizeof(Real));
  DeviceRunStats stats;
  stats.runs.resize(d);
  stats.traffic.resize(d);
  m.threads = 0;
  m.ms = time_ms([&] {
    on_each_device(set_, [&](std::size_t j) {
      Device& dev = *devices_[j];
      if (dev.share.first == dev.share.last) return;
      RunOptions options =
          settings_.run_options(j == 0 ? fmt::format("strassen {} across {} devices", n_, set_.size()) : "");
      if (!options.trace_path.empty()) options.trace_path = device_trace_path(options.trace_path, j);
      const auto policy = settings_.make_policy();
      stats.runs[j] = dev.graph.run(*policy, options);
    });
    sum_bands(stats);
  });
  stats.wall_ms = m.ms;
  c.resize(n_ * n_);
  for (std::size_t k = 0; k < d; ++k) {
    const Device& dev = *devices_[k];
    set_.runtime(k).svm_read_async(c.data() + dev.row0 * n_, dev.row(dev.c, n_, dev.row0), dev.rows * n_ * sizeof(Real));
  }
  for (std::size_t k = 0; k < d; ++k) set_.runtime(k).finish();
  m.stats = stats.total();
  m.across = std::move(stats);
}

template <class Real>
void StrassenAcrossDevices<Real>::sum_bands(DeviceRunStats& stats) {
  const std::size_t d = set_.size();
  if (d == 1) return;
  // Each device's part of every other device's band, to that device's `others` (through its
  // inbox; the parts in device order, its own left out).
  std::vector<DeviceCopy> copies;
  for (std::size_t j = 0; j < d; ++j) {
    const Device& from = *devices_[j];
    for (std::size_t k = 0; k < d; ++k) {
      if (k == j) continue;
      const Device& to = *devices_[k];
      const std::uint64_t elements = to.rows * n_, slot = (j < k ? j : j - 1) * elements;
      copies.push_back({j, k, from.row(from.c, n_, to.row0), static_cast<Real*>(to.inbox.get()) + slot,
                        static_cast<Real*>(to.others.get()) + slot, elements * sizeof(Real)});
    }
  }
  const std::vector<std::uint64_t> sent = copy_between_devices(set_, copies);
  for (std::size_t j = 0; j < d; ++j) stats.traffic[j].bytes_sent = sent[j];
  // Each device adds them into its band.
  for (std::size_t k = 0; k < d; ++k) {
    Device& dev = *devices_[k];
    const Runtime& rt = set_.runtime(k);
    const std::uint64_t elements = dev.rows * n_;
    if (elements == 0) continue;
    set_arg_svm(dev.sum, 0, dev.row(dev.c, n_, dev.row0));
    set_arg_svm(dev.sum, 1, dev.others.get());
    set_arg(dev.sum, 2, static_cast<cl_ulong>(elements));
    set_arg(dev.sum, 3, static_cast<cl_uint>(d - 1));
    constexpr std::size_t kGroup = 64;
    const std::size_t global = std::min<std::size_t>((elements + kGroup - 1) / kGroup, 4096) * kGroup;
    launch(rt, dev.sum, global, kGroup, false);
  }
  for (std::size_t k = 0; k < d; ++k) set_.runtime(k).finish();
}

template class StrassenAcrossDevices<float>;
template class StrassenAcrossDevices<double>;

}  // namespace chanflow::workloads
