// Partitioners (docs/architecture.md, "Partitioners") and the per-client train/val/test split. All
// randomness comes from Rng(seed, ..., Purpose::Partition / Purpose::Split), so a partition is a pure
// function of the training labels, the configuration and the seed, identical on every rank.
#include "data/partition.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "data/loaders.hpp"

namespace fedsilo {

namespace {

int classCount(const Dataset& ds) {
  int k = ds.numClasses;
  for (auto y : ds.labels) k = std::max(k, y + 1);
  return k;
}

// Seeded shuffle of all indices, cut into K near-equal contiguous pieces (sizes differ by at most 1).
std::vector<IndexList> partitionIid(Index n, int K, std::uint64_t seed) {
  IndexList perm(static_cast<std::size_t>(n));
  std::iota(perm.begin(), perm.end(), Index{0});
  Rng rng(seed, -1, -1, Purpose::Partition);
  rng.shuffle(perm);
  std::vector<IndexList> out(static_cast<std::size_t>(K));
  for (int k = 0; k < K; ++k) {
    const Index b = n * k / K, e = n * (k + 1) / K;
    out[static_cast<std::size_t>(k)].assign(perm.begin() + b, perm.begin() + e);
  }
  return out;
}

// Dirichlet label skew, drawn as the PLayer-FL authors' reference partition is: one stream;
// for each class c in order: its indices ascending, shuffled; q ~ Dir(alpha 1_K); cut points
// floor(cumsum(q)[k] * n_c) for k < K-1; piece k goes to client k (the last takes the remainder).
// No resampling for minimum sizes. (The shipped .npy comes from NumPy's PCG64 and cannot be reproduced
// bit-for-bit; scheme "file" loads it.)
std::vector<IndexList> partitionDirichlet(const Dataset& ds, int K, double alpha, std::uint64_t seed) {
  if (!(alpha > 0.0) || !std::isfinite(alpha))
    throw ConfigError(fmt("partition.alpha must be a positive number, got ", alpha));
  const int C = classCount(ds);
  std::vector<IndexList> byClass(static_cast<std::size_t>(C));
  for (Index i = 0; i < ds.size(); ++i) byClass[static_cast<std::size_t>(ds.labels[static_cast<std::size_t>(i)])].push_back(i);
  Rng rng(seed, -1, -1, Purpose::Partition);
  std::vector<IndexList> out(static_cast<std::size_t>(K));
  const std::vector<double> conc(static_cast<std::size_t>(K), alpha);
  for (auto& idx : byClass) {
    rng.shuffle(idx);
    const std::vector<double> q = rng.dirichlet(conc);
    const Index nc = static_cast<Index>(idx.size());
    double cum = 0.0;
    Index prev = 0;
    for (int k = 0; k < K; ++k) {
      Index cut = nc;
      if (k < K - 1) {
        cum += q[static_cast<std::size_t>(k)];
        cut = std::min(nc, std::max(prev, static_cast<Index>(std::floor(cum * static_cast<double>(nc)))));
      }
      auto& dst = out[static_cast<std::size_t>(k)];
      dst.insert(dst.end(), idx.begin() + prev, idx.begin() + cut);
      prev = cut;
    }
  }
  return out;
}

// Shards (McMahan et al. 2017, arXiv:1602.05629; the unbalanced variant is alpha-FedAvg's): every
// shard holds ONE label (shardsByClass), client k gets c_k shards. c_k = min when min == max;
// otherwise c_k ~ U{min..max}, then while sum c_k > S a uniformly chosen client with c_k > min gives
// one back (so the total never exceeds S; unused shards stay unassigned). Shards are dealt from a
// seeded permutation of the shard ids.
std::vector<IndexList> partitionShards(const Dataset& ds, int K, const PartitionConfig& cfg, std::uint64_t seed) {
  const int S = cfg.shards, lo = cfg.shardsPerClientMin, hi = cfg.shardsPerClientMax;
  if (S < 1) throw ConfigError(fmt("partition.shards must be >= 1, got ", S));
  if (lo < 1 || hi < lo)
    throw ConfigError(fmt("partition.shards_per_client must satisfy 1 <= min <= max, got ", lo, ",", hi));
  if (static_cast<long long>(K) * lo > S)
    throw ConfigError(fmt(K, " clients x ", lo, " shards each = ", static_cast<long long>(K) * lo,
                          " exceeds partition.shards = ", S, " (use fewer clients or more shards)"));
  const std::vector<IndexList> shards = shardsByClass(ds.labels, classCount(ds), S);
  Rng rng(seed, -1, -1, Purpose::Partition);
  std::vector<int> count(static_cast<std::size_t>(K), lo);
  long long total = static_cast<long long>(K) * lo;
  if (hi > lo) {
    total = 0;
    for (auto& c : count) {
      c = lo + static_cast<int>(rng.below(static_cast<std::uint64_t>(hi - lo + 1)));
      total += c;
    }
    while (total > S) {
      std::vector<int> reducible;
      for (int k = 0; k < K; ++k)
        if (count[static_cast<std::size_t>(k)] > lo) reducible.push_back(k);
      // total > S >= K * lo guarantees a reducible client.
      --count[static_cast<std::size_t>(reducible[rng.below(reducible.size())])];
      --total;
    }
  }
  std::vector<int> shardIds(static_cast<std::size_t>(S));
  std::iota(shardIds.begin(), shardIds.end(), 0);
  rng.shuffle(shardIds);
  std::vector<IndexList> out(static_cast<std::size_t>(K));
  std::size_t next = 0;
  for (int k = 0; k < K; ++k) {
    for (int j = 0; j < count[static_cast<std::size_t>(k)]; ++j) {
      const IndexList& shard = shards[static_cast<std::size_t>(shardIds[next++])];
      auto& dst = out[static_cast<std::size_t>(k)];
      dst.insert(dst.end(), shard.begin(), shard.end());
    }
  }
  return out;
}

// Every sample of label l goes to client l mod K.
std::vector<IndexList> partitionLabels(const Dataset& ds, int K) {
  const int C = classCount(ds);
  if (K > C)
    throw ConfigError(fmt("partition.scheme = labels with ", K, " clients but only ", C,
                          " labels: clients ", C, "..", K - 1, " would be empty (use at most ", C, " clients)"));
  std::vector<IndexList> out(static_cast<std::size_t>(K));
  for (Index i = 0; i < ds.size(); ++i) out[static_cast<std::size_t>(ds.labels[static_cast<std::size_t>(i)] % K)].push_back(i);
  return out;
}

std::vector<IndexList> partitionFile(const DataBundle& data, int K, const std::string& file) {
  if (file.empty()) throw ConfigError("partition.scheme = file needs partition.file (a .npy of client ids)");
  const std::vector<std::int64_t> ids = readNpyInts(file);
  const Index n = data.train.size();
  if (static_cast<Index>(ids.size()) != n)
    throw DataError(fmt("'", file, "': ", ids.size(), " client ids, but the training set has ", n, " samples"));
  std::vector<IndexList> out(static_cast<std::size_t>(K));
  for (Index i = 0; i < n; ++i) {
    const std::int64_t c = ids[static_cast<std::size_t>(i)];
    if (c < 0 || c >= K)
      throw DataError(fmt("'", file, "': client id ", c, " at position ", i, " is outside [0, ", K, ")"));
    out[static_cast<std::size_t>(c)].push_back(i);
  }
  return out;
}

std::vector<IndexList> partitionNatural(const DataBundle& data, int K) {
  if (data.naturalClient.empty())
    throw ConfigError(fmt("partition.scheme = natural, but dataset '", data.name, "' has no natural partition"));
  if (K != data.numNaturalClients)
    throw ConfigError(fmt("partition.scheme = natural: clients = ", K, " but dataset '", data.name, "' has ",
                          data.numNaturalClients, " natural clients"));
  std::vector<IndexList> out(static_cast<std::size_t>(K));
  for (std::size_t i = 0; i < data.naturalClient.size(); ++i) {
    const int c = data.naturalClient[i];
    FEDSILO_ASSERT(c >= 0 && c < K, "natural client id ", c, " out of range");
    out[static_cast<std::size_t>(c)].push_back(static_cast<Index>(i));
  }
  return out;
}

}  // namespace

std::vector<IndexList> shardsByClass(const std::vector<std::int32_t>& labels, int numClasses, int S) {
  const std::size_t C = static_cast<std::size_t>(numClasses);
  std::vector<IndexList> byClass(C);  // each class's indices, ascending (= a stable sort by label)
  for (std::size_t i = 0; i < labels.size(); ++i) byClass[static_cast<std::size_t>(labels[i])].push_back(static_cast<Index>(i));
  const Index n = static_cast<Index>(labels.size());
  int present = 0;
  for (const auto& c : byClass) present += c.empty() ? 0 : 1;
  if (S < present)
    throw ConfigError(fmt("partition.shards = ", S, " is fewer than the ", present,
                          " labels present: every shard holds one label, so at least ", present, " shards are needed"));
  if (static_cast<Index>(S) > n)
    throw ConfigError(fmt("partition.shards = ", S, " exceeds the ", n, " training samples"));
  // Shards per class: Hamilton (largest remainder) apportionment of S by class size, exact integer
  // arithmetic; ties go to the lower label.
  std::vector<Index> shardsOf(C, 0), rem(C, 0);
  Index given = 0;
  for (std::size_t c = 0; c < C; ++c) {
    const Index q = static_cast<Index>(S) * static_cast<Index>(byClass[c].size());
    shardsOf[c] = q / n;
    rem[c] = q % n;
    given += shardsOf[c];
  }
  std::vector<std::size_t> order(C);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rem[a] > rem[b]; });
  for (std::size_t i = 0; given < S; ++i, ++given) ++shardsOf[order[i]];
  // Every non-empty class gets a shard: taken, one at a time, from the class with the most shards
  // (the lower label on ties), which has at least 2 because S >= the classes present.
  for (std::size_t c = 0; c < C; ++c) {
    if (byClass[c].empty() || shardsOf[c] > 0) continue;
    const std::size_t from = static_cast<std::size_t>(std::max_element(shardsOf.begin(), shardsOf.end()) - shardsOf.begin());
    --shardsOf[from];
    shardsOf[c] = 1;
  }
  // Shard ids in label order; each class cut into near-equal contiguous pieces (sizes differ by at
  // most 1). With class sizes that are multiples of n / S this is the plain cut of the label-sorted
  // indices into S equal pieces.
  std::vector<IndexList> out;
  out.reserve(static_cast<std::size_t>(S));
  for (std::size_t c = 0; c < C; ++c) {
    const Index nc = static_cast<Index>(byClass[c].size()), m = shardsOf[c];
    for (Index j = 0; j < m; ++j)
      out.emplace_back(byClass[c].begin() + nc * j / m, byClass[c].begin() + nc * (j + 1) / m);
  }
  FEDSILO_ASSERT(out.size() == static_cast<std::size_t>(S));
  return out;
}

namespace {

std::vector<IndexList> partitionByScheme(const DataBundle& data, int K, const PartitionConfig& cfg, std::uint64_t seed) {
  const Dataset& ds = data.train;
  switch (cfg.scheme) {
    case PartitionScheme::Iid: return partitionIid(ds.size(), K, seed);
    case PartitionScheme::Dirichlet: return partitionDirichlet(ds, K, cfg.alpha, seed);
    case PartitionScheme::Shards: return partitionShards(ds, K, cfg, seed);
    case PartitionScheme::Labels: return partitionLabels(ds, K);
    case PartitionScheme::File: return partitionFile(data, K, cfg.file);
    case PartitionScheme::Natural: return partitionNatural(data, K);
  }
  throw RuntimeError(fmt("internal error: no partitioner for scheme enumerator ", static_cast<int>(cfg.scheme)));
}

}  // namespace

std::vector<IndexList> partitionData(const DataBundle& data, int numClients, const PartitionConfig& cfg,
                                     std::uint64_t seed) {
  const int K = numClients;
  if (K < 1) throw ConfigError(fmt("clients must be >= 1, got ", K));
  if (cfg.samplesPerClient < 0)
    throw ConfigError(fmt("partition.samples_per_client must be >= 0, got ", cfg.samplesPerClient));
  const Dataset& ds = data.train;
  std::vector<IndexList> parts = partitionByScheme(data, K, cfg, seed);
  for (int k = 0; k < K; ++k) {
    IndexList& p = parts[static_cast<std::size_t>(k)];
    if (cfg.samplesPerClient > 0 && static_cast<long long>(p.size()) > cfg.samplesPerClient) {
      // PLayer-FL caps each client's data (2000 samples per client); keep a seeded random subset.
      std::sort(p.begin(), p.end());
      Rng rng(seed, k, -1, Purpose::Partition);
      rng.shuffle(p);
      p.resize(static_cast<std::size_t>(cfg.samplesPerClient));
    }
    std::sort(p.begin(), p.end());
    if (p.empty())
      throw ConfigError(fmt("partition.scheme = ", cfg.scheme, ": client ", k, " of ", K, " receives no training samples (",
                            ds.size(), " samples in all); use fewer clients"));
  }
  return parts;
}

ClientSplit splitClient(const IndexList& slice, const std::vector<double>& fractions, std::uint64_t seed, int client) {
  if (fractions.size() != 3)
    throw ConfigError(fmt("data.split needs 3 fractions (train, val, test), got ", fractions.size()));
  double sum = 0.0;
  for (double f : fractions) {
    if (!(f >= 0.0) || !std::isfinite(f))
      throw ConfigError(fmt("data.split fractions must be non-negative numbers, got ", fractions[0], ",", fractions[1],
                            ",", fractions[2]));
    sum += f;
  }
  if (std::fabs(sum - 1.0) > 1e-6)
    throw ConfigError(fmt("data.split fractions must sum to 1, got ", fractions[0], "+", fractions[1], "+",
                          fractions[2], " = ", sum));
  IndexList perm = slice;
  std::sort(perm.begin(), perm.end());  // the result must not depend on the order the slice came in
  Rng rng(seed, client, -1, Purpose::Split);
  rng.shuffle(perm);
  const Index n = static_cast<Index>(perm.size());
  // Cut points by rounding the cumulative fractions: zero fractions give empty parts exactly, and a
  // non-empty slice keeps at least one training sample when the train fraction is positive.
  const double f0 = fractions[0], f1 = fractions[1], f2 = fractions[2];
  Index c1 = (f1 == 0.0 && f2 == 0.0) ? n : std::llround(f0 * static_cast<double>(n));
  if (f0 > 0.0 && n > 0) c1 = std::max<Index>(c1, 1);
  c1 = std::min(c1, n);
  Index c2 = f1 == 0.0 ? c1 : (f2 == 0.0 ? n : std::llround((f0 + f1) * static_cast<double>(n)));
  c2 = std::min(std::max(c2, c1), n);
  ClientSplit out;
  out.train.assign(perm.begin(), perm.begin() + c1);
  out.val.assign(perm.begin() + c1, perm.begin() + c2);
  out.test.assign(perm.begin() + c2, perm.end());
  std::sort(out.train.begin(), out.train.end());
  std::sort(out.val.begin(), out.val.end());
  std::sort(out.test.begin(), out.test.end());
  return out;
}

}  // namespace fedsilo
