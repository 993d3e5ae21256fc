// The 2 x 2, stride 2 max pool of every kernel set (nn/pool_kernels.hpp, nn/pool_kernels_avx512.hpp)
// against the definition, bit for bit: ties (also between -0 and +0) go to the first element in
// row-major window order, the first NaN takes its window with its payload, the gradient goes to the
// winner as 0 + dL/dy (the value a scatter into a zeroed dx gives), and the rows and columns no window
// covers (odd h or w) get 0. The shapes reach each path of the AVX-512 kernel: rows of more than 16
// outputs, of 9-16, of exactly 8 and of fewer (two rows to a vector, an odd number of rows).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "isa_scope.hpp"
#include "nn/pool.hpp"

namespace fedsilo::test {
namespace {

struct Shape3 {
  int c, h, w;
};

std::uint32_t bits(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

float nanWithPayload(std::uint32_t payload) {
  const std::uint32_t b = 0x7FC00000u | payload;
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// Values with ties everywhere, signed zeros and, when withNaN, NaNs of distinct payloads.
std::vector<float> poolInput(std::size_t n, std::uint64_t seed, bool withNaN) {
  const float values[] = {-1.0f, -0.0f, 0.0f, 1.0f, 2.0f};
  Rng rng(seed, -1, -1, Purpose::Misc);
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = values[rng.below(5)];
    if (withNaN && rng.below(40) == 0) x[i] = nanWithPayload(static_cast<std::uint32_t>(1 + i % 1000));
  }
  return x;
}

struct Pooled {
  std::vector<float> y, dx;
};

// The definition, window by window.
Pooled reference(const std::vector<float>& x, const std::vector<float>& dy, Shape3 s, int batch) {
  const int oh = s.h / 2, ow = s.w / 2;
  Pooled r{std::vector<float>(dy.size()), std::vector<float>(x.size(), 0.0f)};
  for (int p = 0; p < batch * s.c; ++p)
    for (int i = 0; i < oh; ++i)
      for (int j = 0; j < ow; ++j) {
        const std::size_t top = (static_cast<std::size_t>(p) * s.h + 2 * i) * s.w + 2 * j;
        const std::size_t at[4] = {top, top + 1, top + s.w, top + s.w + 1};
        std::size_t best = at[0];
        for (std::size_t k : at)
          if (x[k] > x[best] || (std::isnan(x[k]) && !std::isnan(x[best]))) best = k;
        const std::size_t o = (static_cast<std::size_t>(p) * oh + i) * ow + j;
        r.y[o] = x[best];
        r.dx[best] += dy[o];
      }
  return r;
}

Pooled runPool(const std::vector<float>& x, const std::vector<float>& dy, Shape3 s, int batch) {
  MaxPool2DT<float> pool(s.c, s.h, s.w);
  pool.reserve(batch);
  const int in = s.c * s.h * s.w, out = pool.outputShape().size();
  Pooled r{std::vector<float>(static_cast<std::size_t>(out) * batch, -7.0f), std::vector<float>(x.size(), -7.0f)};
  CMapT<float> xm(x.data(), in, batch);
  MapT<float> ym(r.y.data(), out, batch);
  pool.forward(xm, ym, true);
  CMapT<float> yc(r.y.data(), out, batch), dym(dy.data(), out, batch);
  MapT<float> dxm(r.dx.data(), in, batch);
  pool.backward(xm, yc, dym, &dxm);
  return r;
}

void expectSameBits(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  int shown = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (bits(got[i]) != bits(want[i]) && shown++ < 5)
      ADD_FAILURE() << what << " at " << i << ": " << got[i] << " (0x" << std::hex << bits(got[i]) << "), want "
                    << want[i] << " (0x" << bits(want[i]) << std::dec << ")";
}

TEST(PoolKernels, EverySetMatchesTheDefinitionBitForBit) {
  const int batch = 3;
  // ow = 20 (two vectors), 14 (cnn_mcmahan's first pool), 8 (two rows fill a vector; odd h and w), 7
  // (the second pool; 5 x 7 rows: the last vector holds one row), 3 (odd w)
  for (const Shape3 s : {Shape3{2, 6, 40}, Shape3{3, 28, 28}, Shape3{2, 7, 17}, Shape3{5, 14, 14}, Shape3{1, 5, 7}}) {
    for (bool withNaN : {false, true}) {
      SCOPED_TRACE(std::to_string(s.c) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w) +
                   (withNaN ? " with NaN" : ""));
      const std::size_t in = static_cast<std::size_t>(s.c) * s.h * s.w * batch;
      const std::size_t out = static_cast<std::size_t>(s.c) * (s.h / 2) * (s.w / 2) * batch;
      const auto x = poolInput(in, 7 + s.w, withNaN);
      auto dy = poolInput(out, 9 + s.h, false);
      for (std::size_t i = 0; i < dy.size(); i += 3) dy[i] = -0.0f;  // becomes +0 where it lands
      const Pooled want = reference(x, dy, s, batch);
      for (Isa isa : runnableIsas()) {
        SCOPED_TRACE(isaName(isa));
        IsaScope scope(isa);
        const Pooled got = runPool(x, dy, s, batch);
        expectSameBits(got.y, want.y, "y");
        expectSameBits(got.dx, want.dx, "dx");
      }
    }
  }
}

TEST(PoolKernels, TiesAndNaNInOneWindow) {
  // Window 0: -0 before +0 (the first wins, bits and gradient); window 1: a tie of 2s (the top right
  // wins over the bottom left); window 2: two NaNs (the first, bottom left, wins with its payload).
  const float nan1 = nanWithPayload(1), nan2 = nanWithPayload(2);
  const std::vector<float> x = {-0.0f, 0.0f, 1.0f, 2.0f, 5.0f, 1.0f,  //
                                0.0f, -1.0f, 2.0f, 0.0f, nan1, nan2};
  const std::vector<float> dy = {10.0f, 20.0f, 30.0f};
  for (Isa isa : runnableIsas()) {
    SCOPED_TRACE(isaName(isa));
    IsaScope scope(isa);
    const Pooled got = runPool(x, dy, Shape3{1, 2, 6}, 1);
    EXPECT_EQ(bits(got.y[0]), bits(-0.0f));
    EXPECT_EQ(got.y[1], 2.0f);
    EXPECT_EQ(bits(got.y[2]), bits(nan1));
    expectSameBits(got.dx, {10, 0, 0, 20, 0, 0, 0, 0, 0, 0, 30, 0}, "dx");
  }
}

}  // namespace
}  // namespace fedsilo::test
