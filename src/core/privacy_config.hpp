// The typed privacy options (`privacy.*`, docs/privacy.md): parsed and checked once by
// app/privacy_options, read by fl's privacy steps (fl/round_privacy.hpp) and the trainer's DP-SGD.
#pragma once

namespace fedsilo {

// privacy.level: off, DP-FedAvg (one client's whole data is the unit protected), or DP-SGD inside each
// silo (one record is the unit).
enum class PrivacyLevel { None, Client, Sample };
// privacy.noise_placement (client level): the server adds the noise to the sum, or every client of the
// round adds its share before upload (distributed DP).
enum class NoisePlacement { Server, Clients };

struct PrivacyConfig {
  PrivacyLevel level = PrivacyLevel::None;
  double clip = 1.0;             // C: L2 bound of a client's update or of a per-example gradient (initial C when adaptive)
  double noiseMultiplier = 0.0;  // z, noise std / C. With targetEpsilon > 0 the calibrated value (client level: by
                                 // the parser; sample level: at start-up, from the clients' sizes)
  double targetEpsilon = 0.0;    // > 0: calibrate z for this epsilon over the planned rounds or steps
  double delta = 1e-5;
  NoisePlacement noisePlacement = NoisePlacement::Server;
  bool adaptiveClip = false;     // Andrew et al. 2021: C follows a quantile of the update norms
  double targetQuantile = 0.5;   // gamma
  double clipLr = 0.2;           // eta_C
  double clipCountStd = 0.0;     // sigma_b of the clipped-count noise; 0: expected clients per round / 20
  bool secureAggregation = false;
  int secaggThreshold = 0;       // Shamir threshold t; 0: a majority of the round's clients

  bool clientLevel() const { return level == PrivacyLevel::Client; }
  bool sampleLevel() const { return level == PrivacyLevel::Sample; }
  // Anything of the privacy machinery is on (DP of either level, or secure aggregation).
  bool any() const { return level != PrivacyLevel::None || secureAggregation; }
};

}  // namespace fedsilo
