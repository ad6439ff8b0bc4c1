// Channel behaviour on a real OpenCL device (PoCL by default): many work-groups producing and
// consuming at once, full channels, wrap-around, zero requests, in-order deallocation.
#include "chanflow/channel.hpp"
#include "chanflow_tests_sources.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <numeric>

using namespace chanflow;
using chanflow::test::runtime;

namespace {

std::uint32_t mix(std::uint32_t id, std::uint32_t j) {  // same as channel_test_kernels.cl
  std::uint32_t x = id * 0x9E3779B1u + j * 0x85EBCA77u + 0x27d4eb2fu;
  x ^= x >> 15;
  x *= 0x2c1b3c6du;
  x ^= x >> 12;
  return x;
}

void write_ce(std::byte* ce, std::uint32_t id, std::uint32_t words) {
  std::vector<std::uint32_t> w(words);
  w[0] = id;
  for (std::uint32_t j = 1; j < words; ++j) w[j] = mix(id, j);
  std::memcpy(ce, w.data(), words * 4);
}

struct TreeRun {
  std::uint64_t expected = 0;
  std::uint64_t exactly_once = 0;
  std::uint64_t missing = 0;
  std::uint64_t duplicated = 0;
  std::uint32_t bad_payloads = 0;
  std::uint64_t rounds = 0;
  std::uint64_t retried_parents = 0;  // work-groups' spawns refused for lack of space
  chanflow_channel final_counters{};
};

struct TreeOptions {
  ChannelConfig channel;
  std::uint32_t wg_size = 64;
  std::uint32_t max_depth = 10;
  std::uint32_t max_dispatch = 1u << 20;
  const char* kernel = "expand";
  ScanPath scan = ScanPath::Auto;
};

// Grows a complete binary tree of CEs through one channel: every dispatch consumes ready CEs
// and produces their children into the same channel. Spawns refused for lack of space come back
// through a retry list and are seeded by the host, so every id must arrive exactly once.
TreeRun grow_tree(const TreeOptions& o) {
  const Runtime& rt = runtime();
  ChannelTable table(rt);
  Channel ch(table, o.channel);
  const auto program = build_channel_program(rt, tests_cl::channel_test_kernels_cl(),
                                             {.wg_size = o.wg_size, .scan = o.scan});
  const auto kernel = rt.kernel(program, o.kernel);
  const std::uint32_t words = o.channel.ce_bytes / 4;
  const std::uint32_t total = (2u << o.max_depth) - 1;

  SvmBuffer seen(rt, std::size_t{total} * 4), retry(rt, std::size_t{o.max_dispatch} * 4),
      retry_count(rt, 4), errors(rt, 4);
  rt.svm_fill_zero(seen.get(), seen.size());
  rt.svm_fill_zero(retry_count.get(), 4);
  rt.svm_fill_zero(errors.get(), 4);
  std::vector<void*> indirect = ch.svm_allocations();
  set_indirect_svm(kernel, indirect);

  TreeRun run;
  run.expected = total;
  std::deque<std::uint32_t> pending{0};
  const std::uint64_t round_limit = 16ull * total + 1000;  // a bug must fail, not hang
  for (; run.rounds < round_limit; ++run.rounds) {
    while (!pending.empty()) {
      const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(pending.size(), 256));
      auto r = ch.talloc(n);
      if (!r) break;
      for (std::uint32_t k = 0; k < n; ++k) {
        write_ce(r->ces.data() + std::size_t{k} * o.channel.ce_bytes, pending.front(), words);
        pending.pop_front();
      }
      ch.enq(std::move(*r));
    }
    table.refresh();
    const auto ready = ch.ready();
    if (ready.count == 0) {
      REQUIRE_MESSAGE(pending.empty(), "no CE ready yet host CEs do not fit: space leaked");
      break;
    }
    const auto count = static_cast<std::uint32_t>(std::min<std::uint64_t>(ready.count, o.max_dispatch));
    set_arg_svm(kernel, 0, ch.device_ptr());
    set_arg(kernel, 1, cl_ulong{ready.begin});
    set_arg(kernel, 2, cl_uint{count});
    set_arg(kernel, 3, cl_uint{o.max_depth});
    set_arg_svm(kernel, 4, seen.get());
    set_arg(kernel, 5, cl_uint{total});
    set_arg_svm(kernel, 6, retry.get());
    set_arg_svm(kernel, 7, retry_count.get());
    set_arg_svm(kernel, 8, errors.get());
    const std::size_t global = (count + o.wg_size - 1) / o.wg_size * o.wg_size;
    launch(rt, kernel, global, o.wg_size);
    ch.mark_dispatched(count);
    rt.finish();

    table.refresh();
    REQUIRE(ch.counters().ctrl_published == ch.counters().ctrl_reserve_tail);
    ch.deallocate();
    const auto& c = ch.counters();
    REQUIRE(c.data_tail - c.data_head <= o.channel.capacity);

    std::uint32_t retries = 0;
    rt.svm_read(&retries, retry_count.get(), 4);
    if (retries > 0) {
      std::vector<std::uint32_t> parents(retries);
      rt.svm_read(parents.data(), retry.get(), std::size_t{retries} * 4);
      for (auto p : parents) {
        pending.push_back(2 * p + 1);
        pending.push_back(2 * p + 2);
      }
      run.retried_parents += retries;
      rt.svm_fill_zero(retry_count.get(), 4);
    }
  }
  REQUIRE_MESSAGE(run.rounds < round_limit, "tree did not finish within the round limit");

  std::vector<std::uint32_t> counts(total);
  rt.svm_read(counts.data(), seen.get(), seen.size());
  for (auto v : counts) {
    if (v == 1) ++run.exactly_once;
    else if (v == 0) ++run.missing;
    else run.duplicated += v - 1;
  }
  rt.svm_read(&run.bad_payloads, errors.get(), 4);
  table.refresh();
  run.final_counters = ch.counters();
  return run;
}

void require_exactly_once(const TreeRun& r) {
  CHECK(r.missing == 0);
  CHECK(r.duplicated == 0);
  CHECK(r.bad_payloads == 0);
  CHECK(r.exactly_once == r.expected);
}

// Every work-group size under one scan path: each CE of a tree grown through one channel arrives
// exactly once.
void every_work_group_size(ScanPath scan) {
  for (std::uint32_t wg : {1u, 7u, 32u, 64u, 256u}) {
    CAPTURE(to_string(scan));
    CAPTURE(wg);
    TreeOptions o;
    o.channel = {.name = "wg", .ce_bytes = 8, .capacity = 2048, .done_group = 16};
    o.max_depth = 13;
    o.wg_size = wg;
    o.scan = scan;
    o.max_dispatch = 700;
    require_exactly_once(grow_tree(o));
  }
}

}  // namespace

TEST_SUITE("channel") {

TEST_CASE("Channel: many work-groups consuming and producing in one channel lose and duplicate nothing" *
          doctest::timeout(300)) {
  // 2^24 - 1 = 16,777,215 CEs through one channel, each consumed exactly once.
  TreeOptions o;
  o.channel = {.name = "tree", .ce_bytes = 8, .capacity = 1u << 24, .done_group = 64};
  o.max_depth = 23;
  const auto r = grow_tree(o);
  require_exactly_once(r);
  CHECK(r.retried_parents == 0);  // capacity holds every level: no spawn was refused
  CHECK(r.final_counters.data_tail == r.final_counters.data_head);  // everything deallocated
  CHECK(static_cast<std::int64_t>(r.final_counters.data_free) == o.channel.capacity);
  CHECK(r.final_counters.ctrl_head == r.expected);
}

TEST_CASE("Channel: a small channel wraps around over many laps without losing a CE" *
          doctest::timeout(300)) {
  // Capacity 1000 (not a power of two) carries 2^17 - 1 CEs: over 130 laps, with work-groups
  // refused whenever the channel is full.
  TreeOptions o;
  o.channel = {.name = "small", .ce_bytes = 12, .capacity = 1000, .done_group = 8};
  o.max_depth = 16;
  o.max_dispatch = 256;
  const auto r = grow_tree(o);
  require_exactly_once(r);
  CHECK(r.final_counters.data_tail / o.channel.capacity > 130);  // laps
  CHECK(r.final_counters.failed_reservations > 0);  // the full channel refused work-groups
  CHECK(r.retried_parents > 0);
  CHECK(r.final_counters.data_tail == r.final_counters.data_head);
}

TEST_CASE("Channel: CE sizes from 4 to 256 bytes carry their whole payload") {
  for (std::uint32_t bytes : {4u, 8u, 12u, 20u, 64u, 132u, 256u}) {
    CAPTURE(bytes);
    TreeOptions o;
    o.channel = {.name = "sized", .ce_bytes = bytes, .capacity = 4096, .done_group = 64};
    o.max_depth = 14;
    o.max_dispatch = 1024;
    require_exactly_once(grow_tree(o));
  }
}

TEST_CASE("Channel: every work-group size and scan path a CPU device builds gives the same, complete result") {
  // The collective scan (OpenCL C 2.0's work_group_scan_exclusive_add), which a GPU takes where it
  // builds, is in the suite gpu_only: PoCL 3.1 does not build it.
  for (ScanPath scan : {ScanPath::Sequential, ScanPath::HillisSteele}) every_work_group_size(scan);
}

TEST_CASE("Channel: the per-work-item baseline channel is correct too") {
  TreeOptions o;
  o.channel = {.name = "baseline", .ce_bytes = 8, .capacity = 1000, .done_group = 8};
  o.max_depth = 15;
  o.max_dispatch = 300;
  o.kernel = "expand_per_item";
  const auto r = grow_tree(o);
  require_exactly_once(r);
  CHECK(r.final_counters.failed_reservations > 0);
}

}  // TEST_SUITE

TEST_SUITE("gpu_only") {

TEST_CASE("GPU only: the collective work-group scan is the path a GPU takes, and every work-group size gives the same, complete result") {
  CAPTURE(runtime().caps().name);
  REQUIRE(runtime().caps().work_group_scan_builds);
  CHECK(resolve_scan_path(runtime(), ScanPath::Auto) == ScanPath::Collective);
  every_work_group_size(ScanPath::Collective);
}

}  // TEST_SUITE
