// The MPI side of parallel HDF5. A file shared by every rank goes through HDF5's MPI-IO driver, which
// needs the MPI communicator; comm makes those property lists so that io opens shared files without
// seeing any MPI type (io includes no <mpi.h>).
#pragma once
#include "comm/communicator.hpp"
#include "core/h5_handle.hpp"

namespace fedsilo::h5 {

// File-access property list for a file shared by every rank of `comm`: MPI-IO on comm's duplicated
// communicator, with collective metadata reads and writes (every rank makes every metadata call).
// Single-rank mode: the default (POSIX) driver.
Handle parallelFileAccess(const Communicator& comm);

// Dataset-transfer property list for reads and writes in which every rank of `comm` takes part:
// collective MPI-IO (single-rank mode: the default transfer).
Handle collectiveTransfer(const Communicator& comm);

}  // namespace fedsilo::h5
