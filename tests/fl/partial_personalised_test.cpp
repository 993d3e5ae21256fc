// PLayer-FL and the partial/personalised baselines end to end on one rank (Communicator::single()):
// tiny FashionMNIST runs (4 clients x 200 samples, MLP), checking what each algorithm must keep,
// average or personalise; and the options' validation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "comm/communicator.hpp"
#include "fl/ditto.hpp"
#include "fl/experiment.hpp"
#include "fl/fedbabu.hpp"
#include "fl/fedlp.hpp"
#include "fl/fedprox.hpp"
#include "fl/pfedme.hpp"
#include "fl/playerfl.hpp"
#include "app/config_parser.hpp"
#include "support/null_sink.hpp"

namespace fedsilo {
namespace {

ExperimentConfig tinyConfig(const std::string& algorithm, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--algorithm", algorithm, "--dataset", "fashion_mnist", "--model", "mlp",
                                "--model.hidden", "32,16", "--clients", "4", "--rounds", "2", "--seed", "3",
                                "--partition.samples_per_client", "200", "--train.batch", "32",
                                "--train.lr", "0.05", "--output", "/tmp/unused.h5"};
  for (std::size_t i = 0; i + 1 < extra.size(); i += 2) {  // override or append
    bool found = false;
    for (std::size_t j = 0; j + 1 < args.size(); j += 2)
      if (args[j] == extra[i]) {
        args[j + 1] = extra[i + 1];
        found = true;
      }
    if (!found) args.insert(args.end(), {extra[i], extra[i + 1]});
  }
  return parseArguments(args).config;
}

struct TinyRun {
  ExperimentConfig cfg;
  Communicator comm = Communicator::single();
  std::unique_ptr<Experiment> exp;
  std::vector<float> init;
  explicit TinyRun(ExperimentConfig c) : cfg(std::move(c)) {
    exp = std::make_unique<Experiment>(cfg, comm);
    init = exp->global();
    test::NullSink sink;
    exp->run(sink);
  }
  const FlContext& ctx() const { return exp->context(); }
  std::vector<float> evalParams(int k) {
    std::vector<float> p(exp->global().size());
    exp->algorithm().loadEvalParams(ctx(), k, exp->global(), p.data());
    return p;
  }
  // Whether [off, off+n) of a and b are bit-identical.
  static bool same(const std::vector<float>& a, const std::vector<float>& b, Index off, Index n) {
    return std::memcmp(a.data() + off, b.data() + off, static_cast<std::size_t>(n) * sizeof(float)) == 0;
  }
};

TEST(PlayerFlRun, PrefixIsSharedSuffixIsPersonal) {
  TinyRun r(tinyConfig("playerfl"));
  auto& alg = dynamic_cast<PlayerFl&>(r.exp->algorithm());
  const int L = r.ctx().numBlocks();
  ASSERT_EQ(L, 3);
  const int p = alg.split();
  ASSERT_GE(p, 1);
  ASSERT_LE(p, L - 1);
  EXPECT_EQ(alg.curve().size(), static_cast<std::size_t>(L));
  EXPECT_DOUBLE_EQ(alg.curve()[0], 1.0);
  const LayerBlock& firstLocal = r.ctx().blocks[static_cast<std::size_t>(p)];
  const Index P = r.ctx().numParams, off = firstLocal.offset;
  // The global prefix was trained and averaged; the global suffix never moved from the shared init.
  EXPECT_FALSE(TinyRun::same(r.exp->global(), r.init, 0, off));
  EXPECT_TRUE(TinyRun::same(r.exp->global(), r.init, off, P - off));
  std::vector<std::vector<float>> m;
  for (int k = 0; k < 4; ++k) {
    m.push_back(r.evalParams(k));
    EXPECT_TRUE(TinyRun::same(m[k], r.exp->global(), 0, off)) << "client " << k << " prefix is the global one";
    EXPECT_FALSE(TinyRun::same(m[k], r.init, off, P - off)) << "client " << k << " trained its local layers";
  }
  EXPECT_FALSE(TinyRun::same(m[0], m[1], off, P - off)) << "local layers differ between clients";
}

TEST(PlayerFlRun, RandomSplitDiffersFromPlayerFlSplit) {
  TinyRun a(tinyConfig("playerfl"));
  TinyRun b(tinyConfig("playerfl_random"));
  auto& pa = dynamic_cast<PlayerFl&>(a.exp->algorithm());
  auto& pb = dynamic_cast<PlayerFl&>(b.exp->algorithm());
  EXPECT_EQ(pb.playerFlSplit(), pa.split());  // the same rule on the same round-0 sensitivity
  EXPECT_NE(pb.split(), pa.split());
  EXPECT_GE(pb.split(), 1);
  EXPECT_LE(pb.split(), 2);
}

TEST(PlayerFlRun, RandomNeedsThreeBlocks) {
  try {
    TinyRun r(tinyConfig("playerfl_random", {"--model.hidden", "32"}));
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("model = mlp"), std::string::npos) << e.what();
  }
}

TEST(FedBabuRun, HeadStaysAtInitBodyIsAveragedThenHeadFineTuned) {
  TinyRun r(tinyConfig("fedbabu"));
  const LayerBlock& head = r.ctx().blocks.back();
  EXPECT_TRUE(TinyRun::same(r.exp->global(), r.init, head.offset, head.size)) << "head never trained nor averaged";
  EXPECT_FALSE(TinyRun::same(r.exp->global(), r.init, 0, head.offset));
  for (int k = 0; k < 4; ++k) {
    std::vector<float> m = r.evalParams(k);
    EXPECT_TRUE(TinyRun::same(m, r.exp->global(), 0, head.offset)) << "head-only fine-tuning keeps the body";
    EXPECT_FALSE(TinyRun::same(m, r.init, head.offset, head.size)) << "the head was fine-tuned";
  }
}

TEST(FedBabuRun, FullFineTuningMovesTheBody) {
  TinyRun r(tinyConfig("fedbabu", {"--fedbabu.finetune", "full"}));
  const LayerBlock& head = r.ctx().blocks.back();
  std::vector<float> m = r.evalParams(0);
  EXPECT_FALSE(TinyRun::same(m, r.exp->global(), 0, head.offset));
}

TEST(FedBabuHook, FrozenRangeSeesNoEffectiveGradient) {
  const GradientHook h = freezeOutsideHook(1, 3, 0.5);
  std::vector<float> p{2, 3, 4, 5}, g{1, 1, 1, 1};
  h(p.data(), g.data(), 4);
  EXPECT_EQ(g, (std::vector<float>{-1.0f, 1, 1, -2.5f}));  // frozen: g + wd * p = 0
}

TEST(FedLpRun, KeepProbOneIsFedAvg) {
  TinyRun a(tinyConfig("fedavg"));
  TinyRun b(tinyConfig("fedlp", {"--fedlp.keep_prob", "1"}));
  EXPECT_TRUE(TinyRun::same(a.exp->global(), b.exp->global(), 0, a.ctx().numParams));
  TinyRun c(tinyConfig("fedlp", {"--fedlp.keep_prob", "0.5"}));
  EXPECT_FALSE(TinyRun::same(a.exp->global(), c.exp->global(), 0, a.ctx().numParams));
}

TEST(FedLpMask, BernoulliPerLayerFromItsOwnStream) {
  int kept = 0, total = 0;
  for (int k = 0; k < 50; ++k)
    for (int t = 0; t < 20; ++t) {
      const std::vector<char> m = fedLpKeepMask(1, k, t, 4, 0.7);
      EXPECT_EQ(m, fedLpKeepMask(1, k, t, 4, 0.7));
      for (char x : m) kept += x;
      total += 4;
    }
  EXPECT_NEAR(static_cast<double>(kept) / total, 0.7, 0.03);
}

TEST(FedProxRun, ProximalTermPullsTowardsTheRoundModel) {
  std::vector<float> ref{1, 1}, p{3, -1}, g{0.5f, 0.5f};
  const GradientHook h2 = proximalHook(2.0, ref.data());
  h2(p.data(), g.data(), 2);
  EXPECT_EQ(g, (std::vector<float>{4.5f, -3.5f}));
  TinyRun a(tinyConfig("fedavg"));
  TinyRun b(tinyConfig("fedprox", {"--fedprox.mu", "0"}));
  EXPECT_TRUE(TinyRun::same(a.exp->global(), b.exp->global(), 0, a.ctx().numParams));
  TinyRun c(tinyConfig("fedprox", {"--fedprox.mu", "1"}));
  // A strong proximal term keeps the model closer to where it started.
  double da = 0, dc = 0;
  for (std::size_t i = 0; i < a.init.size(); ++i) {
    da += std::pow(a.exp->global()[i] - a.init[i], 2);
    dc += std::pow(c.exp->global()[i] - c.init[i], 2);
  }
  EXPECT_LT(dc, da);
}

TEST(DittoRun, GlobalModelIsFedAvgsAndClientsUsePersonalModels) {
  TinyRun a(tinyConfig("fedavg"));
  TinyRun d(tinyConfig("ditto"));
  EXPECT_TRUE(TinyRun::same(a.exp->global(), d.exp->global(), 0, a.ctx().numParams));
  const Index P = d.ctx().numParams;
  for (int k = 0; k < 4; ++k) EXPECT_FALSE(TinyRun::same(d.evalParams(k), d.exp->global(), 0, P));
  EXPECT_NE(a.exp->lastClientAccuracy(), d.exp->lastClientAccuracy());
}

TEST(PFedMeRun, LambdaZeroNeverMovesTheLocalModel) {
  // w <- w - eta * lambda (w - theta^): lambda = 0 sends w^t back, so the global model stays at init;
  // the personal models still train.
  TinyRun r(tinyConfig("pfedme", {"--pfedme.lambda", "0", "--pfedme.inner_steps", "2"}));
  const Index P = r.ctx().numParams;
  EXPECT_TRUE(TinyRun::same(r.exp->global(), r.init, 0, P));
  EXPECT_FALSE(TinyRun::same(r.evalParams(0), r.init, 0, P));
  TinyRun s(tinyConfig("pfedme", {"--pfedme.inner_steps", "2"}));
  EXPECT_FALSE(TinyRun::same(s.exp->global(), s.init, 0, P));
}

TEST(PFedMeServer, BetaMixesOldAndMean) {
  std::vector<LayerBlock> blocks{{"a", 0, 2, {}}};
  ExactSum acc(2);
  std::vector<float> v{4, 8};
  acc.addScaled(0, v.data(), 2, 2.0);
  ServerInput in;
  in.acc = &acc;
  in.accOffset = {0};
  in.blockWeightSum = {2.0};
  std::vector<float> g{0, 2};
  applyBetaMean(in, blocks, 1.5, g);  // (1 - 1.5) g + 1.5 mean
  EXPECT_FLOAT_EQ(g[0], 6.0f);
  EXPECT_FLOAT_EQ(g[1], 11.0f);
}

TEST(AlgorithmOptions, InvalidValuesNameKeyAndValue) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> bad = {
      {"fedlp", {"--fedlp.keep_prob", "0"}},
      {"fedlp", {"--fedlp.keep_prob", "1.5"}},
      {"fedprox", {"--fedprox.mu", "-1"}},
      {"ditto", {"--ditto.lambda", "abc"}},
      {"pfedme", {"--pfedme.inner_steps", "0"}},
      {"pfedme", {"--pfedme.personal_lr", "0"}},
      {"pfedme", {"--pfedme.beta", "0"}},
      {"fedbabu", {"--fedbabu.finetune", "body"}},
      {"fedbabu", {"--fedbabu.finetune_epochs", "-2"}},
      {"playerfl", {"--playerfl.threshold", "-1"}},
      {"playerfl", {"--playerfl.split", "0"}},
      {"playerfl", {"--playerfl.include_bias", "maybe"}},
  };
  for (const auto& [alg, opt] : bad) {
    try {
      tinyConfig(alg, opt);
      ADD_FAILURE() << alg << " " << opt[0] << " " << opt[1] << " accepted";
    } catch (const ConfigError& e) {
      const std::string w = e.what();
      EXPECT_NE(w.find(opt[0].substr(2)), std::string::npos) << w;
      EXPECT_NE(w.find(opt[1]), std::string::npos) << w;
    }
  }
}

}  // namespace
}  // namespace fedsilo
