// Messages between the ranks of an MPI job, packed (DESIGN.md decision 17): the one place
// chanflow calls MPI. A caller hands the transport many small messages (a CE bound for another
// rank, a result going home); a proxy thread of the rank's own packs those bound for one rank
// into a batch and ships it with one non-blocking send when the batch is full or its first
// message has waited long enough, and unpacks what arrives into an inbox. The network sees few
// large messages although the program makes many small ones (Gravel, the thesis' chapter 5).
//
// Only the proxy thread sends and receives, so the callers' threads never block in MPI (MPI is
// initialised with MPI_THREAD_MULTIPLE: transports of one process, and mpi_send_rate, may call it
// from threads of their own). Messages from one rank to another arrive in the order
// sent. A peer that fails ends the transport's calls with a RankError naming it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace chanflow {

/// An error of the MPI job, naming the rank it concerns (-1: the job as a whole).
class RankError : public std::runtime_error {
 public:
  RankError(int rank, const std::string& what);
  int rank() const noexcept { return rank_; }

 private:
  int rank_;
};

/// Whether this process was started as a rank of an MPI job (mpirun's environment: Open MPI's
/// OMPI_COMM_WORLD_SIZE, or PMI_SIZE / PMIX_RANK of other launchers).
bool launched_by_mpi();

/// This process's rank in the MPI job (joining it first: MPI initialised once a process).
int job_rank();

struct TransportOptions {
  /// A destination's batch is sent once it holds this many bytes (a message larger than this
  /// goes as a batch of its own).
  std::size_t batch_bytes = std::size_t{64} << 10;
  /// ...or once its first message has waited this long (a partial batch flushed).
  std::chrono::microseconds flush_after{100};
  /// Batches on their way to one rank at once (their buffers are reused once sent); four times
  /// as many full ones may wait for a slot before a send to that rank waits for one to leave.
  std::uint32_t batches_in_flight = 8;
};

/// What one rank's transport moved. Sizes count the callers' bytes, not the framing.
struct TransportStats {
  std::uint64_t messages_sent = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t batches_sent = 0;
  std::uint64_t flushed_partial = 0;  ///< batches sent before they were full (their time was up, or flush())
  std::uint64_t messages_received = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t batches_received = 0;
  std::uint64_t dropped_at_close = 0; ///< messages that arrived while the transport closed
  double idle_ms = 0;                 ///< the proxy's time asleep with nothing to do
};

/// One message as it arrived: its sender, the caller's kind, its bytes; or, from send_packed,
/// `count` messages of one size, packed in order (bytes.size() / count each).
struct RankMessage {
  int from = 0;
  std::uint32_t kind = 0;
  std::uint32_t count = 1;
  std::vector<std::byte> bytes;
};

class RankTransport {
 public:
  /// Joins the MPI job (initialising MPI once a process, finalized at its exit) on a
  /// communicator of its own (every rank makes its transports in the same order), and starts
  /// the proxy. Throws RankError if MPI cannot give the thread level the proxy needs.
  explicit RankTransport(TransportOptions options = {});
  /// Closes the transport unless close() did.
  ~RankTransport();
  RankTransport(const RankTransport&) = delete;
  RankTransport& operator=(const RankTransport&) = delete;

  int rank() const noexcept;
  int ranks() const noexcept;
  const TransportOptions& options() const noexcept;

  /// Queues one message of `bytes` for rank `to` (itself included: delivered without MPI) and
  /// returns (waiting only while `to` has its most full batches queued); the proxy packs it with
  /// others for `to`. Throws RankError for a rank the job does
  /// not have, or once a peer has failed.
  void send(int to, std::uint32_t kind, std::span<const std::byte> bytes);
  /// Queues `bytes.size() / size` messages of `size` bytes each (CEs of one channel, taken from a
  /// device at once), packed as they are: they travel in one frame and arrive as one RankMessage
  /// with that count. Throws RankError as send does, and for a size that does not divide them.
  void send_packed(int to, std::uint32_t kind, std::uint32_t size, std::span<const std::byte> bytes);
  /// Asks the proxy to send every batch now, full or not.
  void flush();
  /// Appends every message received so far to `into`; returns how many. Throws RankError once a
  /// peer has failed.
  std::size_t receive(std::vector<RankMessage>& into);
  /// Blocks until a message is waiting or `timeout` passes; true when one is.
  bool wait(std::chrono::microseconds timeout);
  /// Blocks until every rank has called barrier (as many times), its messages sent before the
  /// call still on their way: for set-up and measurements, not a run's end.
  void barrier();

  /// The statistics so far.
  TransportStats stats() const;
  /// Sends what is queued, waits for its sends to complete, then for every rank to close its
  /// transport; what arrives meanwhile is dropped (a run ends only once nothing is on its way:
  /// its caller's termination detection) and counted in dropped_at_close. Returns the final
  /// statistics; later calls but stats() throw. Throws RankError if a peer failed.
  TransportStats close();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Open MPI's own rate between rank 0 and rank 1 (the others wait): rank 0 sends `total_bytes`
/// in messages of `message_bytes` with up to `window` sends in flight, rank 1 receives them into
/// posted receives; returns the bytes a second, on rank 0 (the same figure on rank 1, 0 on
/// others). Called by every rank of the job, while none of its transports is alive. What a transport's batches
/// are measured against.
double mpi_send_rate(std::size_t total_bytes, std::size_t message_bytes, std::uint32_t window);

}  // namespace chanflow
