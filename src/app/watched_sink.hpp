// The records of a run on their way to the results file, each under the storage watchdog
// (app/storage_watchdog.hpp): a round's rows and the final records are collective writes into
// parallel HDF5, which a full disk can stick as it sticks a checkpoint (a metadata write that failed
// on one rank only), so every record is a watched write phase of its own. Between the records (the
// training, the round line) nothing is watched: a long round on a full disk is not a stuck write.
#pragma once
#include <string>
#include <utility>

#include "app/forwarding_sink.hpp"
#include "app/storage_watchdog.hpp"

namespace fedsilo {

class WatchedSink final : public ForwardingSink {
 public:
  // `phase` ("writing the results file") and `file` name the write phase in the watchdog's message.
  WatchedSink(RecordSink& target, StorageWatchdog& dog, std::string phase, std::string file)
      : ForwardingSink(&target), dog_(dog), phase_(std::move(phase)), file_(std::move(file)) {}

  void appendRoundScalar(const std::string& name, double value) override {
    watched([&] { ForwardingSink::appendRoundScalar(name, value); });
  }
  void appendRoundInt(const std::string& name, std::int64_t value) override {
    watched([&] { ForwardingSink::appendRoundInt(name, value); });
  }
  void appendRoundClients(const std::string& name, const std::vector<double>& local) override {
    watched([&] { ForwardingSink::appendRoundClients(name, local); });
  }
  void endRound() override {
    watched([&] { ForwardingSink::endRound(); });
  }
  void writeScalar(const std::string& p, double v) override {
    watched([&] { ForwardingSink::writeScalar(p, v); });
  }
  void writeIntScalar(const std::string& p, std::int64_t v) override {
    watched([&] { ForwardingSink::writeIntScalar(p, v); });
  }
  void writeArray(const std::string& p, const std::vector<double>& v, const std::vector<std::uint64_t>& d) override {
    watched([&] { ForwardingSink::writeArray(p, v, d); });
  }
  void writeIntArray(const std::string& p, const std::vector<std::int64_t>& v,
                     const std::vector<std::uint64_t>& d) override {
    watched([&] { ForwardingSink::writeIntArray(p, v, d); });
  }
  void writeFloatArray(const std::string& p, const std::vector<float>& v,
                       const std::vector<std::uint64_t>& d) override {
    watched([&] { ForwardingSink::writeFloatArray(p, v, d); });
  }
  void writeStrings(const std::string& p, const std::vector<std::string>& v) override {
    watched([&] { ForwardingSink::writeStrings(p, v); });
  }
  void writeClientRows(const std::string& p, const std::vector<double>& v, std::uint64_t w) override {
    watched([&] { ForwardingSink::writeClientRows(p, v, w); });
  }
  void writeClientMatrix(const std::string& p, const std::vector<double>& v, std::uint64_t w) override {
    watched([&] { ForwardingSink::writeClientMatrix(p, v, w); });
  }
  void writeClientIntRows(const std::string& p, const std::vector<std::int64_t>& v, std::uint64_t w) override {
    watched([&] { ForwardingSink::writeClientIntRows(p, v, w); });
  }
  void writeClientFloatRows(const std::string& p, const std::vector<float>& v, std::uint64_t w) override {
    watched([&] { ForwardingSink::writeClientFloatRows(p, v, w); });
  }
  void writeStringAttribute(const std::string& p, const std::string& n, const std::string& v) override {
    watched([&] { ForwardingSink::writeStringAttribute(p, n, v); });
  }
  void writeNumberAttribute(const std::string& p, const std::string& n, double v) override {
    watched([&] { ForwardingSink::writeNumberAttribute(p, n, v); });
  }

 private:
  template <class Write>
  void watched(Write&& write) {
    const StorageWatchdog::Watch watch(dog_, phase_, file_);
    write();
  }

  StorageWatchdog& dog_;
  const std::string phase_, file_;
};

}  // namespace fedsilo
