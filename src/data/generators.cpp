// Built-in generated datasets: Synthetic(alpha, beta) and the "sequence" text-like task. Each user's
// data comes from its own stream Rng(seed, user, -1, Purpose::Generate), so a user's samples do not
// depend on how many other users there are or on the number of MPI ranks.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "data/loader_util.hpp"

namespace fedsilo::detail {

namespace {

constexpr int kSyntheticDim = 60;

// Per-user sample count cap. n_k = floor(LogNormal(4, 2)) + 50 has mean ~450 but an unbounded tail; a
// cap of 1e6 (240 MB of features for one user) is reached only when the normal draw exceeds ~4.9
// (probability ~5e-7 per user), so it never changes realistic runs and keeps a freak draw from
// exhausting memory.
constexpr double kMaxSamplesPerUser = 1.0e6;

void appendUserSplit(const std::vector<float>& x, const std::vector<std::int32_t>& y, const IndexList& order,
                     std::size_t begin, std::size_t end, int dim, int user, Dataset& ds,
                     std::vector<std::int32_t>& client) {
  for (std::size_t k = begin; k < end; ++k) {
    const std::size_t i = static_cast<std::size_t>(order[k]);
    ds.f32.insert(ds.f32.end(), x.begin() + static_cast<long>(i * dim), x.begin() + static_cast<long>((i + 1) * dim));
    ds.labels.push_back(y[i]);
    client.push_back(user);
  }
}

}  // namespace

// Synthetic(alpha, beta) of Li et al. (FedProx, arXiv:1812.06127; q-FFL, arXiv:1905.10497), transcribed
// from the authors' generator (github.com/litian96/fair_flearn, data/synthetic/generate_synthetic.py):
//   n_k = floor(LogNormal(4, 2)) + 50;  u_k ~ N(0, alpha), B_k ~ N(0, beta) (standard deviations);
//   v_k ~ N(B_k, 1)^d;  x ~ N(v_k, diag(j^-1.2));  W_k ~ N(u_k, 1)^{d x C}, b_k ~ N(u_k, 1)^C;
//   y = argmax(x^T W_k + b_k) (softmax is monotone, so it is left out);
//   per-user shuffle, first floor(0.9 n_k) train, the rest test.
// The reference draws u, B for all users from one global stream; here each user draws its own, which
// gives the same distribution with per-user reproducibility.
DataBundle makeSynthetic(const DataConfig& cfg, std::uint64_t seed) {
  if (cfg.users < 1) throw ConfigError(fmt("data.users must be >= 1, got ", cfg.users));
  const int d = kSyntheticDim;
  const int classes = cfg.numClasses > 0 ? cfg.numClasses : 10;
  if (classes < 2) throw ConfigError(fmt("data.classes must be >= 2 for synthetic, got ", classes));
  DataBundle b;
  b.name = "synthetic";
  b.numNaturalClients = cfg.users;
  for (Dataset* ds : {&b.train, &b.test}) {
    ds->shape = Shape{d, 1, 1};
    ds->numClasses = classes;
  }
  std::vector<double> sdX(d);
  for (int j = 0; j < d; ++j) sdX[j] = std::sqrt(std::pow(static_cast<double>(j + 1), -1.2));
  std::vector<double> v(d), W(static_cast<std::size_t>(d) * classes), bias(classes), logits(classes);
  std::vector<float> x;
  std::vector<std::int32_t> y;
  for (int user = 0; user < cfg.users; ++user) {
    Rng rng(seed, user, -1, Purpose::Generate);
    const double draw = std::floor(std::min(rng.lognormal(4.0, 2.0), kMaxSamplesPerUser));
    const std::size_t n = static_cast<std::size_t>(draw) + 50;
    const double u = cfg.alpha * rng.normal();
    const double B = cfg.beta * rng.normal();
    for (int j = 0; j < d; ++j) v[j] = B + rng.normal();
    for (auto& w : W) w = u + rng.normal();  // W[j * classes + c]
    for (auto& c : bias) c = u + rng.normal();
    x.resize(n * d);
    y.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      float* xi = x.data() + i * d;
      for (int j = 0; j < d; ++j) xi[j] = static_cast<float>(v[j] + sdX[j] * rng.normal());
      logits = bias;
      for (int j = 0; j < d; ++j)
        for (int c = 0; c < classes; ++c) logits[c] += static_cast<double>(xi[j]) * W[static_cast<std::size_t>(j) * classes + c];
      y[i] = static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    }
    IndexList order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<Index>(i);
    rng.shuffle(order);
    const std::size_t nTrain = static_cast<std::size_t>(0.9 * static_cast<double>(n));
    appendUserSplit(x, y, order, 0, nTrain, d, user, b.train, b.naturalClient);
    appendUserSplit(x, y, order, nTrain, n, d, user, b.test, b.naturalClientTest);
  }
  return b;
}

// "sequence": an offline text-classification stand-in for Sent140 so that the LSTM path can be
// exercised without downloads. Vocabulary: 0 = "<pad>", 1 = "<unk>" (never generated; kept so ids
// agree with the LEAF text convention), then `kw` keyword tokens per class, then noise tokens.
// Label rule (a deterministic function of the tokens, hence learnable by a sequence model): the class
// whose keywords occur most often; generation makes that maximum unique. Each user has
//   * label skew: class prior 0.8 * Dir(0.5) + 0.2 / C,
//   * token-frequency skew: noise tokens follow a Zipf(1) law over a user-specific permutation, and a
//     user-specific keyword rate in [0.15, 0.35].
// Per user: data.samples_per_user training samples and max(1, samples_per_user / 5) test samples
// (naturalClient / naturalClientTest). Shape {1, 1, seq_length}, token ids stored as floats.
namespace {

// Token ids of the sequence task: 0 <pad>, 1 <unk>, then keywordsPerClass keywords per class from
// keywordBase, then numNoise noise tokens from noiseBase.
struct SequenceVocabulary {
  int classes = 0, size = 0, length = 0;
  int keywordsPerClass = 0, keywordBase = 2, noiseBase = 0, numNoise = 0;
  bool isKeyword(int token) const { return token >= keywordBase && token < noiseBase; }
  int keywordClass(int token) const { return (token - keywordBase) / keywordsPerClass; }
};

SequenceVocabulary sequenceVocabulary(const DataConfig& cfg) {
  SequenceVocabulary v;
  v.classes = cfg.numClasses > 0 ? cfg.numClasses : 4;
  v.size = cfg.vocabSize;
  v.length = cfg.seqLength;
  const int C = v.classes, V = v.size;
  if (cfg.users < 1) throw ConfigError(fmt("data.users must be >= 1, got ", cfg.users));
  if (C < 2) throw ConfigError(fmt("data.classes must be >= 2 for sequence, got ", C));
  if (v.length < 1) throw ConfigError(fmt("data.seq_length must be >= 1, got ", v.length));
  if (cfg.samplesPerUser < 1) throw ConfigError(fmt("data.samples_per_user must be >= 1, got ", cfg.samplesPerUser));
  if (V < C + 3)
    throw ConfigError(fmt("data.vocab_size = ", V, " is too small for ", C, " classes: need at least ", C + 3,
                          " (padding, unknown, one keyword per class and one noise token)"));
  v.keywordsPerClass = std::max(1, std::min(4, (V - 2) / (2 * C)));
  v.noiseBase = v.keywordBase + C * v.keywordsPerClass;
  v.numNoise = V - v.noiseBase;
  return v;
}

// The bundle without samples: vocabulary, shapes, natural clients, reserved feature buffers.
DataBundle emptySequenceBundle(const DataConfig& cfg, const SequenceVocabulary& v, int nTrain, int nTest) {
  DataBundle b;
  b.name = "sequence";
  b.numNaturalClients = cfg.users;
  b.vocabulary = {"<pad>", "<unk>"};
  for (int c = 0; c < v.classes; ++c)
    for (int j = 0; j < v.keywordsPerClass; ++j)
      b.vocabulary.push_back("kw" + std::to_string(c) + "_" + std::to_string(j));
  for (int i = 0; i < v.numNoise; ++i) b.vocabulary.push_back("w" + std::to_string(i));
  b.vocabSize = v.size;
  for (Dataset* ds : {&b.train, &b.test}) {
    ds->shape = Shape{1, 1, v.length};
    ds->numClasses = v.classes;
  }
  b.train.f32.reserve(static_cast<std::size_t>(cfg.users) * nTrain * v.length);
  b.test.f32.reserve(static_cast<std::size_t>(cfg.users) * nTest * v.length);
  return b;
}

// One user's sample generator: its label prior, its noise-token permutation and keyword rate, all
// drawn from the user's own stream (in this order; the samples continue the same stream).
class SequenceUser {
 public:
  SequenceUser(const SequenceVocabulary& v, const std::vector<double>& zipfCdf, std::uint64_t seed, int user)
      : v_(v), zipfCdf_(zipfCdf), rng_(seed, user, -1, Purpose::Generate), user_(user), tokens_(v.length),
        count_(v.classes), prior_(v.classes), noisePerm_(v.numNoise) {
    const int C = v.classes;
    const std::vector<double> dir = rng_.dirichlet(std::vector<double>(C, 0.5));
    double acc = 0.0;
    for (int c = 0; c < C; ++c) prior_[c] = (acc += 0.8 * dir[c] + 0.2 / C);
    for (int i = 0; i < v.numNoise; ++i) noisePerm_[i] = v.noiseBase + i;
    rng_.shuffle(noisePerm_);
    rate_ = rng_.uniform(0.15, 0.35);
  }

  // Appends one sample of this user to `ds` and its user id to `client`.
  void sample(Dataset& ds, std::vector<std::int32_t>& client) {
    const int y = categorical(prior_);
    std::fill(count_.begin(), count_.end(), 0);
    for (int p = 0; p < v_.length; ++p) {
      if (rng_.bernoulli(rate_)) {
        const int c = rng_.bernoulli(0.5) ? y : static_cast<int>(rng_.below(v_.classes));
        tokens_[p] = keyword(c);
        ++count_[c];
      } else {
        tokens_[p] = noisePerm_[categorical(zipfCdf_)];
      }
    }
    makeLabelDominant(y);
    for (int t : tokens_) ds.f32.push_back(static_cast<float>(t));
    ds.labels.push_back(y);
    client.push_back(user_);
  }

 private:
  int categorical(const std::vector<double>& cdf) {
    const double t = rng_.uniform() * cdf.back();
    const auto it = std::upper_bound(cdf.begin(), cdf.end(), t);
    return static_cast<int>(std::min<std::ptrdiff_t>(it - cdf.begin(), static_cast<std::ptrdiff_t>(cdf.size()) - 1));
  }
  // A random keyword of class c.
  int keyword(int c) {
    return v_.keywordBase + c * v_.keywordsPerClass + static_cast<int>(rng_.below(v_.keywordsPerClass));
  }
  int mostFrequentOtherThan(int y) const {
    int m = 0;
    for (int c = 0; c < v_.classes; ++c)
      if (c != y) m = std::max(m, count_[c]);
    return m;
  }
  // Makes class y the unique most frequent keyword class by overwriting random positions that do not
  // already hold a y keyword (terminates: at worst every position becomes one).
  void makeLabelDominant(int y) {
    while (count_[y] <= mostFrequentOtherThan(y)) {
      const int p = static_cast<int>(rng_.below(v_.length));
      const int t = tokens_[p];
      if (v_.isKeyword(t) && v_.keywordClass(t) == y) continue;
      if (v_.isKeyword(t)) --count_[v_.keywordClass(t)];
      tokens_[p] = keyword(y);
      ++count_[y];
    }
  }

  const SequenceVocabulary& v_;
  const std::vector<double>& zipfCdf_;
  Rng rng_;
  int user_;
  std::vector<int> tokens_, count_;
  std::vector<double> prior_;
  std::vector<int> noisePerm_;
  double rate_ = 0.0;
};

}  // namespace

DataBundle makeSequence(const DataConfig& cfg, std::uint64_t seed) {
  const SequenceVocabulary v = sequenceVocabulary(cfg);
  const int nTrain = cfg.samplesPerUser, nTest = std::max(1, cfg.samplesPerUser / 5);
  DataBundle b = emptySequenceBundle(cfg, v, nTrain, nTest);
  // Noise tokens follow Zipf(1) over each user's own permutation of them.
  std::vector<double> zipfCdf(v.numNoise);
  double acc = 0.0;
  for (int r = 0; r < v.numNoise; ++r) zipfCdf[r] = (acc += 1.0 / (r + 1));
  for (int user = 0; user < cfg.users; ++user) {
    SequenceUser generator(v, zipfCdf, seed, user);
    for (int i = 0; i < nTrain; ++i) generator.sample(b.train, b.naturalClient);
    for (int i = 0; i < nTest; ++i) generator.sample(b.test, b.naturalClientTest);
  }
  return b;
}

}  // namespace fedsilo::detail
