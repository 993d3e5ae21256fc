// GEMS: Model Aggregation via Good-Enough Model Spaces (Guha & Smith, arXiv 1805.07782; authors' code
// github.com/neelguha/gems, whose bugs are not copied: docs/algorithms.md, "Deviations from the
// authors' code").
//
// Convex GEMS (Sec. 3.1), `gems.mode = convex` (auto for every model except a one-hidden-layer mlp):
//   1. client k trains its model to convergence (gems.local_epochs) and takes the GEMS block: the
//      whole model for logreg/svm, else the LAST dense layer trained over the shared initial model's
//      frozen lower layers (a convex problem on fixed features, the same features at every client);
//   2. its good-enough ball H_k = (c_k, r_k): c_k = that block, r_k the largest radius such that every
//      one of gems.samples points drawn on the sphere of radius r_k around c_k keeps validation
//      accuracy >= gems.epsilon (Algorithm 2, fl/algorithms/gems_math.hpp), Rng(seed, k, -1, Purpose::Gems);
//      with gems.shape = ellipsoid the ball is the ellipsoid with axes a_i r_k, a from the diagonal
//      Fisher of the model's loss on gems.fisher_samples validation samples (App. A);
//   3. rank 0 minimises eq (2) sum_k max(0, ||c_k - w|| - r_k) by subgradient descent from the mean of
//      the centres; w becomes the global model (found = whether the objective reached 0).
// Neuron-wise GEMS for a one-hidden-layer MLP (Sec. 3.2), two protocol rounds (rounds = 2):
//   round 0: clients train the whole MLP, and for every hidden neuron l its ball over (w_l, b_l) with
//     Q_neuron: ||relu(X w' + b') - relu(X w_l + b_l)||_2 / N_val <= gems.neuron_epsilon on the client's
//     validation inputs X (Rng(seed, k, -1, Gems, 2 + l)); rank 0 runs k-means (gems.clusters,
//     Rng(seed, -1, -1, KMeans)) over all K*L neuron centres and the greedy merge within EVERY cluster
//     (fl/algorithms/gems_math.hpp): the new hidden layer has width W' (variable), broadcast in serverState;
//   round 1: every client puts the GEMS hidden layer under a head initialised from Rng(seed, -1, 1,
//     Init) (shared), retrains the head on the fixed hidden features (gems.head_epochs), then convex
//     GEMS on the heads as above. The final model (width W') does not fit the driver's fixed parameter
//     vector: the algorithm evaluates it itself (/gems/*); the driver's per-client evaluation shows each
//     client's own local model and it reports no global model.
// Records: see fl/algorithms/one_shot.hpp and docs/algorithms.md, "Records".
#pragma once
#include "fl/algorithms/gems_math.hpp"
#include "fl/algorithms/one_shot.hpp"

namespace fedsilo {

// A linear head over fixed features: the penultimate activations of a model on a client's training
// and validation samples, and a logreg (svm) model over them whose one block has the layout of the
// model's last dense block.
struct FeatureHead {
  Dataset features;  // f32, shape {F, 1, 1}: the client's train samples, then its val samples
  IndexList train, val;
  std::unique_ptr<Model> head;
  std::unique_ptr<LocalTrainer> trainer;
};

// Output of all layers before the last one (which must be a dense layer holding the last block), in
// evaluation mode, for data[idx], appended to `out` (shape and classes set on first use).
void penultimateFeatures(Model& model, const Dataset& data, const IndexList& idx, Dataset& out);
// The head problem of client c over `model`'s penultimate features; the head starts at the model's
// last block. (Held by pointer: the trainer refers to the features.)
std::unique_ptr<FeatureHead> makeFeatureHead(const FlContext& ctx, Model& model, const ClientData& c);

// Diagonal Fisher of the loss of `model` w.r.t. params [off, off + size): for each of `count` samples
// of `idx` (the first `count` of a permutation drawn from rng; all when count >= |idx|), a class y is
// sampled from the model's softmax and (d log p_y / d theta)^2 accumulated; divided by the count.
std::vector<double> diagonalFisher(Model& model, LocalTrainer& trainer, const Dataset& data, const IndexList& idx,
                                   Index off, Index size, int count, Rng& rng);

class Gems : public OneShot {
 public:
  explicit Gems(const ExperimentConfig& cfg);
  bool hasGlobalModel() const override { return !neuron_; }
  int payloadSize() const override { return payloadSize_; }
  void setup(const FlContext& ctx, std::vector<float>& global) override;
  void clientUpdate(ClientContext& c, ClientUpdate& out) override;
  void serverUpdate(const FlContext& ctx, const ServerInput& in, std::vector<float>& global) override;

  bool neuronMode() const { return neuron_; }
  int hiddenWidth() const { return hiddenWidth_; }
  const std::vector<double>& centers() const { return centers_; }
  const std::vector<double>& radii() const { return radii_; }
  const std::vector<double>& model() const { return model_; }
  bool found() const { return found_; }
  double objective() const { return objective_; }

 protected:
  double clientAccuracy(ClientContext& c) override;
  // Neuron-wise: a client's score is the wider W' model's (not the working model of width W).
  std::optional<EvalStats> evaluateClient(ClientContext& c) override;
  void packExtra(StatePacker& p) const override;
  void unpackExtra(StateReader& r) override;
  void recordExtra(const FlContext& ctx, RecordSink& sink) const override;

 private:
  struct Ball {
    std::vector<double> center, axes;
    double radius = 0.0, centerAccuracy = 0.0;
  };
  // Convex GEMS ball of the last block of `m` (client `client`), Q on data[val].
  Ball convexBall(const FlContext& ctx, int client, Model& m, LocalTrainer& tr, const Dataset& data,
                  const IndexList& val) const;
  void putBall(const Ball& b, std::vector<double>& payload) const;
  void hiddenNeuronBalls(ClientContext& c, std::vector<double>& payload) const;
  void headRound(ClientContext& c, ClientUpdate& out);
  void aggregateHidden(const FlContext& ctx, const ServerInput& in);
  void aggregateHeads(const FlContext& ctx, const ServerInput& in, std::vector<float>& global);
  void announceFineTuning(const FlContext& ctx) const;
  Workbench& wideBench(const FlContext& ctx) const;  // the MLP of width hiddenWidth_
  void loadWide(Model& m) const;                     // hidden layer from hiddenLayer_
  Index headSize() const;                            // GEMS block size this round

  bool neuron_ = false;     // neuron-wise GEMS (two rounds)
  bool lastBlock_ = false;  // convex GEMS on the last block of a multi-block model
  int K_ = 0, D_ = 0, H_ = 0, C_ = 0;
  Index block_ = 0;  // convex: size of the GEMS block
  int payloadSize_ = 0;

  // Replicated results.
  std::vector<double> centers_, radii_, centerAcc_, axes_;  // K x d, K, K, K x d (ellipsoid)
  std::vector<double> model_;                               // the raw GEMS model (its own layout)
  bool found_ = false;
  double objective_ = 0.0;
  int hiddenWidth_ = 0;
  std::vector<double> hiddenLayer_;                                 // neuron: W' x (D + 1), rows (w, b)
  std::vector<double> neuronRadius_, neuronCluster_, neuronGroup_;  // K x H
  int mergedGroups_ = 0, mergedFound_ = 0;
  std::vector<float> final_;  // neuron: final model (width W')
  mutable Workbench wide_;
  mutable int wideWidth_ = 0;
};

// GEMS' round count (AlgorithmEntry::oneShotRounds): 2 in neuron-wise mode (round 0 the hidden layer,
// round 1 the heads), else 1.
int gemsRounds(const ExperimentConfig& cfg);
std::unique_ptr<Algorithm> makeGems(const ExperimentConfig& cfg);

}  // namespace fedsilo
