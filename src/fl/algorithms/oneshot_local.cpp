#include "fl/algorithms/oneshot_local.hpp"

#include "core/types.hpp"

#include <cstring>

namespace fedsilo {

namespace {
// The plain mean (NaN when empty; a NaN entry makes it NaN).
double meanOf(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x;
  return v.empty() ? kNaN : s / static_cast<double>(v.size());
}
}  // namespace

OneShotLocal::OneShotLocal(const ExperimentConfig& cfg, const std::string& name) : OneShot(cfg, name) {
  keepLocal_ = true;
}

void OneShotLocal::setup(const FlContext& ctx, std::vector<float>& global) {
  OneShot::setup(ctx, global);
  numParams_ = ctx.numParams;
}

void OneShotLocal::clientUpdate(ClientContext& c, ClientUpdate& out) {
  out.trainLoss = trainLocal(c);
  out.blockWeight.assign(c.fl.blocks.size(), 0.0);
  out.payload.assign(c.model.params(), c.model.params() + c.model.numParams());
}

void OneShotLocal::serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) {
  requireAllClients(in.payloadClients.size(), ctx);
  Workbench& b = bench(ctx);
  const std::size_t K = in.payloadClients.size(), S = opt_.finetuneSizes.size(),
                    P = static_cast<std::size_t>(numParams_);
  memberAcc_.assign(K * S, 0.0);
  std::vector<double> before(K), after(K);
  for (std::size_t k = 0; k < K; ++k) {
    std::vector<float> w(in.payloads.begin() + static_cast<std::ptrdiff_t>(k * P),
                         in.payloads.begin() + static_cast<std::ptrdiff_t>((k + 1) * P));
    sweep(ctx, *b.model, *b.trainer, w);
    for (std::size_t s = 0; s < S; ++s) memberAcc_[k * S + s] = sweepAcc_[s];
    before[k] = accBefore_;
    after[k] = accAfter_;
  }
  // The paper's "Local": the mean over the nodes' models.
  sweepAcc_.assign(S, 0.0);
  for (std::size_t s = 0; s < S; ++s) {
    for (std::size_t k = 0; k < K; ++k) sweepAcc_[s] += memberAcc_[k * S + s];
    sweepAcc_[s] /= static_cast<double>(K);
  }
  accBefore_ = meanOf(before);
  accAfter_ = opt_.publicSamples > 0 ? meanOf(after) : kNaN;
  (void)global;
}

double OneShotLocal::clientAccuracy(ClientContext& c) {
  const std::vector<float>* mine = local_.find(c.client.id);
  if (!mine) return kNaN;
  std::memcpy(c.model.params(), mine->data(), mine->size() * sizeof(float));
  return c.testAccuracy(c.model, c.trainer);
}

void OneShotLocal::recordExtra(const FlContext& ctx, RecordSink& sink) const {
  const auto K = static_cast<std::uint64_t>(ctx.clients.size()),
             S = static_cast<std::uint64_t>(opt_.finetuneSizes.size());
  std::vector<double> m = memberAcc_;
  if (m.size() != K * S) m.assign(K * S, kNaN);
  sink.writeArray("/gems/finetune/member_accuracy", m, {K, S});
}

std::unique_ptr<Algorithm> makeOneShotLocal(const ExperimentConfig& cfg) { return std::make_unique<OneShotLocal>(cfg); }

}  // namespace fedsilo
