// Workloads whose data moves between devices, not their tasks (tasks that point into arrays stay
// where the arrays are). Sort (workloads/sort/sort_across.hpp): the cuts through sorted runs keep
// every part within split_bound whatever the keys (equal keys included), and the sort across
// every device of 'all' gives std::sort's order for any count of keys, both key widths. Strassen
// (workloads/strassen/strassen_across.hpp): the devices' shares cover every product once, and
// the product across every device is within the error bound of the exact one, both precisions.
// ctest runs the suite on the default device and on PoCL as three devices (each device of a set
// builds its programs anew: tests/CMakeLists.txt says why three).
#include "chanflow/device_set.hpp"
#include "sort/sort_across.hpp"
#include "sort/sort_split.hpp"
#include "strassen/strassen_across.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string_view>
#include <random>
#include <vector>

using namespace chanflow;
using namespace chanflow::workloads;

namespace {

// `total` keys in `runs` sorted runs of random lengths, drawn from `distinct` values.
std::vector<std::vector<std::uint32_t>> random_runs(std::mt19937_64& rng, std::size_t runs, std::uint64_t total,
                                                    std::uint32_t distinct) {
  std::vector<std::uint64_t> ends{0, total};
  for (std::size_t j = 1; j < runs; ++j) ends.push_back(rng() % (total + 1));
  std::sort(ends.begin(), ends.end());
  std::vector<std::vector<std::uint32_t>> out(runs);
  for (std::size_t j = 0; j < runs; ++j) {
    for (std::uint64_t i = ends[j]; i < ends[j + 1]; ++i) out[j].push_back(static_cast<std::uint32_t>(rng() % distinct));
    std::sort(out[j].begin(), out[j].end());
  }
  return out;
}

}  // namespace

TEST_SUITE("data_across") {

TEST_CASE("Sort across devices: cuts through sorted runs make parts of the output, none past split_bound, equal keys too") {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t parts = 1 + rng() % 8;
    const std::uint64_t total = rng() % 3000;
    const std::uint32_t distinct = trial % 3 == 0 ? 1 : trial % 3 == 1 ? 7 : 1u << 30;  // all equal, few, distinct
    const auto runs = random_runs(rng, parts, total, distinct);
    CAPTURE(trial);
    CAPTURE(parts);
    CAPTURE(total);
    std::vector<std::uint64_t> lengths;
    for (const auto& r : runs) lengths.push_back(r.size());
    const std::uint64_t stride = sample_stride(lengths, parts);
    std::vector<std::vector<std::uint32_t>> samples(parts);
    for (std::size_t j = 0; j < parts; ++j)
      for (std::uint64_t i = 0; i < runs[j].size(); i += stride) samples[j].push_back(runs[j][i]);
    const auto cuts = choose_cuts(samples, stride, total, parts);
    REQUIRE(cuts.size() == parts - 1);
    // Where each cut lies in each run, from its window alone.
    std::vector<std::vector<std::uint64_t>> at(parts + 1, std::vector<std::uint64_t>(parts, 0));
    at[parts] = lengths;
    for (std::size_t k = 0; k < cuts.size(); ++k)
      for (std::size_t j = 0; j < parts; ++j) {
        const Window w = window_for(cuts[k], j, samples[j], stride, lengths[j]);
        REQUIRE(w.begin + w.count <= lengths[j]);
        CHECK(w.count < stride);
        at[k + 1][j] = cut_in(cuts[k], j, w, runs[j].data() + w.begin);
      }
    std::vector<std::uint32_t> output;
    for (std::size_t k = 0; k < parts; ++k) {
      std::vector<std::uint32_t> part;
      for (std::size_t j = 0; j < parts; ++j) {
        REQUIRE(at[k][j] <= at[k + 1][j]);
        part.insert(part.end(), runs[j].begin() + at[k][j], runs[j].begin() + at[k + 1][j]);
      }
      CHECK(part.size() <= split_bound(total, parts, stride));
      std::sort(part.begin(), part.end());
      // Each part's keys follow the last part's: the parts in order are the output.
      if (!output.empty() && !part.empty()) CHECK(output.back() <= part.front());
      output.insert(output.end(), part.begin(), part.end());
    }
    std::vector<std::uint32_t> expected;
    for (const auto& r : runs) expected.insert(expected.end(), r.begin(), r.end());
    std::sort(expected.begin(), expected.end());
    CHECK(output == expected);
  }
}

TEST_CASE("Sort across devices: every device's run sorted, cut, exchanged and merged into std::sort's order" *
          doctest::timeout(900)) {
  RunSettings settings{.capacity = 1u << 12, .wg_size = 16};
  settings.devices = "all";
  std::mt19937_64 rng(11);
  // Fewer keys than devices, an odd count, and enough for several levels of sorts and merges;
  // distinct keys and many equal ones.
  for (std::uint64_t n : {1ull, 3ull, 4099ull, 30011ull}) {
    CAPTURE(n);
    // Chunks of 4 KiB: pieces leave and arrive in many (a GPU's are 16 MiB).
    SortAcrossDevices<std::uint32_t> sorter(settings, false, n, 4096);
    for (std::uint32_t distinct : {0xffffffffu, 5u}) {
      CAPTURE(distinct);
      std::vector<std::uint32_t> input(n), output;
      for (auto& k : input) k = static_cast<std::uint32_t>(rng() % distinct);
      Measurement m;
      sorter.measure(m, input, output);
      std::sort(input.begin(), input.end());
      CHECK(output == input);
      REQUIRE(m.across);
      std::uint64_t sent = 0;
      for (const DeviceTraffic& t : m.across->traffic) sent += t.bytes_sent;
      if (m.across->runs.size() == 1) CHECK(sent == 0);
    }
  }
  SortAcrossDevices<std::uint64_t> wide(settings, false, 5003);
  std::vector<std::uint64_t> input(5003), output;
  for (auto& k : input) k = rng();
  Measurement m;
  wide.measure(m, input, output);
  std::sort(input.begin(), input.end());
  CHECK(output == input);
}

TEST_CASE("Strassen across devices: the shares cover every product at their depth once, none empty where there are enough") {
  for (std::uint64_t n = 1; n <= (1u << 14); n *= 2)
    for (std::size_t devices = 1; devices <= 8; ++devices) {
      CAPTURE(n);
      CAPTURE(devices);
      std::uint32_t next = 0;
      std::uint64_t products = 1;
      for (std::size_t d = 0; d < devices; ++d) {
        const StrassenShare s = strassen_share(n, d, devices);
        if (d == 0)
          for (std::uint32_t i = 0; i < s.depth; ++i) products *= 7;
        CHECK(s.first == next);  // contiguous, in device order
        CHECK(s.last >= s.first);
        if (products >= devices) CHECK(s.last > s.first);
        next = s.last;
      }
      CHECK(next == products);
      std::uint32_t levels = 0;  // depths with products: order n/2 down to the base case's
      for (std::uint64_t order = n; order > kStrassenBase; order /= 2) ++levels;
      const std::uint32_t depth = strassen_share(n, 0, devices).depth;
      if (devices == 1) CHECK(products == 1);  // alone: the root
      if (devices > 1) CHECK((products >= 12 * devices || depth == levels));  // deep enough to balance, or as deep as it goes
    }
}

TEST_CASE("Strassen across devices: every device's share of the products, the Cs summed band by band, within the bound" *
          doctest::timeout(900)) {
  RunSettings settings{.capacity = 1u << 12, .wg_size = 16};
  settings.devices = "all";
  std::mt19937_64 rng(5);
  // A root that is a base case (one device computes it), one level of products, and two.
  for (std::uint64_t n : {64ull, 128ull, 256ull}) {
    CAPTURE(n);
    std::uniform_real_distribution<float> uniform(-1, 1);
    std::vector<float> a(n * n), b(n * n), c;
    for (auto& x : a) x = uniform(rng);
    for (auto& x : b) x = uniform(rng);
    StrassenAcrossDevices<float> across(settings, false, n, a, b);
    if (n == 128) {  // doubles once: the same code, another program per device
      std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end()), cd;
      StrassenAcrossDevices<double> wide(settings, false, n, ad, bd);
      Measurement m;
      wide.measure(m, cd);
      double worst = 0;
      for (std::uint64_t i = 0; i < n; ++i)
        for (std::uint64_t j = 0; j < n; ++j) {
          long double exact = 0;
          for (std::uint64_t k = 0; k < n; ++k) exact += static_cast<long double>(ad[i * n + k]) * bd[k * n + j];
          worst = std::max(worst, static_cast<double>(std::fabs(exact - cd[i * n + j])));
        }
      CHECK(worst <= strassen_error_bound(n, kStrassenBase, std::numeric_limits<double>::epsilon() / 2));
    }
    for (int run = 0; run < 2; ++run) {  // the second reuses the graphs, and must start C afresh
      Measurement m;
      across.measure(m, c);
      REQUIRE(c.size() == n * n);
      double worst = 0;
      for (std::uint64_t i = 0; i < n; ++i)
        for (std::uint64_t j = 0; j < n; ++j) {
          double exact = 0;
          for (std::uint64_t k = 0; k < n; ++k) exact += double(a[i * n + k]) * double(b[k * n + j]);
          const double e = std::fabs(exact - double(c[i * n + j]));
          if (!(e <= worst)) worst = e;  // NaN sticks
        }
      double scale_a = 0, scale_b = 0;
      for (float x : a) scale_a = std::max(scale_a, double(std::fabs(x)));
      for (float x : b) scale_b = std::max(scale_b, double(std::fabs(x)));
      CHECK(worst <= strassen_error_bound(n, kStrassenBase, std::numeric_limits<float>::epsilon() / 2) * scale_a * scale_b);
    }
  }
}

TEST_CASE("Sort and Strassen as workloads across every device: both widths, twice each, each result checked" *
          doctest::timeout(900)) {
  // The settings of the cases above: the same programs on each device.
  RunSettings settings{.capacity = 1u << 12, .wg_size = 16};
  settings.devices = "all";
  const DeviceSet set("all");
  const std::map<std::string_view, std::uint64_t> sizes{{"sort", 30011}, {"sort-u64", 5003}, {"strassen", 128},
                                                         {"strassen-f64", 128}};
  for (const auto& [name, size] : sizes) {
    CAPTURE(name);
    const Workload& w = find_workload(name);
    REQUIRE(w.runs_across_devices("chanflow"));
    const auto instance = w.prepare(set.runtime(0), size, 7, settings);
    for (int run = 0; run < 2; ++run) {  // the second reuses the devices' graphs
      const Measurement m = instance->run("chanflow");
      MESSAGE(m.result);
      CHECK(m.correct);
      REQUIRE(m.across);
      CHECK(m.across->runs.size() == set.size());
    }
  }
}

}  // TEST_SUITE
