#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "app/config_parser.hpp"
#include "support/test_support.hpp"
#include "support/parse_error.hpp"

using namespace fedsilo;

namespace {

std::string writeIni(const std::string& text) {
  const std::string path = test::tempDir("cfg") + "/c.ini";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST(Config, DefaultsMatchTheDocumentedValues) {
  const ExperimentConfig c = parseArguments({}).config;
  EXPECT_EQ(c.algorithm, "fedavg");
  EXPECT_EQ(c.data.dataset, DatasetKind::FashionMnist);
  EXPECT_EQ(c.model.name, ModelPreset::Mlp);
  EXPECT_EQ(c.partition.scheme, PartitionScheme::Dirichlet);
  EXPECT_EQ(c.fl.placement, PlacementBalance::Samples);
  EXPECT_FALSE(c.model.loss.has_value());
  EXPECT_EQ(c.clients, 10);
  EXPECT_EQ(c.rounds, 20);
  EXPECT_EQ(c.train.batch, 32);
  EXPECT_DOUBLE_EQ(c.train.lr, 0.05);
  EXPECT_EQ(c.model.hidden, (std::vector<int>{200, 200}));
  EXPECT_EQ(c.data.split, (std::vector<double>{0.8, 0.1, 0.1}));
  EXPECT_EQ(c.fl.clientsPerRound, 0);
}

TEST(Config, IniSectionsAndCommandLineWins) {
  const std::string ini = writeIni("algorithm = local\nclients = 4\n[train]\nlr = 0.01\nbatch = 64\n[partition]\nscheme = iid\n");
  const ExperimentConfig c = parseArguments({"--config", ini, "--train.lr", "0.2"}).config;
  EXPECT_EQ(c.algorithm, "local");
  EXPECT_EQ(c.clients, 4);
  EXPECT_EQ(c.train.batch, 64);
  EXPECT_DOUBLE_EQ(c.train.lr, 0.2);  // command line wins over the file
  EXPECT_EQ(c.partition.scheme, PartitionScheme::Iid);
  EXPECT_NE(c.resolvedIni.find("[train]"), std::string::npos);
  EXPECT_NE(c.resolvedIni.find("lr = 0.2"), std::string::npos);
  EXPECT_NE(c.resolvedIni.find("algorithm = local"), std::string::npos);
}

TEST(Config, ShardsPerClientRange) {
  const ExperimentConfig c = parseArguments({"--partition.shards_per_client", "1,30"}).config;
  EXPECT_EQ(c.partition.shardsPerClientMin, 1);
  EXPECT_EQ(c.partition.shardsPerClientMax, 30);
  EXPECT_NE(test::parseError({"--partition.shards_per_client", "5,2"}).find("min,max"), std::string::npos);
}

TEST(Config, BadValuesNameTheOptionAndTheValue) {
  EXPECT_NE(test::parseError({"--train.lr", "-0.1"}).find("train.lr = -0.1"), std::string::npos);
  EXPECT_NE(test::parseError({"--train.lr", "fast"}).find("fast"), std::string::npos);
  EXPECT_NE(test::parseError({"--clients", "0"}).find("clients = 0"), std::string::npos);
  EXPECT_NE(test::parseError({"--algorithm", "fedmagic"}).find("fedmagic"), std::string::npos);
  EXPECT_NE(test::parseError({"--model", "resnet"}).find("resnet"), std::string::npos);
  EXPECT_NE(test::parseError({"--data.split", "0.5,0.5"}).find("data.split"), std::string::npos);
  EXPECT_NE(test::parseError({"--data.split", "0.9,0.2,0.1"}).find("data.split"), std::string::npos);
  EXPECT_NE(test::parseError({"--partition.scheme", "random"}).find("random"), std::string::npos);
  EXPECT_NE(test::parseError({"--fl.skip_diverged", "maybe"}).find("maybe"), std::string::npos);
  EXPECT_NE(test::parseError({"--train.momentum", "1"}).find("train.momentum"), std::string::npos);
  EXPECT_NE(test::parseError({"--partition.scheme", "file"}).find("partition.file"), std::string::npos);
}

TEST(Config, UnknownAndDuplicatedOptionsAreErrors) {
  EXPECT_NE(test::parseError({"--train.lrr", "0.1"}).find("train.lrr"), std::string::npos);
  EXPECT_FALSE(test::parseError({"--config", writeIni("[train]\nfoo = 1\n")}).empty());
  EXPECT_FALSE(test::parseError({"--config", writeIni("clients = 3\nclients = 4\n")}).empty());
  EXPECT_NE(test::parseError({"--config", "/nonexistent/x.ini"}).find("/nonexistent/x.ini"), std::string::npos);
  EXPECT_FALSE(test::parseError({"stray"}).empty());
}

TEST(Config, HelpListsEveryOptionWithDefault) {
  const ParseOutcome o = parseArguments({"--help"});
  EXPECT_EQ(o.action, ParseOutcome::Action::Help);
  for (const char* key : {"--train.lr", "--partition.alpha", "--data.split", "--eval.every", "--fl.clients_per_round",
                          "--output.client_models", "fedavg", "local", "Exit codes"})
    EXPECT_NE(o.text.find(key), std::string::npos) << key;
  EXPECT_NE(o.text.find("0.05"), std::string::npos);
  EXPECT_EQ(parseArguments({"--version"}).action, ParseOutcome::Action::Version);
}

// `fedsilo --help`'s option entries ("--key arg (=default) description"), wrapped lines joined with one
// space between words (Boost wraps and pads the descriptions), by "--key".
std::map<std::string, std::string> helpEntries() {
  const std::string help = parseArguments({"--help"}).text;
  std::istringstream in(help.substr(0, help.find("\nAlgorithms:")));
  std::vector<std::string> entries;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  --", 0) == 0 || line.rfind("  -", 0) == 0) entries.push_back(line);
    else if (!entries.empty() && line.rfind("      ", 0) == 0) entries.back() += " " + line;
  }
  std::map<std::string, std::string> byKey;
  for (const std::string& e : entries) {
    std::string single;
    for (char ch : e)
      if (ch != ' ' || single.empty() || single.back() != ' ') single += ch;
    byKey[single.substr(1, single.find(' ', 1) - 1)] = single;
  }
  return byKey;
}

TEST(Config, HelpShowsADefaultForEveryOptionWithAValue) {
  // Every "--key arg" entry shows its default: Boost's "(=value)", or, for an empty default (which
  // Boost does not show), "(default: ...)" in the description.
  std::map<std::string, std::string> byKey = helpEntries();
  int withArg = 0;
  for (const auto& [key, e] : byKey) {
    if (e.find(" arg") == std::string::npos || e.find("--config") != std::string::npos) continue;
    ++withArg;
    EXPECT_TRUE(e.find("(=") != std::string::npos || e.find("(default:") != std::string::npos) << e;
  }
  EXPECT_GT(withArg, 50);
  for (const char* key : {"--partition.file", "--data.file", "--model.loss", "--alpha_fedavg.reference"})
    EXPECT_NE(byKey[key].find("(default: "), std::string::npos) << key << ": " << byKey[key];
  // data.dir names the per-dataset default directory.
  EXPECT_NE(byKey["--data.dir"].find("/usr/share/datasets/fashion-mnist for fashion_mnist"), std::string::npos)
      << byKey["--data.dir"];
}

// Each enumerated option: every name of its table parses to its value, --help lists every name, and
// an unknown name is an error naming the option, the value and every valid name.
template <typename E>
void expectEnumeratedOption(const std::string& key, const std::vector<std::string>& extra,
                            E (*read)(const ExperimentConfig&)) {
  SCOPED_TRACE(key);
  const std::string entry = helpEntries()["--" + key];
  std::vector<std::string> args = extra;
  args.push_back("--" + key);
  for (const auto& n : enumNames<E>()) {
    args.push_back(n.name);
    EXPECT_EQ(read(parseArguments(args).config), n.value) << n.name;
    EXPECT_NE(entry.find(n.name), std::string::npos) << entry;
    args.pop_back();
  }
  args.push_back("bogus");
  const std::string error = test::parseError(args);
  EXPECT_NE(error.find(key + " = bogus: expected one of "), std::string::npos) << error;
  for (const auto& n : enumNames<E>()) EXPECT_NE(error.find(n.name), std::string::npos) << error;
}

TEST(Config, ResolvedConfigNamesTheDatasetsDefaultDirectory) {
  // fashion_mnist without data.dir: the loader reads its default directory, and the stored
  // configuration must say so.
  const ExperimentConfig fm = parseArguments({}).config;
  EXPECT_EQ(fm.data.dir, "/usr/share/datasets/fashion-mnist");
  EXPECT_NE(fm.resolvedIni.find("[data]\n"), std::string::npos);
  EXPECT_NE(fm.resolvedIni.find("\ndir = /usr/share/datasets/fashion-mnist\n"), std::string::npos) << fm.resolvedIni;
  // Given explicitly (the same or another directory): kept as given.
  EXPECT_EQ(parseArguments({"--data.dir", "/usr/share/datasets/fashion-mnist"}).config.resolvedIni, fm.resolvedIni);
  EXPECT_EQ(parseArguments({"--data.dir", "/tmp/fm"}).config.data.dir, "/tmp/fm");
  // A dataset without a default directory keeps it empty (its loader then asks for data.dir).
  const ExperimentConfig mn = parseArguments({"--dataset", "mnist"}).config;
  EXPECT_EQ(mn.data.dir, "");
  EXPECT_NE(mn.resolvedIni.find("\ndir = \n"), std::string::npos);
}

TEST(Config, HeartNeedsItsFourHospitalsAsSilos) {
  const std::vector<std::string> heart{"--dataset", "heart", "--model", "heart_mlp", "--partition.scheme", "natural"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = heart;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const ExperimentConfig c = parseArguments(with({"--clients", "4", "--data.heart_variant", "flamby"})).config;
  EXPECT_EQ(c.data.dataset, DatasetKind::Heart);
  EXPECT_EQ(c.data.heartVariant, HeartVariant::Flamby);
  EXPECT_EQ(parseArguments(with({"--clients", "4"})).config.data.heartVariant, HeartVariant::PlayerFl);
  // The shipped files' directory, found from the executable, is what the stored configuration names.
  EXPECT_NE(c.data.dir.find("heart_disease"), std::string::npos) << c.data.dir;
  EXPECT_NE(test::parseError(with({"--clients", "5"})).find("clients = 5"), std::string::npos);
  EXPECT_NE(test::parseError(with({"--clients", "3"})).find("expected clients = 4"), std::string::npos);
  EXPECT_NE(test::parseError({"--dataset", "heart", "--clients", "4"}).find("partition.scheme = natural"),
            std::string::npos);
  EXPECT_NE(test::parseError(with({"--clients", "4", "--data.heart_variant", "uci"})).find("data.heart_variant = uci"),
            std::string::npos);
  // The variant belongs to the heart data alone.
  EXPECT_NE(test::parseError({"--data.heart_variant", "flamby"}).find("applies with dataset = heart only"),
            std::string::npos);
}

TEST(Config, DryRunValidatesAndPrintsTheResolvedConfig) {
  const ParseOutcome o = parseArguments({"--dry-run", "--clients", "7"});
  EXPECT_EQ(o.action, ParseOutcome::Action::DryRun);
  EXPECT_NE(o.text.find("clients = 7"), std::string::npos);
  EXPECT_THROW(parseArguments({"--dry-run", "--clients", "-1"}), ConfigError);
}

TEST(Config, EnumeratedOptionsAreParsedOnceFromOneTable) {
  // (heart's silos are its four hospitals: natural partition, 4 clients; the other datasets parse with these too)
  expectEnumeratedOption<DatasetKind>("dataset", {"--partition.scheme", "natural", "--clients", "4"},
                                      [](const ExperimentConfig& c) { return c.data.dataset; });
  expectEnumeratedOption<ModelPreset>("model", {}, [](const ExperimentConfig& c) { return c.model.name; });
  expectEnumeratedOption<PartitionScheme>("partition.scheme", {"--partition.file", "ids.npy"},
                                          [](const ExperimentConfig& c) { return c.partition.scheme; });
  expectEnumeratedOption<PlacementBalance>("fl.placement", {},
                                           [](const ExperimentConfig& c) { return c.fl.placement; });
  expectEnumeratedOption<LossKind>("model.loss", {}, [](const ExperimentConfig& c) { return c.model.loss.value(); });
  // Blanks around a name are ignored; the resolved configuration keeps the text as given.
  const ExperimentConfig padded = parseArguments({"--model", " svm ", "--fl.placement", "clients"}).config;
  EXPECT_EQ(padded.model.name, ModelPreset::Svm);
  EXPECT_NE(padded.resolvedIni.find("model =  svm \n"), std::string::npos) << padded.resolvedIni;
  EXPECT_NE(padded.resolvedIni.find("\nplacement = clients\n"), std::string::npos) << padded.resolvedIni;
  // An empty model.loss is the preset's own loss.
  EXPECT_FALSE(parseArguments({"--model.loss", ""}).config.model.loss.has_value());
}
