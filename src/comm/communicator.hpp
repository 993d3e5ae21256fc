// The only module that talks to MPI. Everything above it sees typed collectives on a Communicator,
// plus a single-rank mode (no MPI at all) for unit tests.
#pragma once
#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/exact_sum.hpp"

namespace fedsilo {

// RAII MPI_Init / MPI_Finalize (deal.II's MPI_InitFinalize). Also puts MPI_ERRORS_RETURN on the
// world communicator so that MPI failures surface as exceptions instead of aborting.
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
class PeerFailure : public Error {
 public:
  explicit PeerFailure(ExitCode code) : Error(code, "another rank failed") {}
};

class Communicator {
 public:
  // A duplicate of MPI_COMM_WORLD (our messages never mix with a library's).
  static Communicator world();
  // No MPI: rank 0 of 1; every collective is a local copy. For unit tests.
  static Communicator single();

  Communicator(Communicator&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)), rank_(o.rank_), size_(o.size_) {}
  Communicator& operator=(Communicator&& o) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool isRoot() const { return rank_ == 0; }
  bool isSingle() const { return handle_ == nullptr; }
  // The MPI_Comm (as an opaque pointer to it) for parallel HDF5; nullptr in single mode.
  const void* mpiCommPtr() const { return handle_; }

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

 private:
  Communicator(void* handle, int rank, int size) : handle_(handle), rank_(rank), size_(size) {}
  void* handle_ = nullptr;  // MPI_Comm* owned (duplicated), nullptr in single mode
  int rank_ = 0, size_ = 1;
};

// Runs f() on every rank and agrees on the outcome (GROMACS coordinateExceptionHandling): if any
// rank threw, every rank throws — the failing rank rethrows its own error (so it alone prints it),
// the others throw PeerFailure carrying the highest exit code. Every rank must call it the same
// number of times: put one around each phase that can fail locally.
// True while the exception being handled came out of coordinated(): every rank knows about the
// failure and is unwinding too, so the program can finalise MPI and exit cleanly. Otherwise (an
// exception outside any coordinated region) main() must abort all ranks to avoid a hang.
bool& errorWasAgreed();

// Runs f() on every rank and agrees on the outcome (GROMACS coordinateExceptionHandling): if any
// rank threw, every rank throws. The lowest failing rank rethrows its own error (so the message is
// printed once); every other rank throws PeerFailure carrying the highest exit code seen. Every rank
// must call it the same number of times: put one around each phase that can fail locally.
template <typename F>
void coordinated(const Communicator& comm, F&& f) {
  int code = 0;
  std::exception_ptr ep;
  try {
    f();
  } catch (const PeerFailure&) {
    throw;  // already agreed
  } catch (const Error& e) {
    code = static_cast<int>(e.code());
    if (code == 0) code = 1;
    ep = std::current_exception();
  } catch (...) {
    code = 1;
    ep = std::current_exception();
  }
  const int global = comm.allreduceMax(code);
  if (global == 0) return;
  const int reporter = comm.allreduceMin(ep ? comm.rank() : comm.size());
  errorWasAgreed() = true;
  if (ep && reporter == comm.rank()) std::rethrow_exception(ep);
  throw PeerFailure(static_cast<ExitCode>(global));
}

}  // namespace fedsilo
