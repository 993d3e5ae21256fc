// Byzantine attacks (docs/robustness.md), on the malicious silos chosen once per run. label_flip
// poisons a malicious client's training labels; the model-poisoning kinds replace the rows of the
// malicious clients in a round's update matrix, at the server after the gather, so that the omniscient
// ones (alie, ipm) see the honest updates of that round as in their papers. One file per attack
// family; robust/attack_registry.cpp lists them. No MPI.
#pragma once
#include <cstdint>
#include <vector>

#include "core/robust_config.hpp"
#include "robust/update_matrix.hpp"

namespace fedsilo {

// Per client of K: 1 malicious. attack.client_ids, or attack.clients drawn without replacement by
// Rng(seed, -1, -1, AttackClients). All zeros without an attack.
std::vector<char> chooseMalicious(const AttackConfig& cfg, int numClients, std::uint64_t seed);

// label_flip: c -> C - 1 - c.
inline std::int32_t flipLabel(std::int32_t label, int numClasses) { return numClasses - 1 - label; }

// One round's facts a model-poisoning attack reads.
struct AttackRound {
  std::uint64_t seed = 0;
  int round = 0;
  std::vector<int> clients;     // the client id of each row
  std::vector<char> malicious;  // per row: the row is a malicious client's
};

using AttackFunction = void (*)(const AttackConfig& cfg, const AttackRound& r, UpdateMatrix& u);

struct AttackEntry {
  AttackKind kind;
  AttackFunction replaceRows;  // nullptr: the attack does not touch updates (label_flip)
};

const std::vector<AttackEntry>& attackRegistry();

// Whether the malicious silos attack in `round` (attack.start_round).
inline bool attacksInRound(const AttackConfig& cfg, int round) { return cfg.any() && round >= cfg.startRound; }
// Replaces the malicious rows of `u` with cfg.kind's payload (nothing for label_flip or before
// attack.start_round).
void applyAttack(const AttackConfig& cfg, const AttackRound& r, UpdateMatrix& u);

// The payloads, one file per family.
void signFlipRows(const AttackConfig& cfg, const AttackRound& r, UpdateMatrix& u);  // -s x
void scaleRows(const AttackConfig& cfg, const AttackRound& r, UpdateMatrix& u);     // s x
void gaussianRows(const AttackConfig& cfg, const AttackRound& r, UpdateMatrix& u);
void alieRows(const AttackConfig& cfg, const AttackRound& r, UpdateMatrix& u);
void ipmRows(const AttackConfig& cfg, const AttackRound& r, UpdateMatrix& u);

// sign_flip's and scale's s: attack.scale, or when 0 the kind's default (sign_flip 1; scale the
// number of rows, the model-replacement boost of Bagdasaryan et al. 2020 for equal weights).
double attackScale(const AttackConfig& cfg, int rows);
// ALIE's z: attack.z, or when 0 the paper's z_max = Phi^-1((n - s) / n) with s = floor(n/2 + 1) - m
// for n rows of which m are malicious (0 when that probability is not in (0, 1) above 1/2).
double alieZ(const AttackConfig& cfg, int rows, int malicious);
// Phi^-1(p), the standard normal quantile, for p in (0, 1).
double normalQuantile(double p);

// The unweighted per-coordinate mean (and, with `stddev`, the population standard deviation) of the
// honest rows (all rows when none is honest).
void honestMoments(const AttackRound& r, const UpdateMatrix& u, std::vector<double>& mean, std::vector<double>* stddev);

}  // namespace fedsilo
