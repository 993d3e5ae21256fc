// Correctness of DenseT<float>'s kernels (every kernel set this CPU runs: avx512, avx2, generic) and of
// ExactSum's vector path. Each check prints a FAIL line with the shape and the error, and each test
// fails when any of its checks did:
//  1. forward / forwardRelu / backward / backwardRelu against DenseT<double> (Eigen) on the same
//     data, for the W1 and W2 shapes and for odd shapes that exercise every tile edge and mask, on
//     every kernel set;
//  2. fused (Dense+ReLU in one pass) and unfused Models give bit-identical logits and gradients;
//  3. a sample's forward output does not depend on the batch it is in (per-element operation order;
//     chunks of 1-3 samples take a dot-product path, compared with the reference in 1.);
//  4. results do not depend on buffer alignment (the determinism rule of docs/architecture.md);
//  5. ExactSum::addScaled (vectorised) gives bit-identical accumulators to the scalar definition
//     (Fixed128::fromDouble + add) on random, negative, tiny-negative and signed-zero terms.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "core/exact_sum.hpp"
#include "nn/dense.hpp"
#include "nn/model.hpp"
#include "isa_scope.hpp"

using namespace fedsilo;

namespace {

int gFailures = 0;

void fail(const char* what, int in, int out, int batch, double err, double tol) {
  std::printf("FAIL %-28s in=%d out=%d batch=%d  max scaled error %.3g > %.3g\n", what, in, out, batch, err, tol);
  ++gFailures;
}

std::vector<double> randomData(std::size_t n, std::mt19937_64& g, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = u(g);
  return v;
}

// max |a - ref| / (scale), where scale is the sum of |terms| bound given by the caller.
double maxErr(const float* a, const double* ref, std::size_t n, double scale) {
  double e = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - ref[i]) / scale;
    if (!(d <= e)) e = d;  // NaN-propagating max
  }
  return e;
}

// One Dense layer's data and its double Eigen results (forward or forwardRelu, then the backward).
// The reference depends on neither the kernel set nor the buffers' alignment: computed once per case,
// it serves every set and offset.
struct DenseReference {
  int in, out, batch;
  bool relu;
  std::vector<double> p, x, dy, ry, rdx, rg;
};

DenseReference denseReference(int in, int out, int batch, bool relu) {
  std::mt19937_64 g(static_cast<std::uint64_t>(in) * 1000003u + out * 101u + batch + (relu ? 7 : 0));
  DenseReference r{in, out, batch, relu, {}, {}, {}, {}, {}, {}};
  const std::size_t np = static_cast<std::size_t>(in) * out + out;
  r.p = randomData(np, g, -0.5, 0.5);
  r.x = randomData(static_cast<std::size_t>(in) * batch, g, -1.0, 1.0);
  r.dy = randomData(static_cast<std::size_t>(out) * batch, g, -1.0, 1.0);

  DenseT<double> rd(in, out);
  std::vector<double> rp(r.p);
  r.rg.assign(np, 0.0);
  rd.bind(rp.data(), r.rg.data());
  rd.reserve(batch);
  r.ry.assign(static_cast<std::size_t>(out) * batch, 0.0);
  r.rdx.assign(static_cast<std::size_t>(in) * batch, 0.0);
  CMapT<double> xm(r.x.data(), in, batch);
  MapT<double> ym(r.ry.data(), out, batch);
  MapT<double> dxm(r.rdx.data(), in, batch);
  if (relu) {
    rd.forwardRelu(xm, ym);
    rd.backwardRelu(xm, CMapT<double>(r.ry.data(), out, batch), CMapT<double>(r.dy.data(), out, batch), &dxm);
  } else {
    rd.forward(xm, ym, true);
    rd.backward(xm, CMapT<double>(r.ry.data(), out, batch), CMapT<double>(r.dy.data(), out, batch), &dxm);
  }
  return r;
}

// The float kernels of the active set on the reference's data, against its results; `offset` floats
// of misalignment for every buffer.
void checkDense(const DenseReference& ref, int offset) {
  const int in = ref.in, out = ref.out, batch = ref.batch;
  const bool relu = ref.relu;
  const std::size_t np = ref.p.size();
  const auto &p = ref.p, &x = ref.x, &dy = ref.dy, &ry = ref.ry, &rdx = ref.rdx, &rg = ref.rg;

  // float copies, placed `offset` floats past a 64-byte boundary
  auto place = [&](const std::vector<double>& src, std::vector<float>& store) {
    store.assign(src.size() + 16 + static_cast<std::size_t>(offset), 0.0f);
    float* base = store.data();
    while (reinterpret_cast<std::uintptr_t>(base) % 64 != 0) ++base;
    base += offset;
    for (std::size_t i = 0; i < src.size(); ++i) base[i] = static_cast<float>(src[i]);
    return base;
  };
  std::vector<float> sp, sx, sdy, sy, sdx, sg;
  float* fp = place(p, sp);
  const float* fx = place(x, sx);
  const float* fdy = place(dy, sdy);
  float* fy = place(std::vector<double>(ry.size(), 0.0), sy);
  float* fdx = place(std::vector<double>(rdx.size(), 0.0), sdx);
  float* fg = place(std::vector<double>(np, 0.0), sg);
  DenseT<float> fd(in, out);
  fd.bind(fp, fg);
  fd.reserve(batch);
  {
    CMapT<float> xm(fx, in, batch);
    MapT<float> ym(fy, out, batch);
    MapT<float> dxm(fdx, in, batch);
    if (relu) {
      fd.forwardRelu(xm, ym);
      fd.backwardRelu(xm, CMapT<float>(fy, out, batch), CMapT<float>(fdy, out, batch), &dxm);
    } else {
      fd.forward(xm, ym, true);
      fd.backward(xm, CMapT<float>(fy, out, batch), CMapT<float>(fdy, out, batch), &dxm);
    }
  }
  // float accumulation of n terms of size <= s: error ~ n * eps * s; allow a wide margin.
  const double eps = 6e-8;
  const double tolF = 4.0 * eps * (in + 1) * 0.5 + 1e-6;
  const double tolW = 4.0 * eps * batch + 1e-6;
  const double tolX = 4.0 * eps * out * 0.5 + 1e-6;
  const char* tag = relu ? "dense+relu" : "dense";
  double e;
  // For fused ReLU the masks must agree; a pre-activation within rounding of 0 could flip, which
  // random data makes vanishingly unlikely (and would show up as a large error here).
  if ((e = maxErr(fy, ry.data(), ry.size(), 1.0)) > tolF) fail(relu ? "forwardRelu" : "forward", in, out, batch, e, tolF);
  if ((e = maxErr(fg, rg.data(), static_cast<std::size_t>(in) * out, 1.0)) > tolW) fail(tag, in, out, batch, e, tolW);
  if ((e = maxErr(fg + static_cast<std::size_t>(in) * out, rg.data() + static_cast<std::size_t>(in) * out, out, 1.0)) >
      tolW)
    fail("bias gradient", in, out, batch, e, tolW);
  if ((e = maxErr(fdx, rdx.data(), rdx.size(), 1.0)) > tolX) fail("input gradient", in, out, batch, e, tolX);
}

// A Model of Dense-ReLU-Dense-ReLU-Dense; returns logits and gradients.
struct Run {
  std::vector<float> logits, grads, dinput;
};

Run runModel(int in, int h1, int h2, int classes, int batch, bool fusion, const std::vector<float>& x,
             const std::vector<std::int32_t>& y, int offset) {
  ModelT<float> m(Shape{in, 1, 1}, classes);
  m.add(std::make_unique<DenseT<float>>(in, h1), "fc1");
  m.add(std::make_unique<ReluT<float>>(Shape{h1, 1, 1}));
  m.add(std::make_unique<DenseT<float>>(h1, h2), "fc2");
  m.add(std::make_unique<ReluT<float>>(Shape{h2, 1, 1}));
  m.add(std::make_unique<DenseT<float>>(h2, classes), "fc3");
  m.finalize();
  Rng rng(5, -1, -1, Purpose::Init);
  m.initialize(rng);
  m.reserve(batch);
  m.setFusion(fusion);
  std::vector<float> xs(x.size() + 32);
  float* xp = xs.data();
  while (reinterpret_cast<std::uintptr_t>(xp) % 64 != 0) ++xp;
  xp += offset;
  std::memcpy(xp, x.data(), x.size() * sizeof(float));
  Run r;
  CMapT<float> lg = m.forward(xp, batch, true);
  r.logits.assign(lg.data(), lg.data() + lg.size());
  std::vector<float> dl(static_cast<std::size_t>(classes) * batch);
  for (std::size_t i = 0; i < dl.size(); ++i) dl[i] = 0.01f * static_cast<float>(static_cast<int>(i % 7) - 3);
  r.dinput.assign(x.size(), 0.0f);
  m.backward(dl.data(), batch, r.dinput.data());
  r.grads.assign(m.grads(), m.grads() + m.numParams());
  (void)y;
  return r;
}

bool same(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void checkFusionAndInvariance(int in, int h1, int h2, int classes, int batch) {
  std::mt19937_64 g(static_cast<std::uint64_t>(in + h1 + h2 + batch));
  std::vector<float> x(static_cast<std::size_t>(in) * batch);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (auto& v : x) v = u(g);
  std::vector<std::int32_t> y(batch, 0);
  const Run fused = runModel(in, h1, h2, classes, batch, true, x, y, 0);
  const Run plain = runModel(in, h1, h2, classes, batch, false, x, y, 0);
  const Run shifted = runModel(in, h1, h2, classes, batch, true, x, y, 3);
  if (!same(fused.logits, plain.logits) || !same(fused.grads, plain.grads) || !same(fused.dinput, plain.dinput)) {
    std::printf("FAIL fused and unfused models differ (in=%d h=%d,%d batch=%d)\n", in, h1, h2, batch);
    ++gFailures;
  }
  if (!same(fused.logits, shifted.logits) || !same(fused.grads, shifted.grads)) {
    std::printf("FAIL results depend on the input's alignment (in=%d batch=%d)\n", in, batch);
    ++gFailures;
  }
  // Sample j inside a batch of 5 (other samples around it) must give the same logits as inside the
  // full batch: the forward's operation order per output does not depend on the batch (chunks of
  // 1-3 samples use dot products instead, checked against the reference in checkDense).
  for (int j : {0, batch / 2, batch - 1}) {
    if (batch < 5) break;
    const int lo = std::min(std::max(0, j - 2), batch - 5);
    std::vector<float> xj(x.begin() + static_cast<std::ptrdiff_t>(lo) * in, x.begin() + static_cast<std::ptrdiff_t>(lo + 5) * in);
    const Run five = runModel(in, h1, h2, classes, 5, true, xj, std::vector<std::int32_t>(5, 0), 0);
    if (std::memcmp(five.logits.data() + static_cast<std::size_t>(j - lo) * classes,
                    fused.logits.data() + static_cast<std::size_t>(j) * classes, classes * sizeof(float)) != 0) {
      std::printf("FAIL sample %d's logits depend on the batch (in=%d batch=%d)\n", j, in, batch);
      ++gFailures;
    }
  }
}

void checkExactSum() {
  std::mt19937_64 g(42);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  const std::size_t n = 1000;
  std::vector<float> x(n);
  for (auto& v : x) v = u(g);
  // edge cases: zeros, tiny negatives (fraction rounds to 1.0), exact integers, halves
  const float edges[] = {0.0f, -0.0f, -1e-30f, -1e-20f, 1e-30f, -1.0f, 1.0f, -0.5f, 2.5f, -7.0f, 1e-45f, -1e-45f};
  for (std::size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); ++i) x[i * 7] = edges[i];
  for (double w : {1.0, 0.1047, -0.3, 1e-6, 1e6}) {
    ExactSum vec(n + 3);
    std::vector<Fixed128> ref(n + 3);
    for (int rep = 0; rep < 3; ++rep) {
      vec.addScaled(3, x.data(), n, w);  // offset 3: unaligned accumulators
      for (std::size_t j = 0; j < n; ++j) ref[3 + j].add(Fixed128::fromDouble(w * static_cast<double>(x[j])));
    }
    for (std::size_t j = 0; j < n + 3; ++j)
      if (vec.data()[j].hi != ref[j].hi || vec.data()[j].lo != ref[j].lo) {
        std::printf("FAIL ExactSum::addScaled differs from fromDouble at %zu (w = %g)\n", j, w);
        ++gFailures;
        break;
      }
  }
  // the saturated fraction: a tiny negative term is -2^-64, not -1
  const Fixed128 t = Fixed128::fromDouble(-1e-30);
  if (t.hi != -1 || t.lo != ~std::uint64_t(0)) {
    std::printf("FAIL Fixed128::fromDouble(-1e-30) = (%lld, %llu)\n", static_cast<long long>(t.hi),
                static_cast<unsigned long long>(t.lo));
    ++gFailures;
  }
}

}  // namespace

struct DenseShape {
  int in, out, batch;
};

TEST(KernelCheck, DenseAgainstDoubleReference) {
  const DenseShape shapes[] = {{784, 200, 32}, {200, 200, 32}, {200, 10, 32}, {784, 200, 1000}, {3136, 512, 32},
                               {512, 10, 32},  {1, 1, 1},      {17, 5, 7},    {33, 13, 3},      {50, 9, 33},
                               {16, 4, 4},     {96, 8, 8},     {97, 7, 9},    {200, 100, 17},   {15, 3, 2},
                               {130, 6, 31},   {784, 200, 1},  {200, 10, 35}, {784, 200, 40}};
  // The generic set's plain loops take most of this test at batch 1000; with one lane and no masks it
  // runs {784, 200, 40} through the same paths (several forward chunks, the last of 8 samples; input
  // gradient tiles of 4 samples, none partial; the weight gradient over the batch in order), and the
  // vector sets still run batch 1000.
  const auto skipped = [](Isa isa, const DenseShape& s) { return isa == Isa::Generic && s.batch == 1000; };
  const int before = gFailures;
  for (const DenseShape& s : shapes)
    for (bool relu : {false, true}) {
      const DenseReference ref = denseReference(s.in, s.out, s.batch, relu);
      for (Isa isa : test::runnableIsas()) {
        if (skipped(isa, s)) continue;
        test::IsaScope scope(isa);
        const int failed = gFailures;
        for (int off : {0, 1}) checkDense(ref, off);
        if (gFailures != failed) std::printf("(the FAIL lines above: %s kernels)\n", isaName(isa));
      }
    }
  EXPECT_EQ(gFailures, before) << "see the FAIL lines above";
}

TEST(KernelCheck, FusedEqualsUnfusedAndBatchAndAlignmentInvariance) {
  const int before = gFailures;
  for (Isa isa : test::runnableIsas()) {
    test::IsaScope scope(isa);
    checkFusionAndInvariance(784, 200, 200, 10, 32);
    checkFusionAndInvariance(37, 19, 11, 3, 13);
    checkFusionAndInvariance(100, 100, 5, 10, 5);
  }
  EXPECT_EQ(gFailures, before) << "see the FAIL lines above";
}

TEST(KernelCheck, ExactSumVectorPathEqualsScalarDefinition) {
  const int before = gFailures;
  checkExactSum();
  EXPECT_EQ(gFailures, before) << "see the FAIL lines above";
}
