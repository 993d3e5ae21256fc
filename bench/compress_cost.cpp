// What compressing one W1 update costs (the MLP 784-200-200-10: 199,210 floats in three layer blocks),
// encode + decode per compressor, as figures against a W1 round (docs/compression.md, "Cost"). Thread
// CPU time, median of the repetitions; never an assertion.
//
//   build/bench/fedsilo_compress_bench [round_seconds] [repetitions]   (defaults 0.15 s, 21)
//
// round_seconds: a W1 round at 2 ranks measured on the same machine (the round line of
// `mpirun -n 2 build/fedsilo --config configs/w1_fedavg_fmnist.ini --rounds 3`); the last column is the
// encode + decode of 10 clients' updates as a fraction of it.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "compress/registry.hpp"

using namespace fedsilo;

namespace {

double threadSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Case {
  const char* label;
  CompressConfig config;
};

CompressConfig config(CompressMethod m, std::optional<int> bits, std::optional<double> ratio,
                      std::optional<double> tolerance = std::nullopt) {
  CompressConfig c;
  c.method = m;
  c.bits = bits;
  c.ratio = ratio;
  c.tolerance = tolerance;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const double roundSeconds = argc > 1 ? std::atof(argv[1]) : 0.15;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 21;
  const BlockLayout blocks = {{0, 784 * 200 + 200}, {157000, 200 * 200 + 200}, {197200, 200 * 10 + 10}};
  const std::size_t n = 199210;
  std::vector<float> x(n);
  Rng rng(1, -1, -1, Purpose::Misc);
  for (float& v : x) v = static_cast<float>(1e-3 * rng.normal());
  using M = CompressMethod;
  std::vector<Case> cases = {{"none", config(M::None, {}, {})},         {"qsgd bits=8", config(M::Qsgd, 8, {})},
                             {"qsgd bits=2", config(M::Qsgd, 2, {})},   {"topk ratio=0.01", config(M::TopK, {}, 0.01)},
                             {"topk ratio=0.1", config(M::TopK, {}, 0.1)}, {"randk ratio=0.01", config(M::RandK, {}, 0.01)},
                             {"signsgd", config(M::SignSgd, {}, {})}};
  if (zfpAvailable()) {
    cases.push_back({"zfp tolerance=1e-4", config(M::Zfp, {}, {}, 1e-4)});
    cases.push_back({"zfp rate=8", config(M::Zfp, 8, {})});
  }
  std::printf("W1 update (%zu floats, 3 blocks), median of %d, thread CPU time; round = %.3f s\n", n, reps, roundSeconds);
  std::printf("%-20s %10s %8s %10s %10s %12s\n", "compressor", "bytes", "ratio", "encode_ms", "decode_ms", "10cl_of_round");
  std::vector<float> out(n);
  for (const Case& c : cases) {
    auto codec = makeCompressor(c.config);
    std::vector<double> enc, dec;
    std::size_t bytes = 0;
    for (int r = 0; r < reps; ++r) {
      const StreamKey key{1, 3, r, Link::Uplink};
      const double t0 = threadSeconds();
      const EncodedUpdate e = codec->encode(x.data(), n, blocks, key);
      const double t1 = threadSeconds();
      codec->decode(e, out.data());
      const double t2 = threadSeconds();
      enc.push_back(t1 - t0);
      dec.push_back(t2 - t1);
      bytes = e.size();
    }
    std::sort(enc.begin(), enc.end());
    std::sort(dec.begin(), dec.end());
    const double e = enc[enc.size() / 2], d = dec[dec.size() / 2];
    std::printf("%-20s %10zu %8.1f %10.3f %10.3f %11.2f%%\n", c.label, bytes, 4.0 * n / bytes, 1e3 * e, 1e3 * d,
                100.0 * 10 * (e + d) / roundSeconds);
  }
  return 0;
}
