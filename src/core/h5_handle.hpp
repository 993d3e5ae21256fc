// The HDF5 pieces that every module using HDF5 shares (data reads its input files, comm makes the
// MPI-IO file-access list, io writes results and checkpoints): an owning handle for HDF5 identifiers
// and a scoped guard that keeps HDF5 from printing its error stack. Header-only; the modules that
// include it link HDF5 themselves.
#pragma once
#include <hdf5.h>

#include <cstring>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace fedsilo::h5 {

// The system's reason that HDF5 recorded on its error stack for the call that just failed: the POSIX
// driver's strerror text ("No space left on device") or MPI-IO's error string ("MPI_ERR_READ_ONLY:
// file is read only"); "" when the stack holds neither (a failed MPI-IO write records no reason).
inline std::string errorDetail() {
  std::string found;
  const H5E_walk2_t look = [](unsigned, const H5E_error2_t* e, void* out) -> herr_t {
    std::string& reason = *static_cast<std::string*>(out);
    if (!reason.empty() || e->desc == nullptr) return 0;
    const std::string desc = e->desc;
    for (const char* key : {"error message = '", "MPI error string is '"}) {
      const std::size_t at = desc.find(key);
      if (at == std::string::npos) continue;
      const std::size_t from = at + std::strlen(key), to = desc.find('\'', from);
      reason = desc.substr(from, to == std::string::npos ? std::string::npos : to - from);
      break;
    }
    return 0;
  };
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, look, &found);
  return found;
}

// "HDF5: <what> failed", with errorDetail() when there is one.
inline std::string failure(const std::string& what) {
  const std::string reason = errorDetail();
  return fmt("HDF5: ", what, " failed", reason.empty() ? "" : ": ", reason);
}

// Owns one HDF5 identifier and closes it with the matching H5?close function. Move-only.
class Handle {
 public:
  using Close = herr_t (*)(hid_t);

  Handle() = default;
  // Takes `id`; a negative id (the call failed) throws RuntimeError "HDF5: <what> failed[: reason]".
  Handle(hid_t id, Close close, const std::string& what) : id_(id), close_(close) {
    if (id < 0) throw RuntimeError(failure(what));
  }
  // Takes `id` whatever it is, for callers that report a failed call with their own error (valid()).
  static Handle adopt(hid_t id, Close close) {
    Handle h;
    h.id_ = id;
    h.close_ = close;
    return h;
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

  // Closes now and throws RuntimeError "HDF5: close <what> failed[: reason]" when the close fails:
  // closing a file (or a dataset with cached chunks) writes what HDF5 still holds, so a failed close
  // means data that never reached the file. The id is given up either way. Nothing to close: no-op.
  void close(const std::string& what) {
    const hid_t id = std::exchange(id_, -1);
    if (id >= 0 && close_ && close_(id) < 0) throw RuntimeError(failure("close " + what));
  }
  // Closes without looking at the result: for destructors and for giving a handle up after a
  // failure already being reported. Code that publishes what it wrote calls close() instead.
  void reset() {
    if (id_ >= 0 && close_) (void)close_(id_);
    id_ = -1;
  }
  bool valid() const { return id_ >= 0; }
  hid_t id() const { return id_; }
  operator hid_t() const { return id_; }

 private:
  hid_t id_ = -1;
  Close close_ = nullptr;
};

inline void check(herr_t rc, const std::string& what) {
  if (rc < 0) throw RuntimeError(failure(what));
}

// Keeps HDF5 from printing its error stack on stderr while at least one guard is alive: fedsilo
// reports a failed HDF5 call as an exception with its own one-line message instead. When the last
// guard ends, the handler that was installed before the first one is back (H5Eget_auto2 /
// H5Eset_auto2). Guards may end in any order, not only in reverse order of creation: each open
// results file and checkpoint holds one, and their lifetimes need not nest. HDF5's automatic error
// handler is per-process state (per-thread in thread-safe builds) and fedsilo calls HDF5 from one
// thread, so the count is per-process too.
class QuietErrors {
 public:
  QuietErrors() { enter(); }
  QuietErrors(const QuietErrors&) { enter(); }
  QuietErrors& operator=(const QuietErrors&) { return *this; }
  ~QuietErrors() { leave(); }

  // How many guards are alive (for tests).
  static int active() { return state().depth; }

 private:
  struct State {
    int depth = 0;
    H5E_auto2_t savedFunc = nullptr;
    void* savedData = nullptr;
  };
  static State& state() {
    static State s;
    return s;
  }
  static void enter() {
    State& s = state();
    if (s.depth++ > 0) return;
    H5Eget_auto2(H5E_DEFAULT, &s.savedFunc, &s.savedData);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  static void leave() {
    State& s = state();
    if (--s.depth > 0) return;
    H5Eset_auto2(H5E_DEFAULT, s.savedFunc, s.savedData);
    s.savedFunc = nullptr;
    s.savedData = nullptr;
  }
};

}  // namespace fedsilo::h5
