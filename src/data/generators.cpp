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

// Synthetic(alpha, beta) of Li et al. (FedProx, q-FFL), transcribed from
// fair_flearn/data/synthetic/generate_synthetic.py (ALGORITHMS.md section 4):
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
DataBundle makeSequence(const DataConfig& cfg, std::uint64_t seed) {
  const int C = cfg.numClasses > 0 ? cfg.numClasses : 4;
  const int V = cfg.vocabSize, L = cfg.seqLength;
  if (cfg.users < 1) throw ConfigError(fmt("data.users must be >= 1, got ", cfg.users));
  if (C < 2) throw ConfigError(fmt("data.classes must be >= 2 for sequence, got ", C));
  if (L < 1) throw ConfigError(fmt("data.seq_length must be >= 1, got ", L));
  if (cfg.samplesPerUser < 1) throw ConfigError(fmt("data.samples_per_user must be >= 1, got ", cfg.samplesPerUser));
  if (V < C + 3)
    throw ConfigError(fmt("data.vocab_size = ", V, " is too small for ", C, " classes: need at least ", C + 3,
                          " (padding, unknown, one keyword per class and one noise token)"));
  const int kw = std::max(1, std::min(4, (V - 2) / (2 * C)));
  const int kwBase = 2, noiseBase = 2 + C * kw, numNoise = V - noiseBase;

  DataBundle b;
  b.name = "sequence";
  b.numNaturalClients = cfg.users;
  b.vocabulary = {"<pad>", "<unk>"};
  for (int c = 0; c < C; ++c)
    for (int j = 0; j < kw; ++j) b.vocabulary.push_back("kw" + std::to_string(c) + "_" + std::to_string(j));
  for (int i = 0; i < numNoise; ++i) b.vocabulary.push_back("w" + std::to_string(i));
  b.vocabSize = V;
  for (Dataset* ds : {&b.train, &b.test}) {
    ds->shape = Shape{1, 1, L};
    ds->numClasses = C;
  }
  const int nTrain = cfg.samplesPerUser, nTest = std::max(1, cfg.samplesPerUser / 5);
  b.train.f32.reserve(static_cast<std::size_t>(cfg.users) * nTrain * L);
  b.test.f32.reserve(static_cast<std::size_t>(cfg.users) * nTest * L);

  std::vector<int> tokens(L), count(C);
  std::vector<double> noiseCdf(numNoise);
  std::vector<int> noisePerm(numNoise);
  std::vector<double> prior(C);
  for (int user = 0; user < cfg.users; ++user) {
    Rng rng(seed, user, -1, Purpose::Generate);
    const std::vector<double> dir = rng.dirichlet(std::vector<double>(C, 0.5));
    double acc = 0.0;
    for (int c = 0; c < C; ++c) prior[c] = (acc += 0.8 * dir[c] + 0.2 / C);
    for (int i = 0; i < numNoise; ++i) noisePerm[i] = noiseBase + i;
    rng.shuffle(noisePerm);
    acc = 0.0;
    for (int r = 0; r < numNoise; ++r) noiseCdf[r] = (acc += 1.0 / (r + 1));
    const double rate = rng.uniform(0.15, 0.35);

    auto categorical = [&](const std::vector<double>& cdf) {
      const double t = rng.uniform() * cdf.back();
      const auto it = std::upper_bound(cdf.begin(), cdf.end(), t);
      return static_cast<int>(std::min<std::ptrdiff_t>(it - cdf.begin(), static_cast<std::ptrdiff_t>(cdf.size()) - 1));
    };
    auto sample = [&](Dataset& ds, std::vector<std::int32_t>& client) {
      const int y = categorical(prior);
      std::fill(count.begin(), count.end(), 0);
      for (int p = 0; p < L; ++p) {
        if (rng.bernoulli(rate)) {
          const int c = rng.bernoulli(0.5) ? y : static_cast<int>(rng.below(C));
          tokens[p] = kwBase + c * kw + static_cast<int>(rng.below(kw));
          ++count[c];
        } else {
          tokens[p] = noisePerm[categorical(noiseCdf)];
        }
      }
      // Make class y the unique most frequent keyword class by overwriting random positions that do
      // not already hold a y keyword (terminates: at worst every position becomes one).
      auto othersMax = [&] {
        int m = 0;
        for (int c = 0; c < C; ++c)
          if (c != y) m = std::max(m, count[c]);
        return m;
      };
      while (count[y] <= othersMax()) {
        const int p = static_cast<int>(rng.below(L));
        const int t = tokens[p];
        const bool isKw = t >= kwBase && t < noiseBase;
        if (isKw && (t - kwBase) / kw == y) continue;
        if (isKw) --count[(t - kwBase) / kw];
        tokens[p] = kwBase + y * kw + static_cast<int>(rng.below(kw));
        ++count[y];
      }
      for (int t : tokens) ds.f32.push_back(static_cast<float>(t));
      ds.labels.push_back(y);
      client.push_back(user);
    };
    for (int i = 0; i < nTrain; ++i) sample(b.train, b.naturalClient);
    for (int i = 0; i < nTest; ++i) sample(b.test, b.naturalClientTest);
  }
  return b;
}

}  // namespace fedsilo::detail
