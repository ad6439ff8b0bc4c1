// The transport's proxy: batches per destination, non-blocking sends, probe-driven receives
// (rank_transport.hpp says what it promises).
#include "chanflow/rank_transport.hpp"
#include "mpi_job.hpp"

#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

namespace chanflow {

using detail::check;
using detail::join_mpi;
using detail::kTag;
using detail::mpi_error_text;

namespace {

using Clock = std::chrono::steady_clock;

/// A message (or a packed run of them) in a batch: its kind, size and count, then its bytes,
/// padded to 8.
struct Frame {
  std::uint32_t kind;
  std::uint32_t bytes;
  std::uint32_t count;
  std::uint32_t reserved;
};
constexpr std::size_t padded(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

}  // namespace

struct RankTransport::State {
  TransportOptions options;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int ranks = 1;

  // Shared with the callers, under mutex.
  struct Outbox {
    std::deque<std::vector<std::byte>> full;  // batches of batch_bytes, waiting for a send slot
    std::vector<std::byte> staging;           // the batch being filled
    Clock::time_point first{};                // when its first message came
  };
  mutable std::mutex mutex;
  std::condition_variable wake_proxy;
  /// Bumped by every call that gives the proxy something to do (a batch filled, a flush, a
  /// barrier, the close), so the proxy takes the mutex only when something changed or a partial
  /// batch's time is up.
  std::atomic<std::uint64_t> asked{0};
  std::condition_variable arrived;
  std::condition_variable room;  // a full batch left for MPI: a caller waiting to queue may go on
  std::vector<Outbox> outboxes;
  std::vector<RankMessage> inbox;
  bool flush_asked = false;
  bool closing = false;
  bool closed = false;
  std::uint64_t barriers_asked = 0;
  std::uint64_t barriers_done = 0;
  std::optional<RankError> failure;
  TransportStats stats;
  std::thread proxy;

  std::vector<std::uint32_t> in_flight_to;   // batches on their way, per destination
  std::vector<std::vector<std::byte>> spare;  // sent batches' buffers, for the next ones

  // The proxy's own.
  struct InFlight {
    int to;
    std::vector<std::byte> buffer;
  };
  std::vector<MPI_Request> requests;  // parallel to in_flight
  std::vector<InFlight> in_flight;
  std::vector<std::byte> received;
  std::vector<int> completed;         // MPI_Testsome's answer, kept between polls
  std::vector<MPI_Status> statuses;
  bool closing_seen = false;                  // closing and barriers_asked, as post_sends last saw them
  std::uint64_t barriers_seen = 0;
  Clock::time_point next_deadline{};          // the earliest partial batch's time, as post_sends saw it

  /// Full batches a destination may queue, in multiples of batches_in_flight, before a caller waits.
  static constexpr std::size_t kMostQueued = 4;
  /// Moves the batch being filled to the full ones, and gives the outbox a spare buffer (under mutex).
  void close_batch(Outbox& out) {
    out.full.push_back(std::move(out.staging));
    out.staging.clear();
    if (!spare.empty()) {
      out.staging = std::move(spare.back());
      spare.pop_back();
      out.staging.clear();
    }
  }
  void throw_if_failed() const {
    if (failure) throw *failure;
  }
  void run_proxy();
  bool post_sends();
  bool complete_sends();
  bool take_arrivals(bool dropping);
  void unpack(int from, std::span<const std::byte> batch, bool dropping);
};

RankTransport::RankTransport(TransportOptions options) : state_(std::make_unique<State>()) {
  join_mpi();
  State& s = *state_;
  s.options = options;
  if (s.options.batches_in_flight == 0) s.options.batches_in_flight = 1;
  check(MPI_Comm_dup(MPI_COMM_WORLD, &s.comm), -1, "MPI_Comm_dup");
  MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(s.comm, &s.rank);
  MPI_Comm_size(s.comm, &s.ranks);
  s.outboxes.resize(static_cast<std::size_t>(s.ranks));
  s.in_flight_to.assign(static_cast<std::size_t>(s.ranks), 0);
  s.proxy = std::thread([&s] { s.run_proxy(); });
}

RankTransport::~RankTransport() {
  try {
    close();
  } catch (...) {
    // A failed peer was reported to the calls that saw it; the proxy has stopped either way.
  }
}

int RankTransport::rank() const noexcept { return state_->rank; }
int RankTransport::ranks() const noexcept { return state_->ranks; }
const TransportOptions& RankTransport::options() const noexcept { return state_->options; }

void RankTransport::send(int to, std::uint32_t kind, std::span<const std::byte> bytes) {
  send_packed(to, kind, static_cast<std::uint32_t>(std::min<std::size_t>(bytes.size(), UINT32_MAX)), bytes);
}

void RankTransport::send_packed(int to, std::uint32_t kind, std::uint32_t size, std::span<const std::byte> bytes) {
  State& s = *state_;
  if (to < 0 || to >= s.ranks)
    throw RankError(-1, fmt::format("no such rank {}: the job has {} (0 to {})", to, s.ranks, s.ranks - 1));
  if (bytes.size() > std::size_t{INT32_MAX} - 64) throw RankError(to, "a message of 2 GiB or more");
  const std::uint32_t count = size == 0 ? 1 : static_cast<std::uint32_t>(bytes.size() / size);
  if (size == 0 ? !bytes.empty() : bytes.size() % size != 0)
    throw RankError(-1, fmt::format("{} bytes are not messages of {} bytes each", bytes.size(), size));
  std::unique_lock lock(s.mutex);
  s.throw_if_failed();
  if (s.closing) throw RankError(s.rank, "send after the transport was closed");
  s.stats.messages_sent += count;
  s.stats.bytes_sent += bytes.size();
  if (to == s.rank) {  // to itself: straight into the inbox
    s.inbox.push_back(RankMessage{to, kind, count, std::vector<std::byte>(bytes.begin(), bytes.end())});
    s.stats.messages_received += count;
    s.stats.bytes_received += bytes.size();
    s.arrived.notify_all();
    return;
  }
  // Into the destination's batch, which holds at most batch_bytes: a packed run that does not
  // fit is split at a message's edge, and a full batch waits whole for the proxy. (One message
  // larger than a batch goes in a batch of its own.)
  State::Outbox& out = s.outboxes[static_cast<std::size_t>(to)];
  const std::size_t message = size;
  std::uint32_t left = count;
  const std::byte* from = bytes.data();
  bool filled = false;
  bool started = false;
  while (left > 0) {
    const std::size_t used = out.staging.size() + sizeof(Frame);
    const std::size_t room = s.options.batch_bytes > used ? s.options.batch_bytes - used : 0;
    // (A run's bytes are padded to 8 after its last message.)
    std::uint32_t n = message == 0 ? left : static_cast<std::uint32_t>(std::min<std::size_t>(left, room > 7 ? (room - 7) / message : 0));
    if (n == 0 && !out.staging.empty()) {  // full: on to a new batch
      s.close_batch(out);
      filled = true;
      continue;
    }
    if (out.full.size() >= State::kMostQueued * s.options.batches_in_flight) {
      // The network is behind: wait for the proxy to hand a batch to MPI (memory stays bounded).
      s.asked.fetch_add(1, std::memory_order_release);
      s.wake_proxy.notify_one();
      s.room.wait(lock, [&] { return out.full.size() < State::kMostQueued * s.options.batches_in_flight || s.failure; });
      s.throw_if_failed();
    }
    n = std::max<std::uint32_t>(n, 1);
    if (out.staging.empty()) {
      out.first = Clock::now();
      started = true;
    }
    const std::size_t part = std::size_t{n} * message;
    if (out.staging.capacity() < s.options.batch_bytes) out.staging.reserve(s.options.batch_bytes + sizeof(Frame) + 8);
    const Frame frame{kind, static_cast<std::uint32_t>(part), n, 0};
    const auto* frame_bytes = reinterpret_cast<const std::byte*>(&frame);
    out.staging.insert(out.staging.end(), frame_bytes, frame_bytes + sizeof frame);
    out.staging.insert(out.staging.end(), from, from + part);
    out.staging.resize(out.staging.size() + padded(part) - part);
    from += part;
    left -= n;
    if (out.staging.size() >= s.options.batch_bytes) {
      s.close_batch(out);
      filled = true;
    }
  }
  if (started || filled) {  // a batch begun (its time runs) or filled: the proxy looks again
    s.asked.fetch_add(1, std::memory_order_release);
    if (filled) s.wake_proxy.notify_one();
  }
}

void RankTransport::flush() {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  s.throw_if_failed();
  s.flush_asked = true;
  s.asked.fetch_add(1, std::memory_order_release);
  s.wake_proxy.notify_one();
}

std::size_t RankTransport::receive(std::vector<RankMessage>& into) {
  State& s = *state_;
  std::lock_guard lock(s.mutex);
  s.throw_if_failed();
  const std::size_t n = s.inbox.size();
  std::move(s.inbox.begin(), s.inbox.end(), std::back_inserter(into));
  s.inbox.clear();
  return n;
}

bool RankTransport::wait(std::chrono::microseconds timeout) {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  s.arrived.wait_for(lock, timeout, [&] { return !s.inbox.empty() || s.failure || s.closed; });
  s.throw_if_failed();
  return !s.inbox.empty();
}

void RankTransport::barrier() {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  s.throw_if_failed();
  if (s.closing) throw RankError(s.rank, "barrier after the transport was closed");
  const std::uint64_t mine = ++s.barriers_asked;
  s.asked.fetch_add(1, std::memory_order_release);
  s.wake_proxy.notify_one();
  s.arrived.wait(lock, [&] { return s.barriers_done >= mine || s.failure || s.closed; });
  s.throw_if_failed();
}

TransportStats RankTransport::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

TransportStats RankTransport::close() {
  State& s = *state_;
  {
    std::lock_guard lock(s.mutex);
    if (!s.closing) {
      s.closing = true;
      s.asked.fetch_add(1, std::memory_order_release);
      s.wake_proxy.notify_one();
    }
  }
  if (s.proxy.joinable()) s.proxy.join();
  if (s.comm != MPI_COMM_NULL) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && !s.failure) MPI_Comm_free(&s.comm);
    s.comm = MPI_COMM_NULL;
  }
  std::lock_guard lock(s.mutex);
  s.throw_if_failed();
  return s.stats;
}

void RankTransport::State::run_proxy() {
  try {
    constexpr auto kPollFor = std::chrono::microseconds(200);
    constexpr auto kFirstNap = std::chrono::microseconds(20);
    constexpr auto kLongestNap = std::chrono::microseconds(200);
    auto nap = kFirstNap;
    auto idle_since = Clock::now();
    std::optional<MPI_Request> barrier_request;
    std::uint64_t barriers_started = 0;
    std::optional<MPI_Request> close_request;
    std::uint64_t seen = ~std::uint64_t{0};
    bool completed = false;
    for (;;) {
      // The callers' side, under the mutex, only when something changed there, a send slot
      // came free, or a partial batch's time is up.
      const std::uint64_t now_asked = asked.load(std::memory_order_acquire);
      bool busy = false;
      if (now_asked != seen || completed || Clock::now() >= next_deadline) {
        seen = now_asked;
        busy = post_sends();
      }
      completed = complete_sends();
      busy |= completed;
      busy |= take_arrivals(close_request.has_value());
      const bool closing_now = closing_seen;
      if (!barrier_request && barriers_seen > barriers_started) {
        barrier_request.emplace();
        check(MPI_Ibarrier(comm, &*barrier_request), -1, "MPI_Ibarrier");
        ++barriers_started;
      }
      if (barrier_request) {
        int done = 0;
        check(MPI_Test(&*barrier_request, &done, MPI_STATUS_IGNORE), -1, "MPI_Test (barrier)");
        if (done) {
          barrier_request.reset();
          std::lock_guard lock(mutex);
          ++barriers_done;
          arrived.notify_all();
          busy = true;
        }
      }
      if (closing_now && !close_request && !barrier_request && in_flight.empty()) {
        bool empty = true;
        {
          std::lock_guard lock(mutex);
          for (const Outbox& out : outboxes) empty = empty && out.staging.empty() && out.full.empty();
        }
        if (empty) {  // every batch sent and completed: wait for the others to be done too
          close_request.emplace();
          check(MPI_Ibarrier(comm, &*close_request), -1, "MPI_Ibarrier (close)");
        }
      }
      if (close_request) {
        int done = 0;
        check(MPI_Test(&*close_request, &done, MPI_STATUS_IGNORE), -1, "MPI_Test (close)");
        if (done) {
          take_arrivals(true);
          std::lock_guard lock(mutex);
          closed = true;
          arrived.notify_all();
          return;
        }
      }
      const auto now = Clock::now();
      if (busy || !in_flight.empty()) {  // sends on their way need MPI's progress: poll on
        if (busy) idle_since = now;
        nap = kFirstNap;
        if (!busy) std::this_thread::yield();
        continue;
      }
      // Nothing moved: poll on (yielding the core) for a while, since a peer's next batch or its
      // handshake usually follows soon; then sleep, longer each time, until a caller wakes the
      // proxy or a partial batch's time is up. MPI's progress needs the probes, so the naps stay
      // short (WIC: a waiting consumer should not burn a core, nor leave work waiting long).
      if (now - idle_since < kPollFor) {
        std::this_thread::yield();
        continue;
      }
      std::unique_lock lock(mutex);
      wake_proxy.wait_until(lock, std::min(now + nap, next_deadline),
                            [&] { return asked.load(std::memory_order_acquire) != seen; });
      stats.idle_ms += std::chrono::duration<double, std::milli>(Clock::now() - now).count();
      nap = std::min(nap * 2, kLongestNap);
    }
  } catch (const RankError& error) {
    std::lock_guard lock(mutex);
    failure = error;
    closed = true;
    arrived.notify_all();
    room.notify_all();
  }
}

bool RankTransport::State::post_sends() {
  struct Ready {
    int to;
    std::vector<std::byte> batch;
  };
  std::vector<Ready> ready;
  {
    std::lock_guard lock(mutex);
    const auto now = Clock::now();
    const bool all = flush_asked || closing;
    flush_asked = false;
    closing_seen = closing;
    barriers_seen = barriers_asked;
    next_deadline = Clock::time_point::max();
    for (int to = 0; to < ranks; ++to) {
      Outbox& out = outboxes[static_cast<std::size_t>(to)];
      std::uint32_t& flying = in_flight_to[static_cast<std::size_t>(to)];
      while (!out.full.empty() && flying < options.batches_in_flight) {
        ready.push_back(Ready{to, std::move(out.full.front())});
        out.full.pop_front();
        stats.batches_sent += 1;
        ++flying;
        room.notify_all();
      }
      if (out.staging.empty() || !out.full.empty() || flying >= options.batches_in_flight) continue;
      if (!all && now - out.first < options.flush_after) {
        next_deadline = std::min(next_deadline, out.first + options.flush_after);
        continue;
      }
      close_batch(out);  // a partial batch whose time is up, or flushed
      ready.push_back(Ready{to, std::move(out.full.front())});
      out.full.pop_front();
      stats.batches_sent += 1;
      stats.flushed_partial += 1;
      ++flying;
    }
  }
  for (Ready& r : ready) {
    in_flight.push_back(InFlight{r.to, std::move(r.batch)});
    requests.push_back(MPI_REQUEST_NULL);
    const std::vector<std::byte>& buffer = in_flight.back().buffer;
    check(MPI_Isend(buffer.data(), static_cast<int>(buffer.size()), MPI_BYTE, r.to, kTag, comm, &requests.back()), r.to,
          "MPI_Isend");
  }
  return !ready.empty();
}

bool RankTransport::State::complete_sends() {
  if (requests.empty()) return false;
  int count = 0;
  completed.resize(requests.size());
  statuses.resize(requests.size());
  const int rc = MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &count, completed.data(), statuses.data());
  if (rc == MPI_ERR_IN_STATUS)
    for (int k = 0; k < count; ++k)  // name the peer whose send failed
      if (const MPI_Status& st = statuses[static_cast<std::size_t>(k)]; st.MPI_ERROR != MPI_SUCCESS)
        throw RankError(in_flight[static_cast<std::size_t>(completed[static_cast<std::size_t>(k)])].to,
                        fmt::format("a send to it failed: {}", mpi_error_text(st.MPI_ERROR)));
  check(rc, -1, "MPI_Testsome");
  if (count == MPI_UNDEFINED || count == 0) return false;
  // MPI_Testsome set each completed request to MPI_REQUEST_NULL: their buffers go back.
  std::size_t kept = 0;
  std::lock_guard lock(mutex);  // (in_flight_to and the spare buffers are the callers' too)
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (requests[i] == MPI_REQUEST_NULL) {
      in_flight_to[static_cast<std::size_t>(in_flight[i].to)] -= 1;
      spare.push_back(std::move(in_flight[i].buffer));
      continue;
    }
    if (kept != i) {  // (a vector moved onto itself would free the buffer MPI is sending from)
      requests[kept] = requests[i];
      in_flight[kept] = std::move(in_flight[i]);
    }
    ++kept;
  }
  requests.resize(kept);
  in_flight.resize(kept);
  return true;
}

bool RankTransport::State::take_arrivals(bool dropping) {
  bool any = false;
  for (;;) {
    // Probe, then receive what was probed: only this thread receives on the transport's
    // communicator, so no other receive can match it in between.
    int found = 0;
    MPI_Status status;
    check(MPI_Iprobe(MPI_ANY_SOURCE, kTag, comm, &found, &status), -1, "MPI_Iprobe");
    if (!found) return any;
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    received.resize(static_cast<std::size_t>(bytes));
    check(MPI_Recv(received.data(), bytes, MPI_BYTE, status.MPI_SOURCE, kTag, comm, MPI_STATUS_IGNORE), status.MPI_SOURCE,
          "MPI_Recv");
    unpack(status.MPI_SOURCE, received, dropping);
    any = true;
  }
}

void RankTransport::State::unpack(int from, std::span<const std::byte> batch, bool dropping) {
  std::vector<RankMessage> messages;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  for (std::size_t at = 0; at < batch.size();) {
    Frame frame;
    if (batch.size() - at < sizeof frame) throw RankError(from, "a batch from it ends inside a message's frame");
    std::memcpy(&frame, batch.data() + at, sizeof frame);
    at += sizeof frame;
    if (batch.size() - at < frame.bytes) throw RankError(from, "a batch from it ends inside a message");
    if (frame.count == 0 || frame.bytes % frame.count != 0) throw RankError(from, "a batch from it holds a malformed frame");
    messages.push_back(RankMessage{from, frame.kind, frame.count,
                                   std::vector<std::byte>(batch.begin() + static_cast<std::ptrdiff_t>(at),
                                                          batch.begin() + static_cast<std::ptrdiff_t>(at + frame.bytes))});
    bytes += frame.bytes;
    count += frame.count;
    at += padded(frame.bytes);
  }
  std::lock_guard lock(mutex);
  stats.batches_received += 1;
  if (dropping) {
    stats.dropped_at_close += count;
    return;
  }
  stats.messages_received += count;
  stats.bytes_received += bytes;
  std::move(messages.begin(), messages.end(), std::back_inserter(inbox));
  arrived.notify_all();
}

}  // namespace chanflow
