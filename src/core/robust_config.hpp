// The typed robustness options (`fl.aggregator` and its parameters, `attack.*`; docs/robustness.md):
// parsed and checked once by app/robust_options, read by src/robust and fl/robust_round.
#pragma once
#include <vector>

namespace fedsilo {

// fl.aggregator: how the server combines the clients' updates.
enum class AggregatorKind { Mean, Median, TrimmedMean, Krum, MultiKrum, Geomed, CenteredClip, NormClip };
// attack.kind: what the malicious silos do.
enum class AttackKind { None, LabelFlip, SignFlip, Scale, Gaussian, Alie, Ipm };

struct AggregatorConfig {
  AggregatorKind kind = AggregatorKind::Mean;
  double trimFraction = 0.1;     // trimmed_mean: beta, the share cut from each side per coordinate
  int byzantine = 0;             // krum, multi_krum: f, the number of Byzantine clients tolerated
  int krumM = 0;                 // multi_krum: m selected updates averaged (0: n - f)
  int geomedIterations = 10;     // geomed: Weiszfeld iterations at most
  double geomedEps = 1e-6;       // geomed: smoothing nu (least distance) and relative stopping tolerance
  double clipTau = 10.0;         // centered_clip: the clipping radius tau
  int clipIterations = 1;        // centered_clip: l, the clipping iterations
  double clipNorm = 10.0;        // norm_clip: the L2 bound of each update
  double memoryMb = 4096.0;      // the most memory rank 0 may hold for the gathered updates
};

struct AttackConfig {
  AttackKind kind = AttackKind::None;
  int clients = 0;               // how many malicious silos, drawn by the keyed RNG (when clientIds is empty)
  std::vector<int> clientIds;    // the malicious silos, given explicitly
  double scale = 0.0;            // sign_flip, scale: s (0: the kind's default)
  double z = 0.0;                // alie: z (0: the paper's z_max from n and the malicious count)
  double epsilon = 0.1;          // ipm: epsilon
  int startRound = 0;            // first round the malicious silos attack (before it they are honest)

  bool any() const { return kind != AttackKind::None; }
  // Whether the attack replaces the update the server receives (model poisoning, at the server after the
  // gather) rather than the client's data.
  bool poisonsUpdates() const { return kind != AttackKind::None && kind != AttackKind::LabelFlip; }
};

struct RobustConfig {
  AggregatorConfig aggregator;
  AttackConfig attack;
  // Whether the server needs every individual update (a robust aggregator or a model-poisoning attack).
  bool gathersUpdates() const { return aggregator.kind != AggregatorKind::Mean || attack.poisonsUpdates(); }
};

}  // namespace fedsilo
