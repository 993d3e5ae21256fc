// The timing formulas of the simulated deployment (docs/system.md, "Formulas"). Pure functions.
#pragma once

namespace fedsilo {

// Seconds to train `samples` samples at `flopsPerSample` FLOPs each (forward + backward) on a silo of
// `gflops` GFLOP/s: flopsPerSample x samples / (gflops x 1e9). An infinite rate costs nothing.
double computeSeconds(double flopsPerSample, double samples, double gflops);

// Seconds to send `bytes` over a link of `mbps` Mbit/s with one-way latency `latencyMs`:
// bytes x 8 / (mbps x 1e6) + latencyMs / 1000. An infinite rate costs the latency alone; sending
// nothing costs nothing (no message).
double transferSeconds(double bytes, double mbps, double latencyMs);

// Bytes per second of a link of `mbps` Mbit/s.
inline double bytesPerSecond(double mbps) { return mbps * 1e6 / 8.0; }

}  // namespace fedsilo
