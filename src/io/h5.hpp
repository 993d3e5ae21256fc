// RAII wrappers for HDF5 handles and the few operations fedsilo needs. HDF5 errors become
// RuntimeError naming the operation and the object. Parallel HDF5 rule: every rank makes every
// metadata call (create, extend, attribute) with identical arguments.
#pragma once
#include <hdf5.h>

#include <string>
#include <utility>

#include "core/error.hpp"

namespace fedsilo {
class Communicator;
}

namespace fedsilo::h5 {

class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t), const std::string& what) : id_(id), close_(close) {
    if (id < 0) throw RuntimeError(fmt("HDF5: ", what, " failed"));
  }
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, -1)), close_(o.close_) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = std::exchange(o.id_, -1);
      close_ = o.close_;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = -1;
  }
  hid_t id() const { return id_; }
  operator hid_t() const { return id_; }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

inline void check(herr_t rc, const std::string& what) {
  if (rc < 0) throw RuntimeError(fmt("HDF5: ", what, " failed"));
}

// Silences HDF5's automatic error stack printing (errors are reported as exceptions instead).
void silenceErrors();

// File-access property list for a file shared by every rank of `comm`: MPI-IO with collective
// metadata reads and writes (plain POSIX access in single-rank mode).
Handle parallelFileAccess(const Communicator& comm);

}  // namespace fedsilo::h5
