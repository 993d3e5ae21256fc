#include "compress/error_feedback.hpp"

#include "core/error.hpp"

namespace fedsilo {

EncodedUpdate encodeWithFeedback(std::vector<float>& e, const Compressor& codec, const float* update, std::size_t n,
                                 const BlockLayout& blocks, const StreamKey& key, float* decoded) {
  if (e.empty()) e.assign(n, 0.0f);
  FEDSILO_ASSERT(e.size() == n, "the residual has ", e.size(), " elements, the update ", n);
  // Within the blocks sent, e becomes the corrected update p, then p − decode(C(p)); elements outside
  // them are not part of this upload and keep their residual for a round that sends them.
  for (const BlockSpan& b : blocks)
    for (std::size_t i = b.offset; i < b.offset + b.size; ++i) e[i] += update[i];
  EncodedUpdate sent = codec.encode(e.data(), n, blocks, key);
  thread_local std::vector<float> scratch;
  if (!decoded) {
    scratch.resize(n);
    decoded = scratch.data();
  }
  codec.decode(sent, decoded);
  for (const BlockSpan& b : blocks)
    for (std::size_t i = b.offset; i < b.offset + b.size; ++i) e[i] -= decoded[i];
  return sent;
}

EncodedUpdate ResidualStore::encodeWithFeedback(int client, const Compressor& codec, const float* update,
                                                std::size_t n, const BlockLayout& blocks, const StreamKey& key,
                                                float* decoded) {
  return fedsilo::encodeWithFeedback(residuals_[client], codec, update, n, blocks, key, decoded);
}

const std::vector<float>* ResidualStore::find(int client) const {
  auto it = residuals_.find(client);
  return it == residuals_.end() ? nullptr : &it->second;
}

void ResidualStore::checkpoint(StateArchive& ar, const std::string& name) { ar.clientFloats(name, residuals_); }

}  // namespace fedsilo
