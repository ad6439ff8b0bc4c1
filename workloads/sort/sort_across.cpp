// Sort across devices: a run per device, cut into parts, exchanged and merged (sort_across.hpp).
#include "sort/sort_across.hpp"

#include "chanflow/device_copies.hpp"
#include "chanflow/pinned.hpp"
#include "chanflow/work_router.hpp"
#include "sort/sort_split.hpp"

#include <fmt/format.h>

#include <utility>

namespace chanflow::workloads {

template <class Key>
struct SortAcrossDevices<Key>::Device {
  Device(const Runtime& runtime, std::uint64_t capacity, bool others, const RunSettings& settings)
      : data(runtime, capacity * sizeof(Key)),
        tmp(runtime, capacity * sizeof(Key)),
        inbox(others ? PinnedBuffer(runtime, capacity * sizeof(Key)) : PinnedBuffer()),
        graph(runtime, data, tmp, capacity, settings.for_device(runtime.caps(), sort_footprint(capacity)),
              SortArgs{kSortBase, kMergeBase}, sizeof(Key), DataTasks::ForDevice) {}

  template <class Buffer>
  Key* at(const Buffer& b, std::uint64_t i) const {
    return static_cast<Key*>(b.get()) + i;
  }

  SvmBuffer data, tmp;
  PinnedBuffer inbox;  // host memory where the other devices' pieces of its part wait to come in
  SortCilk graph;
  std::uint64_t run = 0;  // keys of its own share, sorted in data
  // Its part: a piece of every run, in tmp after the exchange, in run order; merged into `part`.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pieces;  // offset, keys
  std::uint64_t part = 0;
  const SvmBuffer* merged = nullptr;  // data or tmp: where the merges left the part
};

template <class Key>
SortAcrossDevices<Key>::SortAcrossDevices(const RunSettings& settings, bool profiling, std::uint64_t n,
                                          std::uint64_t chunk_bytes)
    : settings_(settings), n_(n), chunk_bytes_(chunk_bytes), set_(settings.devices, profiling) {
  const std::size_t d = set_.size();
  std::vector<std::uint64_t> shares(d);
  for (std::size_t j = 0; j < d; ++j) shares[j] = n * (j + 1) / d - n * j / d;
  capacity_ = std::max<std::uint64_t>(1, split_bound(n, d, sample_stride(shares, d)));
  for (std::size_t j = 0; j < d; ++j) {
    devices_.push_back(std::make_unique<Device>(set_.runtime(j), capacity_, d > 1, settings_));
    devices_.back()->run = shares[j];
  }
  in_turn_on_each_device(set_, [&](std::size_t j) { devices_[j]->graph.graph().validate(); });
}

template <class Key>
SortAcrossDevices<Key>::~SortAcrossDevices() = default;

template <class Key>
void SortAcrossDevices<Key>::measure(Measurement& m, const std::vector<Key>& input, std::vector<Key>& output) {
  const std::size_t d = set_.size();
  output.resize(n_);
  for (std::size_t j = 0; j < d; ++j)
    set_.runtime(j).svm_write_async(devices_[j]->data.get(), input.data() + n_ * j / d, devices_[j]->run * sizeof(Key));
  for (std::size_t j = 0; j < d; ++j) set_.runtime(j).finish();
  DeviceRunStats stats;
  stats.runs.resize(d);
  stats.traffic.resize(d);
  m.threads = 0;
  m.ms = time_ms([&] {
    sort_runs(stats);
    exchange(cut_runs(), stats);
    merge_parts();
  });
  stats.wall_ms = m.ms;
  std::uint64_t at = 0;
  for (std::size_t k = 0; k < d; ++k) {
    const Device& dev = *devices_[k];
    set_.runtime(k).svm_read_async(output.data() + at, dev.merged->get(), dev.part * sizeof(Key));
    at += dev.part;
  }
  for (std::size_t k = 0; k < d; ++k) set_.runtime(k).finish();
  m.stats = stats.total();
  m.across = std::move(stats);
}

template <class Key>
void SortAcrossDevices<Key>::sort_runs(DeviceRunStats& stats) {
  on_each_device(set_, [&](std::size_t j) {
    Device& dev = *devices_[j];
    if (dev.run == 0) return;
    RunOptions options = settings_.run_options(j == 0 ? fmt::format("sort {} across {} devices", n_, set_.size()) : "");
    if (!options.trace_path.empty()) options.trace_path = device_trace_path(options.trace_path, j);
    const auto policy = settings_.make_policy();
    dev.graph.seed_sort(dev.run);
    stats.runs[j] = dev.graph.graph().run(*policy, options);
  });
}

template <class Key>
std::vector<std::vector<std::uint64_t>> SortAcrossDevices<Key>::cut_runs() {
  const std::size_t d = set_.size();
  std::vector<std::uint64_t> runs(d);
  for (std::size_t j = 0; j < d; ++j) runs[j] = devices_[j]->run;
  if (d == 1) return {{0}, runs};  // one part: the run
  const std::uint64_t stride = sample_stride(runs, d);
  // Every run's samples, read at once from every device.
  std::vector<std::vector<Key>> samples(d);
  for (std::size_t j = 0; j < d; ++j) {
    samples[j].resize((runs[j] + stride - 1) / stride);
    for (std::size_t p = 0; p < samples[j].size(); ++p)
      set_.runtime(j).svm_read_async(&samples[j][p], devices_[j]->at(devices_[j]->data, p * stride), sizeof(Key));
  }
  for (std::size_t j = 0; j < d; ++j) set_.runtime(j).finish();
  const std::vector<Cut<Key>> chosen = choose_cuts(samples, stride, n_, d);
  // The window of each cut in each run, likewise, into the device's inbox (pinned, and free until
  // the exchange; the windows of a run hold at most (devices - 1) strides, under a sixteenth of it):
  // a GPU's run of 2^27 keys has windows of 16 MiB, 2 ms at pageable memory's rate.
  std::vector<std::vector<Window>> windows(d, std::vector<Window>(chosen.size()));
  std::vector<std::vector<const Key*>> keys(d, std::vector<const Key*>(chosen.size()));
  for (std::size_t j = 0; j < d; ++j) {
    Device& dev = *devices_[j];
    std::uint64_t used = 0;
    for (std::size_t k = 0; k < chosen.size(); ++k) {
      windows[j][k] = window_for(chosen[k], j, samples[j], stride, runs[j]);
      used += windows[j][k].count;
    }
    if (used > capacity_)  // window_for's bound says this cannot be
      throw RunError(fmt::format("sort across devices: device {}'s windows hold {} keys, more than its inbox's {}", j,
                                 used, capacity_));
    used = 0;
    for (std::size_t k = 0; k < chosen.size(); ++k) {
      const Window w = windows[j][k];
      keys[j][k] = dev.at(dev.inbox, used);
      if (w.count) set_.runtime(j).svm_read_async(dev.at(dev.inbox, used), dev.at(dev.data, w.begin), w.count * sizeof(Key));
      used += w.count;
    }
  }
  for (std::size_t j = 0; j < d; ++j) set_.runtime(j).finish();
  std::vector<std::vector<std::uint64_t>> cuts(d + 1, std::vector<std::uint64_t>(d, 0));
  cuts[d] = runs;
  for (std::size_t k = 0; k < chosen.size(); ++k)
    for (std::size_t j = 0; j < d; ++j) cuts[k + 1][j] = cut_in(chosen[k], j, windows[j][k], keys[j][k]);
  return cuts;
}

template <class Key>
void SortAcrossDevices<Key>::exchange(const std::vector<std::vector<std::uint64_t>>& cuts, DeviceRunStats& stats) {
  const std::size_t d = set_.size();
  // Part k: keys [cuts[k][j], cuts[k+1][j]) of every run j, laid out in run order in device k's
  // tmp, and the pieces from other devices at the same place in its inbox (pinned host memory of
  // its context) on their way.
  for (std::size_t k = 0; k < d; ++k) {
    Device& dev = *devices_[k];
    dev.pieces.clear();
    dev.part = 0;
    for (std::size_t j = 0; j < d; ++j) {
      const std::uint64_t keys = cuts[k + 1][j] - cuts[k][j];
      dev.pieces.emplace_back(dev.part, keys);
      dev.part += keys;
    }
    if (dev.part > capacity_)  // split_bound says this cannot be
      throw RunError(fmt::format("sort across devices: part {} holds {} keys, more than the {} its device has room for",
                                 k, dev.part, capacity_));
  }
  // Every run's piece of every part, from its device's data to the part's device's tmp (through
  // that device's inbox).
  std::vector<DeviceCopy> copies;
  for (std::size_t j = 0; j < d; ++j) {
    const Device& from = *devices_[j];
    for (std::size_t k = 0; k < d; ++k) {
      const Device& to = *devices_[k];
      const auto [offset, keys] = to.pieces[j];
      copies.push_back({j, k, from.at(from.data, cuts[k][j]), to.at(to.inbox, offset), to.at(to.tmp, offset), keys * sizeof(Key)});
    }
  }
  const std::vector<std::uint64_t> sent = copy_between_devices(set_, copies, chunk_bytes_);
  for (std::size_t j = 0; j < d; ++j) stats.traffic[j].bytes_sent = sent[j];
}

template <class Key>
void SortAcrossDevices<Key>::merge_parts() {
  on_each_device(set_, [&](std::size_t k) {
    Device& dev = *devices_[k];
    const SvmBuffer* from = &dev.tmp;
    const SvmBuffer* to = &dev.data;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> pieces = dev.pieces;
    // Pairs of adjacent pieces merged into one, in place of both, until one is left (a piece
    // without a partner merged with nothing: copied, so that every piece is in `to` after a pass).
    while (pieces.size() > 1) {
      std::vector<std::pair<std::uint64_t, std::uint64_t>> next;
      bool seeded = false;
      for (std::size_t i = 0; i < pieces.size(); i += 2) {
        const auto [a, na] = pieces[i];
        const std::uint64_t nb = i + 1 < pieces.size() ? pieces[i + 1].second : 0;
        if (na + nb != 0) {
          dev.graph.seed_merge(dev.at(*from, a), na, dev.at(*from, a + na), nb, dev.at(*to, a));
          seeded = true;
        }
        next.emplace_back(a, na + nb);
      }
      if (seeded) {
        const auto policy = settings_.make_policy();
        dev.graph.graph().run(*policy, RunOptions{});
      }
      pieces = std::move(next);
      std::swap(from, to);
    }
    dev.merged = from;
  });
}

template class SortAcrossDevices<std::uint32_t>;
template class SortAcrossDevices<std::uint64_t>;

}  // namespace chanflow::workloads
