// The only module that talks to MPI. Everything above it sees typed collectives on a Communicator,
// plus a single-rank mode (no MPI at all) for unit tests; <mpi.h> is included by comm's sources only
// (comm/mpi_handle.hpp), and the MPI side of parallel HDF5 is in comm/h5_mpio.hpp.
#pragma once
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/exact_sum.hpp"

namespace fedsilo {

// RAII MPI_Init_thread / MPI_Finalize (deal.II's MPI_InitFinalize). Asks for MPI_THREAD_FUNNELED
// (only the main thread calls MPI) and throws RuntimeError, after finalising, when the library
// provides less. Also puts MPI_ERRORS_RETURN on the world communicator so that MPI failures surface
// as exceptions instead of aborting.
class MpiEnvironment {
 public:
  MpiEnvironment(int& argc, char**& argv);
  ~MpiEnvironment();
  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;
  static bool initialized();
  // Last resort for an exception that escaped every coordinated region: aborts all ranks.
  [[noreturn]] static void abort(int code);
};

// A rank of another process failed inside a coordinated region; this rank exits quietly with `code`.
// Always agreed: only coordinated() throws it, after every rank learnt of the failure.
class PeerFailure : public Error {
 public:
  explicit PeerFailure(ExitCode code) : Error(code, "another rank failed") { markAgreed(); }
};

namespace detail {
struct MpiAccess;  // comm/mpi_handle.hpp: the MPI_Comm behind a Communicator, for comm's own sources
}

class Communicator {
 public:
  // A duplicate of MPI_COMM_WORLD (our messages never mix with a library's), freed by the destructor.
  static Communicator world();
  // No MPI: rank 0 of 1; every collective is a local copy. For unit tests.
  static Communicator single();

  // Move-only: exactly one Communicator owns a duplicated MPI communicator and frees it once. A
  // moved-from Communicator is like single().
  Communicator(Communicator&& o) noexcept;
  Communicator& operator=(Communicator&& o) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool isRoot() const { return rank_ == 0; }
  bool isSingle() const { return handle_ == nullptr; }

  void barrier() const;

  // Typed collectives, instantiated for char, int8, uint8, int32, int64, uint64, float, double.
  template <typename T>
  void bcast(T* data, std::size_t n, int root = 0) const;
  template <typename T>
  void bcast(std::vector<T>& v, int root = 0) const;  // resizes on non-roots
  void bcast(std::string& s, int root = 0) const;
  // out[i] = sum over ranks of in[i], valid on root (double and int64 only: sums stay exact or in double).
  template <typename T>
  void reduceSum(const T* in, T* out, std::size_t n, int root = 0) const;
  template <typename T>
  T allreduceSum(T v) const;
  template <typename T>
  T allreduceMax(T v) const;
  template <typename T>
  T allreduceMin(T v) const;
  // Order-independent exact sums (see core/exact_sum.hpp): acc becomes the global sum on root
  // (allreduceExact: on every rank).
  void reduceExact(ExactSum& acc, int root = 0) const;
  void allreduceExact(ExactSum& acc) const;
  // Concatenation of every rank's vector in rank order, on root (empty elsewhere). counts, when given,
  // receives the per-rank lengths on root.
  template <typename T>
  std::vector<T> gatherv(const std::vector<T>& mine, int root = 0, std::vector<int>* counts = nullptr) const;
  template <typename T>
  std::vector<T> allgatherv(const std::vector<T>& mine) const;
  // Personalised all-to-all: toRank[d] (one vector per rank) goes to rank d; returns what every rank
  // sent this one, concatenated in rank order. counts, when given, receives the per-source lengths.
  template <typename T>
  std::vector<T> alltoallv(const std::vector<std::vector<T>>& toRank, std::vector<int>* counts = nullptr) const;

 private:
  friend struct detail::MpiAccess;
  struct MpiHandle;  // holds the duplicated MPI_Comm (defined in communicator.cpp)
  struct FreeHandle {
    void operator()(MpiHandle* h) const noexcept;  // MPI_Comm_free (while MPI is up), then delete
  };
  Communicator(MpiHandle* handle, int rank, int size) : handle_(handle), rank_(rank), size_(size) {}

  std::unique_ptr<MpiHandle, FreeHandle> handle_;  // nullptr in single mode
  int rank_ = 0, size_ = 1;
};

// Whether every rank knows about this failure and is unwinding too: it came out of coordinated()
// (the reporting rank's own error, marked agreed, or PeerFailure on the others). Then the program may
// close its collective files and finalise MPI normally. Otherwise only this rank failed, the others may
// be blocked in a collective call, and main() must abort them all. The exception_ptr form is for
// catch (...) blocks (std::current_exception()).
bool agreedFailure(const std::exception& e);
bool agreedFailure(const std::exception_ptr& e);

namespace detail {
// Rethrows `failure` marked as agreed: a fedsilo::Error itself; any other exception as a RuntimeError
// with the same message (so the mark has a place to live and main() prints the same line).
[[noreturn]] void rethrowAgreed(const std::exception_ptr& failure);
}  // namespace detail

// Runs f() on every rank and agrees on the outcome (GROMACS coordinateExceptionHandling): if any
// rank threw, every rank throws an agreed failure. The lowest failing rank rethrows its own error
// (so the message is printed once); every other rank throws PeerFailure carrying the highest exit
// code seen. Every rank must call it the same number of times: put one around each phase that can
// fail locally.
template <typename F>
void coordinated(const Communicator& comm, F&& f) {
  int code = 0;
  std::exception_ptr failure;
  try {
    f();
  } catch (const PeerFailure&) {
    throw;  // already agreed
  } catch (const Error& e) {
    code = static_cast<int>(e.code());
    if (code == 0) code = 1;
    failure = std::current_exception();
  } catch (...) {
    code = 1;
    failure = std::current_exception();
  }
  const int global = comm.allreduceMax(code);
  if (global == 0) return;
  const int reporter = comm.allreduceMin(failure ? comm.rank() : comm.size());
  if (failure && reporter == comm.rank()) detail::rethrowAgreed(failure);
  throw PeerFailure(static_cast<ExitCode>(global));
}

}  // namespace fedsilo
