// What the command line and the INI file accept beyond plain values: boolean spellings (stored
// normalised), one-shot algorithms' own round count when `rounds` is not given, and configuration
// files that are not text (binary, a device, a byte-order mark).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "app/config_file.hpp"
#include "app/config_parser.hpp"
#include "core/error.hpp"
#include "fl/algorithm.hpp"
#include "support/test_support.hpp"
#include "support/parse_error.hpp"

namespace fedsilo {
namespace {

std::string writeFile(const std::string& name, const std::string& bytes) {
  const std::string path = test::tempDir("cli_input") + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// ---- booleans -------------------------------------------------------------------------------------

TEST(Booleans, EverySpellingInAnyCaseIsAcceptedAndStoredNormalised) {
  const std::vector<std::pair<std::string, bool>> spellings = {
      {"true", true},  {"TRUE", true},   {"True", true}, {"1", true},   {"yes", true},  {"Yes", true},
      {"on", true},    {"ON", true},     {" on ", true}, {"false", false}, {"False", false}, {"0", false},
      {"no", false},   {"NO", false},    {"off", false}, {"Off", false}};
  for (const auto& [text, value] : spellings) {
    SCOPED_TRACE(text);
    const ExperimentConfig c = parseArguments({"--fl.skip_diverged", text, "--output.client_models", text}).config;
    EXPECT_EQ(c.fl.skipDiverged, value);
    EXPECT_EQ(c.output.clientModels, value);
    const std::string stored = value ? "true" : "false";
    EXPECT_TRUE(contains(c.resolvedIni, "\nskip_diverged = " + stored + "\n")) << c.resolvedIni;
    EXPECT_TRUE(contains(c.resolvedIni, "\nclient_models = " + stored + "\n")) << c.resolvedIni;
  }
}

TEST(Booleans, AlgorithmOptionsAreNormalisedToo) {
  const ExperimentConfig c =
      parseArguments({"--algorithm", "playerfl", "--playerfl.include_bias", "YES", "--alpha_fedavg.weighted", "Off"})
          .config;
  EXPECT_TRUE(c.algo.getBool("playerfl.include_bias"));
  EXPECT_EQ(c.algo.raw("playerfl.include_bias"), "true");
  EXPECT_EQ(c.algo.raw("alpha_fedavg.weighted"), "false");
  EXPECT_TRUE(contains(c.resolvedIni, "[playerfl]\n")) << c.resolvedIni;
  EXPECT_TRUE(contains(c.resolvedIni, "\ninclude_bias = true\n")) << c.resolvedIni;
  EXPECT_TRUE(contains(c.resolvedIni, "\nweighted = false\n")) << c.resolvedIni;
}

TEST(Booleans, TheIniFileAcceptsTheSameSpellings) {
  const std::string ini = writeFile("bools.ini", "[fl]\nskip_diverged = On\n[output]\nclient_models = NO\n");
  const ExperimentConfig c = parseArguments({"--config", ini}).config;
  EXPECT_TRUE(c.fl.skipDiverged);
  EXPECT_FALSE(c.output.clientModels);
}

TEST(Booleans, AnythingElseIsAnErrorNamingTheValueAndTheForms) {
  for (const char* bad : {"maybe", "2", "", "truee", "y"}) {
    const std::string e = test::parseError({"--fl.skip_diverged", bad});
    EXPECT_TRUE(contains(e, std::string("fl.skip_diverged = ") + bad + ":")) << e;
    EXPECT_TRUE(contains(e, "true/false, 1/0, yes/no or on/off")) << e;
  }
  // An unselected algorithm's boolean is checked as well (it is stored normalised).
  EXPECT_TRUE(contains(test::parseError({"--playerfl.include_bias", "sometimes"}), "playerfl.include_bias = sometimes"));
  EXPECT_TRUE(contains(test::parseError({"--output.jsonl", "please"}), "output.jsonl = please"));
}

TEST(Booleans, OptionValuesGetBoolAcceptsEverySpelling) {
  OptionValues o;
  o.set("x.flag", "OFF");
  EXPECT_FALSE(o.getBool("x.flag"));
  o.set("x.flag", "Yes");
  EXPECT_TRUE(o.getBool("x.flag"));
  o.set("x.flag", "nope");
  EXPECT_THROW(o.getBool("x.flag"), ConfigError);
}

// ---- one-shot round counts ------------------------------------------------------------------------

TEST(OneShotRounds, WithoutRoundsEachOneShotAlgorithmRunsItsOwnCount) {
  int checked = 0;
  for (const auto& e : algorithmRegistry()) {
    if (!e.oneShotRounds) continue;
    SCOPED_TRACE(e.name);
    const ExperimentConfig c = parseArguments({"--algorithm", e.name, "--model.hidden", "16,16"}).config;
    EXPECT_EQ(c.rounds, e.oneShotRounds(c));
    EXPECT_TRUE(contains(c.resolvedIni, "\nrounds = " + std::to_string(c.rounds) + "\n")) << c.resolvedIni;
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

TEST(OneShotRounds, GemsCountFollowsTheModel) {
  EXPECT_EQ(parseArguments({"--algorithm", "gems", "--model.hidden", "16"}).config.rounds, 2);  // neuron-wise
  EXPECT_EQ(parseArguments({"--algorithm", "gems", "--model", "logreg"}).config.rounds, 1);
  EXPECT_EQ(parseArguments({"--algorithm", "gems", "--model.hidden", "16", "--gems.mode", "convex"}).config.rounds, 1);
  EXPECT_EQ(parseArguments({"--algorithm", "average", "--model.hidden", "16"}).config.rounds, 1);
}

TEST(OneShotRounds, RoundsFromTheIniFileCountAsGiven) {
  const std::string wrong = writeFile("gems_wrong.ini", "algorithm = gems\nrounds = 3\n[model]\nhidden = 16\n");
  EXPECT_TRUE(contains(test::parseError({"--config", wrong}), "rounds = 3")) << test::parseError({"--config", wrong});
  const std::string unset = writeFile("gems_unset.ini", "algorithm = gems\n[model]\nhidden = 16\n");
  EXPECT_EQ(parseArguments({"--config", unset}).config.rounds, 2);
  // The command line's rounds counts as given too (and wins over the file's).
  EXPECT_EQ(parseArguments({"--config", wrong, "--rounds", "2"}).config.rounds, 2);
}

TEST(OneShotRounds, AnExplicitWrongCountStaysAnError) {
  const std::string e = test::parseError({"--algorithm", "gems", "--model", "logreg", "--rounds", "20"});
  EXPECT_TRUE(contains(e, "rounds = 20")) << e;
  EXPECT_TRUE(contains(e, "needs rounds = 1")) << e;
  EXPECT_TRUE(contains(test::parseError({"--algorithm", "ensemble", "--rounds", "2"}), "needs rounds = 1"));
  // The explicit right count is accepted.
  EXPECT_EQ(parseArguments({"--algorithm", "ensemble", "--rounds", "1"}).config.rounds, 1);
}

TEST(OneShotRounds, IterativeAlgorithmsKeepTheDefault) {
  EXPECT_EQ(parseArguments({"--algorithm", "fedavg"}).config.rounds, 20);
  EXPECT_EQ(parseArguments({"--algorithm", "playerfl"}).config.rounds, 20);
}

// ---- configuration files that are not text ---------------------------------------------------------

TEST(ConfigFile, ANulByteIsRefusedWithItsOffsetAndLine) {
  const std::string path = writeFile("nul.ini", std::string("clients = 4\nrounds = 2\nseed = 1") + '\0' + " junk\n");
  const std::string e = test::parseError({"--config", path});
  EXPECT_TRUE(contains(e, "config = " + path)) << e;
  EXPECT_TRUE(contains(e, "byte 0x00 at offset 31 (line 3)")) << e;
  EXPECT_TRUE(contains(e, "not a text INI file")) << e;
}

TEST(ConfigFile, DevZeroIsRefusedNotReadForever) {
  const std::string e = test::parseError({"--config", "/dev/zero"});
  EXPECT_TRUE(contains(e, "config = /dev/zero: byte 0x00 at offset 0 (line 1)")) << e;
}

TEST(ConfigFile, BinaryContentIsNeverEchoedRaw) {
  std::string bytes = "clients = 4\n";
  for (int i = 0; i < 300; ++i) bytes += static_cast<char>(0x80 + (i * 37) % 0x80);  // no ASCII control bytes
  bytes += "\n";
  const std::string path = writeFile("highbytes.ini", bytes);
  const std::string e = test::parseError({"--config", path});
  ASSERT_FALSE(e.empty());
  EXPECT_TRUE(contains(e, "config = " + path)) << e;
  for (char ch : e) EXPECT_TRUE(ch >= 0x20 && ch <= 0x7e) << "unprintable byte in: " << e;
  EXPECT_LT(e.size(), path.size() + 200) << e;
  EXPECT_TRUE(contains(e, "\\x")) << e;  // the excerpt shows the bytes escaped
  // A control byte other than tab, CR, LF and form feed also marks a file as binary.
  EXPECT_TRUE(contains(test::parseError({"--config", writeFile("bell.ini", "clients = 4\x07\n")}), "byte 0x07 at offset 11"));
}

TEST(ConfigFile, AUtf8ByteOrderMarkIsSkipped) {
  const std::string path = writeFile("bom.ini", "\xEF\xBB\xBF" "clients = 4\n[train]\nlr = 0.2\n");
  const ExperimentConfig c = parseArguments({"--config", path}).config;
  EXPECT_EQ(c.clients, 4);
  EXPECT_DOUBLE_EQ(c.train.lr, 0.2);
  // Only at the start: elsewhere it is part of the line (and an unknown key here).
  EXPECT_FALSE(test::parseError({"--config", writeFile("bom2.ini", "clients = 4\n\xEF\xBB\xBFseed = 1\n")}).empty());
}

TEST(ConfigFile, TabsCarriageReturnsAndUtf8CommentsAreText) {
  const std::string path = writeFile("crlf.ini", "# gr\xC3\xBC\xC3\x9F" "e\r\nclients\t= 4\r\n");
  EXPECT_EQ(parseArguments({"--config", path}).config.clients, 4);
}

TEST(ConfigFile, PrintableExcerptEscapesAndCuts) {
  EXPECT_EQ(printableExcerpt("ab\x01" "c", 100), "ab\\x01c");
  EXPECT_EQ(printableExcerpt(std::string(50, 'x'), 10), std::string(10, 'x') + "...");
  EXPECT_EQ(printableExcerpt("\xff\xfe", 100), "\\xff\\xfe");
}

}  // namespace
}  // namespace fedsilo
