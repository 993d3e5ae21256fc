// An in-memory StateArchive for tests: what a save stores, a load returns.
#pragma once
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/state_archive.hpp"

namespace fedsilo::test {

// Names and per-client entries; startLoading() turns a saved archive into one that restores.
class MemoryArchive : public StateArchive {
 public:
  bool saving() const override { return saving_; }
  void startLoading() { saving_ = false; }
  void floats(const std::string& name, std::vector<float>& v) override { sync(floats_[name], v); }
  void doubles(const std::string& name, std::vector<double>& v) override { sync(doubles_[name], v); }
  void clientFloats(const std::string& name, std::unordered_map<int, std::vector<float>>& m) override {
    sync(clientFloats_[name], m);
  }
  void clientDoubles(const std::string& name, std::unordered_map<int, std::vector<double>>& m) override {
    sync(clientDoubles_[name], m);
  }
  std::vector<std::string> names() const {
    std::vector<std::string> n;
    for (const auto& e : doubles_) n.push_back(e.first);
    for (const auto& e : clientFloats_) n.push_back(e.first);
    return n;
  }
  // How many arrays of each kind were stored.
  std::size_t replicatedArrays() const { return floats_.size() + doubles_.size(); }
  std::size_t clientFloatArrays() const { return clientFloats_.size(); }
  const std::unordered_map<int, std::vector<float>>& clientFloatsOf(const std::string& name) {
    return clientFloats_.at(name);
  }

 private:
  template <typename T>
  void sync(T& stored, T& v) {
    if (saving_)
      stored = v;
    else
      v = stored;
  }
  bool saving_ = true;
  std::map<std::string, std::vector<float>> floats_;
  std::map<std::string, std::vector<double>> doubles_;
  std::map<std::string, std::unordered_map<int, std::vector<float>>> clientFloats_;
  std::map<std::string, std::unordered_map<int, std::vector<double>>> clientDoubles_;
};

}  // namespace fedsilo::test
