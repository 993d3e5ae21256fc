#include "comm/reused_buffers.hpp"

#include <cstddef>

#include "comm/mpi_handle.hpp"
#include "core/error.hpp"

namespace fedsilo {

void allgathervInto(const Communicator& comm, const std::vector<double>& mine, std::vector<double>& all) {
  if (comm.isSingle()) {
    all.assign(mine.begin(), mine.end());
    return;
  }
  FEDSILO_ASSERT(mine.size() < (std::size_t(1) << 31), "allgathervInto: piece too large");
  const MPI_Comm c = detail::MpiAccess::comm(comm);
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(comm.size())), displ(counts.size());
  detail::checkMpi(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, c), "MPI_Allgather");
  long long total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displ[r] = static_cast<int>(total);
    total += counts[r];
  }
  FEDSILO_ASSERT(total < (1LL << 31), "allgathervInto: total too large");
  all.resize(static_cast<std::size_t>(total));
  detail::checkMpi(MPI_Allgatherv(mine.data(), n, MPI_DOUBLE, all.data(), counts.data(), displ.data(), MPI_DOUBLE, c),
                   "MPI_Allgatherv");
}

}  // namespace fedsilo
