// Personal state is part of the Algorithm contract: an algorithm that only keeps its per-client models
// in a PersonalStore (and overrides neither checkpoint nor evalParams) is evaluated with them and gets
// them checkpointed and restored. Also the pieces that serialise state (StatePacker) and the one-table
// enumerated options.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "comm/placement.hpp"
#include "core/error.hpp"
#include "fl/algorithm.hpp"
#include "fl/algorithms/fedbabu.hpp"
#include "fl/algorithms/one_shot.hpp"
#include "fl/personal_store.hpp"
#include "fl/state_packer.hpp"
#include "app/config_parser.hpp"
#include "nn/dense.hpp"
#include "support/memory_archive.hpp"

namespace fedsilo {
namespace {

using test::MemoryArchive;

// The smallest personalised algorithm: each client trains its own copy of the global model and keeps
// it; the server keeps one replicated counter. No checkpoint() and no evalParams() of its own.
class MinimalPersonal : public Algorithm {
 public:
  std::string name() const override { return "minimal_personal"; }
  void clientUpdate(ClientContext& c, ClientUpdate& out) override {
    Rng rng = c.shuffleRng();
    c.trainer.train(c.model, c.client.train, c.trainOptions(), rng, c.client.id, c.round);
    personal_.put(c.client.id, c.model.params(), static_cast<std::size_t>(c.model.numParams()));
    out.blockWeight.assign(c.fl.blocks.size(), 0.0);
  }
  void serverUpdate(const FlContext&, const ServerInput&, std::vector<float>&) override { ++rounds_; }
  std::vector<double> serverState() const override { return {static_cast<double>(rounds_)}; }
  void setServerState(const std::vector<double>& s) override { rounds_ = static_cast<int>(s.at(0)); }
  PersonalStore* personalStore() override { return &personal_; }
  int rounds() const { return rounds_; }

 private:
  PersonalStore personal_;
  int rounds_ = 0;
};

// The same algorithm without a store: nothing personal to save or to evaluate with.
class MinimalGlobal : public MinimalPersonal {
 public:
  PersonalStore* personalStore() override { return nullptr; }
};

// Three clients on one rank over a 2-feature, 2-class pool of six samples; a 2 -> 2 dense model.
struct TinyFederation {
  ExperimentConfig cfg;
  DataBundle data;
  std::vector<ClientData> clients;
  Placement placement{3, 1};
  Model model{Shape{2, 1, 1}, 2};
  std::unique_ptr<LocalTrainer> trainer;
  std::unique_ptr<FlContext> ctx;
  std::vector<float> global;

  TinyFederation() {
    cfg.train.epochs = 2;
    cfg.train.batch = 2;
    cfg.train.lr = 0.5;
    data.train.shape = Shape{2, 1, 1};
    data.train.numClasses = 2;
    data.train.f32 = {1, 0, 0, 1, 1, 1, -1, 0, 0, -1, -1, -1};
    data.train.labels = {0, 1, 0, 1, 0, 1};
    for (int k = 0; k < 3; ++k) {
      ClientData c;
      c.id = k;
      c.train = {2 * k, 2 * k + 1};
      clients.push_back(c);
    }
    model.add(std::make_unique<Dense>(2, 2), "fc");
    model.finalize();
    model.reserve(2);
    Rng init(1, -1, -1, Purpose::Init);
    model.initialize(init);
    global.assign(model.params(), model.params() + model.numParams());
    trainer = std::make_unique<LocalTrainer>(data.train, 2);
    ctx.reset(new FlContext{cfg, data, clients, placement, 0, model.blocks(), model.numParams(), InputSpec{}});
  }

  // What the driver does for client k in round 0: the global model in, clientUpdate.
  void train(Algorithm& alg, int k) {
    std::memcpy(model.params(), global.data(), global.size() * sizeof(float));
    ClientContext cc{*ctx, clients[static_cast<std::size_t>(k)], 0, model, *trainer, global};
    ClientUpdate up;
    alg.clientUpdate(cc, up);
  }

  std::vector<float> evalParams(const Algorithm& alg, int k) const {
    std::vector<float> p(global.size(), -7.0f);
    alg.loadEvalParams(*ctx, k, global, p.data());
    return p;
  }
};

TEST(PersonalStoreContract, EvalParamsReadsTheStoreByDefault) {
  TinyFederation f;
  MinimalPersonal alg;
  f.train(alg, 0);
  f.train(alg, 2);
  ASSERT_EQ(alg.personalStore()->size(), 2u);
  std::vector<float> p(f.global.size());
  // A client with an entry is evaluated with it, bit for bit; it differs from the global model.
  ASSERT_TRUE(alg.evalParams(*f.ctx, 2, f.global, p.data()));
  EXPECT_EQ(p, *alg.personalStore()->find(2));
  EXPECT_NE(p, f.global);
  // A client that never trained uses the global model: false, and `out` is left alone.
  std::fill(p.begin(), p.end(), -7.0f);
  EXPECT_FALSE(alg.evalParams(*f.ctx, 1, f.global, p.data()));
  EXPECT_EQ(p, std::vector<float>(f.global.size(), -7.0f));
  EXPECT_EQ(f.evalParams(alg, 1), f.global);
  // Without a store every client is global.
  MinimalGlobal plain;
  f.train(plain, 0);
  EXPECT_FALSE(plain.evalParams(*f.ctx, 0, f.global, p.data()));
}

TEST(PersonalStoreContract, CheckpointSavesAndRestoresTheStoreByDefault) {
  TinyFederation f;
  MinimalPersonal alg;
  f.train(alg, 0);
  f.train(alg, 1);
  alg.serverUpdate(*f.ctx, ServerInput{}, f.global);
  MemoryArchive ar;
  alg.checkpoint(ar);
  // "server_state" and "personal", the names the checkpoint code reads back.
  std::vector<std::string> names = ar.names();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"personal", "server_state"}));
  EXPECT_EQ(ar.clientFloatsOf("personal").size(), 2u);

  ar.startLoading();
  MinimalPersonal restored;
  restored.checkpoint(ar);
  EXPECT_EQ(restored.rounds(), 1);
  ASSERT_EQ(restored.personalStore()->size(), 2u);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(f.evalParams(restored, k), f.evalParams(alg, k)) << "client " << k;
  EXPECT_EQ(f.evalParams(restored, 2), f.global);

  // Without a store only the server state is saved.
  MemoryArchive plainAr;
  MinimalGlobal plain;
  plain.checkpoint(plainAr);
  EXPECT_EQ(plainAr.names(), std::vector<std::string>{"server_state"});
}

TEST(PersonalStoreContract, SnapshotAndRestoreUndoAnUpdate) {
  PersonalStore s;
  const float a[2] = {1.0f, 2.0f}, b[2] = {3.0f, 4.0f};
  auto none = s.snapshot(5);
  s.put(5, a, 2);
  s.restore(5, none);  // the client had no entry before: it has none again
  EXPECT_FALSE(s.has(5));
  s.put(5, a, 2);
  auto before = s.snapshot(5);
  s.put(5, b, 2);
  s.restore(5, before);
  EXPECT_EQ(*s.find(5), (std::vector<float>{1.0f, 2.0f}));
}

TEST(StatePacker, FieldsComeBackInPackingOrder) {
  StatePacker p;
  p.scalar(2.5);
  p.doubles({1.0, -3.0});
  p.ints({7, -1, 1 << 30});
  p.floats({0.25f});
  p.doubles({});
  const std::vector<double> flat = p.take();
  StateReader r(flat);
  EXPECT_EQ(r.scalar(), 2.5);
  EXPECT_EQ(r.doubles(), (std::vector<double>{1.0, -3.0}));
  EXPECT_EQ(r.ints(), (std::vector<int>{7, -1, 1 << 30}));
  EXPECT_EQ(r.floats(), std::vector<float>{0.25f});
  EXPECT_FALSE(r.done());
  EXPECT_TRUE(r.doubles().empty());
  EXPECT_TRUE(r.done());
  EXPECT_THROW(r.scalar(), RuntimeError);  // reading past the end is an internal error, not garbage
}

TEST(StatePacker, RowsRoundTripAndDropAPartialRow) {
  const std::vector<std::vector<double>> rows{{1, 2, 3}, {4, 5, 6}};
  const std::vector<double> flat = flattenRows(rows);
  EXPECT_EQ(flat, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(splitRows(flat, 3), rows);
  EXPECT_EQ(splitRows({1, 2, 3, 4}, 3), (std::vector<std::vector<double>>{{1, 2, 3}}));
  EXPECT_TRUE(splitRows(flat, 0).empty());
}

enum class Fruit { Apple, Pear };
}  // namespace
template <>
const std::vector<EnumName<Fruit>>& enumNames<Fruit>() {
  static const std::vector<EnumName<Fruit>> names = {{Fruit::Apple, "apple"}, {Fruit::Pear, "pear"}};
  return names;
}
namespace {

TEST(OptionChoice, OneTableChecksAndConverts) {
  EXPECT_EQ(parseEnum<Fruit>("x.fruit", " pear "), Fruit::Pear);
  EXPECT_STREQ(nameOf(Fruit::Apple), "apple");
  try {
    parseEnum<Fruit>("x.fruit", "plum");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "x.fruit = plum: expected one of apple, pear");
  }
}

TEST(OptionChoice, AlgorithmOptionsAreEnumsAfterParsing) {
  auto cfg = [](std::vector<std::string> extra) {
    std::vector<std::string> a{"--algorithm", "gems", "--model", "logreg", "--rounds", "1"};
    a.insert(a.end(), extra.begin(), extra.end());
    return parseArguments(a).config;
  };
  const OneShotOptions defaults = OneShotOptions::parse(cfg({}));
  EXPECT_EQ(defaults.init, LocalInit::Shared);
  EXPECT_EQ(defaults.shape, BallShape::Sphere);
  EXPECT_EQ(defaults.mode, GemsMode::Auto);
  EXPECT_FALSE(defaults.finetuneOptimizer.has_value());  // "train": train.optimizer
  const OneShotOptions set = OneShotOptions::parse(cfg({"--gems.init", "independent", "--gems.shape", "ellipsoid",
                                                        "--gems.mode", "convex", "--gems.finetune_optimizer", "adam"}));
  EXPECT_EQ(set.finetuneOptimizer, OptimizerKind::Adam);
  try {
    OneShotOptions::parse(cfg({"--gems.finetune_optimizer", "lbfgs"}));
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "gems.finetune_optimizer = lbfgs: expected train or one of sgd, adam, adamw");
  }
  EXPECT_EQ(set.init, LocalInit::Independent);
  EXPECT_EQ(set.shape, BallShape::Ellipsoid);
  EXPECT_EQ(set.mode, GemsMode::Convex);
  OptionValues babu;
  babu.set("fedbabu.finetune", "full");
  babu.set("fedbabu.finetune_epochs", "3");
  EXPECT_EQ(FedBabuOptions::parse(babu).finetune, FinetuneScope::Full);
  babu.set("fedbabu.finetune", "body");
  EXPECT_THROW(FedBabuOptions::parse(babu), ConfigError);
}

}  // namespace
}  // namespace fedsilo
