#include "data/augment.hpp"

#include <cmath>

#include "core/error.hpp"

namespace fedsilo {

namespace {

// m1 after m2: the map q -> m1(m2(q)).
AffineMap compose(const AffineMap& m1, const AffineMap& m2) {
  AffineMap r;
  r.a = m1.a * m2.a + m1.b * m2.d;
  r.b = m1.a * m2.b + m1.b * m2.e;
  r.c = m1.a * m2.c + m1.b * m2.f + m1.c;
  r.d = m1.d * m2.a + m1.e * m2.d;
  r.e = m1.d * m2.b + m1.e * m2.e;
  r.f = m1.d * m2.c + m1.e * m2.f + m1.f;
  return r;
}

// q -> k (q - centre) + centre + shift, with k a 2x2 matrix [[k00, k01], [k10, k11]].
AffineMap aboutCentre(double k00, double k01, double k10, double k11, double cx, double cy, double sx, double sy) {
  AffineMap m;
  m.a = k00;
  m.b = k01;
  m.d = k10;
  m.e = k11;
  m.c = cx + sx - (k00 * cx + k01 * cy);
  m.f = cy + sy - (k10 * cx + k11 * cy);
  return m;
}

}  // namespace

AugmentSettings AugmentSettings::from(const DataConfig& d) {
  AugmentSettings s;
  s.rotation = d.augmentRotation;
  s.translate = d.augmentTranslate;
  s.scaleMin = d.augmentScaleMin;
  s.scaleMax = d.augmentScaleMax;
  s.flip = d.augmentFlip;
  s.cropPadding = d.augmentCropPadding;
  return s;
}

Augmenter::Augmenter(const AugmentSettings& settings, Shape shape, std::vector<float> fill, const std::string& dataset)
    : s_(settings), shape_(shape), fill_(std::move(fill)) {
  if (shape.h < 2 || shape.w < 2)
    throw ConfigError(fmt("data.augment = affine needs images (C x H x W with H, W >= 2), but dataset '", dataset,
                          "' has samples ", shape.c, "x", shape.h, "x", shape.w, " (expected data.augment = none)"));
  FEDSILO_ASSERT(fill_.size() == static_cast<std::size_t>(shape.c), "augment: one fill value per channel");
  source_.assign(static_cast<std::size_t>(shape.size()), 0.0f);
}

AffineMap Augmenter::draw(Rng& rng) const {
  const double W = shape_.w, H = shape_.h, cx = (W - 1) / 2, cy = (H - 1) / 2, P = s_.cropPadding;
  // Every draw happens, in this order, whatever is enabled.
  const double ox = static_cast<double>(rng.below(static_cast<std::uint64_t>(2 * s_.cropPadding + 1))) - P;
  const double oy = static_cast<double>(rng.below(static_cast<std::uint64_t>(2 * s_.cropPadding + 1))) - P;
  const bool flip = rng.uniform() < 0.5 && s_.flip;
  const double angle = rng.uniform(-s_.rotation, s_.rotation) * std::acos(-1.0) / 180.0;
  const double tx = std::nearbyint(rng.uniform(-s_.translate * W, s_.translate * W));
  const double ty = std::nearbyint(rng.uniform(-s_.translate * H, s_.translate * H));
  const double scale = rng.uniform(s_.scaleMin, s_.scaleMax);
  // Inverse maps, output towards source: affine^-1, rotation^-1, flip, crop^-1.
  const AffineMap affineInv = aboutCentre(1 / scale, 0, 0, 1 / scale, cx, cy, -tx / scale, -ty / scale);
  const double co = std::cos(angle), si = std::sin(angle);
  const AffineMap rotationInv = aboutCentre(co, -si, si, co, cx, cy, 0, 0);
  const AffineMap flipMap = flip ? AffineMap{-1, 0, W - 1, 0, 1, 0} : AffineMap{};
  const AffineMap cropInv{1, 0, ox, 0, 1, oy};
  return compose(cropInv, compose(flipMap, compose(rotationInv, affineInv)));
}

void Augmenter::apply(const AffineMap& map, float* image) {
  if (map.identity()) return;
  const int W = shape_.w, H = shape_.h;
  const std::size_t plane = static_cast<std::size_t>(W) * static_cast<std::size_t>(H);
  std::copy(image, image + source_.size(), source_.begin());
  for (int y = 0; y < H; ++y) {
    double sx = map.b * y + map.c, sy = map.e * y + map.f;
    for (int x = 0; x < W; ++x, sx += map.a, sy += map.d) {
      const int ix = static_cast<int>(std::floor(sx + 0.5)), iy = static_cast<int>(std::floor(sy + 0.5));
      const std::size_t out = static_cast<std::size_t>(y) * static_cast<std::size_t>(W) + static_cast<std::size_t>(x);
      const bool inside = ix >= 0 && ix < W && iy >= 0 && iy < H;
      const std::size_t in =
          inside ? static_cast<std::size_t>(iy) * static_cast<std::size_t>(W) + static_cast<std::size_t>(ix) : 0;
      for (std::size_t c = 0; c < fill_.size(); ++c)
        image[c * plane + out] = inside ? source_[c * plane + in] : fill_[c];
    }
  }
}

}  // namespace fedsilo
