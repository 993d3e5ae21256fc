// fedsilo_dp_norms: DP-SGD's per-example gradient norms and clipped sum (Model::lossAndClippedGradient)
// of one preset on one batch, written out for a reference outside fedsilo: test_dp_torch.sh compares
// them with PyTorch's per-sample gradients (tests/integration/lib/dp_torch_reference.py).
//   fedsilo_dp_norms PRESET DIR
//     cnn_mcmahan: 1 x 28 x 28 images of standard normals, 10 classes;
//     lstm: 20 tokens from a vocabulary of 50 (the preset's embedding 32, two LSTM layers of 64), 5 classes.
// The float model as training runs it, initialised from a fixed seed, a batch of 8, the clip C the
// median of the batch's norms (so that some samples are clipped and some are not). Writes to DIR:
//   meta.txt       preset, batch, classes, clip, input size, then one line per parameter tensor: name size
//   params.f32     the flat parameter buffer (tensors in that order, each in fedsilo's = PyTorch's layout)
//   x.f32, y.i32   the batch (column per sample: C x H x W, or the token ids)
//   norms.f64      ||g_i|| for every sample i
//   clipped.f32    sum_i min(1, C / ||g_i||) g_i, the flat gradient buffer
// Exit 2 on a bad argument.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "nn/presets.hpp"

namespace {

using namespace fedsilo;

template <typename V>
void writeRaw(const std::string& path, const V* data, std::size_t n) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n * sizeof(V)));
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "cnn_mcmahan" && std::string(argv[1]) != "lstm")) {
    std::fprintf(stderr, "usage: fedsilo_dp_norms cnn_mcmahan|lstm DIR\n");
    return 2;
  }
  const std::string preset = argv[1], dir = argv[2];
  const bool lstm = preset == "lstm";
  constexpr int kBatch = 8;
  ModelConfig cfg;
  cfg.name = lstm ? ModelPreset::Lstm : ModelPreset::CnnMcMahan;
  const InputSpec in = lstm ? InputSpec{Shape{20, 1, 1}, 5, 50} : InputSpec{Shape{1, 28, 28}, 10, 0};
  auto m = buildModel<float>(cfg, in);
  Rng init(21, -1, -1, Purpose::Init);
  m->initialize(init);
  m->reserve(kBatch);

  Rng data(22, -1, -1, Purpose::Misc);
  std::vector<float> x(static_cast<std::size_t>(m->inputSize()) * kBatch);
  for (float& v : x) v = lstm ? static_cast<float>(data.below(in.vocabSize)) : static_cast<float>(data.normal());
  std::vector<std::int32_t> y(kBatch);
  for (auto& l : y) l = static_cast<std::int32_t>(data.below(in.numClasses));

  std::vector<double> norms(kBatch);
  m->lossAndClippedGradient(x.data(), y.data(), kBatch, std::numeric_limits<double>::max(), norms.data());
  std::vector<double> sorted = norms;
  std::sort(sorted.begin(), sorted.end());
  const double clip = sorted[kBatch / 2];
  m->lossAndClippedGradient(x.data(), y.data(), kBatch, clip, norms.data());

  std::ofstream meta(dir + "/meta.txt");
  meta.precision(17);
  meta << preset << ' ' << kBatch << ' ' << in.numClasses << ' ' << clip << ' ' << m->inputSize() << '\n';
  for (const LayerBlock& b : m->blocks())
    for (const ParamTensor& t : b.tensors) meta << t.name << ' ' << t.size << '\n';
  if (!meta) return 1;
  const auto P = static_cast<std::size_t>(m->numParams());
  writeRaw(dir + "/params.f32", m->params(), P);
  writeRaw(dir + "/x.f32", x.data(), x.size());
  writeRaw(dir + "/y.i32", y.data(), y.size());
  writeRaw(dir + "/norms.f64", norms.data(), norms.size());
  writeRaw(dir + "/clipped.f32", m->grads(), P);
  return 0;
}
