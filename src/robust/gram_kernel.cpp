#include "robust/gram_kernel.hpp"

#include <Eigen/Core>
#include <algorithm>

#include "core/error.hpp"

namespace fedsilo {

namespace {

using Packet = Eigen::internal::packet_traits<float>::type;
constexpr std::size_t kLanes = Eigen::internal::packet_traits<float>::size;
static_assert(kLanes <= 16, "kGramFloatRoundings counts a lane tree of at most 16 lanes");

// Rows per side of a tile: kTile^2 accumulators and kTile + 1 operands fit the vector registers
// (32 with AVX-512: 5 x 5 ran at 1.8 times the multiply-adds per second of 4 x 4; 16 otherwise).
#if defined(EIGEN_VECTORIZE_AVX512)
constexpr int kTile = 5;
#else
constexpr int kTile = 3;
#endif

// sums[r][c] = sum over `packets` packets of a[r] * b[c], lane by lane, then over the lanes.
void gramTile(const float* const (&a)[kTile], const float* const (&b)[kTile], std::size_t packets,
              float (&sums)[kTile][kTile]) {
  using namespace Eigen::internal;
  Packet acc[kTile][kTile];
  for (auto& row : acc)
    for (Packet& p : row) p = pset1<Packet>(0.0f);
  for (std::size_t p = 0, at = 0; p < packets; ++p, at += kLanes) {
    Packet x[kTile];
    for (int r = 0; r < kTile; ++r) x[r] = ploadu<Packet>(a[r] + at);
    for (int c = 0; c < kTile; ++c) {
      const Packet y = ploadu<Packet>(b[c] + at);
      for (int r = 0; r < kTile; ++r) acc[r][c] = pmadd(x[r], y, acc[r][c]);
    }
  }
  for (int r = 0; r < kTile; ++r)
    for (int c = 0; c < kTile; ++c) sums[r][c] = predux(acc[r][c]);
}

}  // namespace

std::size_t gramLanes() { return kLanes; }

std::size_t gramPaddedWidth(std::size_t width) { return (width + kLanes - 1) / kLanes * kLanes; }

void addLowerGram(const float* rows, int K, std::size_t stride, std::size_t width, double* packed) {
  FEDSILO_ASSERT(width <= gramMaxColumns() && stride >= gramPaddedWidth(width), "Gram kernel: ", width,
                 " columns at a stride of ", stride);
  if (K <= 0) return;
  const std::size_t packets = gramPaddedWidth(width) / kLanes;
  // Rows past K (the last tile's) repeat row K - 1; their sums are dropped.
  const auto row = [&](int k) { return rows + static_cast<std::size_t>(std::min(k, K - 1)) * stride; };
  for (int i0 = 0; i0 < K; i0 += kTile) {
    const float* a[kTile];
    for (int r = 0; r < kTile; ++r) a[r] = row(i0 + r);
    for (int j0 = 0; j0 <= i0; j0 += kTile) {
      const float* b[kTile];
      for (int c = 0; c < kTile; ++c) b[c] = row(j0 + c);
      float sums[kTile][kTile];
      gramTile(a, b, packets, sums);
      for (int r = 0, i = i0; r < kTile && i < K; ++r, ++i)
        for (int c = 0, j = j0; c < kTile && j <= i; ++c, ++j)
          packed[static_cast<std::size_t>(i) * static_cast<std::size_t>(i + 1) / 2 + static_cast<std::size_t>(j)] +=
              static_cast<double>(sums[r][c]);
    }
  }
}

}  // namespace fedsilo
