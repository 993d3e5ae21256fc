#include "comm/h5_mpio.hpp"

#include "comm/mpi_handle.hpp"

namespace fedsilo::h5 {

Handle parallelFileAccess(const Communicator& comm) {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate(fapl)");
  if (comm.isSingle()) return fapl;
  // HDF5 duplicates the communicator for the file: the file may outlive `comm`.
  check(H5Pset_fapl_mpio(fapl, detail::MpiAccess::comm(comm), MPI_INFO_NULL), "H5Pset_fapl_mpio");
  check(H5Pset_all_coll_metadata_ops(fapl, true), "H5Pset_all_coll_metadata_ops");
  check(H5Pset_coll_metadata_write(fapl, true), "H5Pset_coll_metadata_write");
  return fapl;
}

Handle collectiveTransfer(const Communicator& comm) {
  Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose, "H5Pcreate(dxpl)");
  if (!comm.isSingle()) check(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
  return dxpl;
}

}  // namespace fedsilo::h5
