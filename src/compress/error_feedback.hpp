// Error feedback (Stich, Cordonnier, Jaggi, NeurIPS 2018; Karimireddy et al., ICML 2019): each client
// keeps what compression left out of its last upload and adds it to the next one,
//     p = Δ_k + e_k,   send C(p),   e_k ← p − decode(C(p)),
// so every part of an update is sent eventually. Only the blocks an upload carries take part: a
// block a round does not send keeps its residual. The residuals are per-client state of this rank's
// clients, keyed by client id; checkpoint() saves and restores them through StateArchive::clientFloats,
// so a run resumes with them at any rank count. A client that has not uploaded yet has e_k = 0.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "compress/compressor.hpp"
#include "core/state_archive.hpp"

namespace fedsilo {

// One error-feedback step on residual `e` (empty: zero; sized to n): encodes update + e with `codec` and
// leaves e = (update + e) − decode(C(update + e)) within `blocks`. `decoded` (n elements, may be null)
// receives what the receiver decodes.
EncodedUpdate encodeWithFeedback(std::vector<float>& e, const Compressor& codec, const float* update, std::size_t n,
                                 const BlockLayout& blocks, const StreamKey& key, float* decoded = nullptr);

class ResidualStore {
 public:
  // Encodes update + e_client with `codec` and keeps the new residual; the update itself is unchanged.
  // `decoded` as in the free function.
  EncodedUpdate encodeWithFeedback(int client, const Compressor& codec, const float* update, std::size_t n,
                                   const BlockLayout& blocks, const StreamKey& key, float* decoded = nullptr);

  const std::vector<float>* find(int client) const;  // nullptr while the client has no residual
  std::size_t size() const { return residuals_.size(); }

  // Saves or restores every residual of this rank's clients as the per-client array `name`.
  void checkpoint(StateArchive& ar, const std::string& name = "compress_residual");

 private:
  std::unordered_map<int, std::vector<float>> residuals_;
};

}  // namespace fedsilo
