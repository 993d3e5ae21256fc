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

// The pair mask of (u, v), u < v, comes from the stream keyed (seed, u, round, SecAggMask, v); the self
// mask of u from (seed, u, round, SecAggSelfMask). Word j is the stream's draws 2j (high) and 2j+1 (low).
void SecureAggregation::addMaskStream(Fixed128* words, std::int64_t lowClient, std::uint64_t extra, bool selfMask,
                                      bool subtract) const {
  Rng prg(seed_, lowClient, round_, selfMask ? Purpose::SecAggSelfMask : Purpose::SecAggMask, extra);
  for (std::size_t j = 0; j < length_; ++j) {
    const std::uint64_t hi = prg.next(), lo = prg.next();
    if (subtract)
      subWord(words[j], hi, lo);
    else
      addWord(words[j], hi, lo);
  }
}

void SecureAggregation::applyMasks(int client, Fixed128* words) const {
  FEDSILO_ASSERT(std::binary_search(clients_.begin(), clients_.end(), client), "client ", client,
                 " is not in this round's secure aggregation");
  addMaskStream(words, client, 0, true, false);
  for (int v : clients_) {
    if (v == client) continue;
    const int lo = std::min(client, v), hi = std::max(client, v);
    addMaskStream(words, lo, static_cast<std::uint64_t>(hi), false, /*subtract=*/client > v);
  }
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
  for (int s : alive) addMaskStream(acc, s, 0, true, true);
  for (int d : clients_) {
    if (std::binary_search(alive.begin(), alive.end(), d)) continue;
    // Survivor s added +PRG(s_sd) if s < d and -PRG(s_sd) if s > d: undo it.
    for (int s : alive) addMaskStream(acc, std::min(s, d), static_cast<std::uint64_t>(std::max(s, d)), false, s < d);
  }
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
