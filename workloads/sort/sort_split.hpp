// Cutting sorted runs into parts of nearly equal size: each device of a sort across devices sorts
// a run of its own, and then merges one part of every run, so the parts must be ranges of the
// output. A part's size is bounded (split_bound) with few keys read: a regular sample of each run
// (sample_stride) chooses the cuts' keys, and a window of one stride per run and cut places them.
//
// The cuts split in a total order on (key, run, index), so runs of equal keys are cut too: the
// bound holds whatever the keys.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace chanflow::workloads {

/// Where a run's samples are: keys 0, stride, 2·stride, ... of each run. At least 16 samples per
/// part of the longest run, so that a part holds at most 1/8 more keys than an equal share.
inline std::uint64_t sample_stride(const std::vector<std::uint64_t>& lengths, std::size_t parts) {
  const std::uint64_t longest = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
  const std::uint64_t samples = 16 * static_cast<std::uint64_t>(std::max<std::size_t>(parts, 1));
  return std::max<std::uint64_t>(1, (longest + samples - 1) / samples);
}

/// The most keys any part holds when `total` keys are cut into `parts` with samples `stride`
/// apart: an equal share, plus what the samples leave unplaced on either side.
inline std::uint64_t split_bound(std::uint64_t total, std::size_t parts, std::uint64_t stride) {
  return (total + parts - 1) / parts + (parts + 1) * stride;
}

/// One cut: a sample, named by its key, its run and its index there. A key (x, run j, index i)
/// falls before it when x < key, or x == key and (j, i) < (run, index). `end`: after every key.
template <class Key>
struct Cut {
  Key key{};
  std::size_t run = 0;
  std::uint64_t index = 0;
  bool end = false;

  /// Whether key x of run j falls before the cut (for a run other than the cut's own).
  bool before(Key x, std::size_t j) const { return end || x < key || (x == key && j < run); }
};

/// The `parts - 1` cuts between parts: cut k is the sample with k·total/parts / stride (rounded
/// up) samples before it, in the order above. `samples[j]` holds run j's samples in order.
template <class Key>
std::vector<Cut<Key>> choose_cuts(const std::vector<std::vector<Key>>& samples, std::uint64_t stride,
                                  std::uint64_t total, std::size_t parts) {
  std::vector<Cut<Key>> all;
  for (std::size_t j = 0; j < samples.size(); ++j)
    for (std::size_t p = 0; p < samples[j].size(); ++p) all.push_back({samples[j][p], j, p * stride});
  std::sort(all.begin(), all.end(), [](const Cut<Key>& a, const Cut<Key>& b) {
    return a.key < b.key || (a.key == b.key && (a.run < b.run || (a.run == b.run && a.index < b.index)));
  });
  std::vector<Cut<Key>> cuts;
  for (std::size_t k = 1; k < parts; ++k) {
    const std::uint64_t rank = total * k / parts;
    const std::uint64_t before = (rank + stride - 1) / stride;
    cuts.push_back(before < all.size() ? all[before] : Cut<Key>{.end = true});
  }
  return cuts;
}

/// The keys of run `j` to read to place `cut` in it: [begin, begin + count), at most stride - 1.
/// The cut lies at begin + (how many of them fall before it) (cut_in).
struct Window {
  std::uint64_t begin = 0;
  std::uint64_t count = 0;
};

template <class Key>
Window window_for(const Cut<Key>& cut, std::size_t j, const std::vector<Key>& run_samples, std::uint64_t stride,
                  std::uint64_t length) {
  if (cut.end) return {length, 0};
  if (j == cut.run) return {cut.index, 0};  // the sample itself: everything before it in its run
  const auto before = static_cast<std::uint64_t>(
      std::partition_point(run_samples.begin(), run_samples.end(), [&](Key x) { return cut.before(x, j); }) -
      run_samples.begin());
  if (before == 0) return {0, 0};  // the run's first key is past the cut
  // Sample before-1 falls before the cut, sample `before` (if any) after it.
  const std::uint64_t begin = (before - 1) * stride + 1;
  return {begin, std::min(before * stride, length) - std::min(begin, length)};
}

/// Where `cut` lies in run j, given the keys of its window.
template <class Key>
std::uint64_t cut_in(const Cut<Key>& cut, std::size_t j, Window w, const Key* keys) {
  return w.begin + static_cast<std::uint64_t>(
                       std::partition_point(keys, keys + w.count, [&](Key x) { return cut.before(x, j); }) - keys);
}

}  // namespace chanflow::workloads
