// oneDNN against fedsilo's own convolution and dense kernels on the exact layer shapes of cnn_playerfl
// (batch 128) and cnn_mcmahan (W2, batch 32), one thread, in one run. Built only with -DFEDSILO_ONEDNN=ON
// (bench/onednn_compare.sh builds and runs it). A benchmark: it prints figures and never asserts a time.
//
//   OMP_NUM_THREADS=1 build/bench/fedsilo_onednn_compare [--reps N] [--ms MILLISECONDS]
//
// Times are process CPU time (every thread counted): the shared build machines are oversubscribed
// (load 10-20 on 2 vCPUs), and wall time then mostly measures the other jobs. To state the rates as
// fractions of the core's FP32 FMA peak under the same conditions, every repetition of every operation
// alternates with a repetition of the others and of a register-only FMA loop (16 independent 16-lane
// chains, the method of bench/fma_peak.c) timed by the same clock; its median rate is the peak that
// the %pk columns divide by.
//
// Per layer and operation it prints the median over --reps repetitions (each about --ms ms long) for
//   fedsilo   the hand-written kernels: ConvDirect (what Conv2DT<float> runs without oneDNN) and
//             DenseT<float> (forward; backward without dx = the weight and bias gradients; backward with
//             dx = weights and data gradients together);
//   dnnl nchw oneDNN's primitives on fedsilo's own layouts (NCHW activations, OIHW / OI weights), what
//             the layers could call without any reordering;
//   dnnl blk  oneDNN's primitives on the layouts it prefers (format_tag::any, e.g. nChw16c), the
//             reorders to and from fedsilo's layouts timed apart and added in the "step" row.
// Repetitions alternate between the three, so that all see the same machine load. The "step" row is
// one training step of the layer: forward + backward (with dx except for a first layer, whose input
// gradient the model never asks for). fs/nchw and fs/blk: fedsilo's time over oneDNN's (above 1: oneDNN
// is faster). Determinism: every oneDNN primitive runs twice on the same input and the outputs are
// compared bit for bit; agreement: oneDNN's outputs (both layouts) against fedsilo's, as the largest
// difference relative to the largest magnitude.
#include <dnnl.hpp>
#include <omp.h>

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "nn/conv2d_direct.hpp"
#include "nn/dense.hpp"
#include "nn/kernels.hpp"

namespace {

using namespace fedsilo;
using dnnl::memory;
using Tag = memory::format_tag;

struct Options {
  double peak = 0.0;  // GFLOP/s of one core in this shape's repetitions (set per shape), 0: unknown
  int reps = 7;
  double ms = 40.0;
};

double cpuSeconds() {  // process CPU time (see the header comment)
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The FMA peak loop: kChains independent register-only chains of vector FMAs (bench/fma_peak.c's
// method). Returns a sum so that nothing is optimised away.
#if defined(__AVX512F__)
constexpr int kChains = 16, kLanes = 16;
float fmaChains(long iterations) {
  __m512 acc[kChains];
  const __m512 scale = _mm512_set1_ps(0.999999f), shift = _mm512_set1_ps(1e-7f);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], scale, shift);
  }
  // stored and summed by hand: GCC 12 warns inside its own _mm512_reduce_add_ps (bug 105593)
  float lanes[16];
  for (int c = 1; c < kChains; ++c) acc[0] = _mm512_add_ps(acc[0], acc[c]);
  _mm512_storeu_ps(lanes, acc[0]);
  return lanes[0] + lanes[15];
}
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int kChains = 12, kLanes = 8;
float fmaChains(long iterations) {
  __m256 acc[kChains];
  const __m256 scale = _mm256_set1_ps(0.999999f), shift = _mm256_set1_ps(1e-7f);
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], scale, shift);
  }
  float lanes[8];
  for (int c = 1; c < kChains; ++c) acc[0] = _mm256_add_ps(acc[0], acc[c]);
  _mm256_storeu_ps(lanes, acc[0]);
  return lanes[0] + lanes[7];
}
#else
constexpr int kChains = 0, kLanes = 0;  // no FMA peak without AVX2+FMA: the %pk columns stay empty
float fmaChains(long) { return 0.0f; }
#endif
constexpr long kFmaIterations = 1000000;
constexpr double kFmaFlops = 2.0 * kChains * kLanes * static_cast<double>(kFmaIterations);
volatile float fmaSink;

std::vector<float> randomFloats(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

// An operation to time and the iteration count that makes one repetition about opts.ms long.
struct Timed {
  std::function<void()> run;
  long iterations = 0;
};

void calibrate(Timed& t, double ms) {
  t.run();  // warm-up: first-touch, JIT, caches
  long n = 1;
  for (;;) {
    const double t0 = cpuSeconds();
    for (long i = 0; i < n; ++i) t.run();
    const double s = cpuSeconds() - t0;
    if (s * 1e3 >= ms / 4 || n >= (1L << 20)) {
      t.iterations = std::max(1L, static_cast<long>(static_cast<double>(n) * ms / std::max(1e-6, s * 1e3)));
      return;
    }
    n *= 2;
  }
}

double secondsPerCall(const Timed& t) {
  const double t0 = cpuSeconds();
  for (long i = 0; i < t.iterations; ++i) t.run();
  return (cpuSeconds() - t0) / static_cast<double>(t.iterations);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Medians over opts.reps alternating repetitions of every operation in `ops`; sets opts.peak from the
// FMA loop, which alternates with them.
std::vector<double> timeAlternating(std::vector<Timed> ops, Options& opts) {
  ops.push_back({[] { fmaSink = fmaChains(kFmaIterations); }});
  for (auto& op : ops) calibrate(op, opts.ms);
  std::vector<std::vector<double>> samples(ops.size());
  for (int r = 0; r < opts.reps; ++r)
    for (std::size_t i = 0; i < ops.size(); ++i) samples[i].push_back(secondsPerCall(ops[i]));
  std::vector<double> medians;
  for (auto& s : samples) medians.push_back(median(s));
  opts.peak = kChains > 0 ? kFmaFlops / medians.back() * 1e-9 : 0.0;
  medians.pop_back();
  return medians;
}

// ---------------------------------------------------------------------------------------------
// oneDNN plumbing: memories created once, primitives with a user-managed scratchpad (allocated here, as
// the layers would at reserve time), a plain-layout twin of every memory and the reorders between them.
struct Dnnl {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
};

dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// A tensor in the primitive's layout `md`, with its plain twin (layout `plain`) and both reorders.
struct Tensor {
  memory plain, mem;
  dnnl::reorder toMem, toPlain;
  bool same = true;
  Tensor(Dnnl& d, const memory::desc& md, const memory::desc& plainMd, unsigned seed) {
    plain = memory(plainMd, d.eng);
    std::vector<float> v = randomFloats(plainMd.get_size() / sizeof(float), seed);
    std::memcpy(plain.get_data_handle(), v.data(), plainMd.get_size());
    same = md == plainMd;
    mem = same ? plain : memory(md, d.eng);
    if (!same) {
      toMem = dnnl::reorder(plain, mem);
      toPlain = dnnl::reorder(mem, plain);
      toMem.execute(d.strm, plain, mem);
      d.strm.wait();
    }
  }
  float* data() const { return static_cast<float*>(mem.get_data_handle()); }
  std::size_t bytes() const { return mem.get_desc().get_size(); }
};

struct Scratch {
  memory mem;
  Scratch(Dnnl& d, const memory::desc& md) : mem(md, d.eng) {}
};

// Runs `prim` with `args` twice from the same inputs and says whether the output `out` (and `out2`,
// when given) came out bit-identical.
bool isDeterministic(Dnnl& d, dnnl::primitive& prim, std::unordered_map<int, memory>& args, const Tensor& out,
                   const Tensor* out2 = nullptr) {
  auto once = [&](std::vector<char>& a, std::vector<char>& b) {
    prim.execute(d.strm, args);
    d.strm.wait();
    const char* o = static_cast<const char*>(out.mem.get_data_handle());
    a.assign(o, o + out.bytes());
    if (out2)
      b.assign(static_cast<char*>(out2->mem.get_data_handle()),
               static_cast<char*>(out2->mem.get_data_handle()) + out2->bytes());
  };
  std::vector<char> a1, b1, a2, b2;
  once(a1, b1);
  once(a2, b2);
  return a1 == a2 && b1 == b2;
}

double relDiff(const float* a, const float* b, std::size_t n) {
  double maxDiff = 0, maxAbs = 0;
  for (std::size_t i = 0; i < n; ++i) {
    maxDiff = std::max(maxDiff, std::fabs(static_cast<double>(a[i]) - b[i]));
    maxAbs = std::max(maxAbs, std::fabs(static_cast<double>(b[i])));
  }
  return maxAbs > 0 ? maxDiff / maxAbs : maxDiff;
}

// ---------------------------------------------------------------------------------------------
// Printing: one row per (layer, operation), times in microseconds per call.
void printHeader() {
  std::printf("%-22s %-9s %10s %7s %6s %10s %7s %6s %10s %7s %6s %8s %8s\n", "layer", "op", "fedsilo_us", "GF/s",
              "%pk", "nchw_us", "GF/s", "%pk", "blk_us", "GF/s", "%pk", "fs/nchw", "fs/blk");
}

void printRow(const Options& opts, const std::string& layer, const char* op, double flops, double fs, double nchw,
              double blk) {
  auto cell = [&](double s) {
    const double gf = flops / s * 1e-9;
    std::printf(" %10.1f %7.1f", s * 1e6, gf);
    if (opts.peak > 0)
      std::printf(" %5.0f%%", 100.0 * gf / opts.peak);
    else
      std::printf(" %6s", "");
  };
  std::printf("%-22s %-9s", layer.c_str(), op);
  cell(fs);
  cell(nchw);
  cell(blk);
  std::printf(" %8.2f %8.2f\n", fs / nchw, fs / blk);
}

// ---------------------------------------------------------------------------------------------
struct ConvShape {
  std::string name;
  int batch, inC, hw, outC;
  bool first;  // the model's first layer: no input gradient
};

// The three oneDNN convolution primitives for one layout choice, with their tensors.
struct DnnlConv {
  dnnl::convolution_forward fwd;
  dnnl::convolution_backward_data bwdData;
  dnnl::convolution_backward_weights bwdWeights;
  // The backward primitives may ask for other layouts of x, W and dy than the forward's: each gets its
  // own copy, reordered from the plain tensor (the step's reorders count them).
  std::unique_ptr<Tensor> src, wei, bias, dst, diffDst, diffSrc, diffWei, diffBias, srcWeights, diffDstWeights, weiData;
  std::unique_ptr<Scratch> sFwd, sData, sWeights;
  std::unordered_map<int, memory> aFwd, aData, aWeights;
  bool deterministic = false;

  DnnlConv(Dnnl& d, const ConvShape& s, bool blocked) {
    const memory::dim k = 5, pad = 2;
    const memory::dims srcDims{s.batch, s.inC, s.hw, s.hw}, weiDims{s.outC, s.inC, k, k}, biasDims{s.outC},
        dstDims{s.batch, s.outC, s.hw, s.hw}, strides{1, 1}, padding{pad, pad};
    auto md = [&](const memory::dims& dims, Tag plain) {
      return memory::desc(dims, memory::data_type::f32, blocked ? Tag::any : plain);
    };
    const auto algo = dnnl::algorithm::convolution_direct;
    auto attr = userScratchpad();
    dnnl::convolution_forward::primitive_desc fpd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algo, md(srcDims, Tag::nchw),
                                        md(weiDims, Tag::oihw), md(biasDims, Tag::x), md(dstDims, Tag::nchw), strides,
                                        padding, padding),
        attr, d.eng);
    dnnl::convolution_backward_data::primitive_desc dpd(
        dnnl::convolution_backward_data::desc(algo, md(srcDims, Tag::nchw), md(weiDims, Tag::oihw),
                                              md(dstDims, Tag::nchw), strides, padding, padding),
        attr, d.eng, fpd);
    dnnl::convolution_backward_weights::primitive_desc wpd(
        dnnl::convolution_backward_weights::desc(algo, md(srcDims, Tag::nchw), md(weiDims, Tag::oihw),
                                                 md(biasDims, Tag::x), md(dstDims, Tag::nchw), strides, padding,
                                                 padding),
        attr, d.eng, fpd);
    auto plain = [](const memory::dims& dims, Tag t) { return memory::desc(dims, memory::data_type::f32, t); };
    src = std::make_unique<Tensor>(d, fpd.src_desc(), plain(srcDims, Tag::nchw), 1);
    wei = std::make_unique<Tensor>(d, fpd.weights_desc(), plain(weiDims, Tag::oihw), 2);
    bias = std::make_unique<Tensor>(d, fpd.bias_desc(), plain(biasDims, Tag::x), 3);
    dst = std::make_unique<Tensor>(d, fpd.dst_desc(), plain(dstDims, Tag::nchw), 4);
    diffDst = std::make_unique<Tensor>(d, dpd.diff_dst_desc(), plain(dstDims, Tag::nchw), 5);
    diffSrc = std::make_unique<Tensor>(d, dpd.diff_src_desc(), plain(srcDims, Tag::nchw), 6);
    diffWei = std::make_unique<Tensor>(d, wpd.diff_weights_desc(), plain(weiDims, Tag::oihw), 7);
    diffBias = std::make_unique<Tensor>(d, wpd.diff_bias_desc(), plain(biasDims, Tag::x), 8);
    srcWeights = std::make_unique<Tensor>(d, wpd.src_desc(), plain(srcDims, Tag::nchw), 1);
    diffDstWeights = std::make_unique<Tensor>(d, wpd.diff_dst_desc(), plain(dstDims, Tag::nchw), 5);
    weiData = std::make_unique<Tensor>(d, dpd.weights_desc(), plain(weiDims, Tag::oihw), 2);
    sFwd = std::make_unique<Scratch>(d, fpd.scratchpad_desc());
    sData = std::make_unique<Scratch>(d, dpd.scratchpad_desc());
    sWeights = std::make_unique<Scratch>(d, wpd.scratchpad_desc());
    fwd = dnnl::convolution_forward(fpd);
    bwdData = dnnl::convolution_backward_data(dpd);
    bwdWeights = dnnl::convolution_backward_weights(wpd);
    aFwd = {{DNNL_ARG_SRC, src->mem}, {DNNL_ARG_WEIGHTS, wei->mem}, {DNNL_ARG_BIAS, bias->mem},
            {DNNL_ARG_DST, dst->mem}, {DNNL_ARG_SCRATCHPAD, sFwd->mem}};
    aData = {{DNNL_ARG_DIFF_DST, diffDst->mem}, {DNNL_ARG_WEIGHTS, weiData->mem}, {DNNL_ARG_DIFF_SRC, diffSrc->mem},
             {DNNL_ARG_SCRATCHPAD, sData->mem}};
    aWeights = {{DNNL_ARG_SRC, srcWeights->mem},
                {DNNL_ARG_DIFF_DST, diffDstWeights->mem},
                {DNNL_ARG_DIFF_WEIGHTS, diffWei->mem},
                {DNNL_ARG_DIFF_BIAS, diffBias->mem},
                {DNNL_ARG_SCRATCHPAD, sWeights->mem}};
    deterministic = isDeterministic(d, fwd, aFwd, *dst) && isDeterministic(d, bwdData, aData, *diffSrc) &&
                    isDeterministic(d, bwdWeights, aWeights, *diffWei, diffBias.get());
  }
};

void exec(Dnnl& d, dnnl::primitive& p, std::unordered_map<int, memory>& args) {
  p.execute(d.strm, args);
  d.strm.wait();
}

// Reorders (plain -> primitive layout, or back) of one tensor; a no-op when the layouts agree.
void reorderIn(Dnnl& d, Tensor& t) {
  if (!t.same) t.toMem.execute(d.strm, t.plain, t.mem);
}
void reorderOut(Dnnl& d, Tensor& t) {
  if (!t.same) t.toPlain.execute(d.strm, t.mem, t.plain);
}

// fedsilo's hand-written convolution (ConvDirect, what Conv2DT<float> runs in builds without oneDNN)
// on one shape, with buffers shaped as the model passes them.
struct FedsiloConv {
  ConvDirect conv;
  std::vector<float> params, grads, x, y, dy, dx;
  std::size_t nw;
  int batch;
  FedsiloConv(const ConvShape& s) : conv(s.inC, s.hw, s.hw, s.outC, 5, 1, 2), batch(s.batch) {
    nw = static_cast<std::size_t>(s.outC) * s.inC * 25;
    params = randomFloats(nw + s.outC, 2);
    grads.resize(params.size());
    conv.reserve(batch);
    x = randomFloats(static_cast<std::size_t>(s.inC) * s.hw * s.hw * batch, 1);
    y.resize(static_cast<std::size_t>(s.outC) * s.hw * s.hw * batch);
    dy = randomFloats(y.size(), 5);
    dx.resize(x.size());
  }
  void forward() { conv.forward(params.data(), params.data() + nw, x.data(), y.data(), batch, false); }
  void backward(bool withDx) {
    conv.backward(params.data(), grads.data(), grads.data() + nw, x.data(), y.data(), dy.data(),
                  withDx ? dx.data() : nullptr, batch, false);
  }
};

// Copies fedsilo's inputs and parameters into oneDNN's plain tensors, runs both and compares.
void checkConvAgreement(Dnnl& d, FedsiloConv& f, DnnlConv& n, const ConvShape& s, const char* label) {
  const std::size_t nw = static_cast<std::size_t>(s.outC) * s.inC * 25;
  auto fill = [&](Tensor& t, const float* from) {
    std::memcpy(t.plain.get_data_handle(), from, t.plain.get_desc().get_size());
    reorderIn(d, t);
    d.strm.wait();
  };
  fill(*n.src, f.x.data());
  fill(*n.srcWeights, f.x.data());
  fill(*n.wei, f.params.data());
  fill(*n.weiData, f.params.data());
  fill(*n.bias, f.params.data() + nw);
  fill(*n.diffDst, f.dy.data());
  fill(*n.diffDstWeights, f.dy.data());
  f.forward();
  f.backward(true);
  exec(d, n.fwd, n.aFwd);
  exec(d, n.bwdData, n.aData);
  exec(d, n.bwdWeights, n.aWeights);
  for (Tensor* t : {n.dst.get(), n.diffSrc.get(), n.diffWei.get(), n.diffBias.get()}) reorderOut(d, *t);
  d.strm.wait();
  auto p = [](Tensor& t) { return static_cast<const float*>(t.plain.get_data_handle()); };
  std::printf("%-22s %s: max |dnnl - fedsilo| / max |fedsilo|: y %.1e  dx %.1e  dW %.1e  db %.1e;"
              " deterministic: %s\n",
              s.name.c_str(), label, relDiff(p(*n.dst), f.y.data(), f.y.size()),
              relDiff(p(*n.diffSrc), f.dx.data(), f.dx.size()),
              relDiff(p(*n.diffWei), f.grads.data(), nw), relDiff(p(*n.diffBias), f.grads.data() + nw, s.outC),
              n.deterministic ? "yes" : "NO");
}

void benchConv(Dnnl& d, const ConvShape& s, Options& opts) {
  FedsiloConv f(s);
  DnnlConv nchw(d, s, false), blk(d, s, true);
  checkConvAgreement(d, f, nchw, s, "nchw");
  checkConvAgreement(d, f, blk, s, "blk ");
  std::vector<Timed> ops{
      {[&] { f.forward(); }},
      {[&] { exec(d, nchw.fwd, nchw.aFwd); }},
      {[&] { exec(d, blk.fwd, blk.aFwd); }},
      {[&] { f.backward(false); }},
      {[&] { exec(d, nchw.bwdWeights, nchw.aWeights); }},
      {[&] { exec(d, blk.bwdWeights, blk.aWeights); }},
      {[&] { f.backward(true); }},
      {[&] { exec(d, nchw.bwdData, nchw.aData); }},
      {[&] { exec(d, blk.bwdData, blk.aData); }},
      // the blocked path's reorders in one training step: x and dy in, y and dx out, W in, dW out
      {[&] {
        reorderIn(d, *blk.src);
        reorderIn(d, *blk.diffDst);
        reorderIn(d, *blk.wei);
        if (!(blk.srcWeights->mem.get_desc() == blk.src->mem.get_desc())) reorderIn(d, *blk.srcWeights);
        if (!(blk.diffDstWeights->mem.get_desc() == blk.diffDst->mem.get_desc())) reorderIn(d, *blk.diffDstWeights);
        if (!s.first && !(blk.weiData->mem.get_desc() == blk.wei->mem.get_desc())) reorderIn(d, *blk.weiData);
        reorderOut(d, *blk.dst);
        if (!s.first) reorderOut(d, *blk.diffSrc);
        reorderOut(d, *blk.diffWei);
        d.strm.wait();
      }},
  };
  const std::vector<double> t = timeAlternating(ops, opts);
  const double flops = 2.0 * s.batch * s.outC * s.inC * 25.0 * s.hw * s.hw;
  printRow(opts, s.name, "fwd", flops, t[0], t[1], t[2]);
  printRow(opts, s.name, "bwd_w", flops, t[3], t[4], t[5]);
  printRow(opts, s.name, "bwd_d+w", 2 * flops, t[6], t[7] + t[4], t[8] + t[5]);
  const double fsStep = t[0] + (s.first ? t[3] : t[6]);
  const double nchwStep = t[1] + t[4] + (s.first ? 0.0 : t[7]);
  const double blkStep = t[2] + t[5] + (s.first ? 0.0 : t[8]) + t[9];
  printRow(opts, s.name, "step", (s.first ? 2 : 3) * flops, fsStep, nchwStep, blkStep);
  std::printf("%-22s blocked reorders per step: %.1f us; FMA peak in these repetitions %.1f GFLOP/s\n",
              s.name.c_str(), t[9] * 1e6, opts.peak);
}

// ---------------------------------------------------------------------------------------------
struct DenseShape {
  std::string name;
  int batch, in, out;
};

struct DnnlDense {
  dnnl::inner_product_forward fwd;
  dnnl::inner_product_backward_data bwdData;
  dnnl::inner_product_backward_weights bwdWeights;
  std::unique_ptr<Tensor> src, wei, bias, dst, diffDst, diffSrc, diffWei, diffBias;
  std::unique_ptr<Scratch> sFwd, sData, sWeights;
  std::unordered_map<int, memory> aFwd, aData, aWeights;
  bool deterministic = false;

  DnnlDense(Dnnl& d, const DenseShape& s) {
    auto md = [](const memory::dims& dims, Tag t) { return memory::desc(dims, memory::data_type::f32, t); };
    const memory::desc srcMd = md({s.batch, s.in}, Tag::nc), weiMd = md({s.out, s.in}, Tag::oi),
                       biasMd = md({s.out}, Tag::x), dstMd = md({s.batch, s.out}, Tag::nc);
    auto attr = userScratchpad();
    dnnl::inner_product_forward::primitive_desc fpd(
        dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_training, srcMd, weiMd, biasMd, dstMd), attr,
        d.eng);
    dnnl::inner_product_backward_data::primitive_desc dpd(
        dnnl::inner_product_backward_data::desc(srcMd, weiMd, dstMd), attr, d.eng, fpd);
    dnnl::inner_product_backward_weights::primitive_desc wpd(
        dnnl::inner_product_backward_weights::desc(srcMd, weiMd, biasMd, dstMd), attr, d.eng, fpd);
    src = std::make_unique<Tensor>(d, srcMd, srcMd, 1);
    wei = std::make_unique<Tensor>(d, weiMd, weiMd, 2);
    bias = std::make_unique<Tensor>(d, biasMd, biasMd, 3);
    dst = std::make_unique<Tensor>(d, dstMd, dstMd, 4);
    diffDst = std::make_unique<Tensor>(d, dstMd, dstMd, 5);
    diffSrc = std::make_unique<Tensor>(d, srcMd, srcMd, 6);
    diffWei = std::make_unique<Tensor>(d, weiMd, weiMd, 7);
    diffBias = std::make_unique<Tensor>(d, biasMd, biasMd, 8);
    sFwd = std::make_unique<Scratch>(d, fpd.scratchpad_desc());
    sData = std::make_unique<Scratch>(d, dpd.scratchpad_desc());
    sWeights = std::make_unique<Scratch>(d, wpd.scratchpad_desc());
    fwd = dnnl::inner_product_forward(fpd);
    bwdData = dnnl::inner_product_backward_data(dpd);
    bwdWeights = dnnl::inner_product_backward_weights(wpd);
    aFwd = {{DNNL_ARG_SRC, src->mem}, {DNNL_ARG_WEIGHTS, wei->mem}, {DNNL_ARG_BIAS, bias->mem},
            {DNNL_ARG_DST, dst->mem}, {DNNL_ARG_SCRATCHPAD, sFwd->mem}};
    aData = {{DNNL_ARG_DIFF_DST, diffDst->mem}, {DNNL_ARG_WEIGHTS, wei->mem}, {DNNL_ARG_DIFF_SRC, diffSrc->mem},
             {DNNL_ARG_SCRATCHPAD, sData->mem}};
    aWeights = {{DNNL_ARG_SRC, src->mem},
                {DNNL_ARG_DIFF_DST, diffDst->mem},
                {DNNL_ARG_DIFF_WEIGHTS, diffWei->mem},
                {DNNL_ARG_DIFF_BIAS, diffBias->mem},
                {DNNL_ARG_SCRATCHPAD, sWeights->mem}};
    deterministic = isDeterministic(d, fwd, aFwd, *dst) && isDeterministic(d, bwdData, aData, *diffSrc) &&
                    isDeterministic(d, bwdWeights, aWeights, *diffWei, diffBias.get());
  }
};

void benchDense(Dnnl& d, const DenseShape& s, Options& opts) {
  DenseT<float> dense(s.in, s.out);
  std::size_t np = 0;
  for (const auto& spec : dense.paramSpecs()) np += static_cast<std::size_t>(spec.size);
  std::vector<float> params = randomFloats(np, 2), grads(np);
  dense.bind(params.data(), grads.data());
  dense.reserve(s.batch);
  std::vector<float> x = randomFloats(static_cast<std::size_t>(s.in) * s.batch, 1),
                     y(static_cast<std::size_t>(s.out) * s.batch), dy = randomFloats(y.size(), 5), dx(x.size());
  CMapT<float> xm(x.data(), s.in, s.batch), ym(y.data(), s.out, s.batch), dym(dy.data(), s.out, s.batch);
  MapT<float> yw(y.data(), s.out, s.batch), dxm(dx.data(), s.in, s.batch);
  DnnlDense n(d, s);
  // agreement on fedsilo's inputs: the plain layouts are fedsilo's own (x: in x batch column-major = nc)
  const std::size_t nw = static_cast<std::size_t>(s.in) * s.out;
  std::memcpy(n.src->data(), x.data(), x.size() * sizeof(float));
  std::memcpy(n.wei->data(), params.data(), np * sizeof(float) - s.out * sizeof(float));
  std::memcpy(n.bias->data(), params.data() + nw, s.out * sizeof(float));
  std::memcpy(n.diffDst->data(), dy.data(), dy.size() * sizeof(float));
  dense.forward(xm, yw, true);
  dense.backward(xm, ym, dym, &dxm);
  exec(d, n.fwd, n.aFwd);
  exec(d, n.bwdData, n.aData);
  exec(d, n.bwdWeights, n.aWeights);
  std::printf("%-22s agreement (max |dnnl - fedsilo| / max |fedsilo|): y %.1e  dx %.1e  dW %.1e  db %.1e;"
              " deterministic: %s\n",
              s.name.c_str(), relDiff(n.dst->data(), y.data(), y.size()),
              relDiff(n.diffSrc->data(), dx.data(), dx.size()),
              relDiff(n.diffWei->data(), grads.data(), nw), relDiff(n.diffBias->data(), grads.data() + nw, s.out),
              n.deterministic ? "yes" : "NO");
  std::vector<Timed> ops{
      {[&] { dense.forward(xm, yw, true); }},
      {[&] { exec(d, n.fwd, n.aFwd); }},
      {[&] { dense.backward(xm, ym, dym, nullptr); }},
      {[&] { exec(d, n.bwdWeights, n.aWeights); }},
      {[&] { dense.backward(xm, ym, dym, &dxm); }},
      {[&] { exec(d, n.bwdData, n.aData); }},
  };
  const std::vector<double> t = timeAlternating(ops, opts);
  const double flops = 2.0 * s.batch * s.in * s.out;
  // inner products have no blocked variant here (oneDNN keeps nc / oi for them): nchw twice
  printRow(opts, s.name, "fwd", flops, t[0], t[1], t[1]);
  printRow(opts, s.name, "bwd_w", flops, t[2], t[3], t[3]);
  printRow(opts, s.name, "bwd_d+w", 2 * flops, t[4], t[5] + t[3], t[5] + t[3]);
  printRow(opts, s.name, "step", 3 * flops, t[0] + t[4], t[1] + t[3] + t[5], t[1] + t[3] + t[5]);
  std::printf("%-22s FMA peak in these repetitions %.1f GFLOP/s\n", s.name.c_str(), opts.peak);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "fedsilo_onednn_compare: %s needs a value\n", a.c_str());
      std::exit(2);
    }
    char* end = nullptr;
    const double v = std::strtod(argv[++i], &end);
    if (*end != '\0' || !(v > 0)) {
      std::fprintf(stderr, "fedsilo_onednn_compare: %s %s: expected a positive number\n", a.c_str(), argv[i]);
      std::exit(2);
    }
    if (a == "--reps")
      o.reps = static_cast<int>(v);
    else if (a == "--ms")
      o.ms = v;
    else {
      std::fprintf(stderr, "fedsilo_onednn_compare: unknown option %s (--reps N, --ms MS)\n", a.c_str());
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options opts = parse(argc, argv);
  omp_set_num_threads(1);  // one thread per rank, as fedsilo runs
  Dnnl d;
  const dnnl_version_t* v = dnnl_version();
  std::printf("# oneDNN %d.%d.%d, effective ISA %d (dnnl::cpu_isa), %d OpenMP thread(s); fedsilo kernels: %s\n",
              v->major, v->minor, v->patch, static_cast<int>(dnnl::get_effective_cpu_isa()), omp_get_max_threads(),
              isaName(activeIsa()));
  std::printf("# process CPU times: median of %d alternating repetitions of ~%.0f ms; us per call;"
              " %%pk: of the FMA loop's rate\n",
              opts.reps,
              opts.ms);
  printHeader();
  const std::vector<ConvShape> convs{
      {"pfl.conv1 1-64 28 b128", 128, 1, 28, 64, true},      {"pfl.conv2 64-128 14 b128", 128, 64, 14, 128, false},
      {"pfl.conv3 128-256 7 b128", 128, 128, 7, 256, false}, {"w2.conv1 1-32 28 b32", 32, 1, 28, 32, true},
      {"w2.conv2 32-64 14 b32", 32, 32, 14, 64, false},
  };
  const std::vector<DenseShape> denses{
      {"pfl.fc1 256-100 b128", 128, 256, 100},
      {"pfl.fc2 100-10 b128", 128, 100, 10},
      {"w2.fc1 3136-512 b32", 32, 3136, 512},
      {"w2.fc2 512-10 b32", 32, 512, 10},
  };
  for (const auto& s : convs) benchConv(d, s, opts);
  for (const auto& s : denses) benchDense(d, s, opts);
  return 0;
}
