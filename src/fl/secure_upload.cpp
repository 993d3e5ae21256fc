#include "fl/secure_upload.hpp"

#include <cmath>

#include "core/error.hpp"

namespace fedsilo {

namespace {
constexpr const char* kColumns[] = {"clients",  "dropped",           "bytes_sent", "bytes_received",
                                    "plain_bytes", "messages", "extra_round_trips", "seconds"};
constexpr std::size_t kWidth = std::size(kColumns);
}  // namespace

void SecureUpload::beginRound(int round, const std::vector<int>& clients, std::size_t words) {
  words_ = words;
  const int n = static_cast<int>(clients.size());
  // With fewer clients than the threshold the protocol cannot finish; unmask() then aborts the round.
  round_.emplace(cfg_.seed, round, clients, words, std::min(threshold(n), std::max(n, 1)));
}

int SecureUpload::threshold(int clients) const {
  return cfg_.privacy.secaggThreshold > 0 ? cfg_.privacy.secaggThreshold : clients / 2 + 1;
}

ExactSum& SecureUpload::clientBuffer() {
  if (buffer_.size() != words_)
    buffer_.resize(words_);
  else
    buffer_.clear();
  return buffer_;
}

void SecureUpload::upload(int client, ExactSum& acc) {
  FEDSILO_ASSERT(round_ && acc.size() == words_ && buffer_.size() == words_, "secure upload outside a round");
  round_->applyMasks(client, buffer_.data());
  addWordsMod(acc.data(), buffer_.data(), words_);
}

bool SecureUpload::unmask(ExactSum& acc, const std::vector<int>& survivors) {
  if (static_cast<int>(survivors.size()) < threshold(static_cast<int>(round_->clients().size()))) {
    acc.clear();
    return false;
  }
  round_->unmask(acc.data(), survivors);
  return true;
}

void SecureUpload::endRound(int survivors, double seconds) {
  const int n = static_cast<int>(round_->clients().size());
  std::vector<double> row(kWidth, std::nan(""));
  row[0] = n;
  row[1] = n - survivors;
  if (survivors > 0) {
    const SecAggCost c = secAggCost(n, n - survivors, words_);
    row[2] = c.bytesSentPerClient;
    row[3] = c.bytesReceivedPerClient;
    row[4] = c.plainBytesPerClient;
    row[5] = c.messagesPerClient;
    row[6] = c.extraRoundTrips;
  }
  row[7] = seconds;
  rows_.push_back(row);
}

void SecureUpload::checkpoint(StateArchive& ar) {
  std::vector<double> flat;
  for (const auto& r : rows_) flat.insert(flat.end(), r.begin(), r.end());
  ar.doubles("privacy/secagg", flat);
  if (ar.saving()) return;
  FEDSILO_ASSERT(flat.size() % kWidth == 0, "checkpoint secure aggregation rows do not fit");
  rows_.clear();
  for (std::size_t i = 0; i < flat.size(); i += kWidth) rows_.emplace_back(flat.begin() + i, flat.begin() + i + kWidth);
}

void SecureUpload::record(RecordSink& sink) const {
  for (std::size_t c = 0; c < kWidth; ++c) {
    std::vector<double> column;
    for (const auto& r : rows_) column.push_back(r[c]);
    sink.writeArray(std::string("/privacy/secagg_") + kColumns[c], column, {column.size()});
  }
}

}  // namespace fedsilo
