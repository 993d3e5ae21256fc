// "No allocation after reserve()": counts heap allocations during forward + backward.
//
// Two counters, because the two kinds of allocation come through different doors: C++ allocations
// (std::vector growth, strings, make_unique) through operator new, which this file replaces, and
// Eigen's (temporaries, GEMM packing buffers) through malloc, which this file interposes on by
// defining malloc & co. in the executable and forwarding to glibc's __libc_* entry points (the
// documented way to replace glibc's allocator). Counting is off except inside CountAllocations.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <new>

#include "core/malloc_counter.hpp"
#include "fl/local_trainer.hpp"
#include "grad_check.hpp"
#include "nn/bf16.hpp"
#include "nn/conv2d.hpp"
#include "nn/dense.hpp"
#include "nn/dropout.hpp"
#include "nn/embedding.hpp"
#include "nn/lstm.hpp"
#include "nn/pool.hpp"
#include "nn/presets.hpp"

using fedsilo::MallocCounter;

namespace {
std::atomic<long> gNews{0};

void* countedNew(std::size_t n) {
  if (MallocCounter::counting.load(std::memory_order_relaxed)) gNews.fetch_add(1, std::memory_order_relaxed);
  if (void* p = __libc_malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* countedAlignedNew(std::size_t n, std::align_val_t a) {
  if (MallocCounter::counting.load(std::memory_order_relaxed)) gNews.fetch_add(1, std::memory_order_relaxed);
  if (void* p = __libc_memalign(static_cast<std::size_t>(a), n ? n : 1)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) { return countedNew(n); }
void* operator new[](std::size_t n) { return countedNew(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return countedNew(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void* operator new(std::size_t n, std::align_val_t a) { return countedAlignedNew(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return countedAlignedNew(n, a); }
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete[](void* p) noexcept { __libc_free(p); }
void operator delete(void* p, std::size_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::size_t) noexcept { __libc_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { __libc_free(p); }

namespace fedsilo::test {
namespace {

struct Counts {
  long news = 0, mallocs = 0;
};

template <typename F>
Counts countAllocations(F&& f) {
  gNews = 0;
  MallocCounter::start();
  f();
  const long mallocs = MallocCounter::stop();
  return Counts{gNews.load(), mallocs};
}

TEST(NoAllocation, CountersWork) {
  const Counts c = countAllocations([] {
    std::vector<int> v(100);
    Eigen::MatrixXf m(30, 30);
    m.setZero();
    EXPECT_EQ(v.size() + static_cast<std::size_t>(m.size()), 1000u);
  });
  EXPECT_GE(c.news, 1);
  EXPECT_GE(c.mallocs, 1);  // Eigen's (operator new goes to __libc_malloc directly)
}

// Forward + backward (with dx) of a stand-alone float layer right after reserve(), at the reserved
// batch and at a smaller one.
void expectLayerAllocatesNothing(LayerT<float>& layer, int inRows, std::vector<float> x, const char* what) {
  SCOPED_TRACE(what);
  std::size_t np = 0;
  for (const auto& s : layer.paramSpecs()) np += static_cast<std::size_t>(s.size);
  std::vector<float> params(np, 0.01f), grads(np);
  layer.bind(params.data(), grads.data());
  const int maxBatch = 32;
  layer.reserve(maxBatch);
  layer.setRandomContext(1, 2, 3, 0);
  const int outRows = layer.outputShape().size();
  std::vector<float> y(static_cast<std::size_t>(outRows) * maxBatch), dy(y.size(), 0.5f), dx(x.size());
  for (int batch : {maxBatch, 7}) {
    const Counts c = countAllocations([&] {
      CMapT<float> xm(x.data(), inRows, batch);
      MapT<float> ym(y.data(), outRows, batch);
      layer.forward(xm, ym, true);
      MapT<float> dxm(dx.data(), inRows, batch);
      layer.backward(xm, CMapT<float>(y.data(), outRows, batch), CMapT<float>(dy.data(), outRows, batch), &dxm);
      layer.forward(xm, ym, false);
    });
    EXPECT_EQ(c.news, 0) << "batch " << batch;
    EXPECT_EQ(c.mallocs, 0) << "batch " << batch;
  }
}

std::vector<float> randomFloats(std::size_t n, std::uint64_t seed) {
  const auto d = randomVector(n, seed);
  return std::vector<float>(d.begin(), d.end());
}

TEST(NoAllocation, ModelZooLayers) {
  {
    Conv2DT<float> conv(32, 14, 14, 64, 5, 1, 2);
    expectLayerAllocatesNothing(conv, 32 * 196, randomFloats(32 * 196 * 32, 1), "conv2d");
  }
  {
    Conv2DT<float> conv(3, 9, 9, 4, 3, 2, 1);
    conv.setMaxChunkElems(200);  // several chunks, im2col recomputed in backward
    expectLayerAllocatesNothing(conv, 3 * 81, randomFloats(3 * 81 * 32, 2), "conv2d chunked");
  }
  {
    MaxPool2DT<float> pool(8, 10, 10);
    expectLayerAllocatesNothing(pool, 800, randomFloats(800 * 32, 3), "maxpool");
  }
  {
    GlobalAvgPoolT<float> gap(8, 5, 5);
    expectLayerAllocatesNothing(gap, 200, randomFloats(200 * 32, 4), "gap");
  }
  {
    FlattenT<float> flat(Shape{8, 5, 5});
    expectLayerAllocatesNothing(flat, 200, randomFloats(200 * 32, 5), "flatten");
  }
  {
    DropoutT<float> drop(Shape{300, 1, 1}, 0.3);
    expectLayerAllocatesNothing(drop, 300, randomFloats(300 * 32, 6), "dropout");
  }
  {
    EmbeddingT<float> emb(50, 16, 10);
    std::vector<float> ids(10 * 32);
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<float>(i % 50);
    expectLayerAllocatesNothing(emb, 10, ids, "embedding");
  }
  for (bool seq : {false, true}) {
    LstmT<float> lstm(16, 32, 10, seq);
    expectLayerAllocatesNothing(lstm, 160, randomFloats(160 * 32, 7), seq ? "lstm sequences" : "lstm last");
  }
}

// mallocs of one forward + backward of a stand-alone float DenseT of W2's fc1 shape after reserve().
// DenseT is not part of the model zoo: where it runs on Eigen's GEMM (builds without its AVX-512
// kernels) it mallocs packing buffers on every call, and the preset test below cannot demand zero.
long denseMallocs() {
  DenseT<float> d(3136, 512);
  std::vector<float> p(3136 * 512 + 512, 0.01f), g(p.size()), x(3136 * 32, 0.5f), y(512 * 32), dx(x.size());
  d.bind(p.data(), g.data());
  d.reserve(32);
  return countAllocations([&] {
           CMapT<float> xm(x.data(), 3136, 32);
           MapT<float> ym(y.data(), 512, 32), dxm(dx.data(), 3136, 32);
           d.forward(xm, ym, true);
           d.backward(xm, CMapT<float>(y.data(), 512, 32), CMapT<float>(y.data(), 512, 32), &dxm);
         })
      .mallocs;
}

// Whole presets, in one precision: lossAndGradient, the fused SGD step and a chunked evaluation after
// reserve(), for each preset of `names` (bf16: built with train.precision = bf16's layers). C++
// allocations must be zero everywhere, and so must mallocs whenever DenseT itself does not allocate
// (`denseAllocs`, denseMallocs()).
void expectPresetStepsAllocateNothing(const std::vector<std::string>& names, bool bf16, long denseAllocs) {
  for (const auto& name : names) {
    SCOPED_TRACE(name + (bf16 ? " (bf16)" : ""));
    ModelConfig cfg;
    cfg.name = parseEnum<ModelPreset>("model", name);
    if (name == "mlp" || name == "cnn_mcmahan" || name == "lstm") cfg.dropout = 0.2;
    const bool tokens = name == "lstm" || name == "transformer_playerfl";
    const InputSpec in = tokens ? InputSpec{Shape{1, 1, 12}, 5, 40} : InputSpec{Shape{1, 28, 28}, 10, 0};
    if (bf16) selectBf16(true);
    auto m = buildModel<float>(cfg, in);
    if (bf16) selectBf16(false);
    Rng rng(1, -1, -1, Purpose::Init);
    m->initialize(rng);
    m->reserve(32);
    m->setRandomContext(1, 0, 0);
    // 100 samples: evaluate() runs a batch larger than the reserved one in chunks.
    std::vector<float> x = randomFloats(static_cast<std::size_t>(in.shape.size()) * 100, 9);
    if (tokens)
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 40);
    std::vector<std::int32_t> y(100), pred(100);
    for (int j = 0; j < 100; ++j) y[j] = j % in.numClasses;
    const Counts c = countAllocations([&] {
      m->lossAndGradient(x.data(), y.data(), 32);
      m->sgdStep(x.data(), y.data(), 32, 0.01f);
      m->evaluate(x.data(), y.data(), 100, pred.data());
    });
    EXPECT_EQ(c.news, 0);
    if (denseAllocs == 0)
      EXPECT_EQ(c.mallocs, 0);
    else
      ::testing::Test::RecordProperty("mallocs_" + name + (bf16 ? "_bf16" : ""), static_cast<int>(c.mallocs));
  }
}

// Every preset in fp32.
TEST(NoAllocation, PresetTrainingStep) {
  const long denseAllocs = denseMallocs();
  if (denseAllocs != 0)
    std::printf("[ note ] DenseT allocates %ld times per call: preset mallocs not checked\n", denseAllocs);
  expectPresetStepsAllocateNothing(modelPresetNames(), false, denseAllocs);
}

// The bf16 convolutions and dense layers (train.precision = bf16) allocate nothing after reserve() either.
TEST(NoAllocation, Bf16ConvolutionTrainingStep) {
  if (!bf16Missing().empty()) GTEST_SKIP() << bf16Missing();
  expectPresetStepsAllocateNothing({"mlp", "cnn_mcmahan", "cnn_playerfl"}, true, denseMallocs());
}

// A whole local training run (LocalTrainer::train: batch gather, augmentation, forward/backward,
// Adam with AMSGrad on a persistent state) after a first run has sized every buffer.
TEST(NoAllocation, TrainingRunWithAdamAndAugmentation) {
  const long denseAllocs = denseMallocs();
  Dataset ds;
  ds.shape = Shape{1, 28, 28};
  ds.numClasses = 10;
  for (int i = 0; i < 96; ++i) {
    for (int f = 0; f < 784; ++f) ds.u8.push_back(static_cast<std::uint8_t>((i * 31 + f * 7) % 256));
    ds.labels.push_back(i % 10);
  }
  ds.setNormalization({0.286}, {0.353});
  ModelConfig cfg;
  cfg.hidden = {64};
  auto m = buildModel<float>(cfg, InputSpec{ds.shape, 10, 0});
  Rng init(1, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(32);
  LocalTrainer trainer(ds, 32);
  AugmentSettings a;
  a.rotation = 10;
  a.translate = 0.1;
  a.scaleMin = 0.9;
  a.scaleMax = 1.1;
  a.flip = true;
  a.cropPadding = 2;
  trainer.setAugmenter(std::make_unique<Augmenter>(a, ds.shape, std::vector<float>{ds.zeroValue(0)}, "test"), 1);
  IndexList idx;
  for (Index i = 0; i < ds.size(); ++i) idx.push_back(i);
  TrainOptions opt;
  opt.batch = 32;
  opt.epochs = 2;
  opt.optimizer.optimizer = OptimizerKind::Adam;
  opt.optimizer.amsgrad = true;
  opt.optimizer.lr = 1e-3;
  OptimizerState state;
  opt.state = &state;
  Rng warm(1, 0, 0, Purpose::Shuffle);
  trainer.train(*m, idx, opt, warm, 0, 0);
  Rng shuffle(1, 0, 1, Purpose::Shuffle);
  const Counts c = countAllocations([&] { trainer.train(*m, idx, opt, shuffle, 0, 1); });
  EXPECT_EQ(c.news, 0);
  if (denseAllocs == 0) {
    EXPECT_EQ(c.mallocs, 0);
  }
}

}  // namespace
}  // namespace fedsilo::test
