// app/resume_check: which checkpoints a run may resume from. A checkpoint written before an option
// existed is accepted when this run leaves that option at its default, and refused otherwise.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "app/config_parser.hpp"
#include "app/resume_check.hpp"
#include "core/error.hpp"

using namespace fedsilo;

namespace {

// The message of checkResumable's ConfigError, or "" when it accepts.
std::string refusal(const std::string& saved, const std::string& now, const std::map<std::string, std::string>& defs) {
  try {
    checkResumable(saved, now, defs, "run.h5.ckpt");
    return "";
  } catch (const ConfigError& e) {
    return e.what();
  }
}

const std::map<std::string, std::string> kDefaults{{"seed", "0"}, {"gems.finetune_optimizer", "train"}};

// The resolved configuration of a run with the given plain options, as the checkpoint stores it.
std::string resolved(const std::vector<std::string>& args) { return parseArguments(args).config.resolvedIni; }

}  // namespace

TEST(ResumeCheck, AcceptsTheSameConfigurationAndTheKeysAResumedRunMayChange) {
  const std::string saved = "# fedsilo\nseed = 0\noutput = a.h5\n\n[checkpoint]\nevery = 5\n";
  const std::string now = "# fedsilo\nseed = 0\noutput = b.h5\n\n[checkpoint]\nevery = 1\n";
  EXPECT_EQ(refusal(saved, now, kDefaults), "");
  EXPECT_TRUE(checkResumable(saved, now, kDefaults, "x").predatedOptions.empty());
}

TEST(ResumeCheck, RefusesAChangedValueNamingBothValues) {
  const std::string msg = refusal("seed = 0\n", "seed = 9\n", kDefaults);
  EXPECT_NE(msg.find("run.h5.ckpt was written with seed = 0, this run has seed = 9"), std::string::npos) << msg;
}

TEST(ResumeCheck, AcceptsAnOptionTheCheckpointPredatesWhenThisRunUsesItsDefault) {
  const ResumeCheck check = checkResumable("seed = 0\n", "seed = 0\n\n[gems]\nfinetune_optimizer = train\n", kDefaults,
                                           "run.h5.ckpt");
  ASSERT_EQ(check.predatedOptions.size(), 1u);
  EXPECT_EQ(check.predatedOptions.at("gems.finetune_optimizer"), "train");
}

TEST(ResumeCheck, RefusesAnOptionTheCheckpointPredatesWhenThisRunChangesIt) {
  const std::string msg = refusal("seed = 0\n", "seed = 0\n\n[gems]\nfinetune_optimizer = adam\n", kDefaults);
  EXPECT_NE(msg.find("was written without option gems.finetune_optimizer"), std::string::npos) << msg;
  EXPECT_NE(msg.find("its default gems.finetune_optimizer = train"), std::string::npos) << msg;
  EXPECT_NE(msg.find("this run has gems.finetune_optimizer = adam"), std::string::npos) << msg;
}

TEST(ResumeCheck, RefusesAnUnknownOptionTheCheckpointLacks) {
  const std::string msg = refusal("seed = 0\n", "seed = 0\nnew_key = 1\n", kDefaults);
  EXPECT_NE(msg.find("was written without option new_key"), std::string::npos) << msg;
}

TEST(ResumeCheck, RefusesWhenThisRunLacksAnOptionOfTheCheckpoint) {
  const std::string msg = refusal("seed = 0\nold_key = 1\n", "seed = 0\n", kDefaults);
  EXPECT_NE(msg.find("was written with old_key = 1, this run has old_key = (not set)"), std::string::npos) << msg;
}

// The real defaults: every option of a run without options resolves to the text optionDefaults()
// gives, so a checkpoint that lacks any one of them is accepted by a run that leaves it alone.
TEST(ResumeCheck, EveryOptionOfADefaultRunMatchesItsDefaultText) {
  const std::string full = resolved({});
  const auto defaults = optionDefaults();
  std::string withoutOne;
  for (const std::string key : {"gems.finetune_optimizer", "train.precision", "train.optimizer", "eval.select"}) {
    ASSERT_TRUE(defaults.count(key)) << key;
    const std::string section = key.substr(0, key.find('.')), name = key.substr(key.find('.') + 1);
    const std::string line = name + " = " + defaults.at(key) + "\n";
    const auto at = full.find(line, full.find("[" + section + "]"));
    ASSERT_NE(at, std::string::npos) << key << " not at its default in a default run";
    withoutOne = full;
    withoutOne.erase(at, line.size());
    const ResumeCheck check = checkResumable(withoutOne, full, defaults, "x");
    ASSERT_EQ(check.predatedOptions.size(), 1u) << key;
    EXPECT_EQ(check.predatedOptions.at(key), defaults.at(key));
  }
}
