#include "privacy/secure_aggregation.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace fedsilo {

namespace {

// The integer part as an unsigned word and back: two's complement, so that additions wrap modulo
// 2^64 (well defined for unsigned types) and carry into nothing above the 128 bits.
std::uint64_t hiWord(const Fixed128& f) {
  std::uint64_t u;
  std::memcpy(&u, &f.hi, sizeof u);
  return u;
}
void setHiWord(Fixed128& f, std::uint64_t u) { std::memcpy(&f.hi, &u, sizeof u); }

void addWord(Fixed128& acc, std::uint64_t hi, std::uint64_t lo) {
  const std::uint64_t s = acc.lo + lo;
  setHiWord(acc, hiWord(acc) + hi + (s < acc.lo ? 1 : 0));
  acc.lo = s;
}

void subWord(Fixed128& acc, std::uint64_t hi, std::uint64_t lo) {
  const std::uint64_t d = acc.lo - lo;
  setHiWord(acc, hiWord(acc) - hi - (acc.lo < lo ? 1 : 0));
  acc.lo = d;
}

}  // namespace

void addWordsMod(Fixed128* acc, const Fixed128* x, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) addWord(acc[j], hiWord(x[j]), x[j].lo);
}

void subWordsMod(Fixed128* acc, const Fixed128* x, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) subWord(acc[j], hiWord(x[j]), x[j].lo);
}

void quantiseScaled(const float* x, std::size_t n, double w, Fixed128* out) {
  for (std::size_t j = 0; j < n; ++j) out[j] = Fixed128::fromDouble(w * static_cast<double>(x[j]));
}

SecureAggregation::SecureAggregation(std::uint64_t seed, std::int64_t round, std::vector<int> clients,
                                     std::size_t length, int threshold)
    : seed_(seed), round_(round), clients_(std::move(clients)), length_(length) {
  std::sort(clients_.begin(), clients_.end());
  FEDSILO_ASSERT(std::adjacent_find(clients_.begin(), clients_.end()) == clients_.end(), "duplicate client ids");
  FEDSILO_ASSERT(clients_.empty() || clients_.front() >= 0, "client ids must be >= 0");
  const int n = static_cast<int>(clients_.size());
  threshold_ = threshold < 0 ? n / 2 + 1 : threshold;
  FEDSILO_ASSERT(threshold_ <= std::max(n, 1), "threshold ", threshold_, " above the ", n, " clients");
}

namespace {

// Counter-mode mask generator: word j of the stream with key k is (hi, lo) = (f(k + 2j g), f(k + (2j+1) g)),
// f the SplitMix64 output function and g its odd increment (Steele, Lea and Flood 2014, "Fast Splittable
// Pseudorandom Number Generators"), so any word is computed on its own, as with the AES-CTR PRG of the
// protocol. The keys come from fedsilo's keyed streams (see maskKey).
constexpr std::uint64_t kGamma = 0x9e3779b97f4a7c15ULL;

inline std::uint64_t splitMixOutput(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// words[j] += sign * mask word (first + j) of the stream `key`, for j < n, modulo 2^128.
template <bool Subtract>
void addMaskWords(std::uint64_t key, std::size_t first, Fixed128* words, std::size_t n) {
  std::uint64_t x = key + 2 * static_cast<std::uint64_t>(first) * kGamma;
  for (std::size_t j = 0; j < n; ++j, x += 2 * kGamma) {
    std::uint64_t hi = splitMixOutput(x), lo = splitMixOutput(x + kGamma);
    if (Subtract) {  // two's complement negation of the 128-bit word, then addition
      hi = ~hi + (lo == 0 ? 1 : 0);
      lo = 0 - lo;
    }
    addWord(words[j], hi, lo);
  }
}

}  // namespace

// The key of the pair (u, v), u < v: the first draw of Rng(seed, u, round, SecAggMask, v); of u's self
// mask: of Rng(seed, u, round, SecAggSelfMask).
SecureAggregation::MaskStream SecureAggregation::pairStream(int u, int v, bool subtract) const {
  const int lo = std::min(u, v), hi = std::max(u, v);
  return {Rng(seed_, lo, round_, Purpose::SecAggMask, static_cast<std::uint64_t>(hi)).next(), subtract};
}

SecureAggregation::MaskStream SecureAggregation::selfStream(int u, bool subtract) const {
  return {Rng(seed_, u, round_, Purpose::SecAggSelfMask).next(), subtract};
}

// Blocks of words small enough to stay in L1 while every stream is added to them.
void SecureAggregation::addStreams(Fixed128* words, const std::vector<MaskStream>& streams) const {
  constexpr std::size_t kBlock = 1024;
  for (std::size_t first = 0; first < length_; first += kBlock) {
    const std::size_t n = std::min(kBlock, length_ - first);
    for (const MaskStream& s : streams) {
      if (s.subtract)
        addMaskWords<true>(s.key, first, words + first, n);
      else
        addMaskWords<false>(s.key, first, words + first, n);
    }
  }
}

void SecureAggregation::applyMasks(int client, Fixed128* words) const {
  FEDSILO_ASSERT(std::binary_search(clients_.begin(), clients_.end(), client), "client ", client,
                 " is not in this round's secure aggregation");
  std::vector<MaskStream> streams{selfStream(client, false)};
  for (int v : clients_)
    if (v != client) streams.push_back(pairStream(client, v, /*subtract=*/client > v));
  addStreams(words, streams);
}

void SecureAggregation::unmask(Fixed128* acc, const std::vector<int>& survivors) const {
  std::vector<int> alive(survivors);
  std::sort(alive.begin(), alive.end());
  if (std::adjacent_find(alive.begin(), alive.end()) != alive.end() ||
      !std::includes(clients_.begin(), clients_.end(), alive.begin(), alive.end()))
    throw RuntimeError("secure aggregation: the survivors are not distinct members of the round's clients");
  if (!recoverable(alive.size()))
    throw RuntimeError(fmt("secure aggregation: ", alive.size(), " of ", clients_.size(),
                           " clients survived, below the threshold ", threshold_, "; the round cannot be unmasked"));
  std::vector<MaskStream> streams;
  for (int s : alive) streams.push_back(selfStream(s, true));
  for (int d : clients_) {
    if (std::binary_search(alive.begin(), alive.end(), d)) continue;
    // Survivor s added +PRG(s_sd) if s < d and -PRG(s_sd) if s > d: undo it.
    for (int s : alive) streams.push_back(pairStream(s, d, /*subtract=*/s < d));
  }
  addStreams(acc, streams);
}

SecAggCost secAggCost(int clients, int dropped, std::size_t words, const SecAggCostModel& m) {
  FEDSILO_ASSERT(clients >= 1 && dropped >= 0 && dropped < clients, clients, " clients, ", dropped, " dropped");
  const double n = clients, d = dropped, w = static_cast<double>(words);
  const double shareCiphertext = 2.0 * m.idBytes + 2.0 * m.shareBytes + m.aeadOverheadBytes;  // (s_u^SK, b_u) shares
  SecAggCost c;
  // AdvertiseKeys: two public keys up, every client's two keys down.
  c.bytesSentPerClient = 2.0 * m.keyBytes;
  c.bytesReceivedPerClient = 2.0 * m.keyBytes * n + m.idBytes * n;
  // ShareKeys: one encrypted share pair to every other client through the server, and as many back.
  c.bytesSentPerClient += (n - 1) * shareCiphertext;
  c.bytesReceivedPerClient += (n - 1) * shareCiphertext;
  // MaskedInputCollection: the masked input up, the list of survivors down.
  c.bytesSentPerClient += w * m.wordBytes;
  c.bytesReceivedPerClient += (n - d) * m.idBytes;
  // Unmasking: one share per other client (b_v for survivors, s_v^SK for the dropped).
  c.bytesSentPerClient += (n - 1) * (m.idBytes + m.shareBytes);
  c.plainBytesPerClient = w * m.plainWordBytes;
  c.messagesPerClient = 8;
  c.extraRoundTrips = 3;
  c.clientPrgWords = n * w;
  c.serverPrgWords = ((n - d) + d * (n - d)) * w;
  return c;
}

}  // namespace fedsilo
