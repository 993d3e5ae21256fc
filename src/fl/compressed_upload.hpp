// Update compression in the round (docs/compression.md): what the round driver calls, at a few named
// points, when fl.compress is set. The codecs are src/compress's (no MPI there); this piece applies them
// to what the silos send and keeps the bytes.
//
//   upload     each client's update over the blocks it sends, u = vector - global (or the vector itself
//              where it is a delta: q-FFL's, or client-level DP's clipped update) is encoded with the
//              keyed stream (seed, client, round, uplink), plus its residual with fl.error_feedback; the
//              driver then reduces what the server decodes, global + decode(C(u)), in place of the vector
//   broadcast  with fl.compress_downlink, the change of the global model over the round's reduced blocks
//              is encoded with the stream (seed, -1, round, downlink) on every rank alike (plus the
//              server's residual with error feedback), and every rank's global model becomes the old one
//              plus what a silo decodes
//   bytes      the encoded sizes, per client and round (EncodedRoundBytes, replicated), and the run's
//              totals for /summary
// Encoding is a function of the update and its key, the gathers are put in client order and the
// residuals are per-client state saved by client id, so the results are the same at any rank count.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "compress/compressor.hpp"
#include "compress/error_feedback.hpp"
#include "core/config.hpp"
#include "core/record_sink.hpp"
#include "core/state_archive.hpp"
#include "fl/algorithm.hpp"

namespace fedsilo {

// Refuses (ConfigError, one line naming the option and what it cannot run with) a compression setting
// that is unsound with the rest of the configuration (the matrix in docs/compression.md): zfp's fixed
// accuracy with the system model (its size depends on the values, the clock charges uploads before), algorithms
// that upload nothing through the reduction, secure aggregation, client-level DP but for a contracting
// compressor (topk, signsgd) with the noise at the server and no error feedback.
void refuseUnsoundCompression(const ExperimentConfig& cfg);

// The bytes of one round on the wire, replicated on every rank after CompressedUpload::endRound: the
// figure a system clock charges the links with.
struct EncodedRoundBytes {
  std::vector<double> upload;  // per client (client order, K values): its encoded upload (0: sent nothing)
  double broadcast = 0.0;      // one silo's download of the round's broadcast (encoded with fl.compress_downlink)
};

class CompressedUpload {
 public:
  // nullptr when fl.compress = none.
  static std::unique_ptr<CompressedUpload> make(const ExperimentConfig& cfg, const Communicator& comm,
                                                const Placement& placement, const std::vector<LayerBlock>& blocks);
  CompressedUpload(const ExperimentConfig& cfg, const Communicator& comm, const Placement& placement,
                   const std::vector<LayerBlock>& blocks);

  // Every rank, before the clients train: the global model the silos downloaded.
  void beginRound(const std::vector<float>& global);
  // One client (its rank), after any privacy step: `update`'s vector (null: `modelParams`) over the
  // blocks it sends becomes what the server decodes; the encoded size is kept.
  void compress(int client, int round, const std::vector<char>& reduced, const std::vector<float>& global,
                const float* modelParams, ClientUpdate& update);
  // Collective, after the server step's broadcast: the downlink compression of `global` (with
  // fl.compress_downlink) and the round's bytes to every rank.
  void endRound(int round, const std::vector<char>& reduced, std::vector<float>& global);

  const Compressor& codec() const { return *codec_; }
  // The last round's encoded sizes (replicated).
  const EncodedRoundBytes& roundBytes() const { return roundBytes_; }

  void recordRound(RecordSink& sink) const;  // /rounds/client_upload_encoded_bytes, broadcast_encoded_bytes
  void record(RecordSink& sink) const;       // /summary/upload_bytes_total, download_bytes_total, compression_ratio_mean
  // The clients' residuals (by client id), the server's and the byte totals.
  void checkpoint(StateArchive& ar);

 private:
  // Encodes `update` (n values; the blocks of `layout`) and writes what the receiver decodes to `decoded`.
  EncodedUpdate encodeAndDecode(const float* update, const BlockLayout& layout, const StreamKey& key,
                                float* decoded) const;
  // e's size, checked against the size the layout gives where the codec knows it (what the clock charged).
  double chargedBytes(const EncodedUpdate& e) const;
  // The round's bytes of every client, in client order on every rank, and the run's totals.
  void gatherBytes();
  void compressBroadcast(int round, const std::vector<char>& reduced, std::vector<float>& global);

  const ExperimentConfig& cfg_;
  const Communicator& comm_;
  const Placement& placement_;
  const std::vector<LayerBlock>& blocks_;
  std::unique_ptr<Compressor> codec_;
  bool deltaForm_ = false;  // the vector is the update itself (no global to subtract)
  bool lossless_ = false;   // the codec keeps every element (topk, randk at ratio 1): the update passes as is
  std::size_t n_ = 0;
  ResidualStore residuals_;                 // this rank's clients (fl.error_feedback)
  std::vector<float> downlinkResidual_;     // the server's (fl.error_feedback with fl.compress_downlink; replicated)
  std::vector<float> start_;                // the global model at the start of the round (fl.compress_downlink)
  std::vector<float> delta_, decoded_, sent_;
  std::vector<double> localBytes_, localRaw_;  // this round, per local client (0: sent nothing)
  double broadcastBytes_ = 0.0;
  EncodedRoundBytes roundBytes_;
  // The run's totals (replicated): bytes up and down, the sum and count of the uploads' ratios.
  double uploadTotal_ = 0.0, downloadTotal_ = 0.0, ratioSum_ = 0.0, ratioCount_ = 0.0;
};

}  // namespace fedsilo
