// The privacy.* options: defaults, every bad value and combination refused with a message naming the
// option (or the algorithm or model), the client-level calibration, and the resolved configuration
// that every results file stores.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/config_parser.hpp"
#include "app/privacy_options.hpp"
#include "core/error.hpp"
#include "privacy/calibration.hpp"
#include "support/parse_error.hpp"

namespace fedsilo {
namespace {

// The error of `args` contains every string of `parts`.
void expectError(const std::vector<std::string>& args, const std::vector<std::string>& parts) {
  const std::string e = test::parseError(args);
  ASSERT_FALSE(e.empty()) << "accepted: " << ::testing::PrintToString(args);
  for (const std::string& p : parts) EXPECT_NE(e.find(p), std::string::npos) << "'" << p << "' not in: " << e;
}

const std::vector<std::string> kClient{"--privacy.level", "client", "--privacy.noise_multiplier", "1"};

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

TEST(PrivacyOptions, DefaultsAreOff) {
  const PrivacyConfig p = parseArguments({}).config.privacy;
  EXPECT_EQ(p.level, PrivacyLevel::None);
  EXPECT_FALSE(p.any());
  EXPECT_EQ(p.clip, 1.0);
  EXPECT_EQ(p.delta, 1e-5);
  EXPECT_EQ(p.noisePlacement, NoisePlacement::Server);
  EXPECT_FALSE(p.secureAggregation);
}

TEST(PrivacyOptions, ReadsEveryOption) {
  const PrivacyConfig p =
      parseArguments(with(kClient, {"--privacy.clip", "0.3", "--privacy.delta", "1e-6", "--privacy.adaptive_clip", "true",
                                    "--privacy.target_quantile", "0.7", "--privacy.clip_lr", "0.1",
                                    "--privacy.clip_count_std", "2", "--privacy.secure_aggregation", "true",
                                    "--privacy.secagg_threshold", "3"}))
          .config.privacy;
  EXPECT_EQ(p.level, PrivacyLevel::Client);
  EXPECT_EQ(p.noiseMultiplier, 1.0);
  EXPECT_EQ(p.clip, 0.3);
  EXPECT_EQ(p.delta, 1e-6);
  EXPECT_TRUE(p.adaptiveClip);
  EXPECT_EQ(p.targetQuantile, 0.7);
  EXPECT_EQ(p.clipLr, 0.1);
  EXPECT_EQ(p.clipCountStd, 2.0);
  EXPECT_TRUE(p.secureAggregation);
  EXPECT_EQ(p.secaggThreshold, 3);
}

TEST(PrivacyOptions, BadValuesNameTheOptionAndTheValue) {
  expectError({"--privacy.level", "user"}, {"privacy.level = user", "none, client, sample"});
  expectError(with(kClient, {"--privacy.clip", "0"}), {"privacy.clip = 0"});
  expectError(with(kClient, {"--privacy.clip", "inf"}), {"privacy.clip"});
  expectError({"--privacy.noise_multiplier", "-1"}, {"privacy.noise_multiplier = -1"});
  expectError({"--privacy.noise_multiplier", "lots"}, {"lots"});
  expectError({"--privacy.target_epsilon", "-3"}, {"privacy.target_epsilon = -3"});
  expectError({"--privacy.delta", "0"}, {"privacy.delta = 0"});
  expectError({"--privacy.delta", "1"}, {"privacy.delta = 1"});
  expectError({"--privacy.noise_placement", "both"}, {"privacy.noise_placement = both", "server, clients"});
  expectError({"--privacy.adaptive_clip", "sometimes"}, {"privacy.adaptive_clip", "sometimes"});
  expectError({"--privacy.target_quantile", "1"}, {"privacy.target_quantile = 1"});
  expectError({"--privacy.clip_lr", "0"}, {"privacy.clip_lr = 0"});
  expectError({"--privacy.clip_count_std", "-1"}, {"privacy.clip_count_std = -1"});
  expectError({"--privacy.secure_aggregation", "2"}, {"privacy.secure_aggregation"});
  expectError({"--privacy.secagg_threshold", "-1"}, {"privacy.secagg_threshold = -1"});
  expectError({"--privacy.secagg_threshold", "half"}, {"half"});
}

TEST(PrivacyOptions, RefusesCombinationsThatWouldBeIgnored) {
  expectError({"--privacy.level", "client"}, {"noise_multiplier", "target_epsilon"});
  expectError(with(kClient, {"--privacy.target_epsilon", "3"}), {"exactly one"});
  expectError({"--privacy.level", "sample", "--privacy.noise_multiplier", "1", "--privacy.noise_placement", "clients"},
              {"privacy.noise_placement = clients", "privacy.level = sample"});
  expectError({"--privacy.level", "sample", "--privacy.noise_multiplier", "1", "--privacy.adaptive_clip", "true"},
              {"privacy.adaptive_clip", "privacy.level = client"});
  expectError(with(kClient, {"--privacy.adaptive_clip", "true", "--privacy.noise_placement", "clients"}),
              {"privacy.adaptive_clip", "noise_placement = server"});
  // The clipped-count release would cost more than the whole budget.
  expectError(with(kClient, {"--privacy.adaptive_clip", "true", "--privacy.clip_count_std", "0.1"}),
              {"privacy.clip_count_std = 0.1", "too small"});
  // Level none ignores the DP options (a sweep switches DP off and keeps the rest).
  EXPECT_EQ(parseArguments({"--privacy.noise_multiplier", "2"}).config.privacy.level, PrivacyLevel::None);
}

TEST(PrivacyOptions, RefusesAlgorithmsAndModelsNamingBoth) {
  expectError(with(kClient, {"--algorithm", "ditto"}), {"privacy.level = client", "algorithm = ditto", "fedavg"});
  expectError(with(kClient, {"--algorithm", "global", "--rounds", "1"}), {"algorithm = global"});
  expectError({"--privacy.level", "sample", "--privacy.noise_multiplier", "1", "--algorithm", "qffl"},
              {"privacy.level = sample", "algorithm = qffl", "training loss"});
  for (const char* a : {"fedfa", "alpha_fedavg"})
    expectError({"--privacy.level", "sample", "--privacy.noise_multiplier", "1", "--algorithm", a},
                {"privacy.level = sample", std::string("algorithm = ") + a, "ditto", "pfedme"});
  for (const char* a : {"ditto", "local", "pfedme"})
    EXPECT_NO_THROW(parseArguments({"--privacy.level", "sample", "--privacy.noise_multiplier", "1", "--algorithm", a})) << a;
  expectError(with(kClient, {"--algorithm", "playerfl"}), {"algorithm = playerfl", "playerfl.split"});
  EXPECT_NO_THROW(parseArguments(with(kClient, {"--algorithm", "playerfl", "--playerfl.split", "2"})));
  expectError({"--privacy.secure_aggregation", "true", "--algorithm", "pfedme"},
              {"privacy.secure_aggregation = true", "algorithm = pfedme"});
  expectError({"--privacy.secure_aggregation", "true", "--algorithm", "fedfa"}, {"algorithm = fedfa", "level = client"});
  for (const char* a : {"fedavg", "fedprox", "qffl", "fedfa", "alpha_fedavg", "fedbabu", "fedlp"})
    EXPECT_NO_THROW(parseArguments(with(kClient, {"--algorithm", a, "--privacy.secure_aggregation", "true"}))) << a;
  for (const char* m : {"mlp", "logreg", "svm", "cnn_mcmahan", "cnn_playerfl", "cnn_playerfl_cifar", "lstm", "heart_mlp",
                        "transformer_playerfl"})
    EXPECT_NO_THROW(parseArguments({"--privacy.level", "sample", "--privacy.noise_multiplier", "1", "--model", m})) << m;
}

TEST(PrivacyOptions, ATargetEpsilonCalibratesTheClientLevelNoiseForThePlannedRounds) {
  const ExperimentConfig c = parseArguments({"--clients", "40", "--fl.clients_per_round", "4", "--rounds", "30",
                                             "--privacy.level", "client", "--privacy.target_epsilon", "2",
                                             "--privacy.delta", "1e-6"})
                                 .config;
  const double z = c.privacy.noiseMultiplier;
  EXPECT_EQ(z, calibrateNoiseMultiplier(0.1, 30, 1e-6, 2.0).noiseMultiplier);
  EXPECT_LE(sgmEpsilon(0.1, z, 30, 1e-6).epsilon, 2.0);
  EXPECT_GT(sgmEpsilon(0.1, z * 0.99, 30, 1e-6).epsilon, 2.0);
  // Every client every round (fl.clients_per_round = 0): q = 1.
  const ExperimentConfig all =
      parseArguments({"--rounds", "5", "--privacy.level", "client", "--privacy.target_epsilon", "2"}).config;
  EXPECT_EQ(all.privacy.noiseMultiplier, calibrateNoiseMultiplier(1.0, 5, 1e-5, 2.0).noiseMultiplier);
  // A sample-level target needs the clients' sizes: z is left for start-up.
  EXPECT_EQ(parseArguments({"--privacy.level", "sample", "--privacy.target_epsilon", "2"}).config.privacy.noiseMultiplier,
            0.0);
}

TEST(PrivacyOptions, TheResolvedConfigurationHoldsEveryPrivacyOption) {
  const std::string ini = parseArguments({"--dry-run"}).text;
  const std::size_t section = ini.find("\n[privacy]\n");
  ASSERT_NE(section, std::string::npos) << ini;
  for (const OptionSpec& o : privacyOptions()) {
    const std::string key = o.key.substr(std::string("privacy.").size());
    EXPECT_NE(ini.find("\n" + key + " = " + o.defaultValue + "\n", section), std::string::npos) << o.key;
  }
}

}  // namespace
}  // namespace fedsilo
