#include "fl/compressed_upload.hpp"

#include <algorithm>

#include "compress/registry.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "fl/payload_bytes.hpp"

namespace fedsilo {

namespace {

// What an algorithm's ClientUpdate::vector holds over the blocks it sends.
enum class VectorForm { Model, Delta };

struct CompressRule {
  const char* algorithm;
  VectorForm form;
};

// The algorithms whose upload is a parameter vector averaged through the reduction. The others send
// their parameters in the gathered payload (fedfa without DP, gems, oneshot_local), train the pooled
// data together (global) or send nothing (local, ensemble, public_only): nothing there to compress.
constexpr CompressRule kCompressRules[] = {
    {"fedavg", VectorForm::Model},   {"fedprox", VectorForm::Model},  {"ditto", VectorForm::Model},
    {"pfedme", VectorForm::Model},   {"playerfl", VectorForm::Model}, {"playerfl_random", VectorForm::Model},
    {"fedbabu", VectorForm::Model},  {"fedlp", VectorForm::Model},    {"alpha_fedavg", VectorForm::Model},
    {"average", VectorForm::Model},  {"qffl", VectorForm::Delta},  // q-FFL sends F^q (w^t - w_k) itself
};

const CompressRule* compressRule(const std::string& algorithm) {
  for (const CompressRule& r : kCompressRules)
    if (algorithm == r.algorithm) return &r;
  return nullptr;
}

std::string compressibleAlgorithms() {
  std::string out;
  for (const CompressRule& r : kCompressRules) out += (out.empty() ? "" : ", ") + std::string(r.algorithm);
  return out;
}

// Compressors whose decoded block never has a larger L2 norm than the block sent: top-k keeps a subset,
// the scaled sign sqrt(m) ||x||_1 / m <= ||x||_2. A clipped update stays clipped through them.
bool contracts(CompressMethod m) { return m == CompressMethod::TopK || m == CompressMethod::SignSgd; }

}  // namespace

void refuseUnsoundCompression(const ExperimentConfig& cfg) {
  const CompressConfig& c = cfg.compress;
  if (!c.active()) return;
  const std::string what = fmt("fl.compress = ", compressMethodName(c.method));
  if (!compressRule(cfg.algorithm))
    throw ConfigError(fmt(what, " with algorithm = ", cfg.algorithm, ": it uploads no parameter vector through the "
                          "reduction to compress (compression works with ", compressibleAlgorithms(), ")"));
  // The clock charges an upload and tests the deadline before the update is encoded, with the size its
  // layout gives (Compressor::encodedSize); ZFP's fixed-accuracy stream length depends on the values.
  if (cfg.system.enabled() && c.method == CompressMethod::Zfp && c.tolerance)
    throw ConfigError(fmt(what, " with fl.compress_tolerance and the system model ([system] rates set): the encoded "
                          "size of ZFP's fixed-accuracy mode depends on the values and the clock charges an upload "
                          "before it is encoded; use ZFP's fixed rate (fl.compress_bits) with [system]"));
  if (cfg.privacy.secureAggregation)
    throw ConfigError(fmt(what, " with privacy.secure_aggregation = true: masked sums need one linear fixed-point "
                          "encoding shared by every client, and ", compressMethodName(c.method),
                          c.method == CompressMethod::Qsgd
                              ? "'s per-client block norms are per-client scales"
                              : (c.method == CompressMethod::TopK || c.method == CompressMethod::RandK
                                     ? "'s index sets differ between clients"
                                     : " is not linear"),
                          " (use one or the other)"));
  if (!cfg.privacy.clientLevel()) return;
  if (c.errorFeedback)
    throw ConfigError("fl.error_feedback = true with privacy.level = client: the residual carries part of the "
                      "clipped updates of earlier rounds into the next upload, past the clipping bound");
  if (cfg.privacy.noisePlacement == NoisePlacement::Clients)
    throw ConfigError(fmt(what, " with privacy.noise_placement = clients: each client's noise share would be "
                          "compressed with its update, so the sum would no longer carry the calibrated Gaussian "
                          "noise (use privacy.noise_placement = server)"));
  if (!contracts(c.method))
    throw ConfigError(fmt(what, " with privacy.level = client: its decoded update can be longer than the clipped "
                          "one, so the sum's sensitivity would exceed privacy.clip (topk and signsgd keep it)"));
}

std::unique_ptr<CompressedUpload> CompressedUpload::make(const ExperimentConfig& cfg, const Communicator& comm,
                                                         const Placement& placement,
                                                         const std::vector<LayerBlock>& blocks) {
  if (!cfg.compress.active()) return nullptr;
  return std::make_unique<CompressedUpload>(cfg, comm, placement, blocks);
}

CompressedUpload::CompressedUpload(const ExperimentConfig& cfg, const Communicator& comm, const Placement& placement,
                                   const std::vector<LayerBlock>& blocks)
    : cfg_(cfg), comm_(comm), placement_(placement), blocks_(blocks), codec_(makeCompressor(cfg.compress)) {
  const CompressRule* rule = compressRule(cfg.algorithm);
  FEDSILO_ASSERT(rule != nullptr, "fl.compress with algorithm ", cfg.algorithm, " was not refused at start-up");
  // Client-level DP hands over the clipped update itself (fl/client_privacy.hpp).
  deltaForm_ = rule->form == VectorForm::Delta || cfg.privacy.clientLevel();
  // A float difference local - global does not give the local value back when added to global (it is
  // rounded), so a codec that keeps every element lets the values through as none does.
  const CompressMethod m = cfg.compress.method;
  lossless_ = (m == CompressMethod::TopK || m == CompressMethod::RandK) && cfg.compress.ratioOrDefault() == 1.0;
  for (const LayerBlock& b : blocks) n_ = std::max(n_, static_cast<std::size_t>(b.offset + b.size));
  delta_.assign(n_, 0.0f);
  decoded_.assign(n_, 0.0f);
}

EncodedUpdate CompressedUpload::encodeAndDecode(const float* update, const BlockLayout& layout, const StreamKey& key,
                                                float* decoded) const {
  EncodedUpdate e = codec_->encode(update, n_, layout, key);
  codec_->decode(e, decoded);
  return e;
}

double CompressedUpload::chargedBytes(const EncodedUpdate& e) const {
  // The clock charged the link with this size before the update was encoded (fl/payload_bytes).
  const std::optional<std::size_t> charged = codec_->encodedSize(e.layout);
  FEDSILO_ASSERT(!charged || *charged == e.size(), codec_->name(), " encoded ", e.size(), " bytes, not the ",
                 charged.value_or(0), " its layout gives");
  return static_cast<double>(e.size());
}

void CompressedUpload::beginRound(const std::vector<float>& global) {
  localBytes_.assign(static_cast<std::size_t>(placement_.count(comm_.rank())), 0.0);
  localRaw_ = localBytes_;
  if (cfg_.compress.downlink) start_ = global;
}

void CompressedUpload::compress(int client, int round, const std::vector<char>& reduced,
                                const std::vector<float>& global, const float* modelParams, ClientUpdate& update) {
  const float* sent = update.vector ? update.vector : modelParams;
  const BlockLayout layout = sentBlockLayout(blocks_, reduced, &update.blockWeight);
  if (layout.empty()) return;
  std::size_t raw = 0;
  for (const BlockSpan& b : layout) {
    for (std::size_t i = b.offset; i < b.offset + b.size; ++i) delta_[i] = deltaForm_ ? sent[i] : sent[i] - global[i];
    raw += 4 * b.size;
  }
  const StreamKey key{cfg_.seed, client, round, Link::Uplink};
  const EncodedUpdate e =
      cfg_.compress.errorFeedback
          ? residuals_.encodeWithFeedback(client, *codec_, delta_.data(), n_, layout, key, decoded_.data())
          : encodeAndDecode(delta_.data(), layout, key, decoded_.data());
  const auto slot = static_cast<std::size_t>(placement_.slot(client));
  localBytes_[slot] = chargedBytes(e);
  localRaw_[slot] = static_cast<double>(raw);
  if (lossless_) return;
  sent_.assign(sent, sent + n_);
  for (const BlockSpan& b : layout)
    for (std::size_t i = b.offset; i < b.offset + b.size; ++i)
      sent_[i] = deltaForm_ ? decoded_[i] : global[i] + decoded_[i];
  update.vector = sent_.data();
}

void CompressedUpload::compressBroadcast(int round, const std::vector<char>& reduced, std::vector<float>& global) {
  const BlockLayout layout = sentBlockLayout(blocks_, reduced, nullptr);
  for (const BlockSpan& b : layout)
    for (std::size_t i = b.offset; i < b.offset + b.size; ++i) delta_[i] = global[i] - start_[i];
  // Every rank encodes the same change with the same key, so every rank decodes the same model.
  const StreamKey key{cfg_.seed, -1, round, Link::Downlink};
  const EncodedUpdate e =
      cfg_.compress.errorFeedback
          ? encodeWithFeedback(downlinkResidual_, *codec_, delta_.data(), n_, layout, key, decoded_.data())
          : encodeAndDecode(delta_.data(), layout, key, decoded_.data());
  broadcastBytes_ = chargedBytes(e);
  if (lossless_) return;
  for (const BlockSpan& b : layout)
    for (std::size_t i = b.offset; i < b.offset + b.size; ++i) global[i] = start_[i] + decoded_[i];
}

void CompressedUpload::endRound(int round, const std::vector<char>& reduced, std::vector<float>& global) {
  if (cfg_.compress.downlink) {
    compressBroadcast(round, reduced, global);
  } else {
    std::size_t raw = 0;
    for (const BlockSpan& b : sentBlockLayout(blocks_, reduced, nullptr)) raw += 4 * b.size;
    broadcastBytes_ = static_cast<double>(raw);
  }
  gatherBytes();
}

void CompressedUpload::gatherBytes() {
  roundBytes_.upload = placement_.toClientOrder(comm_.allgatherv(localBytes_), 1);
  const std::vector<double> raw = placement_.toClientOrder(comm_.allgatherv(localRaw_), 1);
  roundBytes_.broadcast = broadcastBytes_;
  // In client order on every rank, so the totals do not depend on the placement.
  for (std::size_t k = 0; k < raw.size(); ++k) {
    if (roundBytes_.upload[k] <= 0.0) continue;
    uploadTotal_ += roundBytes_.upload[k];
    ratioSum_ += raw[k] / roundBytes_.upload[k];
    ratioCount_ += 1.0;
  }
  downloadTotal_ += broadcastBytes_ * static_cast<double>(cfg_.clients);  // every silo receives the broadcast
}

void CompressedUpload::recordRound(RecordSink& sink) const {
  sink.appendRoundClients("client_upload_encoded_bytes", localBytes_);
  sink.appendRoundScalar("broadcast_encoded_bytes", broadcastBytes_);
}

void CompressedUpload::record(RecordSink& sink) const {
  sink.writeScalar("/summary/upload_bytes_total", uploadTotal_);
  sink.writeScalar("/summary/download_bytes_total", downloadTotal_);
  sink.writeScalar("/summary/compression_ratio_mean", ratioCount_ > 0.0 ? ratioSum_ / ratioCount_ : kNaN);
}

void CompressedUpload::checkpoint(StateArchive& ar) {
  std::vector<double> totals{uploadTotal_, downloadTotal_, ratioSum_, ratioCount_};
  ar.doubles("compress/totals", totals);
  if (cfg_.compress.errorFeedback) {
    residuals_.checkpoint(ar, "compress_residual");
    if (cfg_.compress.downlink) ar.floats("compress/downlink_residual", downlinkResidual_);
  }
  if (ar.saving()) return;
  FEDSILO_ASSERT(totals.size() == 4, "checkpoint compression totals do not fit");
  uploadTotal_ = totals[0];
  downloadTotal_ = totals[1];
  ratioSum_ = totals[2];
  ratioCount_ = totals[3];
}

}  // namespace fedsilo
