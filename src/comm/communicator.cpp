#include "comm/communicator.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fedsilo {

namespace {

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

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw RuntimeError(fmt("MPI error in ", what, ": ", std::string(msg, len)));
}

MPI_Comm commOf(void* h) { return *static_cast<MPI_Comm*>(h); }

// MPI reduction of Fixed128 values (pairs of 64-bit words): exact, so commutative and associative.
void fixedSum(void* in, void* inout, int* len, MPI_Datatype*) {
  const Fixed128* a = static_cast<const Fixed128*>(in);
  Fixed128* b = static_cast<Fixed128*>(inout);
  for (int i = 0; i < *len; ++i) b[i].add(a[i]);
}

struct FixedType {
  MPI_Datatype type;
  MPI_Op op;
  FixedType() {
    static_assert(sizeof(Fixed128) == 16, "Fixed128 must be two packed 64-bit words");
    check(MPI_Type_contiguous(2, MPI_UINT64_T, &type), "MPI_Type_contiguous");
    check(MPI_Type_commit(&type), "MPI_Type_commit");
    check(MPI_Op_create(&fixedSum, 1, &op), "MPI_Op_create");
  }
};
const FixedType& fixedType() {
  static FixedType t;
  return t;
}

}  // namespace

bool& errorWasAgreed() {
  static bool agreed = false;
  return agreed;
}

MpiEnvironment::MpiEnvironment(int& argc, char**& argv) {
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
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

Communicator Communicator::world() {
  FEDSILO_ASSERT(MpiEnvironment::initialized(), "MPI is not initialised");
  auto* c = new MPI_Comm;
  check(MPI_Comm_dup(MPI_COMM_WORLD, c), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(*c, MPI_ERRORS_RETURN);
  int r = 0, s = 1;
  MPI_Comm_rank(*c, &r);
  MPI_Comm_size(*c, &s);
  return Communicator(c, r, s);
}

Communicator Communicator::single() { return Communicator(nullptr, 0, 1); }

Communicator& Communicator::operator=(Communicator&& o) noexcept {
  if (this != &o) {
    this->~Communicator();
    handle_ = std::exchange(o.handle_, nullptr);
    rank_ = o.rank_;
    size_ = o.size_;
  }
  return *this;
}

Communicator::~Communicator() {
  if (handle_) {
    auto* c = static_cast<MPI_Comm*>(handle_);
    if (MpiEnvironment::initialized()) MPI_Comm_free(c);
    delete c;
    handle_ = nullptr;
  }
}

void Communicator::barrier() const {
  if (handle_) check(MPI_Barrier(commOf(handle_)), "MPI_Barrier");
}

template <typename T>
void Communicator::bcast(T* data, std::size_t n, int root) const {
  if (!handle_ || n == 0) return;
  // Large buffers go in pieces: MPI counts are int.
  const std::size_t chunk = std::size_t(1) << 30;
  for (std::size_t off = 0; off < n; off += chunk) {
    const int cnt = static_cast<int>(std::min(chunk, n - off));
    check(MPI_Bcast(data + off, cnt, mpiType<T>(), root, commOf(handle_)), "MPI_Bcast");
  }
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
  const std::size_t chunk = std::size_t(1) << 28;
  for (std::size_t off = 0; off < n; off += chunk) {
    const int cnt = static_cast<int>(std::min(chunk, n - off));
    const void* src = in == out && rank_ == root ? MPI_IN_PLACE : static_cast<const void*>(in + off);
    check(MPI_Reduce(src, out + off, cnt, mpiType<T>(), MPI_SUM, root, commOf(handle_)), "MPI_Reduce");
  }
}

template <typename T>
T Communicator::allreduceSum(T v) const {
  if (!handle_) return v;
  T out{};
  check(MPI_Allreduce(&v, &out, 1, mpiType<T>(), MPI_SUM, commOf(handle_)), "MPI_Allreduce");
  return out;
}

template <typename T>
T Communicator::allreduceMax(T v) const {
  if (!handle_) return v;
  T out{};
  check(MPI_Allreduce(&v, &out, 1, mpiType<T>(), MPI_MAX, commOf(handle_)), "MPI_Allreduce");
  return out;
}

template <typename T>
T Communicator::allreduceMin(T v) const {
  if (!handle_) return v;
  T out{};
  check(MPI_Allreduce(&v, &out, 1, mpiType<T>(), MPI_MIN, commOf(handle_)), "MPI_Allreduce");
  return out;
}

void Communicator::reduceExact(ExactSum& acc, int root) const {
  if (!handle_ || acc.size() == 0) return;
  const auto& t = fixedType();
  const std::size_t chunk = std::size_t(1) << 26;
  for (std::size_t off = 0; off < acc.size(); off += chunk) {
    const int cnt = static_cast<int>(std::min(chunk, acc.size() - off));
    void* buf = acc.data() + off;
    if (rank_ == root)
      check(MPI_Reduce(MPI_IN_PLACE, buf, cnt, t.type, t.op, root, commOf(handle_)), "MPI_Reduce(exact)");
    else
      check(MPI_Reduce(buf, nullptr, cnt, t.type, t.op, root, commOf(handle_)), "MPI_Reduce(exact)");
  }
}

void Communicator::allreduceExact(ExactSum& acc) const {
  if (!handle_ || acc.size() == 0) return;
  const auto& t = fixedType();
  const std::size_t chunk = std::size_t(1) << 26;
  for (std::size_t off = 0; off < acc.size(); off += chunk) {
    const int cnt = static_cast<int>(std::min(chunk, acc.size() - off));
    check(MPI_Allreduce(MPI_IN_PLACE, acc.data() + off, cnt, t.type, t.op, commOf(handle_)), "MPI_Allreduce(exact)");
  }
}

template <typename T>
std::vector<T> Communicator::gatherv(const std::vector<T>& mine, int root, std::vector<int>* counts) const {
  if (!handle_) {
    if (counts) *counts = {static_cast<int>(mine.size())};
    return mine;
  }
  FEDSILO_ASSERT(mine.size() < (std::size_t(1) << 31), "gatherv piece too large");
  int n = static_cast<int>(mine.size());
  std::vector<int> cnt(rank_ == root ? size_ : 0), displ(rank_ == root ? size_ : 0);
  check(MPI_Gather(&n, 1, MPI_INT, cnt.data(), 1, MPI_INT, root, commOf(handle_)), "MPI_Gather");
  std::vector<T> out;
  if (rank_ == root) {
    long long total = 0;
    for (int r = 0; r < size_; ++r) {
      displ[r] = static_cast<int>(total);
      total += cnt[r];
    }
    FEDSILO_ASSERT(total < (1LL << 31), "gatherv total too large");
    out.resize(static_cast<std::size_t>(total));
  }
  check(MPI_Gatherv(mine.data(), n, mpiType<T>(), out.data(), cnt.data(), displ.data(), mpiType<T>(), root,
                    commOf(handle_)),
        "MPI_Gatherv");
  if (counts) *counts = cnt;
  return out;
}

template <typename T>
std::vector<T> Communicator::allgatherv(const std::vector<T>& mine) const {
  std::vector<T> all = gatherv(mine, 0);
  bcast(all, 0);
  return all;
}

#define FEDSILO_INSTANTIATE(T)                                                              \
  template void Communicator::bcast<T>(T*, std::size_t, int) const;                         \
  template void Communicator::bcast<T>(std::vector<T>&, int) const;                         \
  template T Communicator::allreduceSum<T>(T) const;                                        \
  template T Communicator::allreduceMax<T>(T) const;                                        \
  template T Communicator::allreduceMin<T>(T) const;                                        \
  template std::vector<T> Communicator::gatherv<T>(const std::vector<T>&, int, std::vector<int>*) const; \
  template std::vector<T> Communicator::allgatherv<T>(const std::vector<T>&) const;
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
