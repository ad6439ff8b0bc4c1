// `chanflow bench messages` (message_bench.hpp).
#include "bench/message_bench.hpp"

#include "chanflow/rank_transport.hpp"
#include "chanflow/remote_channel.hpp"
#include "chanflow_cli_sources.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <span>
#include <stdexcept>
#include <vector>

namespace chanflow::bench {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Rank 1 tells rank 0 whether everything arrived right; this message, received, stops rank 0's clock.
void send_verdict(RankTransport& transport, bool right) {
  const std::byte verdict{static_cast<unsigned char>(right ? 1 : 0)};
  transport.send(0, 1, std::span(&verdict, 1));
  transport.flush();
}

bool await_verdict(RankTransport& transport) {
  std::vector<RankMessage> ack;
  while (ack.empty()) {
    transport.wait(std::chrono::milliseconds(10));
    transport.receive(ack);
  }
  return ack[0].bytes.size() == 1 && ack[0].bytes[0] == std::byte{1};
}

/// The run's rate (bytes a second from `start`), after every rank is done with the transport.
std::pair<double, bool> finish(RankTransport& transport, Clock::time_point start, std::uint64_t bytes, bool right) {
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  transport.barrier();
  transport.close();
  return {static_cast<double>(bytes) / seconds, right};
}

/// One run through a transport: rank 0 sends `count` messages of `size` bytes to rank 1 (each
/// carrying its sequence number), `per_send` at a time as a device's leader hands them over
/// (send_packed; 1: a call per message), rank 1 receives and checks them and acknowledges the
/// last with its verdict; returns the bytes a second on ranks 0 and 1 (both see the acknowledged
/// time), and whether every message arrived once, in order, intact.
std::pair<double, bool> transport_run(std::uint32_t size, std::uint64_t count, std::uint32_t per_send,
                                      std::size_t batch_bytes) {
  TransportOptions options;
  options.batch_bytes = batch_bytes;
  RankTransport transport(options);
  const int me = transport.rank();
  transport.barrier();
  const auto start = Clock::now();
  bool right = true;
  const std::size_t seq_bytes = std::min<std::size_t>(sizeof(std::uint64_t), size);
  if (me == 0) {
    std::vector<std::byte> run(std::size_t{size} * per_send, std::byte{0x5a});
    for (std::uint64_t i = 0; i < count;) {
      const std::uint64_t n = std::min<std::uint64_t>(per_send, count - i);
      for (std::uint64_t k = 0; k < n; ++k, ++i) std::memcpy(run.data() + k * size, &i, seq_bytes);
      if (per_send == 1)
        transport.send(1, 0, std::span(run.data(), size));
      else
        transport.send_packed(1, 0, size, std::span(run.data(), n * size));
    }
    transport.flush();
    right = await_verdict(transport);
  } else if (me == 1) {
    std::vector<RankMessage> got;
    std::uint64_t seen = 0;
    const std::uint64_t mask = seq_bytes == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * seq_bytes)) - 1;
    while (seen < count) {
      transport.wait(std::chrono::milliseconds(10));
      got.clear();
      transport.receive(got);
      for (const RankMessage& m : got) {
        right = right && m.bytes.size() == std::size_t{size} * m.count;
        for (std::uint32_t k = 0; k < m.count && right; ++k, ++seen) {
          std::uint64_t seq = 0;
          std::memcpy(&seq, m.bytes.data() + std::size_t{k} * size, seq_bytes);
          right = seq == (seen & mask);
        }
      }
      if (!right) break;
    }
    send_verdict(transport, right);
  }
  return finish(transport, start, count * size, right);
}

/// One run through channels: rank 0's kernel enqueues `count` CEs of `size` bytes into its
/// outbound channel, `chunk` a launch, and after each launch the host ships the ready ones to rank
/// 1 (OutboundChannel::ship: a packed run per send, the launch's slots reclaimed); rank 1 lands
/// what arrives in its inbound channel and launches its consuming kernel over the ready CEs,
/// which checks each and counts its number. Rank 1 acknowledges once every CE was consumed, with
/// its verdict (every number seen once, every word right). Returns the bytes a second on ranks
/// 0 and 1, and the verdict.
std::pair<double, bool> channel_run(const Runtime& rt, const cl::Program& program, std::uint32_t size,
                                    std::uint64_t count, std::uint32_t chunk, std::size_t batch_bytes) {
  constexpr std::uint32_t kWg = 64;
  TransportOptions options;
  options.batch_bytes = batch_bytes;
  RankTransport transport(options);
  const int me = transport.rank();
  ChannelTable table(rt, 4);
  const std::uint32_t capacity = (2 * chunk + 63) / 64 * 64;
  Channel channel(table, {.name = me == 0 ? "outbound" : "inbound", .ce_bytes = size, .capacity = capacity, .done_group = 64});
  SvmBuffer failed(rt, 4);
  rt.svm_fill_zero(failed.get(), 4);
  bool right = true;
  transport.barrier();
  const auto start = Clock::now();
  if (me == 0) {
    OutboundChannel outbound(channel, transport, 1, 0);
    auto produce = rt.kernel(program, "produce_remote");
    set_indirect_svm(produce, channel.svm_allocations());
    set_arg_svm(produce, 0, channel.device_ptr());
    set_arg_svm(produce, 3, failed.get());
    for (std::uint64_t base = 0; base < count; base += chunk) {
      const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(chunk, count - base));
      set_arg(produce, 1, cl_ulong{base});
      set_arg(produce, 2, cl_uint{n});
      launch(rt, produce, (n + kWg - 1) / kWg * kWg, kWg);
      rt.finish();
      outbound.ship();
    }
    transport.flush();
    std::uint32_t refused = 0;
    rt.svm_read(&refused, failed.get(), 4);
    right = await_verdict(transport) && refused == 0 && outbound.shipped() == count;
  } else if (me == 1) {
    InboundChannel inbound(channel, 0);
    SvmBuffer seen(rt, count * 4), bad(rt, 4);
    rt.svm_fill_zero(seen.get(), count * 4);
    rt.svm_fill_zero(bad.get(), 4);
    auto consume = rt.kernel(program, "consume_remote");
    set_indirect_svm(consume, channel.svm_allocations());
    set_arg_svm(consume, 0, channel.device_ptr());
    set_arg(consume, 3, cl_ulong{count});
    set_arg_svm(consume, 4, seen.get());
    set_arg_svm(consume, 5, bad.get());
    std::vector<RankMessage> got;
    std::uint64_t consumed = 0;
    while (consumed < count) {
      if (inbound.waiting() == 0) transport.wait(std::chrono::milliseconds(10));
      transport.receive(got);
      inbound.land(got);
      got.clear();
      table.refresh();
      const Channel::Range ready = channel.ready();
      if (ready.count == 0) continue;
      const auto n = static_cast<std::uint32_t>(ready.count);
      set_arg(consume, 1, cl_ulong{ready.begin});
      set_arg(consume, 2, cl_uint{n});
      channel.mark_dispatched(n);
      launch(rt, consume, (n + kWg - 1) / kWg * kWg, kWg);
      rt.finish();
      channel.deallocate();
      consumed += n;
    }
    std::uint32_t wrong = 0;
    rt.svm_read(&wrong, bad.get(), 4);
    std::vector<std::uint32_t> counts(count);
    rt.svm_read(counts.data(), seen.get(), count * 4);
    right = wrong == 0 && std::all_of(counts.begin(), counts.end(), [](std::uint32_t c) { return c == 1; });
    send_verdict(transport, right);
  }
  return finish(transport, start, count * size, right);
}

}  // namespace

nlohmann::json run_message_bench(const Runtime& rt, const MessageBenchOptions& options, std::FILE* table) {
  if (!launched_by_mpi())
    throw RankError(-1, "chanflow bench messages runs between ranks: start it with mpirun -np 2 chanflow bench messages");
  for (std::uint32_t size : options.ce_bytes)
    if (size < 8 || size % 8 != 0)
      throw std::invalid_argument(fmt::format("--ce-bytes {}: a CE of this bench is a multiple of 8 bytes", size));
  const cl::Program program = build_channel_program(rt, cli_cl::message_bench_cl(), {.wg_size = 64});
  nlohmann::json rows = nlohmann::json::array();
  bool first = true;
  for (std::uint32_t size : options.ce_bytes) {
    const std::uint64_t count = std::max<std::uint64_t>((options.total_mib << 20) / size, 1);
    const std::uint64_t bytes = count * size;
    // Open MPI's own rate for the same bytes in messages of one CE (one message per CE).
    std::vector<double> per_ce;
    for (unsigned r = 0; r < options.reps; ++r) per_ce.push_back(mpi_send_rate(bytes, size, options.window));
    for (std::uint32_t kib : options.batch_kib) {
      const std::size_t batch = std::size_t{kib} << 10;
      std::vector<double> through, packed, raw;
      bool right = true;
      channel_run(rt, program, size, std::min<std::uint64_t>(count, options.chunk), options.chunk, batch);  // warm-up
      for (unsigned r = 0; r < options.reps; ++r) {
        raw.push_back(mpi_send_rate(bytes, batch, options.window));
        auto [rate, ok] = transport_run(size, count, options.per_send, batch);
        packed.push_back(rate);
        auto [device_rate, device_ok] = channel_run(rt, program, size, count, options.chunk, batch);
        through.push_back(device_rate);
        right = right && ok && device_ok;
      }
      if (job_rank() != 0) continue;
      const double c = median(through), t = median(packed), m = median(raw), one = median(per_ce);
      if (first) {
        fmt::print(table,
                   "rank 0's kernel to rank 1's through channels ({} CEs a launch), and the transport alone ({} a call); "
                   "medians of {} runs\n",
                   options.chunk, options.per_send, options.reps);
        fmt::print(table, "{:>8} {:>9} {:>6} {:>13} {:>14} {:>14} {:>13} {:>8} {:>8} {:>7}\n", "CE bytes", "batch KiB", "MiB",
                   "channels MB/s", "transport MB/s", "MPI batch MB/s", "MPI a CE MB/s", "÷ batch", "× a CE", "correct");
        first = false;
      }
      fmt::print(table, "{:>8} {:>9} {:>6} {:>13.1f} {:>14.1f} {:>14.1f} {:>13.1f} {:>8.2f} {:>8.1f} {:>7}\n", size, kib,
                 bytes >> 20, c / 1e6, t / 1e6, m / 1e6, one / 1e6, c / m, c / one, right ? "yes" : "NO");
      rows.push_back({{"ce_bytes", size}, {"batch_bytes", batch}, {"bytes", bytes}, {"messages", count},
                      {"chunk", options.chunk}, {"per_send", options.per_send},
                      {"channels_bytes_per_s", c}, {"transport_bytes_per_s", t}, {"mpi_batch_bytes_per_s", m},
                      {"mpi_per_ce_bytes_per_s", one}, {"channels_runs", through}, {"transport_runs", packed},
                      {"mpi_batch_runs", raw}, {"mpi_per_ce_runs", per_ce}, {"correct", right}});
    }
  }
  return rows;
}

}  // namespace chanflow::bench
