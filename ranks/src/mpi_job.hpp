// What the transport and the rate share about the MPI job (internal to ranks/): MPI joined once a
// process, and an MPI call's failure as a RankError.
#pragma once

#include <string>

namespace chanflow::detail {

/// MPI once a process, with every thread free to call it (MPI_THREAD_MULTIPLE); finalized at the
/// process's exit. Throws RankError where MPI cannot give that.
void join_mpi();
/// MPI's words for an error code.
std::string mpi_error_text(int code);
/// Throws RankError naming `peer` (-1: none in particular) unless `code` is MPI_SUCCESS.
void check(int code, int peer, const char* call);
/// The tag of every message of a transport (on a communicator of its own) and of the rate's.
inline constexpr int kTag = 1;

}  // namespace chanflow::detail
