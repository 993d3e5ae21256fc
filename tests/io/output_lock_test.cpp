// io/output_lock: one holder at a time, the holder named in the refusal, a lock file left by a dead
// holder takes nothing, release removes the file.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "io/output_lock.hpp"
#include "support/test_support.hpp"

using namespace fedsilo;

TEST(OutputLock, ASecondHolderIsRefusedNamingTheFirst) {
  const std::string dir = test::tempDir("lock");
  const std::string path = dir + "/r.h5.lock";
  OutputLock first = OutputLock::acquire(path, dir + "/r.h5");
  ASSERT_TRUE(first.held());
  EXPECT_TRUE(first.warning().empty());
  // flock locks belong to the open file description: a second open in this process conflicts too.
  try {
    OutputLock second = OutputLock::acquire(path, dir + "/r.h5");
    FAIL() << "a second lock was granted";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("another fedsilo run is writing it"), std::string::npos) << what;
    EXPECT_NE(what.find("pid " + std::to_string(::getpid()) + " on host "), std::string::npos) << what;
    EXPECT_NE(what.find(path), std::string::npos) << what;
  }
  EXPECT_TRUE(std::filesystem::exists(path));
  first.release();
  EXPECT_FALSE(first.held());
  EXPECT_FALSE(std::filesystem::exists(path));  // the holder removes its file
  OutputLock third = OutputLock::acquire(path, dir + "/r.h5");
  EXPECT_TRUE(third.held());
}

TEST(OutputLock, AFileLeftByADeadHolderBlocksNothing) {
  const std::string dir = test::tempDir("lockdead");
  const std::string path = dir + "/r.h5.lock";
  // A child takes the lock and dies without releasing it (as after SIGKILL): the file stays.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    OutputLock lock = OutputLock::acquire(path, dir + "/r.h5");
    lock.holdUntilExit();
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(std::filesystem::exists(path));
  OutputLock lock = OutputLock::acquire(path, dir + "/r.h5");
  EXPECT_TRUE(lock.held());
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("pid " + std::to_string(::getpid()) + " on host ", 0), 0u) << line;
}

TEST(OutputLock, AFolderThatCannotHoldTheFileIsARuntimeErrorWithTheReason) {
  try {
    OutputLock::acquire("/nonexistent-folder/r.h5.lock", "/nonexistent-folder/r.h5");
    FAIL() << "locked a file in a missing folder";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos) << e.what();
  }
}

TEST(OutputLock, MovesOwnership) {
  const std::string dir = test::tempDir("lockmove");
  const std::string path = dir + "/r.h5.lock";
  OutputLock a = OutputLock::acquire(path, dir + "/r.h5");
  OutputLock b(std::move(a));
  EXPECT_FALSE(a.held());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_TRUE(b.held());
  OutputLock c;
  c = std::move(b);
  EXPECT_TRUE(c.held());
  EXPECT_TRUE(std::filesystem::exists(path));
}
