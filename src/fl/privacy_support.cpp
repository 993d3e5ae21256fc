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

// DP-SGD: the algorithms whose clients touch their data only through the shared training loop, and how
// many private steps each update runs per batch of the loop (Ditto: the global model's and the personal
// model's, both DP-SGD; pFedMe: its inner steps, option `stepsOption`; all charged to the client's
// accountant).
struct SampleDpRule {
  const char* algorithm;
  int stepsPerBatch;
  const char* stepsOption = nullptr;  // when set, the steps per batch are this option's value
};
constexpr SampleDpRule kSampleDpRules[] = {{"fedavg", 1},   {"fedprox", 1},
                                           {"playerfl", 1}, {"fedbabu", 1},
                                           {"fedlp", 1},    {"ditto", 2},
                                           {"local", 1},    {"pfedme", 1, "pfedme.inner_steps"}};

// The algorithms refused under DP-SGD, each with its reason.
struct SampleDpRefusal {
  const char* algorithm;
  const char* reason;
};
constexpr SampleDpRefusal kSampleDpRefusals[] = {
    {"qffl", "its clients send their training loss (F_k^q), a statistic of their data outside DP-SGD"},
    {"fedfa", "its clients send their training accuracy, a statistic of their data outside DP-SGD"},
    {"alpha_fedavg", "its clients send their accuracy reports, a statistic of their data outside DP-SGD"},
};

// DP-SGD's per-example norms exist for every parameterised layer of these presets (nn/per_example.hpp);
// a future preset with other parameterised layers stays refused until its layers have them.
constexpr ModelPreset kSampleDpModels[] = {ModelPreset::Mlp,          ModelPreset::Logreg,
                                           ModelPreset::Svm,          ModelPreset::CnnMcMahan,
                                           ModelPreset::CnnPlayerFl,  ModelPreset::CnnPlayerFlCifar,
                                           ModelPreset::Lstm,         ModelPreset::HeartMlp,
                                           ModelPreset::TransformerPlayerFl};

std::string clientDpList() {
  std::string out;
  for (const ClientDpRule& r : kClientDpRules) out += (out.empty() ? "" : ", ") + std::string(r.algorithm);
  return out;
}

const SampleDpRule* sampleDpRule(const std::string& algorithm) {
  for (const SampleDpRule& r : kSampleDpRules)
    if (algorithm == r.algorithm) return &r;
  return nullptr;
}

std::string sampleDpList() {
  std::string out;
  for (const SampleDpRule& r : kSampleDpRules) out += (out.empty() ? "" : ", ") + std::string(r.algorithm);
  return out;
}

void checkSampleAlgorithm(const std::string& algorithm) {
  if (sampleDpRule(algorithm)) return;
  for (const SampleDpRefusal& r : kSampleDpRefusals)
    if (algorithm == r.algorithm)
      throw ConfigError(fmt("privacy.level = sample with algorithm = ", algorithm, ": refused, ", r.reason,
                            " (DP-SGD supports ", sampleDpList(), ")"));
  throw ConfigError(fmt("privacy.level = sample with algorithm = ", algorithm, ": DP-SGD supports ", sampleDpList(),
                        " (the others use the clients' data outside the training loop)"));
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
  std::string supported;
  for (ModelPreset m : kSampleDpModels) supported += fmt(supported.empty() ? "" : ", ", m);
  throw ConfigError(fmt("privacy.level = sample with model = ", cfg.model.name,
                        ": DP-SGD's per-example gradient norms exist for the layers of the models ", supported,
                        ", not for this model's layers"));
}

}  // namespace

const DpUpdateForm* clientDpForm(const std::string& algorithm) {
  for (const ClientDpRule& r : kClientDpRules)
    if (algorithm == r.algorithm) return &r.form;
  return nullptr;
}

int sampleDpStepsPerBatch(const ExperimentConfig& cfg) {
  const SampleDpRule* r = sampleDpRule(cfg.algorithm);
  if (!r) return 1;
  return r->stepsOption ? static_cast<int>(cfg.algo.getInt(r->stepsOption, 1, 100000)) : r->stepsPerBatch;
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
  if (p.sampleLevel()) checkSampleAlgorithm(cfg.algorithm);
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
