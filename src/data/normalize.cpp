#include "data/normalize.hpp"

#include <cmath>
#include <cstdint>

#include "core/error.hpp"

namespace fedsilo {

namespace {

std::size_t planeOf(const Dataset& ds) {
  return static_cast<std::size_t>(ds.shape.h) * static_cast<std::size_t>(ds.shape.w);
}

// u8: integer sums of v and v^2 per channel, exact in any order.
ChannelStats u8Stats(const Dataset& ds, const std::vector<const IndexList*>& lists) {
  const std::size_t C = static_cast<std::size_t>(ds.shape.c), plane = planeOf(ds), dim = C * plane;
  std::vector<std::uint64_t> sum(C, 0), sumSq(C, 0);
  std::uint64_t samples = 0;
  for (const IndexList* list : lists)
    for (Index i : *list) {
      const std::uint8_t* x = ds.u8.data() + static_cast<std::size_t>(i) * dim;
      for (std::size_t c = 0; c < C; ++c)
        for (std::size_t f = c * plane; f < (c + 1) * plane; ++f) {
          sum[c] += x[f];
          sumSq[c] += static_cast<std::uint64_t>(x[f]) * x[f];
        }
      ++samples;
    }
  ChannelStats s;
  const double n = static_cast<double>(samples) * static_cast<double>(plane), scale = ds.u8Scale;
  for (std::size_t c = 0; c < C; ++c) {
    const double mean = static_cast<double>(sum[c]) / n;
    const double var = std::max(0.0, static_cast<double>(sumSq[c]) / n - mean * mean);
    s.mean.push_back(mean * scale);
    s.std.push_back(std::sqrt(var) * scale);
  }
  return s;
}

// f32: two passes in double (the mean, then the squared deviations), in list order.
ChannelStats f32Stats(const Dataset& ds, const std::vector<const IndexList*>& lists) {
  const std::size_t C = static_cast<std::size_t>(ds.shape.c), plane = planeOf(ds), dim = C * plane;
  std::vector<double> sum(C, 0.0), dev(C, 0.0);
  double n = 0.0;
  const auto forEach = [&](auto&& f) {
    for (const IndexList* list : lists)
      for (Index i : *list) {
        const float* x = ds.f32.data() + static_cast<std::size_t>(i) * dim;
        for (std::size_t c = 0; c < C; ++c)
          for (std::size_t k = c * plane; k < (c + 1) * plane; ++k) f(c, static_cast<double>(x[k]));
      }
  };
  forEach([&](std::size_t c, double v) { sum[c] += v; });
  for (const IndexList* list : lists) n += static_cast<double>(list->size()) * static_cast<double>(plane);
  ChannelStats s;
  for (std::size_t c = 0; c < C; ++c) s.mean.push_back(sum[c] / n);
  forEach([&](std::size_t c, double v) { dev[c] += (v - s.mean[c]) * (v - s.mean[c]); });
  for (std::size_t c = 0; c < C; ++c) s.std.push_back(std::sqrt(dev[c] / n));
  return s;
}

// One value per channel from a list of 1 (every channel) or C values.
std::vector<double> perChannel(const std::vector<double>& given, int channels, const char* key, const DataBundle& d) {
  if (given.size() == 1) return std::vector<double>(static_cast<std::size_t>(channels), given[0]);
  if (given.size() == static_cast<std::size_t>(channels)) return given;
  throw ConfigError(fmt(key, ": ", given.size(), " values given, expected 1 or one per channel (", channels,
                        " for dataset '", d.name, "', samples ", d.train.shape.c, "x", d.train.shape.h, "x",
                        d.train.shape.w, ")"));
}

}  // namespace

ChannelStats channelStats(const Dataset& ds, const std::vector<const IndexList*>& lists) {
  std::size_t total = 0;
  for (const IndexList* list : lists) total += list->size();
  FEDSILO_ASSERT(total > 0, "channel statistics of no samples");
  ChannelStats s = ds.isU8() ? u8Stats(ds, lists) : f32Stats(ds, lists);
  for (double& sd : s.std)
    if (!(sd > 0.0)) sd = 1.0;
  return s;
}

void normalizeInputs(DataBundle& data, const DataConfig& cfg, const std::vector<const IndexList*>& trainLists) {
  if (cfg.normalize == NormalizeKind::None) return;
  if (data.vocabSize > 0)
    throw ConfigError(fmt("data.normalize = ", cfg.normalize, ": dataset '", data.name,
                          "' holds token ids, which cannot be normalised (expected data.normalize = none)"));
  const int C = data.train.shape.c;
  ChannelStats s;
  if (cfg.mean.empty()) {
    s = channelStats(data.train, trainLists);
  } else {
    s.mean = perChannel(cfg.mean, C, "data.mean", data);
    s.std = perChannel(cfg.std, C, "data.std", data);
  }
  data.train.setNormalization(s.mean, s.std);
  if (data.test.size() > 0) data.test.setNormalization(s.mean, s.std);
}

}  // namespace fedsilo
