// A finished results file at the output is never replaced without --overwrite; --resume of a finished
// run changes nothing (the whole-program cases: tests/integration/test_overwrite.sh).
#include <gtest/gtest.h>

#include <string>

#include "app/config_parser.hpp"
#include "app/finished_results.hpp"
#include "core/error.hpp"

namespace fedsilo {
namespace {

TEST(FinishedResults, NoResultsFileRunsWhateverTheFlags) {
  for (bool ckpt : {false, true})
    for (bool resume : {false, true})
      for (bool overwrite : {false, true})
        EXPECT_EQ(checkFinishedResults("r.h5", "r.h5.ckpt", false, ckpt, resume, overwrite), OutputStart::Run);
}

TEST(FinishedResults, ASecondRunIsRefusedNamingTheFileAndOverwrite) {
  try {
    checkFinishedResults("out/r.h5", "out/r.h5.ckpt", true, false, false, false);
    FAIL() << "a finished results file was replaced without --overwrite";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.code(), ExitCode::Config);
    const std::string m = e.what();
    EXPECT_NE(m.find("output = out/r.h5"), std::string::npos) << m;
    EXPECT_NE(m.find("--overwrite"), std::string::npos) << m;
    EXPECT_EQ(m.find("--resume"), std::string::npos) << m;  // nothing to resume
  }
  // With a checkpoint of a run that was allowed to replace it, the message offers --resume too.
  try {
    checkFinishedResults("r.h5", "r.h5.ckpt", true, true, false, false);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--resume to continue the run of r.h5.ckpt"), std::string::npos) << e.what();
  }
}

TEST(FinishedResults, OverwriteOrAResumableCheckpointRuns) {
  EXPECT_EQ(checkFinishedResults("r.h5", "r.h5.ckpt", true, false, false, true), OutputStart::Run);
  EXPECT_EQ(checkFinishedResults("r.h5", "r.h5.ckpt", true, true, false, true), OutputStart::Run);
  EXPECT_EQ(checkFinishedResults("r.h5", "r.h5.ckpt", true, true, true, false), OutputStart::Run);
}

TEST(FinishedResults, ResumeOfAFinishedRunIsFinishedEvenWithOverwrite) {
  EXPECT_EQ(checkFinishedResults("r.h5", "r.h5.ckpt", true, false, true, false), OutputStart::Finished);
  EXPECT_EQ(checkFinishedResults("r.h5", "r.h5.ckpt", true, false, true, true), OutputStart::Finished);
  EXPECT_NE(finishedRunNote("r.h5", "r.h5.ckpt").find("r.h5 is a finished run's results file"), std::string::npos);
}

TEST(FinishedResults, OverwriteIsACommandLineFlag) {
  EXPECT_FALSE(parseArguments({}).config.output.overwrite);
  EXPECT_TRUE(parseArguments({"--overwrite"}).config.output.overwrite);
}

}  // namespace
}  // namespace fedsilo
