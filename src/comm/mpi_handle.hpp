// comm's private view of MPI: the one header that includes <mpi.h>. Only comm's own sources (and
// the MPI tests that check comm's ownership rules) include it; every other module reaches MPI
// through comm/communicator.hpp and comm/h5_mpio.hpp, which name no MPI type.
#pragma once
#include <mpi.h>

#include "comm/communicator.hpp"

namespace fedsilo {

struct Communicator::MpiHandle {
  MPI_Comm comm = MPI_COMM_NULL;
};

namespace detail {

struct MpiAccess {
  // The duplicated communicator of `c`; MPI_COMM_NULL in single mode.
  static MPI_Comm comm(const Communicator& c) { return c.handle_ ? c.handle_->comm : MPI_COMM_NULL; }
};

// Throws RuntimeError naming `what` and MPI's message unless rc is MPI_SUCCESS.
void checkMpi(int rc, const char* what);

// Throws RuntimeError when MPI_Init_thread granted `provided` but fedsilo needs `required`.
void requireThreadLevel(int provided, int required);

// How many MPI communicators Communicator objects own right now (each duplicated by world() and
// freed once by its owner's destructor).
int ownedCommunicators();

// Whether the datatype and reduction op of the exact sums exist. They are created by the first exact
// reduction and freed when MPI_Finalize starts (an attribute of MPI_COMM_SELF, MPI-3.1 section
// 8.7.1), whoever calls MPI_Finalize.
bool exactSumTypeCommitted();

}  // namespace detail
}  // namespace fedsilo
