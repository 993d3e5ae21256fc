// Finite-difference gradient checker for single layers and whole models (double precision).
//
// Central differences, d/dv ~ (L(v + eps) - L(v - eps)) / (2 eps), compared with the analytic
// gradient through err = |a - n| / max(|a|, |n|, floor). The floor turns the test into an absolute
// one for gradients much smaller than the loss' rounding noise (which is ~1e-16 |L| / eps), where a
// relative error is meaningless.
//
// Layers are checked on L = sum(R .* y) for a fixed random R (so dL/dy = R); models on their own
// mean batch loss. Before every forward the random context is reset to the same key so that
// dropout replays the same mask. Gradient and dx buffers are filled with NaN before backward, so a
// layer that accumulates into (instead of overwriting) its gradients, or leaves part of dx
// unwritten, fails.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "nn/layer.hpp"
#include "nn/model.hpp"

namespace fedsilo::test {

struct GradCheckOptions {
  double eps = 1e-6;
  double tol = 1e-6;
  double floor = 1e-2;
  Index maxPerTensor = -1;  // check at most this many entries of each parameter tensor (-1: all)
  Index maxInputs = -1;     // ... and of the input
  bool checkParams = true;
  bool checkInput = true;
  bool training = true;     // forward mode used by the check
  std::uint64_t seed = 1;   // entry sampling and R
};

struct GradCheckResult {
  double maxParamErr = 0.0;
  double maxInputErr = 0.0;
  Index paramsChecked = 0;
  Index inputsChecked = 0;
  std::string worst;  // where the largest error is
};

inline double gradErr(double a, double n, double floor) {
  if (!std::isfinite(a) || !std::isfinite(n)) return std::numeric_limits<double>::infinity();
  return std::abs(a - n) / std::max({std::abs(a), std::abs(n), floor});
}

// Up to `limit` distinct indices of [0, n) (all of them when limit < 0 or >= n), ascending.
inline std::vector<Index> sampleIndices(Index n, Index limit, Rng& rng) {
  std::vector<Index> idx(static_cast<std::size_t>(n));
  std::iota(idx.begin(), idx.end(), Index(0));
  if (limit < 0 || limit >= n) return idx;
  for (Index i = 0; i < limit; ++i) std::swap(idx[i], idx[i + static_cast<Index>(rng.below(n - i))]);
  idx.resize(static_cast<std::size_t>(limit));
  std::sort(idx.begin(), idx.end());
  return idx;
}

// Central difference of lossAt() with respect to v; v is restored.
template <typename LossAt>
double centralDifference(double& v, LossAt&& lossAt, double eps) {
  const double saved = v;
  v = saved + eps;
  const double lp1 = lossAt();
  v = saved - eps;
  const double lm1 = lossAt();
  v = saved;
  return (lp1 - lm1) / (2 * eps);
}

// Checks parameter entry `name`[i] (held in p, analytic gradient a) and records the worst error.
template <typename LossAt>
void checkParamEntry(double& p, double a, const std::string& name, Index i, LossAt&& lossAt,
                     const GradCheckOptions& opt, GradCheckResult& res) {
  const double num = centralDifference(p, lossAt, opt.eps);
  const double e = gradErr(a, num, opt.floor);
  if (e > res.maxParamErr) {
    res.maxParamErr = e;
    res.worst = name + "[" + std::to_string(i) + "] analytic " + std::to_string(a) + " numeric " + std::to_string(num);
  }
  ++res.paramsChecked;
}

// Checks the sampled entries of the input x against its analytic gradient dx.
template <typename LossAt>
void checkInputEntries(std::vector<double>& x, const std::vector<double>& dx, LossAt&& lossAt,
                       const GradCheckOptions& opt, Rng& rng, GradCheckResult& res) {
  for (Index i : sampleIndices(static_cast<Index>(x.size()), opt.maxInputs, rng)) {
    const double num = centralDifference(x[static_cast<std::size_t>(i)], lossAt, opt.eps);
    const double a = dx[static_cast<std::size_t>(i)];
    const double e = gradErr(a, num, opt.floor);
    if (e > res.maxInputErr) {
      res.maxInputErr = e;
      if (e > res.maxParamErr)
        res.worst = "x[" + std::to_string(i) + "] analytic " + std::to_string(a) + " numeric " + std::to_string(num);
    }
    ++res.inputsChecked;
  }
}

// Owns the parameter/gradient buffers of one stand-alone layer (what ModelT does for a model).
struct LayerParams {
  std::vector<double> params, grads;
  LayerParams(LayerT<double>& layer, Rng& rng) {
    Index n = 0;
    for (const auto& s : layer.paramSpecs()) n += s.size;
    params.assign(static_cast<std::size_t>(n), 0.0);
    grads.assign(static_cast<std::size_t>(n), 0.0);
    layer.bind(params.data(), grads.data());
    if (n > 0) layer.initParams(rng, params.data());
  }
};

// Checks dL/dparams and dL/dx of `layer` (parameters bound through `lp`) at input x (inRows x batch).
inline GradCheckResult checkLayerGradients(LayerT<double>& layer, LayerParams& lp, std::vector<double> x,
                                           int inRows, int batch, const GradCheckOptions& opt = {}) {
  const int outRows = layer.outputShape().size();
  layer.reserve(batch);
  Rng rng(opt.seed, -1, -1, Purpose::Misc, 77);
  std::vector<double> r(static_cast<std::size_t>(outRows) * batch), y(r.size());
  for (auto& v : r) v = rng.uniform(-1.0, 1.0);
  auto lossAt = [&]() {
    layer.setRandomContext(5, 3, 2, 1);
    CMapT<double> xm(x.data(), inRows, batch);
    MapT<double> ym(y.data(), outRows, batch);
    layer.forward(xm, ym, opt.training);
    long double s = 0.0L;
    for (std::size_t i = 0; i < y.size(); ++i) s += static_cast<long double>(r[i]) * y[i];
    return static_cast<double>(s);
  };
  lossAt();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::fill(lp.grads.begin(), lp.grads.end(), nan);
  std::vector<double> dx(x.size(), nan);
  {
    CMapT<double> xm(x.data(), inRows, batch), ym(y.data(), outRows, batch), rm(r.data(), outRows, batch);
    MapT<double> dxm(dx.data(), inRows, batch);
    layer.backward(xm, ym, rm, opt.checkInput ? &dxm : nullptr);
  }
  const std::vector<double> analytic = lp.grads;

  GradCheckResult res;
  if (opt.checkParams) {
    Index off = 0;
    for (const auto& spec : layer.paramSpecs()) {
      for (Index i : sampleIndices(spec.size, opt.maxPerTensor, rng))
        checkParamEntry(lp.params[static_cast<std::size_t>(off + i)], analytic[static_cast<std::size_t>(off + i)],
                        spec.name, i, lossAt, opt, res);
      off += spec.size;
    }
  }
  if (opt.checkInput) checkInputEntries(x, dx, lossAt, opt, rng, res);
  return res;
}

// Same for a finalised, initialised model on its own loss (mean over the batch).
inline GradCheckResult checkModelGradients(ModelT<double>& m, std::vector<double> x,
                                           const std::vector<std::int32_t>& labels, int batch,
                                           const GradCheckOptions& opt = {}) {
  m.reserve(batch);
  auto lossAt = [&]() {
    m.setRandomContext(9, 4, 6);
    CMapT<double> logits = m.forward(x.data(), batch, opt.training);
    return m.loss().lossSum(logits, labels.data()) / batch;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::fill(m.grads(), m.grads() + m.numParams(), nan);
  m.setRandomContext(9, 4, 6);
  const double meanLoss = m.lossAndGradient(x.data(), labels.data(), batch);
  // lossAndGradient (forwardBackward) and lossSum must agree on the value.
  EXPECT_NEAR(meanLoss, lossAt(), 1e-12 * std::max(1.0, std::abs(meanLoss)));
  const std::vector<double> analytic(m.grads(), m.grads() + m.numParams());
  std::vector<double> dx(x.size(), nan);
  if (opt.checkInput) {
    m.setRandomContext(9, 4, 6);
    CMapT<double> logits = m.forward(x.data(), batch, opt.training);
    std::vector<double> dl(static_cast<std::size_t>(logits.size()));
    MapT<double> dlm(dl.data(), logits.rows(), logits.cols());
    m.loss().forwardBackward(logits, labels.data(), dlm);
    m.backward(dl.data(), batch, dx.data());
  }

  Rng rng(opt.seed, -1, -1, Purpose::Misc, 78);
  GradCheckResult res;
  if (opt.checkParams) {
    for (const auto& blk : m.blocks()) {
      for (const auto& t : blk.tensors) {
        for (Index i : sampleIndices(t.size, opt.maxPerTensor, rng))
          checkParamEntry(m.params()[t.offset + i], analytic[static_cast<std::size_t>(t.offset + i)], t.name, i,
                          lossAt, opt, res);
      }
    }
  }
  if (opt.checkInput) checkInputEntries(x, dx, lossAt, opt, rng, res);
  return res;
}

// Random vector with entries U(lo, hi).
inline std::vector<double> randomVector(std::size_t n, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  Rng rng(seed, -1, -1, Purpose::Misc, 5);
  std::vector<double> v(n);
  for (auto& e : v) e = rng.uniform(lo, hi);
  return v;
}

// gtest assertion helper: both errors below opt.tol, something was checked.
#define EXPECT_GRADIENTS_OK(res, opt)                                              \
  do {                                                                             \
    const auto& r_ = (res);                                                        \
    EXPECT_LT(r_.maxParamErr, (opt).tol) << "worst: " << r_.worst;                 \
    EXPECT_LT(r_.maxInputErr, (opt).tol) << "worst: " << r_.worst;                 \
    EXPECT_GT(r_.paramsChecked + r_.inputsChecked, 0) << "nothing was checked";    \
  } while (0)

}  // namespace fedsilo::test
