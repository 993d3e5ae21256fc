// Random augmentation of training images (data.augment = affine): each sample gets one random affine
// map composed of torchvision's usual transforms, applied in their usual order
//   RandomCrop(padding P)  ->  RandomHorizontalFlip  ->  RandomRotation(+-deg)  ->  RandomAffine(translate, scale)
// and resampled ONCE (nearest neighbour, torchvision's default interpolation; pixels from outside the
// image are zero before normalisation, torchvision's default fill). Parameters per sample:
//   crop offsets ~ U{0..2P} per axis, flip with probability 1/2, angle ~ U(-deg, deg),
//   shift ~ U(-t W, t W) and U(-t H, t H) rounded to whole pixels (as torchvision rounds them),
//   scale ~ U(scale_min, scale_max); rotation and scale act about the image centre.
// The draws come from the Rng the caller passes (LocalTrainer keys it by seed, client, round and the
// sample's position), always all of them in one order, so that a sample's transform does not depend
// on which rank computes it or on which other knobs are set.
#pragma once
#include <vector>

#include "core/config.hpp"
#include "core/rng.hpp"
#include "core/types.hpp"

namespace fedsilo {

struct AugmentSettings {
  double rotation = 0.0;   // degrees
  double translate = 0.0;  // fraction of the side
  double scaleMin = 1.0, scaleMax = 1.0;
  bool flip = false;
  int cropPadding = 0;
  static AugmentSettings from(const DataConfig& d);
};

// Inverse map of one sample: source (x, y) = (a x' + b y' + c, d x' + e y' + f) for output pixel (x', y').
struct AffineMap {
  double a = 1, b = 0, c = 0, d = 0, e = 1, f = 0;
  bool identity() const { return a == 1 && b == 0 && c == 0 && d == 0 && e == 1 && f == 0; }
};

class Augmenter {
 public:
  // Images of `shape` (C x H x W, H and W > 1; ConfigError otherwise, naming `dataset`); `fill` holds
  // per channel the value a zero pixel has in the gathered (possibly normalised) data.
  Augmenter(const AugmentSettings& settings, Shape shape, std::vector<float> fill, const std::string& dataset);
  // Draws one sample's map from `rng`.
  AffineMap draw(Rng& rng) const;
  // Applies `map` to the image at `image` (C*H*W values, channel planes, row-major) in place.
  void apply(const AffineMap& map, float* image);

 private:
  AugmentSettings s_;
  Shape shape_;
  std::vector<float> fill_;
  std::vector<float> source_;  // the image being resampled (one image; no allocation per sample)
};

}  // namespace fedsilo
