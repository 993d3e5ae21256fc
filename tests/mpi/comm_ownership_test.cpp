// comm's ownership rules at 1, 2 and 4 ranks: a Communicator owns one duplicate of MPI_COMM_WORLD and
// frees it exactly once (move-only); the exact sums' datatype and op are created on first use; the
// MPI-IO property lists that comm makes for parallel HDF5; the thread-level check of MpiEnvironment.
// (That the datatype and op are freed by MPI_Finalize is test_mpi_finalize.)
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "comm/h5_mpio.hpp"
#include "comm/mpi_handle.hpp"

using namespace fedsilo;

namespace {

int compare(MPI_Comm a, MPI_Comm b) {
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(a, b, &result);
  return result;
}

}  // namespace

TEST(CommOwnership, WorldIsADuplicateOwnedOnce) {
  const int before = detail::ownedCommunicators();
  {
    Communicator a = Communicator::world();
    Communicator b = Communicator::world();
    EXPECT_EQ(detail::ownedCommunicators(), before + 2);
    const MPI_Comm ha = detail::MpiAccess::comm(a), hb = detail::MpiAccess::comm(b);
    // Same group and order as MPI_COMM_WORLD, separate message contexts.
    EXPECT_EQ(compare(ha, MPI_COMM_WORLD), MPI_CONGRUENT);
    EXPECT_EQ(compare(ha, hb), MPI_CONGRUENT);
    int rank = -1, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    EXPECT_EQ(a.rank(), rank);
    EXPECT_EQ(a.size(), size);

    // Moving hands over the same communicator (no second duplicate) and leaves a single-rank shell.
    Communicator c(std::move(a));
    EXPECT_EQ(detail::ownedCommunicators(), before + 2);
    EXPECT_EQ(compare(detail::MpiAccess::comm(c), ha), MPI_IDENT);
    EXPECT_EQ(c.rank(), rank);
    EXPECT_TRUE(a.isSingle());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    EXPECT_EQ(a.rank(), 0);
    EXPECT_EQ(a.size(), 1);
    EXPECT_EQ(detail::MpiAccess::comm(a), MPI_COMM_NULL);

    // Move-assignment frees the communicator the target held: one fewer is owned.
    c = std::move(b);
    EXPECT_EQ(detail::ownedCommunicators(), before + 1);
    EXPECT_EQ(compare(detail::MpiAccess::comm(c), hb), MPI_IDENT);
    c.barrier();  // the communicator c now holds is alive

    // Self-move keeps it.
    Communicator& alias = c;
    c = std::move(alias);
    EXPECT_EQ(detail::ownedCommunicators(), before + 1);
    EXPECT_FALSE(c.isSingle());
  }
  EXPECT_EQ(detail::ownedCommunicators(), before);
  // single() owns nothing.
  Communicator one = Communicator::single();
  EXPECT_EQ(detail::ownedCommunicators(), before);
  EXPECT_EQ(detail::MpiAccess::comm(one), MPI_COMM_NULL);
}

TEST(CommOwnership, ExactSumTypeIsCommittedByTheFirstExactReduction) {
  Communicator comm = Communicator::world();
  ExactSum sum(2);
  sum.add(0, 1.0);
  comm.allreduceExact(sum);
  EXPECT_TRUE(detail::exactSumTypeCommitted());
  EXPECT_EQ(sum.value(0), comm.size() * 1.0);
}

TEST(CommOwnership, ThreadLevelBelowTheRequiredOneIsAClearError) {
  EXPECT_NO_THROW(detail::requireThreadLevel(MPI_THREAD_FUNNELED, MPI_THREAD_FUNNELED));
  EXPECT_NO_THROW(detail::requireThreadLevel(MPI_THREAD_MULTIPLE, MPI_THREAD_FUNNELED));
  try {
    detail::requireThreadLevel(MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED);
    FAIL() << "MPI_THREAD_SINGLE accepted where MPI_THREAD_FUNNELED is needed";
  } catch (const RuntimeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("provides MPI_THREAD_SINGLE"), std::string::npos) << what;
    EXPECT_NE(what.find("needs MPI_THREAD_FUNNELED"), std::string::npos) << what;
  }
}

TEST(CommOwnership, Hdf5PropertyListsUseMpiIoOnTheCommunicator) {
  Communicator comm = Communicator::world();
  const h5::Handle fapl = h5::parallelFileAccess(comm);
  EXPECT_EQ(H5Pget_driver(fapl), H5FD_MPIO);
  MPI_Comm fileComm = MPI_COMM_NULL;
  MPI_Info info = MPI_INFO_NULL;
  ASSERT_GE(H5Pget_fapl_mpio(fapl, &fileComm, &info), 0);
  EXPECT_EQ(compare(fileComm, detail::MpiAccess::comm(comm)), MPI_CONGRUENT);  // HDF5 keeps its own copy
  MPI_Comm_free(&fileComm);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  hbool_t collectiveReads = false, collectiveWrites = false;
  H5Pget_all_coll_metadata_ops(fapl, &collectiveReads);
  H5Pget_coll_metadata_write(fapl, &collectiveWrites);
  EXPECT_TRUE(collectiveReads);
  EXPECT_TRUE(collectiveWrites);
  const h5::Handle dxpl = h5::collectiveTransfer(comm);
  H5FD_mpio_xfer_t mode = H5FD_MPIO_INDEPENDENT;
  ASSERT_GE(H5Pget_dxpl_mpio(dxpl, &mode), 0);
  EXPECT_EQ(mode, H5FD_MPIO_COLLECTIVE);

  // Single-rank mode: no MPI-IO at all.
  const Communicator one = Communicator::single();
  EXPECT_NE(H5Pget_driver(h5::parallelFileAccess(one)), H5FD_MPIO);
  ASSERT_GE(H5Pget_dxpl_mpio(h5::collectiveTransfer(one), &mode), 0);
  EXPECT_EQ(mode, H5FD_MPIO_INDEPENDENT);  // HDF5's default transfer
}
