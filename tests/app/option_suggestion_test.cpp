// A mistyped option name gets the nearest known one, on the command line and in INI files (with the
// file and line).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "app/option_suggestion.hpp"
#include "core/error.hpp"
#include "support/parse_error.hpp"
#include "support/test_support.hpp"

namespace fedsilo {
namespace {

std::string writeIni(const std::string& name, const std::string& text) {
  const std::string path = test::tempDir("option_suggestion") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(editDistance("train.lr", "train.lr"), 0u);
  EXPECT_EQ(editDistance("train.lrr", "train.lr"), 1u);   // insertion
  EXPECT_EQ(editDistance("train.l", "train.lr"), 1u);     // deletion
  EXPECT_EQ(editDistance("train.lx", "train.lr"), 1u);    // substitution
  EXPECT_EQ(editDistance("trian.lr", "train.lr"), 1u);    // swap of neighbours
  EXPECT_EQ(editDistance("", "abc"), 3u);
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
}

TEST(NearestOption, TheClosestKnownKeyWithinAQuarterOfTheLength) {
  const std::vector<std::string> known = {"train.lr", "train.batch", "train.momentum", "rounds", "clients"};
  EXPECT_EQ(nearestOption("train.lrr", known), "train.lr");
  EXPECT_EQ(nearestOption("trian.batch", known), "train.batch");
  EXPECT_EQ(nearestOption("train.momentun", known), "train.momentum");
  EXPECT_EQ(nearestOption("rouns", known), "rounds");  // length 5: one edit allowed
  EXPECT_EQ(nearestOption("roun", known), std::nullopt);  // two edits: too far for a short name
  EXPECT_EQ(nearestOption("bogus", known), std::nullopt);
  // Written without its section: the one section that has it.
  EXPECT_EQ(nearestOption("momentum", known), "train.momentum");
}

TEST(NearestOption, ABareNameInSeveralSectionsGetsNoGuess) {
  EXPECT_EQ(nearestOption("mu", {"fedprox.mu", "ditto.mu"}), std::nullopt);
}

TEST(UnrecognisedOption, CommandLineNamesTheOptionAndTheNearestKey) {
  EXPECT_EQ(test::parseError({"--train.lrr", "0.1"}),
            "command line: unrecognised option 'train.lrr'; did you mean 'train.lr'?");
  EXPECT_EQ(test::parseError({"--bogus", "1"}), "command line: unrecognised option 'bogus'");
  // Generic flags are known keys too (a prefix of one, "--overwrit", is Boost's accepted abbreviation).
  EXPECT_EQ(test::parseError({"--overwirte"}),
            "command line: unrecognised option 'overwirte'; did you mean 'overwrite'?");
}

TEST(UnrecognisedOption, IniFileGivesTheFileAndLine) {
  const std::string path = writeIni("typo.ini", "# a protocol\nrounds = 2\n\n[train]\nbatch = 8\nlrr = 0.1\n");
  EXPECT_EQ(test::parseError({"--config", path}),
            path + ":6: unrecognised option 'train.lrr'; did you mean 'train.lr'?");
  const std::string section = writeIni("section.ini", "rounds = 2\n[trian]\nlr = 0.1\n");
  EXPECT_EQ(test::parseError({"--config", section}),
            section + ":3: unrecognised option 'trian.lr'; did you mean 'train.lr'?");
  const std::string bare = writeIni("bare.ini", "rounds = 2\nmomentum = 0.9\n");
  EXPECT_EQ(test::parseError({"--config", bare}),
            bare + ":2: unrecognised option 'momentum'; did you mean 'train.momentum'?");
}

TEST(UnrecognisedOption, ScopedSectionGivesTheFileLineOfTheKey) {
  const std::string path =
      writeIni("scoped.ini", "rounds = 2\n[train]\nlr = 0.1\n\n[train @ pfedme]\nbatch = 8\nlrr = 0.2\n[model]\n");
  EXPECT_EQ(test::parseError({"--config", path}),
            path + ":7: [train @ pfedme]: unrecognised option 'train.lrr'; did you mean 'train.lr'?");
}

}  // namespace
}  // namespace fedsilo
