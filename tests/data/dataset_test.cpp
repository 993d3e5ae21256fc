#include <gtest/gtest.h>

#include <vector>

#include "core/error.hpp"
#include "data/dataset.hpp"

namespace fedsilo {
namespace {

Dataset smallU8() {
  Dataset ds;
  ds.shape = Shape{1, 1, 3};
  ds.numClasses = 3;
  ds.u8 = {0, 255, 51, 10, 20, 30, 100, 200, 250};
  ds.labels = {2, 0, 2};
  return ds;
}

TEST(Dataset, GatherU8ScalesAndLaysOutColumns) {
  const Dataset ds = smallU8();
  const Index idx[] = {2, 0};
  float out[6];
  ds.gather(idx, 2, out);
  // Column 0 = sample 2, column 1 = sample 0 (column-major dim x count).
  EXPECT_FLOAT_EQ(out[0], 100.0f / 255.0f);
  EXPECT_FLOAT_EQ(out[1], 200.0f / 255.0f);
  EXPECT_FLOAT_EQ(out[2], 250.0f / 255.0f);
  EXPECT_FLOAT_EQ(out[3], 0.0f);
  EXPECT_FLOAT_EQ(out[4], 1.0f);
  EXPECT_FLOAT_EQ(out[5], 0.2f);
}

TEST(Dataset, GatherHonoursCustomScaleAndDouble) {
  Dataset ds = smallU8();
  ds.u8Scale = 0.5f;
  const Index idx[] = {1};
  double out[3];
  ds.gather(idx, 1, out);
  EXPECT_DOUBLE_EQ(out[0], 5.0);
  EXPECT_DOUBLE_EQ(out[1], 10.0);
  EXPECT_DOUBLE_EQ(out[2], 15.0);
}

TEST(Dataset, GatherF32CopiesExactly) {
  Dataset ds;
  ds.shape = Shape{2, 1, 1};
  ds.numClasses = 2;
  ds.f32 = {1.5f, -2.0f, 3.25f, 4.0f, 0.1f, 7.0f};
  ds.labels = {0, 1, 1};
  const Index idx[] = {1, 1, 2};
  float out[6];
  ds.gather(idx, 3, out);
  const float want[] = {3.25f, 4.0f, 3.25f, 4.0f, 0.1f, 7.0f};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], want[i]) << i;
  double outD[2];
  const Index one[] = {0};
  ds.gather(one, 1, outD);
  EXPECT_DOUBLE_EQ(outD[0], 1.5);
  EXPECT_DOUBLE_EQ(outD[1], -2.0);
}

// gather requests the samples some places ahead of the one it converts (dataset.cpp): a batch longer than
// that window, in scattered order, still gets every sample in its column, and an invalid index past
// the window's start is reported, not read.
TEST(Dataset, GatherLongBatchInScatteredOrder) {
  Dataset ds;
  ds.shape = Shape{1, 10, 10};
  ds.numClasses = 2;
  const int n = 300;
  for (int i = 0; i < n; ++i)
    for (int f = 0; f < 100; ++f) ds.u8.push_back(static_cast<std::uint8_t>((i * 7 + f) % 256));
  ds.labels.assign(n, 0);
  std::vector<Index> idx;
  for (int j = 0; j < 100; ++j) idx.push_back((j * 97 + 13) % n);
  std::vector<float> out(100 * 100);
  ds.gather(idx.data(), 100, out.data());
  for (int j = 0; j < 100; ++j)
    for (int f = 0; f < 100; ++f)
      ASSERT_EQ(out[j * 100 + f], static_cast<float>((idx[j] * 7 + f) % 256) * ds.u8Scale) << j << " " << f;
  idx[70] = n;
  EXPECT_THROW(ds.gather(idx.data(), 100, out.data()), RuntimeError);
}

TEST(Dataset, GatherRejectsOutOfRangeIndex) {
  const Dataset ds = smallU8();
  const Index idx[] = {3};
  float out[3];
  EXPECT_THROW(ds.gather(idx, 1, out), RuntimeError);
}

TEST(Dataset, LabelCounts) {
  const Dataset ds = smallU8();
  EXPECT_EQ(ds.labelCounts({0, 1, 2}), (std::vector<Index>{1, 0, 2}));
  EXPECT_EQ(ds.labelCounts({2}), (std::vector<Index>{0, 0, 1}));
  EXPECT_EQ(ds.labelCounts({}), (std::vector<Index>{0, 0, 0}));
}

}  // namespace
}  // namespace fedsilo
