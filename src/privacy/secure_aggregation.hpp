// Simulation of secure aggregation by pairwise masking (Bonawitz, Ivanov, Kreuter, Marcedone, McMahan,
// Patel, Ramage, Segal and Seth 2017, "Practical Secure Aggregation for Privacy-Preserving Machine
// Learning", CCS, arXiv:1611.04482 for the short version; the protocol of its Figure 4).
//
// What is simulated: the arithmetic. Each client u of the round's key-agreement set U quantises its
// weighted update to fedsilo's 128-bit fixed point (exactly what ExactSum::addScaled adds) and uploads
//   y_u = x_u + PRG(b_u) + sum_{v in U, v > u} PRG(s_uv) - sum_{v in U, v < u} PRG(s_uv)   (mod 2^128),
// where PRG(s) is a 128-bit word per coordinate from a per-pair seeded counter-mode generator (the
// protocol uses AES in counter mode; here SplitMix64's output function). The server adds the
// y_u that arrive (the survivors S); the recovery round removes the survivors' self masks PRG(b_u) and,
// for every dropped client d, the pair masks PRG(s_sd) its survivors added. The result is the exact
// fixed-point sum of the survivors' inputs, bit for bit what ExactSum gives without masking, because
// fixed-point addition modulo 2^128 is exact and the true sum fits the range.
//
// What is not simulated: key agreement, secret sharing, encryption, signatures and the network. The
// seeds are keyed by (seed, pair, round) instead of Diffie-Hellman; their traffic is modelled by
// SecAggCostModel (bytes and messages per client), not sent.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/exact_sum.hpp"

namespace fedsilo {

// Modular (mod 2^128) arithmetic on the Fixed128 words: masked words are uniformly random, so their
// sums wrap, which Fixed128::add (signed integer part) must not be used for.
void addWordsMod(Fixed128* acc, const Fixed128* x, std::size_t n);
void subWordsMod(Fixed128* acc, const Fixed128* x, std::size_t n);

// out[j] = the fixed-point quantisation of w * x[j] that ExactSum::addScaled accumulates.
void quantiseScaled(const float* x, std::size_t n, double w, Fixed128* out);

class SecureAggregation {
 public:
  // `clients`: the round's key-agreement set U (distinct ids >= 0); `length`: words per input.
  // `threshold`: the Shamir threshold t; recovery needs at least t survivors (default: a majority).
  SecureAggregation(std::uint64_t seed, std::int64_t round, std::vector<int> clients, std::size_t length,
                    int threshold = -1);

  // Client side: adds client u's self mask and pair masks to its quantised input words[0..length).
  void applyMasks(int client, Fixed128* words) const;
  // Server side, after adding (addWordsMod) the masked inputs of `survivors` (a subset of the clients,
  // at least threshold() of them) into acc[0..length): removes every mask left in the sum. Throws
  // RuntimeError if the survivors are too few or not a subset of the round's clients.
  void unmask(Fixed128* acc, const std::vector<int>& survivors) const;

  bool recoverable(std::size_t survivors) const { return survivors >= static_cast<std::size_t>(threshold_); }
  int threshold() const { return threshold_; }
  const std::vector<int>& clients() const { return clients_; }

 private:
  struct MaskStream {
    std::uint64_t key;
    bool subtract;
  };
  MaskStream pairStream(int u, int v, bool subtract) const;
  MaskStream selfStream(int u, bool subtract) const;
  void addStreams(Fixed128* words, const std::vector<MaskStream>& streams) const;

  std::uint64_t seed_;
  std::int64_t round_;
  std::vector<int> clients_;  // sorted
  std::size_t length_;
  int threshold_;
};

// Bytes and messages of the protocol (semi-honest version: AdvertiseKeys, ShareKeys,
// MaskedInputCollection, Unmasking), per client per round, for n clients in U, d of them dropped
// before uploading, and m words. A model of the real protocol's traffic, with the sizes below.
struct SecAggCostModel {
  int keyBytes = 32;           // one public key (X25519)
  int shareBytes = 32;         // one Shamir share of a 32-byte secret
  int idBytes = 4;             // a client id
  int aeadOverheadBytes = 28;  // authenticated encryption of a share pair (12-byte nonce, 16-byte tag)
  int wordBytes = 16;          // one 128-bit fixed-point word of the masked input
  int plainWordBytes = 4;      // one float of an unmasked upload, for the overhead figure
};

struct SecAggCost {
  double bytesSentPerClient = 0;  // by a client that survives to the end
  double bytesReceivedPerClient = 0;
  double plainBytesPerClient = 0;  // the same client's upload without secure aggregation
  int messagesPerClient = 0;       // sent and received, one per protocol round each way
  int extraRoundTrips = 0;         // beyond the plain upload: AdvertiseKeys, ShareKeys, Unmasking
  double clientPrgWords = 0;       // 128-bit mask words each client expands (n pair/self streams x m)
  double serverPrgWords = 0;       // mask words the server expands in recovery ((n-d) + d(n-d) streams x m)
};

SecAggCost secAggCost(int clients, int dropped, std::size_t words, const SecAggCostModel& model = {});

}  // namespace fedsilo
