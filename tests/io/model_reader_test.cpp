// io/model_reader: the layer table checkpoints store for model.init (text form and parse), and the
// check of a stored model against the configured one. Reading real files is in
// tests/integration/test_protocols.sh.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "io/model_reader.hpp"

using namespace fedsilo;

TEST(LayerTable, TextRoundTrips) {
  const LayerTable t{{"conv1", "fc1", "fc2"}, {832, 25120, 330}};
  const std::string text = layerTableText(t);
  EXPECT_EQ(text, "conv1 832\nfc1 25120\nfc2 330\n");
  LayerTable back;
  ASSERT_TRUE(parseLayerTable(text, back));
  EXPECT_EQ(back.names, t.names);
  EXPECT_EQ(back.sizes, t.sizes);
}

TEST(LayerTable, ParseRefusesMalformedText) {
  LayerTable t;
  EXPECT_FALSE(parseLayerTable("", t));                   // no blocks
  EXPECT_FALSE(parseLayerTable("fc1\n", t));              // no size
  EXPECT_FALSE(parseLayerTable("fc1 \n", t));             // empty size
  EXPECT_FALSE(parseLayerTable(" 12\n", t));              // empty name
  EXPECT_FALSE(parseLayerTable("fc1 12x\n", t));          // not a number
  EXPECT_FALSE(parseLayerTable("fc1 -3\n", t));           // negative
  EXPECT_FALSE(parseLayerTable("fc1 1234567890123456789\n", t));  // beyond int64's safe digits
  EXPECT_TRUE(parseLayerTable("fc1 12\nfc2 3", t));       // the last newline is optional
  EXPECT_EQ(t.sizes.size(), 2u);
}

namespace {

StoredModel stored(LayerTable layers, std::size_t params) {
  StoredModel m;
  m.layers = std::move(layers);
  m.params.assign(params, 0.5f);
  m.dataset = "/replicated/driver/global";
  return m;
}

std::string refusal(const StoredModel& m, const LayerTable& configured) {
  try {
    checkStoredModel(m, "f.ckpt", configured);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(CheckStoredModel, AcceptsTheSameBlocks) {
  const LayerTable t{{"fc1", "fc2"}, {25120, 330}};
  EXPECT_EQ(refusal(stored(t, 25450), t), "");
}

TEST(CheckStoredModel, RefusesOtherBlocksOfTheSameTotal) {
  // 784-32-10 and 784-18-390-10 both hold 25,450 parameters.
  const LayerTable file{{"fc1", "fc2"}, {25120, 330}};
  const LayerTable other{{"fc1", "fc2", "fc3"}, {14130, 7410, 3910}};
  EXPECT_NE(refusal(stored(file, 25450), other).find("the stored model has 2 layer blocks, the configured model 3"),
            std::string::npos);
  const LayerTable renamed{{"conv1", "fc2"}, {25120, 330}};
  EXPECT_NE(refusal(stored(file, 25450), renamed).find("layer block 0 is fc1 (25120 parameters) in the file, but "
                                                       "conv1 (25120 parameters)"),
            std::string::npos);
  const LayerTable resized{{"fc1", "fc2"}, {25000, 450}};
  EXPECT_NE(refusal(stored(file, 25450), resized).find("layer block 0 is fc1 (25120"), std::string::npos);
}

TEST(CheckStoredModel, RefusesATableThatDisagreesWithItsParameters) {
  const LayerTable t{{"fc1", "fc2"}, {25120, 330}};
  EXPECT_NE(refusal(stored(t, 25449), t).find("holds 25449 parameters, the configured model has 25450"),
            std::string::npos);
}
