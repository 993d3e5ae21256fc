#include "comm/placement.hpp"

#include <algorithm>
#include <numeric>

namespace fedsilo {
namespace {

using Weights = std::vector<std::int64_t>;

void requireClients(int numClients) {
  if (numClients < 1) throw ConfigError(fmt("clients = ", numClients, ": expected at least 1"));
}

std::vector<int> ownersOfRanges(const std::vector<int>& first) {
  std::vector<int> owner(static_cast<std::size_t>(first.back()));
  for (std::size_t r = 0; r + 1 < first.size(); ++r)
    for (int k = first[r]; k < first[r + 1]; ++k) owner[static_cast<std::size_t>(k)] = static_cast<int>(r);
  return owner;
}

std::int64_t heaviestRank(const std::vector<int>& owner, const Weights& w, int P) {
  std::vector<std::int64_t> load(static_cast<std::size_t>(P), 0);
  for (std::size_t k = 0; k < owner.size(); ++k) load[static_cast<std::size_t>(owner[k])] += w[k];
  return *std::max_element(load.begin(), load.end());
}

// The contiguous ranges whose boundaries sit where the prefix sums come closest to r/P of the total.
std::vector<int> balancedRanges(const Weights& w, int P) {
  const int K = static_cast<int>(w.size());
  Weights prefix(static_cast<std::size_t>(K) + 1, 0);
  for (int k = 0; k < K; ++k) prefix[k + 1] = prefix[k] + w[k];
  const std::int64_t total = prefix[K];
  std::vector<int> first(static_cast<std::size_t>(P) + 1, 0);
  first[P] = K;
  for (int r = 1; r < P; ++r) {
    const std::int64_t target = total * r;  // compare prefix * P with total * r: exact in integers
    int b = static_cast<int>(std::lower_bound(prefix.begin(), prefix.end(), 0,
                                              [&](std::int64_t v, int) { return v * P < target; }) -
                             prefix.begin());
    if (b > 0 && target - prefix[b - 1] * P <= prefix[std::min(b, K)] * P - target) --b;
    b = std::min(b, K);
    // Monotone, and room for one client per remaining rank when there are enough clients.
    const int lo = first[r - 1] + (K >= P ? 1 : 0);
    const int hi = K >= P ? K - (P - r) : K;
    first[r] = std::clamp(b, std::min(lo, hi), hi);
  }
  return ownersOfRanges(first);
}

// A free assignment: the clients by decreasing weight (ties by id), each to the lightest rank (ties:
// fewer clients, then the lower rank; the client count first spreads clients of weight 0), then a
// depth-first search over the same order for an assignment with a lighter heaviest rank. The search
// stops at the lower bound (the larger of the mean and the heaviest client) or after a fixed amount
// of work, so it ends quickly and deterministically for any K and P; small federations (tens of
// clients) are searched to the optimum, federations of thousands keep the first assignment.
class FreeAssignment {
 public:
  FreeAssignment(const Weights& w, int P) : w_(w), P_(P), K_(static_cast<int>(w.size())) {
    order_.resize(static_cast<std::size_t>(K_));
    std::iota(order_.begin(), order_.end(), 0);
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) { return w_[a] > w_[b]; });
    const std::int64_t total = std::accumulate(w_.begin(), w_.end(), std::int64_t{0});
    lowerBound_ = std::max((total + P_ - 1) / P_, *std::max_element(w_.begin(), w_.end()));
    load_.assign(static_cast<std::size_t>(P_), 0);
    count_.assign(static_cast<std::size_t>(P_), 0);
    current_.assign(static_cast<std::size_t>(K_), 0);
  }

  std::vector<int> solve() {
    best_ = largestFirst();
    bestLoad_ = *std::max_element(load_.begin(), load_.end());
    std::fill(load_.begin(), load_.end(), 0);
    std::fill(count_.begin(), count_.end(), 0);
    if (K_ <= kSearchClients) search(0);
    return best_;
  }

 private:
  static constexpr std::int64_t kWorkLimit = std::int64_t{1} << 22;  // rank candidates examined
  // The search recurses once per client; beyond this many clients it is not run (the heaviest-first
  // assignment is then within one client's weight of the mean, and that client is a small share).
  static constexpr int kSearchClients = 4096;

  std::vector<int> largestFirst() {
    std::vector<int> owner(static_cast<std::size_t>(K_));
    for (int k : order_) {
      int to = 0;
      for (int r = 1; r < P_; ++r)
        if (load_[r] < load_[to] || (load_[r] == load_[to] && count_[r] < count_[to])) to = r;
      owner[k] = to;
      load_[to] += w_[k];
      ++count_[to];
    }
    return owner;
  }

  bool mustStop() const { return bestLoad_ <= lowerBound_ || work_ > kWorkLimit; }

  void search(int depth) {
    if (mustStop()) return;
    work_ += P_;
    const int empty = static_cast<int>(std::count(count_.begin(), count_.end(), 0));
    if (K_ >= P_ && empty > K_ - depth) return;  // not enough clients left for one per rank
    if (depth == K_) {
      const std::int64_t heaviest = *std::max_element(load_.begin(), load_.end());
      if (heaviest < bestLoad_) {
        bestLoad_ = heaviest;
        best_ = current_;
      }
      return;
    }
    const int k = order_[depth];
    const std::vector<int> ranks = candidateRanks();
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      const int r = ranks[i];
      if (load_[r] + w_[k] >= bestLoad_) break;  // the candidates come lightest first
      // Two ranks of the same load, both empty or both not, lead to the same assignments of the rest.
      if (i > 0 && sameState(ranks[i - 1], r)) continue;
      load_[r] += w_[k];
      ++count_[r];
      current_[k] = r;
      search(depth + 1);
      load_[r] -= w_[k];
      --count_[r];
      if (mustStop()) return;
    }
  }

  bool sameState(int a, int b) const { return load_[a] == load_[b] && (count_[a] == 0) == (count_[b] == 0); }

  // The ranks by load, the empty ones before the others of the same load, then by rank.
  std::vector<int> candidateRanks() const {
    std::vector<int> ranks(static_cast<std::size_t>(P_));
    std::iota(ranks.begin(), ranks.end(), 0);
    std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) {
      if (load_[a] != load_[b]) return load_[a] < load_[b];
      return (count_[a] == 0) > (count_[b] == 0);
    });
    return ranks;
  }

  const Weights& w_;
  const int P_, K_;
  std::vector<int> order_, current_, best_;
  std::vector<std::int64_t> load_;
  std::vector<int> count_;
  std::int64_t lowerBound_ = 0, bestLoad_ = 0, work_ = 0;
};

}  // namespace

Placement::Placement(int numClients, int numRanks) {
  requireClients(numClients);
  FEDSILO_ASSERT(numRanks >= 1);
  std::vector<int> first(static_cast<std::size_t>(numRanks) + 1);
  for (int r = 0; r <= numRanks; ++r) first[r] = r * (numClients / numRanks) + std::min(r, numClients % numRanks);
  *this = Placement(ownersOfRanges(first), numRanks);
}

Placement::Placement(const Weights& weights, int numRanks) {
  requireClients(static_cast<int>(weights.size()));
  FEDSILO_ASSERT(numRanks >= 1);
  Weights w(weights.size());
  std::transform(weights.begin(), weights.end(), w.begin(), [](std::int64_t v) { return std::max<std::int64_t>(v, 0); });
  std::vector<int> ranges = balancedRanges(w, numRanks);
  std::vector<int> free = FreeAssignment(w, numRanks).solve();
  const bool freeIsLighter = heaviestRank(free, w, numRanks) < heaviestRank(ranges, w, numRanks);
  *this = Placement(freeIsLighter ? std::move(free) : std::move(ranges), numRanks);
}

Placement::Placement(std::vector<int> owner, int numRanks)
    : owner_(std::move(owner)), slot_(owner_.size()), clients_(static_cast<std::size_t>(numRanks)) {
  for (std::size_t k = 0; k < owner_.size(); ++k) {
    std::vector<int>& mine = clients_[static_cast<std::size_t>(owner_[k])];
    slot_[k] = static_cast<int>(mine.size());
    mine.push_back(static_cast<int>(k));
  }
  for (const std::vector<int>& mine : clients_) rankOrder_.insert(rankOrder_.end(), mine.begin(), mine.end());
}

bool Placement::contiguous() const {
  for (std::size_t i = 0; i < rankOrder_.size(); ++i)
    if (rankOrder_[i] != static_cast<int>(i)) return false;
  return true;
}

}  // namespace fedsilo
