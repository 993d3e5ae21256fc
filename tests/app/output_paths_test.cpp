// app/output_paths: the output's names against the file system's and Open MPI's MPI-IO limits, and
// output files that exist as folders, refused before anything is created.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "app/output_paths.hpp"
#include "core/error.hpp"
#include "support/test_support.hpp"

using namespace fedsilo;

namespace {

// The ConfigError message of checkOutputNames, or "" when it accepts the name.
std::string refusal(const std::string& output, bool mpiIo) {
  try {
    checkOutputNames(output, mpiIo);
    return "";
  } catch (const ConfigError& e) {
    return e.what();
  }
}

// A results file name whose longest derived name, <name>.ckpt.tmp, has `length` characters.
std::string withCheckpointTmpOf(std::size_t length) { return std::string(length - 9 - 3, 'x') + ".h5"; }

}  // namespace

TEST(OutputNames, MpiIoFileNameLimit) {
  // Relative names (in the current folder), so that the path limit below does not bind first.
  const std::string atLimit = withCheckpointTmpOf(kMpiIoMaxName);
  EXPECT_EQ(refusal(atLimit, true), "");
  const std::string over = withCheckpointTmpOf(kMpiIoMaxName + 1);
  const std::string why = refusal(over, true);
  EXPECT_NE(why.find(over + ".ckpt.tmp is " + std::to_string(kMpiIoMaxName + 1) + " characters long"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("limit of " + std::to_string(kMpiIoMaxName)), std::string::npos) << why;
  EXPECT_NE(why.find("MPI-IO"), std::string::npos) << why;
  // Without MPI-IO (a single process writing with POSIX I/O) only NAME_MAX applies.
  EXPECT_EQ(refusal(over, false), "");
  EXPECT_FALSE(std::filesystem::exists(over + ".partial"));
}

TEST(OutputNames, NameMaxOfTheFileSystem) {
  const std::string dir = test::tempDir("namemax");
  EXPECT_EQ(refusal(dir + "/" + withCheckpointTmpOf(255), false), "");
  const std::string why = refusal(dir + "/" + withCheckpointTmpOf(256), false);
  EXPECT_NE(why.find("is 256 characters long, above the limit of 255"), std::string::npos) << why;
  EXPECT_NE(why.find("NAME_MAX"), std::string::npos) << why;
}

TEST(OutputNames, MpiIoPathLimit) {
  // Short file names in deep folders: the whole path as given counts (Open MPI's 256-byte buffer).
  std::string folder = test::tempDir("pathlimit");
  while (folder.size() < kMpiIoMaxPath - 40) folder += "/d";
  const std::string base = folder + "/";
  const std::string atLimit = base + std::string(kMpiIoMaxPath - base.size() - 9, 'p');
  EXPECT_EQ(refusal(atLimit, true), "");
  const std::string why = refusal(atLimit + "p", true);
  EXPECT_NE(why.find("the path (Open MPI's MPI-IO)"), std::string::npos) << why;
  EXPECT_NE(why.find("limit of " + std::to_string(kMpiIoMaxPath)), std::string::npos) << why;
}

TEST(OutputNames, PathMax) {
  std::string longPath = test::tempDir("pathmax");
  while (longPath.size() < 4200) longPath += "/abcdefgh";
  const std::string why = refusal(longPath + "/r.h5", false);
  EXPECT_NE(why.find("the path (PATH_MAX)"), std::string::npos) << why;
}

TEST(OutputNames, OutputFilesThatAreFoldersAreRefused) {
  const std::string dir = test::tempDir("folders");
  int i = 0;
  for (const char* suffix : {"", ".partial", ".ckpt", ".ckpt.tmp", ".lock"}) {
    const std::string output = dir + "/r" + std::to_string(i++) + ".h5";
    std::filesystem::create_directory(output + suffix);
    const std::string why = refusal(output, true);
    EXPECT_NE(why.find(output + suffix + " ("), std::string::npos) << suffix << ": " << why;
    EXPECT_NE(why.find(") is a folder"), std::string::npos) << why;
  }
}
