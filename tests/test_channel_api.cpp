// Single channel calls pinned down: all-or-nothing reservation, zero requests, in-order
// deallocation with out-of-order completion, and clear errors for bad arguments.
#include "chanflow/channel.hpp"
#include "chanflow_tests_sources.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <vector>

using namespace chanflow;
using chanflow::test::runtime;

namespace {

// Runs reserve_probe: item g asks for want[g] CEs.
struct Probe {
  std::vector<cl_ulong> pos;
  std::vector<cl_uint> offset, total, got_null;
};

Probe run_probe(Channel& ch, const std::vector<cl_uint>& want, std::uint32_t wg, bool publish,
                ScanPath scan = ScanPath::Auto) {
  const Runtime& rt = runtime();
  const auto program = build_channel_program(rt, tests_cl::channel_test_kernels_cl(),
                                             {.wg_size = wg, .scan = scan});
  const auto k = rt.kernel(program, "reserve_probe");
  const std::size_t n = want.size();
  SvmBuffer want_buf(rt, n * 4), pos(rt, n * 8), offset(rt, n * 4), total(rt, n * 4), null(rt, n * 4);
  rt.svm_write(want_buf.get(), want.data(), n * 4);
  set_indirect_svm(k, ch.svm_allocations());
  set_arg_svm(k, 0, ch.device_ptr());
  set_arg_svm(k, 1, want_buf.get());
  set_arg_svm(k, 2, pos.get());
  set_arg_svm(k, 3, offset.get());
  set_arg_svm(k, 4, total.get());
  set_arg_svm(k, 5, null.get());
  set_arg(k, 6, cl_uint{publish ? 1u : 0u});
  launch(rt, k, n, wg);
  rt.finish();
  Probe p{std::vector<cl_ulong>(n), std::vector<cl_uint>(n), std::vector<cl_uint>(n), std::vector<cl_uint>(n)};
  rt.svm_read(p.pos.data(), pos.get(), n * 8);
  rt.svm_read(p.offset.data(), offset.get(), n * 4);
  rt.svm_read(p.total.data(), total.get(), n * 4);
  rt.svm_read(p.got_null.data(), null.get(), n * 4);
  return p;
}

void dispatch_free(const char* kernel_name, Channel& ch, ChannelTable& table, std::uint64_t begin,
                   std::uint32_t count, std::uint32_t lo, std::uint32_t hi, void* ids = nullptr) {
  const Runtime& rt = runtime();
  const auto program = build_channel_program(rt, tests_cl::channel_test_kernels_cl(), {.wg_size = 16});
  const auto k = rt.kernel(program, kernel_name);
  set_indirect_svm(k, ch.svm_allocations());
  set_arg_svm(k, 0, ch.device_ptr());
  set_arg(k, 1, cl_ulong{begin});
  set_arg(k, 2, cl_uint{count});
  set_arg(k, 3, cl_uint{lo});
  set_arg(k, 4, cl_uint{hi});
  if (ids) set_arg_svm(k, 5, ids);
  launch(rt, k, (count + 15) / 16 * 16, 16);
  rt.finish();
  table.refresh();
}

}  // namespace

TEST_SUITE("channel_api") {

TEST_CASE("Channel: a table dropped while a queued copy still reads its host mirror waits for the copy (AddressSanitizer: tests/sanitize.sh)") {
  // mark_dispatched writes the head from the host mirror with a non-blocking copy; the queue is
  // held, so the copy is still pending when the table dies (AddressSanitizer reported PoCL's
  // worker reading the freed mirror before ~ChannelTable waited; tests/sanitize.sh).
  std::optional<ChannelTable> table(std::in_place, runtime());
  std::optional<Channel> ch(std::in_place, *table, ChannelConfig{.name = "dropped", .ce_bytes = 4, .capacity = 64});
  auto r = ch->talloc(8);
  REQUIRE(r.has_value());
  ch->enq(std::move(*r));
  table->refresh();
  {
    chanflow::test::QueueStall stall(runtime(), std::chrono::milliseconds(100));
    ch->mark_dispatched(8);
    ch.reset();
    table.reset();
  }
  runtime().finish();
  // The queue and the device go on: a table made after it hands out CEs.
  ChannelTable again(runtime());
  Channel fresh(again, ChannelConfig{.name = "after", .ce_bytes = 4, .capacity = 64});
  CHECK(fresh.talloc(8).has_value());
}

TEST_CASE("Channel: a CE freed twice is caught by checked frees, even beside live CEs of its group") {
  for (const bool checked : {false, true}) {
    CAPTURE(checked);
    ChannelTable table(runtime());
    Channel ch(table, {.name = "twice", .ce_bytes = 4, .capacity = 64, .done_group = 64, .check_frees = checked});
    auto r = ch.talloc(4);  // slots 0..3, one done-count group; 1..3 stay live
    REQUIRE(r.has_value());
    ch.enq(std::move(*r));
    const auto program = build_channel_program(runtime(), tests_cl::channel_test_kernels_cl(), {.wg_size = 16});
    const auto k = runtime().kernel(program, "free_twice");
    set_indirect_svm(k, ch.svm_allocations());
    set_arg_svm(k, 0, ch.device_ptr());
    set_arg(k, 1, cl_uint{0});
    launch(runtime(), k, 16, 16);
    runtime().finish();
    table.refresh();
    const char* forced = std::getenv("CHANFLOW_CHECK_FREES");  // checks every channel
    if (checked || (forced && *forced && *forced != '0')) {
      CHECK_THROWS_WITH_AS(table.check_errors(), doctest::Contains("tfree of a CE that was not allocated"), ChannelError);
    } else {
      // Two frees of four CEs: the done count (2 < 4) cannot tell, which is why checked frees exist.
      CHECK_NOTHROW(table.check_errors());
    }
  }
}

TEST_CASE("Channel: a full channel rejects a reservation and reserves nothing") {
  ChannelTable table(runtime());
  Channel ch(table, {.name = "full", .ce_bytes = 4, .capacity = 100, .done_group = 4});
  auto seed = ch.talloc(50);  // half full from the host
  REQUIRE(seed.has_value());
  ch.enq(std::move(*seed));
  table.refresh();
  const auto before = ch.counters();

  // One work-group of 64 items asking for one CE each: 64 > 50 free, so all fail.
  const auto p = run_probe(ch, std::vector<cl_uint>(64, 1), 64, true);
  CHECK(std::all_of(p.got_null.begin(), p.got_null.end(), [](cl_uint v) { return v == 1; }));
  CHECK(std::all_of(p.total.begin(), p.total.end(), [](cl_uint v) { return v == 0; }));
  table.refresh();
  const auto& after = ch.counters();
  CHECK(after.data_tail == before.data_tail);
  CHECK(after.ctrl_reserve_tail == before.ctrl_reserve_tail);
  CHECK(after.ctrl_published == before.ctrl_published);
  CHECK(after.failed_reservations == before.failed_reservations + 1);

  // 40 items asking for one each do fit, and then the channel is exactly 90 % full.
  std::vector<cl_uint> want(64, 0);
  std::fill(want.begin(), want.begin() + 40, 1);
  const auto q = run_probe(ch, want, 64, true);
  CHECK(std::all_of(q.got_null.begin(), q.got_null.end(), [](cl_uint v) { return v == 0; }));
  table.refresh();
  CHECK(ch.counters().data_tail == before.data_tail + 40);
  CHECK(ch.ready().count == 90);

  // The host is refused the same way.
  CHECK_FALSE(ch.talloc(11).has_value());
  CHECK(ch.talloc(10).has_value());
}

TEST_CASE("Channel: put writes and publishes as many whole CEs as fit, straight from the caller's bytes") {
  ChannelTable table(runtime());
  Channel ch(table, {.name = "put", .ce_bytes = 8, .capacity = 64, .done_group = 4, .max_reservation = 16});
  std::vector<std::byte> ces(100 * 8);
  for (std::size_t i = 0; i < ces.size(); ++i) ces[i] = static_cast<std::byte>(i * 7 + 1);
  // One reservation each: at most max_reservation (16), then the 64 slots' rest.
  std::uint32_t placed = 0;
  std::vector<std::uint32_t> calls;
  while (const std::uint32_t n = ch.put(std::span(ces).subspan(std::size_t{placed} * 8))) {
    calls.push_back(n);
    placed += n;
  }
  CHECK(calls == std::vector<std::uint32_t>{16, 16, 16, 16});
  table.refresh();
  CHECK(ch.ready().count == 64);
  CHECK(ch.counters().failed_reservations == 0);  // a full channel's put takes nothing and fails nothing
  // Every CE is where the host's talloc/enq would have put it, in order, with its bytes.
  for (std::uint32_t k = 0; k < 64; k += 9) {
    const std::vector<std::byte> ce = ch.read_ce(k);
    CHECK(std::equal(ce.begin(), ce.end(), ces.begin() + std::size_t{k} * 8));
  }
  CHECK_THROWS_AS(ch.put(std::span(ces).subspan(0, 12)), ChannelError);  // not whole CEs
}

TEST_CASE("Channel: items requesting 0 get no CEs while their neighbours get contiguous runs") {
  for (ScanPath scan : {ScanPath::Sequential, ScanPath::HillisSteele}) {
    CAPTURE(to_string(scan));
    ChannelTable table(runtime());
    Channel ch(table, {.name = "zeros", .ce_bytes = 8, .capacity = 4096, .done_group = 64});
    std::vector<cl_uint> want(256);
    for (std::size_t g = 0; g < want.size(); ++g) want[g] = static_cast<cl_uint>((g * 7) % 4);  // 0..3
    const auto p = run_probe(ch, want, 32, true, scan);

    std::set<std::uint64_t> used;
    for (std::size_t wg = 0; wg < want.size() / 32; ++wg) {
      const auto begin = want.begin() + wg * 32;
      const cl_uint expected_total = std::accumulate(begin, begin + 32, 0u);
      cl_uint expected_offset = 0;
      for (std::size_t i = 0; i < 32; ++i) {
        const std::size_t g = wg * 32 + i;
        CHECK(p.got_null[g] == 0);
        CHECK(p.total[g] == expected_total);
        CHECK(p.offset[g] == expected_offset);
        CHECK(p.pos[g] - p.offset[g] == p.pos[wg * 32] - p.offset[wg * 32]);  // one base per group
        for (cl_uint k = 0; k < want[g]; ++k) CHECK(used.insert(p.pos[g] + k).second);
        expected_offset += want[g];
      }
    }
    const auto total = std::accumulate(want.begin(), want.end(), 0u);
    CHECK(used.size() == total);
    table.refresh();
    CHECK(ch.ready().count == total);
    // Every published CE holds what its producer wrote.
    for (std::size_t g = 0; g < want.size(); ++g)
      for (cl_uint k = 0; k < want[g]; ++k) {
        const auto ce = ch.read_ce(static_cast<std::uint32_t>(p.pos[g] + k));
        std::uint32_t id = 0;
        std::memcpy(&id, ce.data(), 4);
        CHECK(id == g * 1024 + k);
      }
  }
}

TEST_CASE("Channel: a reservation that wraps past the array's end stays contiguous") {
  ChannelTable table(runtime());
  Channel ch(table, {.name = "wrap", .ce_bytes = 8, .capacity = 128, .done_group = 32});
  auto seed = ch.talloc(100);
  REQUIRE(seed.has_value());
  ch.enq(std::move(*seed));
  table.refresh();
  auto first = ch.ready();
  ch.mark_dispatched(first.count);
  dispatch_free("free_only", ch, table, first.begin, 100, 0, 96);  // slots 96..99 stay busy
  CHECK(ch.deallocate() == 96);

  // 64 CEs from position 100: slots 100..127 then 0..35, in one contiguous run.
  const auto p = run_probe(ch, std::vector<cl_uint>(64, 1), 64, true);
  for (std::size_t g = 0; g < 64; ++g) {
    CHECK(p.got_null[g] == 0);
    CHECK(p.pos[g] == 100 + g);  // physical indices run on past 127
  }
  table.refresh();
  const auto second = ch.ready();
  REQUIRE(second.count == 64);
  ch.mark_dispatched(64);
  SvmBuffer ids(runtime(), 64 * 4);
  dispatch_free("free_except", ch, table, second.begin, 64, 0, 0, ids.get());
  std::vector<std::uint32_t> seen(64);
  runtime().svm_read(seen.data(), ids.get(), 64 * 4);
  for (std::uint32_t g = 0; g < 64; ++g) CHECK(seen[g] == g * 1024);  // consumers see each CE
  dispatch_free("free_only", ch, table, first.begin, 100, 96, 128);  // the laggards finish
  CHECK(ch.deallocate() == 68);  // 96..163: the channel is empty again
  CHECK(ch.counters().data_head == 192);  // realigned past slot 35's group
  CHECK(ch.counters().data_tail == 192);
  CHECK(static_cast<std::int64_t>(ch.counters().data_free) == 128);
}

TEST_CASE("Channel: a drained channel gives back its whole capacity even mid-group") {
  // All 40 CEs done, the tail inside a group: without realignment the 24 slots after the tail
  // would wait for allocations, and a request for the whole channel could never be granted.
  ChannelTable table(runtime());
  Channel ch(table, {.name = "drain", .ce_bytes = 4, .capacity = 64, .done_group = 64});
  auto r = ch.talloc(40);
  REQUIRE(r.has_value());
  ch.enq(std::move(*r));
  table.refresh();
  const auto ready = ch.ready();
  ch.mark_dispatched(ready.count);
  dispatch_free("free_only", ch, table, ready.begin, 40, 0, 64);
  CHECK(ch.deallocate() == 40);
  table.refresh();
  CHECK(ch.talloc(64).has_value());
}

TEST_CASE("Channel: a work-group asking for more than max_reservation is refused") {
  ChannelTable table(runtime());
  Channel ch(table, {.name = "cap", .ce_bytes = 4, .capacity = 256, .done_group = 64, .max_reservation = 16});
  const auto p = run_probe(ch, std::vector<cl_uint>(64, 1), 64, true);
  CHECK(std::all_of(p.got_null.begin(), p.got_null.end(), [](cl_uint v) { return v == 1; }));
  table.refresh();
  CHECK(ch.counters().oversized_requests == 1);
  CHECK(ch.counters().data_tail == 0);
  std::vector<cl_uint> want(64, 0);
  std::fill(want.begin(), want.begin() + 16, 1);
  const auto q = run_probe(ch, want, 64, true);
  CHECK(q.got_null[0] == 0);
  table.refresh();
  CHECK(ch.ready().count == 16);
}

TEST_CASE("Channel: all work-group requests of 0 succeed and reserve nothing") {
  ChannelTable table(runtime());
  Channel ch(table, {.name = "none", .ce_bytes = 4, .capacity = 64, .done_group = 64});
  const auto p = run_probe(ch, std::vector<cl_uint>(128, 0), 64, true);
  CHECK(std::all_of(p.got_null.begin(), p.got_null.end(), [](cl_uint v) { return v == 0; }));
  table.refresh();
  CHECK(ch.counters().data_tail == 0);
  CHECK(ch.counters().ctrl_published == 0);
  CHECK(ch.counters().failed_reservations == 0);
}

TEST_CASE("Channel: deallocation is in order even when CEs complete out of order") {
  ChannelTable table(runtime());
  Channel ch(table, {.name = "order", .ce_bytes = 4, .capacity = 64, .done_group = 4});
  auto r = ch.talloc(64);
  REQUIRE(r.has_value());
  for (std::uint32_t k = 0; k < 64; ++k) std::memcpy(r->ces.data() + k * 4, &k, 4);
  ch.enq(std::move(*r));
  table.refresh();
  CHECK_FALSE(ch.talloc(1).has_value());  // full
  table.refresh();
  const auto ready = ch.ready();
  REQUIRE(ready.count == 64);
  ch.mark_dispatched(64);

  // Every CE except those in done group 2 (data indices 8..11) completes first.
  SvmBuffer ids(runtime(), 64 * 4);
  dispatch_free("free_except", ch, table, ready.begin, 64, 8, 12, ids.get());
  std::vector<std::uint32_t> seen(64);
  runtime().svm_read(seen.data(), ids.get(), 64 * 4);
  for (std::uint32_t k = 0; k < 64; ++k) CHECK(seen[k] == k);  // host-enqueued in order

  CHECK(ch.deallocate() == 8);  // groups 0 and 1 only: group 2 holds back everything after it
  CHECK(ch.counters().data_head == 8);
  CHECK(ch.deallocate() == 0);
  table.refresh();
  CHECK(ch.talloc(8).has_value());
  table.refresh();
  CHECK_FALSE(ch.talloc(1).has_value());

  // The laggards finish: everything up to the new allocations is freed at once.
  dispatch_free("free_only", ch, table, ready.begin, 64, 8, 12);
  CHECK(ch.deallocate() == 56);
  CHECK(ch.counters().data_head == 64);
}

TEST_CASE("Channel: bad arguments give clear errors") {
  ChannelTable table(runtime(), 2);
  auto error_of = [&](ChannelConfig c) -> std::string {
    try {
      Channel ch(table, c);
    } catch (const ChannelError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(error_of({.name = "a", .ce_bytes = 4, .capacity = 0}).find("capacity must be at least one CE") != std::string::npos);
  CHECK(error_of({.name = "b", .ce_bytes = 0, .capacity = 64}).find("CE size must be at least 4 bytes") != std::string::npos);
  CHECK(error_of({.name = "c", .ce_bytes = 6, .capacity = 64}).find("multiple of 4") != std::string::npos);
  CHECK(error_of({.name = "d", .ce_bytes = 4, .capacity = 100, .done_group = 64}).find("not a multiple of the done-count group") != std::string::npos);
  CHECK(error_of({.name = "e", .ce_bytes = 4, .capacity = 64, .done_group = 0}).find("group size") != std::string::npos);

  CHECK_THROWS_WITH_AS(table.counters(7), doctest::Contains("unknown channel id 7"), ChannelError);
  {
    Channel gone(table, {.name = "gone", .ce_bytes = 4, .capacity = 64});
    CHECK(table.counters(gone.id()).capacity == 64);
  }
  CHECK_THROWS_WITH_AS(table.counters(0), doctest::Contains("destroyed"), ChannelError);

  Channel ok(table, {.name = "ok", .ce_bytes = 4, .capacity = 64});
  CHECK_THROWS_WITH_AS(Channel(table, {.name = "third", .ce_bytes = 4, .capacity = 64}),
                       doctest::Contains("table is full"), ChannelError);
  table.refresh();
  CHECK_THROWS_WITH_AS(ok.mark_dispatched(1), doctest::Contains("only 0 are ready"), ChannelError);
  CHECK_THROWS_AS(build_channel_program(runtime(), "", {.wg_size = 0}), ChannelError);
}

TEST_CASE("Channel table: the control area hands out aligned, disjoint, zeroed blocks beside the headers, until full") {
  constexpr std::uint32_t kSlots = 8;
  ChannelTable table(runtime(), kSlots);
  const auto base = reinterpret_cast<std::uintptr_t>(table.headers_allocation());
  const std::size_t headers = kSlots * sizeof(chanflow_channel);
  auto* a = static_cast<std::byte*>(table.allocate_control(100));
  auto* b = static_cast<std::byte*>(table.allocate_control(1000));
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  for (const std::byte* p : {a, b}) {
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    CHECK(at % 128 == 0);
    CHECK(at >= base + headers);  // after every header: a channel's counters never share a block
    CHECK(at + 1000 <= base + headers + 128 + ChannelTable::kControlBytes);
  }
  CHECK(b >= a + 128);  // a's 100 bytes, rounded up to the alignment
  std::vector<std::uint8_t> bytes(1000, 0xff);
  runtime().svm_read(bytes.data(), b, bytes.size());
  CHECK(std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t x) { return x == 0; }));
  // Only 128 + 1024 bytes are gone: the whole area no longer fits, its rest does.
  CHECK(table.allocate_control(ChannelTable::kControlBytes) == nullptr);
  CHECK(table.allocate_control(ChannelTable::kControlBytes - 128 - 1024) != nullptr);
  CHECK(table.allocate_control(1) == nullptr);
  // No allocation of its own: launches name the table's allocations as before.
  CHECK(table.svm_allocations().size() == 1);
}

}  // TEST_SUITE
