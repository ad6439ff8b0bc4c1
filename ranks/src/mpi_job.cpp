// The MPI job: joining it, its errors as RankErrors naming a rank, and Open MPI's own rate between
// two ranks (what the transport is measured against).
#include "chanflow/rank_transport.hpp"
#include "mpi_job.hpp"

#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <vector>

namespace chanflow {

RankError::RankError(int rank, const std::string& what)
    : std::runtime_error(rank < 0 ? what : fmt::format("rank {}: {}", rank, what)), rank_(rank) {}

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (const char* value = std::getenv(name); value && *value) return true;
  return false;
}

namespace detail {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return fmt::format("MPI error {}", code);
  return std::string(text, static_cast<std::size_t>(length));
}

void check(int code, int peer, const char* call) {
  if (code != MPI_SUCCESS) throw RankError(peer, fmt::format("{} failed: {}", call, mpi_error_text(code)));
}

void join_mpi() {
  static std::once_flag once;
  static std::exception_ptr failed;
  std::call_once(once, [] {
    int ready = 0;
    MPI_Initialized(&ready);
    int provided = 0;
    if (!ready) {
      if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        failed = std::make_exception_ptr(RankError(-1, "MPI_Init_thread failed"));
        return;
      }
      std::atexit([] {
        int done = 0;
        MPI_Finalized(&done);
        if (!done) MPI_Finalize();
      });
    } else {
      MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_MULTIPLE)
      failed = std::make_exception_ptr(RankError(-1, fmt::format(
          "this MPI gives thread level {} where chanflow's transport needs MPI_THREAD_MULTIPLE ({})", provided,
          static_cast<int>(MPI_THREAD_MULTIPLE))));
  });
  if (failed) std::rethrow_exception(failed);
}


}  // namespace detail

using detail::check;
using detail::join_mpi;
using detail::kTag;
using Clock = std::chrono::steady_clock;

int job_rank() {
  join_mpi();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}


double mpi_send_rate(std::size_t total_bytes, std::size_t message_bytes, std::uint32_t window) {
  join_mpi();
  MPI_Comm comm;
  check(MPI_Comm_dup(MPI_COMM_WORLD, &comm), -1, "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  if (ranks < 2) {
    MPI_Comm_free(&comm);
    throw RankError(-1, "a send rate between ranks needs a job of two ranks or more (mpirun -np 2)");
  }
  message_bytes = std::max<std::size_t>(message_bytes, 1);
  window = std::max<std::uint32_t>(window, 1);
  const std::size_t messages = std::max<std::size_t>(total_bytes / message_bytes, 1);
  std::vector<std::byte> buffer(message_bytes * window, std::byte{1});
  std::vector<MPI_Request> requests(window, MPI_REQUEST_NULL);
  const int size = static_cast<int>(message_bytes);
  check(MPI_Barrier(comm), -1, "MPI_Barrier");
  const auto start = Clock::now();
  if (rank == 0 || rank == 1) {
    const int peer = 1 - rank;
    // Both sides keep `window` operations posted, reusing their slot once it completes.
    std::size_t posted = 0;
    for (std::size_t done = 0; done < messages;) {
      while (posted < messages && posted - done < window) {
        std::byte* slot = buffer.data() + (posted % window) * message_bytes;
        MPI_Request& request = requests[posted % window];
        check(rank == 0 ? MPI_Isend(slot, size, MPI_BYTE, peer, kTag, comm, &request)
                        : MPI_Irecv(slot, size, MPI_BYTE, peer, kTag, comm, &request),
              peer, rank == 0 ? "MPI_Isend" : "MPI_Irecv");
        ++posted;
      }
      check(MPI_Wait(&requests[done % window], MPI_STATUS_IGNORE), peer, "MPI_Wait");
      ++done;
    }
    // The receiver's acknowledgement ends the sender's clock.
    char ack = 0;
    check(rank == 1 ? MPI_Send(&ack, 1, MPI_CHAR, 0, kTag + 1, comm)
                    : MPI_Recv(&ack, 1, MPI_CHAR, 1, kTag + 1, comm, MPI_STATUS_IGNORE),
          peer, "the rate's acknowledgement");
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  check(MPI_Barrier(comm), -1, "MPI_Barrier");
  MPI_Comm_free(&comm);
  return rank <= 1 ? static_cast<double>(messages * message_bytes) / seconds : 0;
}

}  // namespace chanflow
