// core/h5_handle.hpp, the HDF5 pieces shared by data, comm and io: the owning handle closes its id
// exactly once, and QuietErrors silences HDF5's error printing only while a guard lives, then puts
// back the handler that was there before (also when guards end out of order).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/h5_handle.hpp"
#include "support/test_support.hpp"

using namespace fedsilo;

namespace {

int handlerCalls = 0;
herr_t countingHandler(hid_t, void* data) {
  ++*static_cast<int*>(data);
  return 0;
}

// A call that fails inside HDF5 (and so reports to the automatic error handler).
void failOneCall() { EXPECT_LT(H5Fopen("/nonexistent/fedsilo-h5-test.h5", H5F_ACC_RDONLY, H5P_DEFAULT), 0); }

// Installs the counting handler for the test, restores HDF5's own handler afterwards.
class CountingHandler {
 public:
  CountingHandler() {
    H5Eget_auto2(H5E_DEFAULT, &oldFunc_, &oldData_);
    handlerCalls = 0;
    H5Eset_auto2(H5E_DEFAULT, &countingHandler, &handlerCalls);
  }
  ~CountingHandler() { H5Eset_auto2(H5E_DEFAULT, oldFunc_, oldData_); }

 private:
  H5E_auto2_t oldFunc_ = nullptr;
  void* oldData_ = nullptr;
};

bool installed(H5E_auto2_t func, void* data) {
  H5E_auto2_t f = nullptr;
  void* d = nullptr;
  H5Eget_auto2(H5E_DEFAULT, &f, &d);
  return f == func && d == data;
}

}  // namespace

TEST(H5Handle, QuietErrorsSilencesInItsScopeAndRestoresTheHandler) {
  const CountingHandler counting;
  failOneCall();
  EXPECT_EQ(handlerCalls, 1);
  {
    const h5::QuietErrors quiet;
    EXPECT_EQ(h5::QuietErrors::active(), 1);
    EXPECT_TRUE(installed(nullptr, nullptr));
    failOneCall();
    EXPECT_EQ(handlerCalls, 1);
  }
  EXPECT_EQ(h5::QuietErrors::active(), 0);
  EXPECT_TRUE(installed(&countingHandler, &handlerCalls));
  failOneCall();
  EXPECT_EQ(handlerCalls, 2);
}

TEST(H5Handle, QuietErrorsMayEndInAnyOrder) {
  const CountingHandler counting;
  auto first = std::make_unique<h5::QuietErrors>();
  auto second = std::make_unique<h5::QuietErrors>();
  first.reset();  // not the last guard: still quiet
  EXPECT_TRUE(installed(nullptr, nullptr));
  failOneCall();
  EXPECT_EQ(handlerCalls, 0);
  const h5::QuietErrors copy(*second);  // a copy is one more guard
  second.reset();
  EXPECT_TRUE(installed(nullptr, nullptr));
  EXPECT_EQ(h5::QuietErrors::active(), 1);
}

TEST(H5Handle, HandleClosesItsIdOnceAndMovesOwnership) {
  const std::string path = test::tempDir("h5handle") + "/f.h5";
  hid_t id = -1;
  {
    h5::Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, "create f.h5");
    id = file.id();
    EXPECT_GT(H5Iis_valid(id), 0);
    h5::Handle moved(std::move(file));
    EXPECT_FALSE(file.valid());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    EXPECT_EQ(moved.id(), id);
    h5::Handle assigned;
    assigned = std::move(moved);
    EXPECT_GT(H5Iis_valid(id), 0);  // still open: ownership moved, nothing closed
    EXPECT_EQ(static_cast<hid_t>(assigned), id);
  }
  EXPECT_LE(H5Iis_valid(id), 0);  // closed by the last owner
}

TEST(H5Handle, AFailedCallThrowsOrIsAdoptedForTheCallersOwnError) {
  const h5::QuietErrors quiet;
  try {
    h5::Handle bad(H5Fopen("/nonexistent/x.h5", H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open x.h5");
    FAIL() << "a negative id was accepted";
  } catch (const RuntimeError& e) {
    // With the reason HDF5 recorded (its POSIX driver's strerror text).
    EXPECT_STREQ(e.what(), "HDF5: open x.h5 failed: No such file or directory");
  }
  const h5::Handle adopted = h5::Handle::adopt(H5Fopen("/nonexistent/x.h5", H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  EXPECT_FALSE(adopted.valid());
  EXPECT_THROW(h5::check(-1, "H5Dwrite"), RuntimeError);
  EXPECT_NO_THROW(h5::check(0, "H5Dwrite"));
}

// close() reports a close that fails (a file whose last writes did not reach the disk): here HDF5's
// own H5Fclose on an id that is no longer open, which HDF5 refuses. The id is given up either way, so
// nothing is closed twice; reset() and the destructor stay quiet.
TEST(H5Handle, ACheckedCloseThatFailsThrowsAndGivesTheIdUp) {
  const h5::QuietErrors quiet;
  const std::string path = test::tempDir("h5handle") + "/c.h5";
  const hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(id, 0);
  ASSERT_GE(H5Fclose(id), 0);
  h5::Handle stale = h5::Handle::adopt(id, H5Fclose);
  try {
    stale.close("c.h5");
    FAIL() << "a failed close was not reported";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("HDF5: close c.h5 failed", 0), 0u) << e.what();
  }
  EXPECT_FALSE(stale.valid());
  EXPECT_NO_THROW(stale.close("c.h5"));  // nothing left to close

  h5::Handle good(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, "create c.h5");
  const hid_t goodId = good.id();
  EXPECT_NO_THROW(good.close("c.h5"));
  EXPECT_LE(H5Iis_valid(goodId), 0);
  EXPECT_FALSE(good.valid());

  h5::Handle quietOne = h5::Handle::adopt(id, H5Fclose);
  EXPECT_NO_THROW(quietOne.reset());  // the unchecked form, for paths already reporting a failure
}

// A close function that fails counts as a failed close, whatever the kind of handle.
TEST(H5Handle, ACheckedCloseCallsTheCloseFunctionOnce) {
  static int calls = 0;
  calls = 0;
  h5::Handle h = h5::Handle::adopt(12345, [](hid_t) -> herr_t { return ++calls, -1; });
  EXPECT_THROW(h.close("dataset /rounds/x"), RuntimeError);
  EXPECT_EQ(calls, 1);
  h = h5::Handle();
  EXPECT_EQ(calls, 1);  // given up: the move-assignment closed nothing
}
