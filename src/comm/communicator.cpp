#include "comm/communicator.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "comm/mpi_handle.hpp"
#include "comm/reused_buffers.hpp"

namespace fedsilo {

namespace {

using detail::checkMpi;

template <typename T>
MPI_Datatype mpiType();
template <> MPI_Datatype mpiType<char>() { return MPI_CHAR; }
template <> MPI_Datatype mpiType<std::int8_t>() { return MPI_INT8_T; }
template <> MPI_Datatype mpiType<std::uint8_t>() { return MPI_UINT8_T; }
template <> MPI_Datatype mpiType<std::int32_t>() { return MPI_INT32_T; }
template <> MPI_Datatype mpiType<std::int64_t>() { return MPI_INT64_T; }
template <> MPI_Datatype mpiType<std::uint64_t>() { return MPI_UINT64_T; }
template <> MPI_Datatype mpiType<float>() { return MPI_FLOAT; }
template <> MPI_Datatype mpiType<double>() { return MPI_DOUBLE; }

const char* threadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "an unknown thread level";
  }
}

int& ownedCount() {
  static int n = 0;
  return n;
}

// MPI reduction of Fixed128 values (pairs of 64-bit words): exact, so commutative and associative;
// modulo 2^128 (Fixed128::add), so partial sums of secure aggregation's masked words may wrap.
void fixedSum(void* in, void* inout, int* len, MPI_Datatype*) {
  const Fixed128* a = static_cast<const Fixed128*>(in);
  Fixed128* b = static_cast<Fixed128*>(inout);
  for (int i = 0; i < *len; ++i) b[i].add(a[i]);
}

// The datatype and op of the exact sums: committed on first use, freed when MPI_Finalize deletes
// the attributes of MPI_COMM_SELF (MPI-3.1 section 8.7.1: that happens first, while every MPI call is
// still allowed). This holds under MpiEnvironment and under a test's own MPI_Init/MPI_Finalize alike.
struct ExactSumType {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};

ExactSumType& exactSumState() {
  static ExactSumType t;
  return t;
}

int freeExactSumType(MPI_Comm, int, void*, void*) {
  ExactSumType& t = exactSumState();
  const int opRc = t.op != MPI_OP_NULL ? MPI_Op_free(&t.op) : MPI_SUCCESS;
  const int typeRc = t.type != MPI_DATATYPE_NULL ? MPI_Type_free(&t.type) : MPI_SUCCESS;
  return opRc != MPI_SUCCESS ? opRc : typeRc;
}

const ExactSumType& exactSumType() {
  ExactSumType& t = exactSumState();
  if (t.op != MPI_OP_NULL) return t;
  static_assert(sizeof(Fixed128) == 16, "Fixed128 must be two packed 64-bit words");
  checkMpi(MPI_Type_contiguous(2, MPI_UINT64_T, &t.type), "MPI_Type_contiguous");
  checkMpi(MPI_Type_commit(&t.type), "MPI_Type_commit");
  checkMpi(MPI_Op_create(&fixedSum, 1, &t.op), "MPI_Op_create");
  int key = MPI_KEYVAL_INVALID;
  checkMpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, &freeExactSumType, &key, nullptr), "MPI_Comm_create_keyval");
  checkMpi(MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr), "MPI_Comm_set_attr");
  // The attribute outlives its key: freeing the key now only forbids setting it again.
  checkMpi(MPI_Comm_free_keyval(&key), "MPI_Comm_free_keyval");
  return t;
}

MPI_Comm commOf(const Communicator& c) { return detail::MpiAccess::comm(c); }

// Calls call(offset, count) over [0, n) in pieces of at most `chunk` elements: MPI counts are int.
template <typename Call>
void inChunks(std::size_t n, std::size_t chunk, Call&& call) {
  for (std::size_t off = 0; off < n; off += chunk) call(off, static_cast<int>(std::min(chunk, n - off)));
}

// The one scalar allreduce behind allreduceSum, allreduceMax and allreduceMin.
template <typename T>
T allreduceValue(MPI_Comm comm, T v, MPI_Op op) {
  T out{};
  checkMpi(MPI_Allreduce(&v, &out, 1, mpiType<T>(), op, comm), "MPI_Allreduce");
  return out;
}

}  // namespace

namespace detail {

void checkMpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw RuntimeError(fmt("MPI error in ", what, ": ", std::string(msg, len)));
}

void requireThreadLevel(int provided, int required) {
  if (provided >= required) return;
  throw RuntimeError(fmt("MPI_Init_thread: the MPI library provides ", threadLevelName(provided), ", fedsilo needs ",
                         threadLevelName(required), " or higher (an MPI built with thread support)"));
}

int ownedCommunicators() { return ownedCount(); }

bool exactSumTypeCommitted() { return exactSumState().op != MPI_OP_NULL; }

void rethrowAgreed(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (Error& e) {
    e.markAgreed();
    throw;
  } catch (const std::exception& e) {
    RuntimeError agreed(e.what());
    agreed.markAgreed();
    throw agreed;
  } catch (...) {
    RuntimeError agreed("an exception of unknown type");
    agreed.markAgreed();
    throw agreed;
  }
}

}  // namespace detail

bool agreedFailure(const std::exception& e) {
  const auto* error = dynamic_cast<const Error*>(&e);
  return error != nullptr && error->agreed();
}

bool agreedFailure(const std::exception_ptr& e) {
  if (!e) return false;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return agreedFailure(x);
  } catch (...) {
    return false;
  }
}

MpiEnvironment::MpiEnvironment(int& argc, char**& argv) {
  const int required = MPI_THREAD_FUNNELED;  // only the main thread calls MPI
  int provided = MPI_THREAD_SINGLE;
  checkMpi(MPI_Init_thread(&argc, &argv, required, &provided), "MPI_Init_thread");
  try {
    detail::requireThreadLevel(provided, required);
  } catch (...) {
    MPI_Finalize();  // the destructor of a failed constructor does not run
    throw;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

MpiEnvironment::~MpiEnvironment() {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) MPI_Finalize();
}

bool MpiEnvironment::initialized() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

void MpiEnvironment::abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (initialized()) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void Communicator::FreeHandle::operator()(MpiHandle* h) const noexcept {
  // After MPI_Finalize a communicator cannot be freed any more (nor does it need to be).
  if (MpiEnvironment::initialized()) MPI_Comm_free(&h->comm);
  --ownedCount();
  delete h;
}

Communicator Communicator::world() {
  FEDSILO_ASSERT(MpiEnvironment::initialized(), "MPI is not initialised");
  MPI_Comm dup = MPI_COMM_NULL;
  checkMpi(MPI_Comm_dup(MPI_COMM_WORLD, &dup), "MPI_Comm_dup");
  ++ownedCount();
  Communicator c(new MpiHandle{dup}, 0, 1);  // owns dup from here on, even if a call below throws
  checkMpi(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  checkMpi(MPI_Comm_rank(dup, &c.rank_), "MPI_Comm_rank");
  checkMpi(MPI_Comm_size(dup, &c.size_), "MPI_Comm_size");
  return c;
}

Communicator Communicator::single() { return Communicator(nullptr, 0, 1); }

Communicator::Communicator(Communicator&& o) noexcept
    : handle_(std::move(o.handle_)), rank_(std::exchange(o.rank_, 0)), size_(std::exchange(o.size_, 1)) {}

Communicator& Communicator::operator=(Communicator&& o) noexcept {
  if (this != &o) {
    handle_ = std::move(o.handle_);  // frees the communicator this one held
    rank_ = std::exchange(o.rank_, 0);
    size_ = std::exchange(o.size_, 1);
  }
  return *this;
}

Communicator::~Communicator() = default;

void Communicator::barrier() const {
  if (handle_) checkMpi(MPI_Barrier(commOf(*this)), "MPI_Barrier");
}

template <typename T>
void Communicator::bcast(T* data, std::size_t n, int root) const {
  if (!handle_) return;
  inChunks(n, std::size_t(1) << 30, [&](std::size_t off, int count) {
    checkMpi(MPI_Bcast(data + off, count, mpiType<T>(), root, commOf(*this)), "MPI_Bcast");
  });
}

template <typename T>
void Communicator::bcast(std::vector<T>& v, int root) const {
  if (!handle_) return;
  std::int64_t n = static_cast<std::int64_t>(v.size());
  bcast(&n, 1, root);
  if (rank_ != root) v.resize(static_cast<std::size_t>(n));
  bcast(v.data(), v.size(), root);
}

void Communicator::bcast(std::string& s, int root) const {
  if (!handle_) return;
  std::vector<char> buf(s.begin(), s.end());
  bcast(buf, root);
  s.assign(buf.begin(), buf.end());
}

template <typename T>
void Communicator::reduceSum(const T* in, T* out, std::size_t n, int root) const {
  if (!handle_) {
    if (in != out) std::memcpy(out, in, n * sizeof(T));
    return;
  }
  inChunks(n, std::size_t(1) << 28, [&](std::size_t off, int count) {
    const void* src = in == out && rank_ == root ? MPI_IN_PLACE : static_cast<const void*>(in + off);
    checkMpi(MPI_Reduce(src, out + off, count, mpiType<T>(), MPI_SUM, root, commOf(*this)), "MPI_Reduce");
  });
}

template <typename T>
T Communicator::allreduceSum(T v) const {
  return handle_ ? allreduceValue(commOf(*this), v, MPI_SUM) : v;
}

template <typename T>
T Communicator::allreduceMax(T v) const {
  return handle_ ? allreduceValue(commOf(*this), v, MPI_MAX) : v;
}

template <typename T>
T Communicator::allreduceMin(T v) const {
  return handle_ ? allreduceValue(commOf(*this), v, MPI_MIN) : v;
}

void Communicator::reduceExact(ExactSum& acc, int root) const {
  if (!handle_ || acc.size() == 0) return;
  const ExactSumType& t = exactSumType();
  inChunks(acc.size(), std::size_t(1) << 26, [&](std::size_t off, int count) {
    void* buf = acc.data() + off;
    const void* src = rank_ == root ? MPI_IN_PLACE : buf;
    void* dst = rank_ == root ? buf : nullptr;
    checkMpi(MPI_Reduce(src, dst, count, t.type, t.op, root, commOf(*this)), "MPI_Reduce(exact)");
  });
}

void Communicator::allreduceExact(ExactSum& acc) const {
  if (!handle_ || acc.size() == 0) return;
  const ExactSumType& t = exactSumType();
  inChunks(acc.size(), std::size_t(1) << 26, [&](std::size_t off, int count) {
    checkMpi(MPI_Allreduce(MPI_IN_PLACE, acc.data() + off, count, t.type, t.op, commOf(*this)), "MPI_Allreduce(exact)");
  });
}

namespace {

// Each rank's offset in a concatenation of pieces of `counts` elements, into displ (as long as
// counts); returns the total, which MPI's int displacements must be able to hold.
std::size_t offsetsOf(const std::vector<int>& counts, std::vector<int>& displ, const char* what) {
  long long total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displ[r] = static_cast<int>(total);
    total += counts[r];
  }
  FEDSILO_ASSERT(total < (1LL << 31), what, " total too large");
  return static_cast<std::size_t>(total);
}

}  // namespace

template <typename T>
std::vector<T> Communicator::gatherv(const std::vector<T>& mine, int root, std::vector<int>* counts) const {
  if (!handle_) {
    if (counts) *counts = {static_cast<int>(mine.size())};
    return mine;
  }
  FEDSILO_ASSERT(mine.size() < (std::size_t(1) << 31), "gatherv piece too large");
  int n = static_cast<int>(mine.size());
  std::vector<int> cnt(rank_ == root ? size_ : 0), displ(rank_ == root ? size_ : 0);
  checkMpi(MPI_Gather(&n, 1, MPI_INT, cnt.data(), 1, MPI_INT, root, commOf(*this)), "MPI_Gather");
  std::vector<T> out;
  if (rank_ == root) {
    out.resize(offsetsOf(cnt, displ, "gatherv"));
  }
  checkMpi(MPI_Gatherv(mine.data(), n, mpiType<T>(), out.data(), cnt.data(), displ.data(), mpiType<T>(), root,
                       commOf(*this)),
           "MPI_Gatherv");
  if (counts) *counts = cnt;
  return out;
}

template <typename T>
void allgathervInto(const Communicator& comm, const std::vector<T>& mine, std::vector<T>& all) {
  if (comm.isSingle()) {
    all.assign(mine.begin(), mine.end());
    return;
  }
  FEDSILO_ASSERT(mine.size() < (std::size_t(1) << 31), "allgatherv piece too large");
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(comm.size())), displ(counts.size());
  checkMpi(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, commOf(comm)), "MPI_Allgather");
  all.resize(offsetsOf(counts, displ, "allgatherv"));
  checkMpi(MPI_Allgatherv(mine.data(), n, mpiType<T>(), all.data(), counts.data(), displ.data(), mpiType<T>(),
                          commOf(comm)),
           "MPI_Allgatherv");
}

template <typename T>
std::vector<T> Communicator::allgatherv(const std::vector<T>& mine) const {
  std::vector<T> all;
  allgathervInto(*this, mine, all);
  return all;
}

template <typename T>
void alltoallvInto(const Communicator& comm, const std::vector<std::vector<T>>& toRank, std::vector<T>& out,
                   std::vector<int>* counts) {
  const int size = comm.size(), rank = comm.rank();
  FEDSILO_ASSERT(toRank.size() == static_cast<std::size_t>(size), "alltoallv: ", toRank.size(), " pieces for ", size,
                 " ranks");
  if (comm.isSingle()) {
    if (counts) *counts = {static_cast<int>(toRank[0].size())};
    out.assign(toRank[0].begin(), toRank[0].end());
    return;
  }
  std::vector<int> sendCount(static_cast<std::size_t>(size)), recvCount(static_cast<std::size_t>(size));
  for (int d = 0; d < size; ++d) {
    FEDSILO_ASSERT(toRank[static_cast<std::size_t>(d)].size() < (std::size_t(1) << 31), "alltoallv piece too large");
    sendCount[static_cast<std::size_t>(d)] = static_cast<int>(toRank[static_cast<std::size_t>(d)].size());
  }
  checkMpi(MPI_Alltoall(sendCount.data(), 1, MPI_INT, recvCount.data(), 1, MPI_INT, commOf(comm)), "MPI_Alltoall");
  std::vector<std::size_t> displ(static_cast<std::size_t>(size) + 1, 0);
  for (std::size_t s = 0; s < recvCount.size(); ++s) displ[s + 1] = displ[s] + static_cast<std::size_t>(recvCount[s]);
  out.resize(displ.back());
  // Point to point from the callers' own vectors: no packed send buffer.
  std::vector<MPI_Request> requests;
  for (int s = 0; s < size; ++s)
    if (s != rank && recvCount[static_cast<std::size_t>(s)] > 0) {
      requests.emplace_back();
      checkMpi(MPI_Irecv(out.data() + displ[static_cast<std::size_t>(s)], recvCount[static_cast<std::size_t>(s)],
                         mpiType<T>(), s, 0, commOf(comm), &requests.back()),
               "MPI_Irecv");
    }
  for (int d = 0; d < size; ++d)
    if (d != rank && sendCount[static_cast<std::size_t>(d)] > 0) {
      requests.emplace_back();
      checkMpi(MPI_Isend(toRank[static_cast<std::size_t>(d)].data(), sendCount[static_cast<std::size_t>(d)],
                         mpiType<T>(), d, 0, commOf(comm), &requests.back()),
               "MPI_Isend");
    }
  const std::vector<T>& own = toRank[static_cast<std::size_t>(rank)];
  std::copy(own.begin(), own.end(), out.begin() + static_cast<std::ptrdiff_t>(displ[static_cast<std::size_t>(rank)]));
  checkMpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  if (counts) *counts = recvCount;
}

template <typename T>
std::vector<T> Communicator::alltoallv(const std::vector<std::vector<T>>& toRank, std::vector<int>* counts) const {
  std::vector<T> out;
  alltoallvInto(*this, toRank, out, counts);
  return out;
}

#define FEDSILO_INSTANTIATE(T)                                                              \
  template void Communicator::bcast<T>(T*, std::size_t, int) const;                         \
  template void Communicator::bcast<T>(std::vector<T>&, int) const;                         \
  template T Communicator::allreduceSum<T>(T) const;                                        \
  template T Communicator::allreduceMax<T>(T) const;                                        \
  template T Communicator::allreduceMin<T>(T) const;                                        \
  template std::vector<T> Communicator::gatherv<T>(const std::vector<T>&, int, std::vector<int>*) const; \
  template std::vector<T> Communicator::allgatherv<T>(const std::vector<T>&) const;                  \
  template std::vector<T> Communicator::alltoallv<T>(const std::vector<std::vector<T>>&, std::vector<int>*) const; \
  template void allgathervInto<T>(const Communicator&, const std::vector<T>&, std::vector<T>&);                \
  template void alltoallvInto<T>(const Communicator&, const std::vector<std::vector<T>>&, std::vector<T>&,       \
                                 std::vector<int>*);
FEDSILO_INSTANTIATE(char)
FEDSILO_INSTANTIATE(std::int8_t)
FEDSILO_INSTANTIATE(std::uint8_t)
FEDSILO_INSTANTIATE(std::int32_t)
FEDSILO_INSTANTIATE(std::int64_t)
FEDSILO_INSTANTIATE(std::uint64_t)
FEDSILO_INSTANTIATE(float)
FEDSILO_INSTANTIATE(double)
#undef FEDSILO_INSTANTIATE
template void Communicator::reduceSum<double>(const double*, double*, std::size_t, int) const;
template void Communicator::reduceSum<std::int64_t>(const std::int64_t*, std::int64_t*, std::size_t, int) const;

}  // namespace fedsilo
