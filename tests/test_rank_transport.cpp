// The transport between the ranks of an MPI job (ranks/), run by ctest under mpirun with two and
// three ranks (tests/CMakeLists.txt). Every rank runs every case, in the same order: each case
// makes its transports collectively. doctest's main is this binary's own (DOCTEST_CONFIG_IMPLEMENT
// with the default main): a rank's failure fails mpirun.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "chanflow/rank_transport.hpp"
#include "chanflow/remote_channel.hpp"

#include <chrono>
#include <cstdint>
#include <algorithm>
#include <map>
#include <span>
#include <string>
#include <vector>

using namespace chanflow;
using namespace std::chrono_literals;

namespace {

/// The bytes of message `seq` from `from` to `to`: its size varies from 0 to 299, its bytes name it.
std::vector<std::byte> message_bytes(int from, int to, std::uint32_t seq) {
  std::vector<std::byte> bytes((seq * 37u + static_cast<std::uint32_t>(from) * 11u) % 300u);
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<std::byte>((static_cast<std::size_t>(from) * 131 + static_cast<std::size_t>(to) * 17 + seq * 7 + i) & 0xff);
  return bytes;
}

/// Receives until `want` messages came from each rank, or 60 s pass.
std::vector<RankMessage> receive_all(RankTransport& transport, const std::vector<std::uint32_t>& want) {
  std::vector<RankMessage> got;
  std::vector<std::uint32_t> count(want.size(), 0);
  const auto until = std::chrono::steady_clock::now() + 60s;
  auto missing = [&] {
    for (std::size_t r = 0; r < want.size(); ++r)
      if (count[r] < want[r]) return true;
    return false;
  };
  while (missing() && std::chrono::steady_clock::now() < until) {
    transport.wait(10ms);
    const std::size_t before = got.size();
    transport.receive(got);
    for (std::size_t i = before; i < got.size(); ++i) count[static_cast<std::size_t>(got[i].from)] += 1;
  }
  return got;
}

}  // namespace

TEST_CASE("every message to every rank arrives once, in the order sent, with its kind and bytes") {
  TransportOptions options;
  options.batch_bytes = 4096;  // many batches of many messages
  RankTransport transport(options);
  const int me = transport.rank();
  const int ranks = transport.ranks();
  constexpr std::uint32_t kEach = 2000;
  for (std::uint32_t seq = 0; seq < kEach; ++seq)
    for (int to = 0; to < ranks; ++to) transport.send(to, seq % 5, message_bytes(me, to, seq));
  transport.flush();
  const std::vector<RankMessage> got = receive_all(transport, std::vector<std::uint32_t>(static_cast<std::size_t>(ranks), kEach));
  REQUIRE(got.size() == static_cast<std::size_t>(ranks) * kEach);
  std::map<int, std::uint32_t> next;  // the sequence number expected next from each rank
  for (const RankMessage& m : got) {
    const std::uint32_t seq = next[m.from]++;
    CHECK(m.kind == seq % 5);
    CHECK(m.bytes == message_bytes(m.from, me, seq));
  }
  transport.barrier();
  const TransportStats stats = transport.close();
  CHECK(stats.messages_sent == static_cast<std::uint64_t>(ranks) * kEach);
  CHECK(stats.messages_received == static_cast<std::uint64_t>(ranks) * kEach);
  CHECK(stats.dropped_at_close == 0);
  if (ranks > 1) {
    // Packed: each batch to another rank held many messages (4 KiB of 8-308-byte frames).
    CHECK(stats.batches_sent > 0);
    CHECK(stats.batches_sent * 8 < static_cast<std::uint64_t>(ranks - 1) * kEach);
    CHECK(stats.batches_received > 0);
  }
}

TEST_CASE("a partial batch is sent once its first message has waited its time, with no flush") {
  TransportOptions options;
  options.batch_bytes = std::size_t{1} << 20;  // never full here
  options.flush_after = 2ms;
  RankTransport transport(options);
  const int me = transport.rank();
  const int ranks = transport.ranks();
  const int to = (me + 1) % ranks;
  const std::vector<std::byte> one(24, std::byte{7});
  transport.send(to, 3, one);
  std::vector<std::uint32_t> want(static_cast<std::size_t>(ranks), 0);
  want[static_cast<std::size_t>((me + ranks - 1) % ranks)] = 1;
  const std::vector<RankMessage> got = receive_all(transport, want);
  REQUIRE(got.size() == 1);
  CHECK(got[0].kind == 3);
  CHECK(got[0].bytes == one);
  const TransportStats stats = transport.close();
  if (ranks > 1) CHECK(stats.flushed_partial >= 1);
}

TEST_CASE("a message larger than a batch goes whole, and empty messages arrive") {
  TransportOptions options;
  options.batch_bytes = 256;
  RankTransport transport(options);
  const int me = transport.rank();
  const int ranks = transport.ranks();
  const int to = (me + 1) % ranks;
  std::vector<std::byte> large(100000);
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = static_cast<std::byte>((i * 13 + static_cast<std::size_t>(me)) & 0xff);
  transport.send(to, 1, {});
  transport.send(to, 2, large);
  transport.send(to, 3, {});
  transport.flush();
  const int from = (me + ranks - 1) % ranks;
  std::vector<std::uint32_t> want(static_cast<std::size_t>(ranks), 0);
  want[static_cast<std::size_t>(from)] = 3;
  const std::vector<RankMessage> got = receive_all(transport, want);
  REQUIRE(got.size() == 3);
  CHECK(got[0].bytes.empty());
  CHECK(got[1].bytes.size() == large.size());
  for (std::size_t i = 0; i < got[1].bytes.size(); ++i)
    if (got[1].bytes[i] != static_cast<std::byte>((i * 13 + static_cast<std::size_t>(from)) & 0xff)) {
      FAIL("byte ", i, " of the large message differs");
      break;
    }
  CHECK(got[2].kind == 3);
  transport.close();
}

TEST_CASE("packed runs of messages are split at batch edges and arrive whole, in order") {
  TransportOptions options;
  options.batch_bytes = 1000;  // a run of 300 CEs of 24 bytes spans several batches
  RankTransport transport(options);
  const int me = transport.rank();
  const int ranks = transport.ranks();
  const int to = (me + 1) % ranks;
  const int from = (me + ranks - 1) % ranks;
  constexpr std::uint32_t kSize = 24, kRuns = 50, kPerRun = 300;
  auto ce = [](int sender, std::uint32_t i, std::size_t byte) {
    return static_cast<std::byte>((static_cast<std::uint32_t>(sender) * 7 + i * 3 + static_cast<std::uint32_t>(byte)) & 0xff);
  };
  std::vector<std::byte> run(std::size_t{kSize} * kPerRun);
  for (std::uint32_t r = 0; r < kRuns; ++r) {
    for (std::uint32_t k = 0; k < kPerRun; ++k)
      for (std::size_t b = 0; b < kSize; ++b) run[k * kSize + b] = ce(me, r * kPerRun + k, b);
    transport.send_packed(to, 9, kSize, run);
  }
  CHECK_THROWS_AS(transport.send_packed(to, 9, kSize, std::span(run.data(), kSize + 1)), RankError);  // not whole CEs
  transport.flush();
  std::vector<RankMessage> got;
  std::uint32_t seen = 0;
  const auto until = std::chrono::steady_clock::now() + 60s;
  while (seen < kRuns * kPerRun && std::chrono::steady_clock::now() < until) {
    transport.wait(10ms);
    got.clear();
    transport.receive(got);
    for (const RankMessage& m : got) {
      REQUIRE(m.from == from);
      CHECK(m.kind == 9);
      REQUIRE(m.bytes.size() == std::size_t{m.count} * kSize);
      for (std::uint32_t k = 0; k < m.count; ++k, ++seen)
        for (std::size_t b = 0; b < kSize; ++b)
          if (m.bytes[k * kSize + b] != ce(from, seen, b)) FAIL("CE ", seen, " from rank ", from, " differs at byte ", b);
    }
  }
  CHECK(seen == kRuns * kPerRun);
  const TransportStats stats = transport.close();
  CHECK(stats.messages_sent == kRuns * kPerRun);
  if (ranks > 1) CHECK(stats.batches_sent >= kRuns * kPerRun * kSize / 1000);  // at most a batch's bytes each
}

TEST_CASE("a rank the job does not have is refused, naming it") {
  RankTransport transport;
  const int ranks = transport.ranks();
  CHECK_THROWS_WITH_AS(transport.send(ranks, 0, {}), doctest::Contains(("no such rank " + std::to_string(ranks)).c_str()), RankError);
  CHECK_THROWS_WITH_AS(transport.send(-1, 0, {}), doctest::Contains("no such rank -1"), RankError);
  transport.close();
  CHECK_THROWS_AS(transport.send(0, 0, {}), RankError);  // closed
}

namespace {

// A kernel that enqueues CEs naming themselves (a number, then a word derived from it), and one
// that deqs a ready range, checks each and counts its number.
constexpr const char* kRemoteKernels = R"CL(
__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1)))
void produce(__global chanflow_channel* ch, uint base, uint n, __global uint* failed) {
  __local chanflow_wg_scratch wg;
  const uint g = (uint)get_global_id(0);
  const uint want = g < n ? 1u : 0u;
  chanflow_ticket t;
  __global uint* ce = (__global uint*)talloc(ch, want, &t, &wg);
  if (want) {
    if (ce) { ce[0] = base + g; ce[1] = (base + g) * 2654435761u; ce[2] = 7u; }
    else atomic_inc(failed);
  }
  enq(ch, &t, &wg);
}
__kernel __attribute__((reqd_work_group_size(CHANFLOW_WG_SIZE, 1, 1)))
void consume(__global chanflow_channel* ch, ulong begin, uint count, uint total, __global uint* seen, __global uint* bad) {
  __local chanflow_wg_scratch wg;
  const uint g = (uint)get_global_id(0);
  const int active = g < count;
  if (active) {
    __global const uint* ce = (__global const uint*)deq(ch, begin + g);
    if (ce[0] < total && ce[1] == ce[0] * 2654435761u && ce[2] == 7u) atomic_inc(&seen[ce[0]]);
    else atomic_inc(bad);
  }
  tfree(ch, begin + g, active, &wg);
}
)CL";

}  // namespace

TEST_CASE("CEs a kernel enqueues into an outbound channel are consumed by the next rank's kernel, each once, intact") {
  constexpr std::uint32_t kWg = 64, kTotal = 10000, kLaunch = 4000;
  const Runtime rt;
  const cl::Program program = build_channel_program(rt, kRemoteKernels, {.wg_size = kWg});
  RankTransport transport;
  const int me = transport.rank();
  const int ranks = transport.ranks();
  ChannelTable table(rt, 4);
  Channel out(table, {.name = "outbound", .ce_bytes = 12, .capacity = 4096, .done_group = 64});
  // Smaller than what arrives: CEs wait in the inbound end until the consumer frees room.
  Channel in(table, {.name = "inbound", .ce_bytes = 12, .capacity = 1024, .done_group = 64});
  OutboundChannel outbound(out, transport, (me + 1) % ranks, 5);
  InboundChannel inbound(in, 5);
  SvmBuffer failed(rt, 4), seen(rt, kTotal * 4), bad(rt, 4);
  rt.svm_fill_zero(failed.get(), 4);
  rt.svm_fill_zero(seen.get(), kTotal * 4);
  rt.svm_fill_zero(bad.get(), 4);
  auto produce = rt.kernel(program, "produce");
  auto consume = rt.kernel(program, "consume");
  set_indirect_svm(produce, out.svm_allocations());
  set_indirect_svm(consume, in.svm_allocations());
  for (std::uint32_t base = 0; base < kTotal; base += kLaunch) {
    const std::uint32_t n = std::min(kLaunch, kTotal - base);
    set_arg_svm(produce, 0, out.device_ptr());
    set_arg(produce, 1, cl_uint{base});
    set_arg(produce, 2, cl_uint{n});
    set_arg_svm(produce, 3, failed.get());
    launch(rt, produce, (n + kWg - 1) / kWg * kWg, kWg);
    rt.finish();
    CHECK(outbound.ship() == n);
  }
  transport.flush();
  std::vector<RankMessage> got;
  std::uint64_t consumed = 0;
  const auto until = std::chrono::steady_clock::now() + 60s;
  while (consumed < kTotal && std::chrono::steady_clock::now() < until) {
    if (inbound.waiting() == 0) transport.wait(10ms);
    transport.receive(got);
    inbound.land(got);
    got.clear();
    table.refresh();
    const Channel::Range ready = in.ready();
    if (ready.count == 0) continue;
    const auto n = static_cast<std::uint32_t>(ready.count);
    CHECK(n <= 1024);
    set_arg_svm(consume, 0, in.device_ptr());
    set_arg(consume, 1, cl_ulong{ready.begin});
    set_arg(consume, 2, cl_uint{n});
    set_arg(consume, 3, cl_uint{kTotal});
    set_arg_svm(consume, 4, seen.get());
    set_arg_svm(consume, 5, bad.get());
    in.mark_dispatched(n);
    launch(rt, consume, (n + kWg - 1) / kWg * kWg, kWg);
    rt.finish();
    in.deallocate();
    consumed += n;
  }
  CHECK(consumed == kTotal);
  CHECK(inbound.landed() == kTotal);
  std::uint32_t refused = 0, wrong = 0;
  rt.svm_read(&refused, failed.get(), 4);
  rt.svm_read(&wrong, bad.get(), 4);
  CHECK(refused == 0);
  CHECK(wrong == 0);
  std::vector<std::uint32_t> counts(kTotal);
  rt.svm_read(counts.data(), seen.get(), kTotal * 4);
  CHECK(std::count(counts.begin(), counts.end(), 1u) == kTotal);
  transport.barrier();
  const TransportStats stats = transport.close();
  CHECK(stats.messages_sent == kTotal);
  if (ranks > 1) CHECK(stats.batches_sent < kTotal / 100);  // packed: never a message per CE on the network
}
