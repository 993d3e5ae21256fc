// The element-wise functions of nn/elementwise.hpp, and the layers that use them, give an element the
// same bits wherever it sits: arrays of 67 equal values (at every vector width a vector body and a
// remainder) at several alignments; an LSTM and the softmax loss on batches of 68 and 67 equal samples.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/rng.hpp"
#include "nn/elementwise.hpp"
#include "nn/loss.hpp"
#include "nn/lstm.hpp"

namespace fedsilo::test {
namespace {

constexpr Eigen::Index kElements = 67;

template <typename T>
bool sameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Values over the range the gates see, with both of Eigen's cut-offs (tanh clamps near +-8, logistic
// switches to exp below -9 and saturates above 15.7) and tiny values.
template <typename T>
std::vector<T> sweep() {
  std::vector<T> xs{T(0), T(-0.0), T(1e-5), T(-3e-4), T(4e-4), T(-9), T(-9.0001), T(7.99), T(8.01), T(15.7), T(16)};
  for (int k = -2000; k <= 2000; ++k) xs.push_back(static_cast<T>(0.0117 * k + 1e-4 * (k % 7)));
  return xs;
}

// f over kElements copies of each x, at offsets 0..3 of a buffer: every output must have the bits of
// the first (and so of any position), and be close to `exact`.
template <typename T, typename F, typename Exact>
void expectPositionIndependent(F f, Exact exact, double tolerance, const char* name) {
  for (const T x : sweep<T>()) {
    T first = T(0);
    bool haveFirst = false;
    for (Eigen::Index offset = 0; offset < 4; ++offset) {
      std::vector<T> in(offset + kElements, x), out(offset + kElements, T(-7));
      f(in.data() + offset, out.data() + offset, kElements);
      if (!haveFirst) {
        first = out[offset];
        haveFirst = true;
        ASSERT_NEAR(static_cast<double>(first), exact(static_cast<double>(x)), tolerance) << name << "(" << x << ")";
      }
      for (Eigen::Index i = 0; i < kElements; ++i)
        ASSERT_TRUE(sameBits(out[offset + i], first))
            << name << "(" << x << ") at element " << i << " of an array at offset " << offset << ": "
            << out[offset + i] << " against " << first;
    }
    // in place, as the LSTM calls it
    std::vector<T> inPlace(kElements, x);
    f(inPlace.data(), inPlace.data(), kElements);
    for (Eigen::Index i = 0; i < kElements; ++i) ASSERT_TRUE(sameBits(inPlace[i], first)) << name << "(" << x << ")";
  }
}

double logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST(Elementwise, LogisticDependsOnTheValueOnly) {
  expectPositionIndependent<float>([](auto... a) { logisticOf<float>(a...); }, logistic, 1e-6, "logistic<float>");
  expectPositionIndependent<double>([](auto... a) { logisticOf<double>(a...); }, logistic, 1e-14, "logistic<double>");
}

TEST(Elementwise, TanhDependsOnTheValueOnly) {
  const auto exact = [](double x) { return std::tanh(x); };
  expectPositionIndependent<float>([](auto... a) { tanhOf<float>(a...); }, exact, 1e-6, "tanh<float>");
  expectPositionIndependent<double>([](auto... a) { tanhOf<double>(a...); }, exact, 1e-15, "tanh<double>");
}

// Different values in one array: each output is what that value gives alone (no lane sees another).
TEST(Elementwise, EachElementIsItsValuesResult) {
  std::vector<float> xs = sweep<float>();
  std::vector<float> all(xs.size());
  logisticOf(xs.data(), all.data(), static_cast<Eigen::Index>(xs.size()));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    float alone;
    logisticOf(&xs[i], &alone, 1);
    ASSERT_TRUE(sameBits(all[i], alone)) << "logistic(" << xs[i] << ")";
  }
}

// An LSTM (hidden 37: a column of 148 gates, so columns start at every alignment) over a batch of 68
// equal sequences: every sample's output and input gradient have the same bits. (68, not 67: the LSTM's
// matrix products run on Eigen's GEMM, which accumulates the columns past the last multiple of 4 in
// another order, so there a sample's bits do depend on its place; docs/performance.md.)
TEST(Lstm, EqualSamplesGetEqualBitsWhereverTheySitInTheBatch) {
  const int in = 3, hidden = 37, seqLen = 4, batch = 68;
  LstmT<float> lstm(in, hidden, seqLen, false);
  std::size_t count = 0;
  for (const ParamSpec& p : lstm.paramSpecs()) count += static_cast<std::size_t>(p.size);
  std::vector<float> params(count), grads(count);
  lstm.bind(params.data(), grads.data());
  Rng rng(7, -1, -1, Purpose::Init);
  // weights large enough that some gate pre-activations pass Eigen's cut-offs
  for (float& w : params) w = static_cast<float>(rng.uniform() * 8.0 - 4.0);
  lstm.reserve(batch);
  std::vector<float> sample(static_cast<std::size_t>(in * seqLen));
  for (float& v : sample) v = static_cast<float>(rng.uniform() * 2.0 - 1.0);
  std::vector<float> x, y(static_cast<std::size_t>(hidden) * batch), dy(y.size()), dx(sample.size() * batch);
  for (int b = 0; b < batch; ++b) x.insert(x.end(), sample.begin(), sample.end());
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < hidden; ++h) dy[static_cast<std::size_t>(b * hidden + h)] = 0.01f * static_cast<float>(h - 18);
  CMapT<float> xm(x.data(), in * seqLen, batch);
  MapT<float> ym(y.data(), hidden, batch);
  lstm.forward(xm, ym, true);
  MapT<float> dxm(dx.data(), in * seqLen, batch);
  lstm.backward(xm, CMapT<float>(y.data(), hidden, batch), CMapT<float>(dy.data(), hidden, batch), &dxm);
  for (int b = 1; b < batch; ++b) {
    for (int h = 0; h < hidden; ++h) ASSERT_TRUE(sameBits(ym(h, b), ym(h, 0))) << "output " << h << " of sample " << b;
    for (int k = 0; k < in * seqLen; ++k)
      ASSERT_TRUE(sameBits(dxm(k, b), dxm(k, 0))) << "input gradient " << k << " of sample " << b;
  }
}

// The softmax cross-entropy over a batch of 67 equal samples of 37 classes (columns at every alignment):
// every sample's gradient has the same bits.
TEST(SoftmaxCrossEntropy, EqualSamplesGetEqualBitsWhereverTheySitInTheBatch) {
  const int classes = 37, batch = static_cast<int>(kElements);
  std::vector<float> column(classes);
  for (int k = 0; k < classes; ++k) column[static_cast<std::size_t>(k)] = 0.731f * static_cast<float>(k % 11) - 2.9f;
  std::vector<float> logits, grad(static_cast<std::size_t>(classes) * batch);
  for (int b = 0; b < batch; ++b) logits.insert(logits.end(), column.begin(), column.end());
  const std::vector<std::int32_t> labels(static_cast<std::size_t>(batch), 5);
  SoftmaxCrossEntropyT<float> loss;
  MapT<float> g(grad.data(), classes, batch);
  loss.forwardBackward(CMapT<float>(logits.data(), classes, batch), labels.data(), g);
  for (int b = 1; b < batch; ++b)
    for (int k = 0; k < classes; ++k)
      ASSERT_TRUE(sameBits(g(k, b), g(k, 0))) << "gradient of class " << k << " of sample " << b;
  // and every sample's loss
  const double first = loss.lossSum(CMapT<float>(logits.data(), classes, 1), labels.data());
  for (int b = 1; b < batch; ++b)
    ASSERT_EQ(loss.lossSum(CMapT<float>(logits.data() + b * classes, classes, 1), labels.data()), first) << b;
}

}  // namespace
}  // namespace fedsilo::test
