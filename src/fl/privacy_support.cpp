#include "fl/privacy_support.hpp"

#include <cstring>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace fedsilo {

namespace {

struct ClientDpRule {
  const char* algorithm;
  DpUpdateForm form;
};

// Client-level DP (and secure aggregation): the algorithms whose server step is a mean of the clients'
// updates over the blocks they send, or can be made one (q-FFL, FedFa: their DP branches).
constexpr ClientDpRule kClientDpRules[] = {
    {"fedavg", DpUpdateForm::Model},       {"fedprox", DpUpdateForm::Model}, {"qffl", DpUpdateForm::Delta},
    {"fedfa", DpUpdateForm::Model},        {"alpha_fedavg", DpUpdateForm::Model},
    {"playerfl", DpUpdateForm::Model},     {"fedbabu", DpUpdateForm::Model}, {"fedlp", DpUpdateForm::Model},
};

// DP-SGD: the algorithms whose clients touch their data only through the shared training loop (q-FFL,
// FedFa and alpha-FedAvg also evaluate on it and send the result).
constexpr const char* kSampleDpAlgorithms[] = {"fedavg", "fedprox", "playerfl", "fedbabu", "fedlp"};

// DP-SGD's per-example norms are implemented for Dense layers (nn/per_example.hpp).
constexpr ModelPreset kSampleDpModels[] = {ModelPreset::Mlp, ModelPreset::Logreg, ModelPreset::Svm};

std::string listOf(const char* const* names, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += (i ? ", " : "") + std::string(names[i]);
  return out;
}

std::string clientDpList() {
  std::string out;
  for (const ClientDpRule& r : kClientDpRules) out += (out.empty() ? "" : ", ") + std::string(r.algorithm);
  return out;
}

bool sampleDpAlgorithm(const std::string& algorithm) {
  for (const char* a : kSampleDpAlgorithms)
    if (algorithm == a) return true;
  return false;
}

void checkFixedSplit(const ExperimentConfig& cfg, const char* what) {
  if (cfg.algorithm == "playerfl" && trim(cfg.algo.getString("playerfl.split")) == "auto")
    throw ConfigError(fmt(what, " with algorithm = playerfl needs a fixed playerfl.split (a number of federated "
                                "blocks or a block name): the automatic split is chosen from the clients' layer "
                                "sensitivities, which the privacy guarantee does not cover"));
}

void checkSampleModel(const ExperimentConfig& cfg) {
  for (ModelPreset m : kSampleDpModels)
    if (cfg.model.name == m) return;
  throw ConfigError(fmt("privacy.level = sample with model = ", cfg.model.name,
                        ": DP-SGD's per-example gradient norms are implemented for Dense layers only "
                        "(models mlp, logreg, svm)"));
}

}  // namespace

const DpUpdateForm* clientDpForm(const std::string& algorithm) {
  for (const ClientDpRule& r : kClientDpRules)
    if (algorithm == r.algorithm) return &r.form;
  return nullptr;
}

double blockSendProbability(const ExperimentConfig& cfg) {
  return cfg.algorithm == "fedlp" ? cfg.algo.getDouble("fedlp.keep_prob", 0.0, 1.0) : 1.0;
}

double clientSamplingRate(const ExperimentConfig& cfg) {
  const int m = cfg.fl.clientsPerRound;
  return m > 0 && m < cfg.clients ? static_cast<double>(m) / cfg.clients : 1.0;
}

double expectedClients(const ExperimentConfig& cfg) { return clientSamplingRate(cfg) * cfg.clients; }

void checkPrivacySupport(const ExperimentConfig& cfg) {
  const PrivacyConfig& p = cfg.privacy;
  if (p.clientLevel() && !clientDpForm(cfg.algorithm))
    throw ConfigError(fmt("privacy.level = client with algorithm = ", cfg.algorithm,
                          ": client-level DP supports ", clientDpList()));
  if (p.sampleLevel() && !sampleDpAlgorithm(cfg.algorithm))
    throw ConfigError(fmt("privacy.level = sample with algorithm = ", cfg.algorithm, ": DP-SGD supports ",
                          listOf(kSampleDpAlgorithms, std::size(kSampleDpAlgorithms)),
                          " (the others use the clients' data outside the training loop)"));
  if (p.sampleLevel()) checkSampleModel(cfg);
  if (p.level != PrivacyLevel::None) checkFixedSplit(cfg, fmt("privacy.level = ", p.level).c_str());
  if (!p.secureAggregation) return;
  if (!clientDpForm(cfg.algorithm))
    throw ConfigError(fmt("privacy.secure_aggregation = true with algorithm = ", cfg.algorithm,
                          ": secure aggregation supports ", clientDpList()));
  if (cfg.algorithm == "fedfa" && !p.clientLevel())
    throw ConfigError("privacy.secure_aggregation = true with algorithm = fedfa needs privacy.level = client: "
                      "without DP, FedFa sends each client's model to the server outside the sum");
  checkFixedSplit(cfg, "privacy.secure_aggregation = true");
}

}  // namespace fedsilo
