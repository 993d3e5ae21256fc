// The server's link shared by uploads that overlap in time: processor sharing with max-min fairness
// (each active upload gets an equal share of the server's rate, an upload whose own uplink is slower
// than its share keeps its uplink rate and leaves the rest to the others; Bertsekas and Gallager, Data
// Networks, 1992, section 6.5.2). Exact event-driven computation: between two events (an upload
// starts or finishes) every rate is constant.
#pragma once
#include <vector>

namespace fedsilo {

struct SharedUpload {
  double start = 0.0;  // seconds: when the silo starts sending
  double bytes = 0.0;
  double capBytesPerSecond = 0.0;  // the silo's own uplink (infinite: limited by the server alone)
};

// When each upload's last byte is through, in the order given. `capacityBytesPerSecond` is the server
// link (infinite: no sharing, each upload at its own rate). An upload of 0 bytes finishes at its start.
// O(n^2) for n uploads.
std::vector<double> sharedLinkFinish(const std::vector<SharedUpload>& uploads, double capacityBytesPerSecond);

// The max-min fair rates of uploads with the given own caps sharing `capacity` (water-filling).
std::vector<double> maxMinFairRates(const std::vector<double>& caps, double capacity);

}  // namespace fedsilo
