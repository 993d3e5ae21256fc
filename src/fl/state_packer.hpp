// Flat serialisation of an algorithm's replicated state into the vector<double> that the driver
// broadcasts after each round (Algorithm::serverState) and checkpoints as "server_state". Every
// vector is stored with its length first, so that a reader takes the fields back in the order they
// were packed without index arithmetic; integers up to 2^53 survive the round trip exactly.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

namespace fedsilo {

class StatePacker {
 public:
  void scalar(double v) { out_.push_back(v); }
  void doubles(const std::vector<double>& v);
  void floats(const std::vector<float>& v);
  void ints(const std::vector<int>& v);
  std::vector<double> take() { return std::move(out_); }

 private:
  std::vector<double> out_;
};

class StateReader {
 public:
  explicit StateReader(const std::vector<double>& s) : s_(s) {}
  double scalar();
  int integer() { return static_cast<int>(scalar()); }
  std::vector<double> doubles();
  std::vector<float> floats();
  std::vector<int> ints();
  bool done() const { return pos_ == s_.size(); }

 private:
  const std::vector<double>& s_;
  std::size_t pos_ = 0;
};

// A per-round history (rows of equal width) as one flat array, and back: how algorithms checkpoint
// their per-round records (FedFa's weights, alpha-FedAvg's reports). A trailing partial row is dropped.
std::vector<double> flattenRows(const std::vector<std::vector<double>>& rows);
std::vector<std::vector<double>> splitRows(const std::vector<double>& flat, std::size_t width);

}  // namespace fedsilo
