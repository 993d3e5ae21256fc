// A RecordSink that passes every record on to another sink: the base of the decorators in front of
// the results file (RoundRecorder, FaultySink), which override only what they add.
#pragma once
#include "core/error.hpp"
#include "core/record_sink.hpp"

namespace fedsilo {

class ForwardingSink : public RecordSink {
 public:
  explicit ForwardingSink(RecordSink* target = nullptr) : target_(target) {}
  void setTarget(RecordSink* target) { target_ = target; }

  void appendRoundScalar(const std::string& name, double value) override { out().appendRoundScalar(name, value); }
  void appendRoundInt(const std::string& name, std::int64_t value) override { out().appendRoundInt(name, value); }
  void appendRoundClients(const std::string& name, const std::vector<double>& local) override {
    out().appendRoundClients(name, local);
  }
  void endRound() override { out().endRound(); }
  void writeScalar(const std::string& p, double v) override { out().writeScalar(p, v); }
  void writeIntScalar(const std::string& p, std::int64_t v) override { out().writeIntScalar(p, v); }
  void writeArray(const std::string& p, const std::vector<double>& v, const std::vector<std::uint64_t>& d) override {
    out().writeArray(p, v, d);
  }
  void writeIntArray(const std::string& p, const std::vector<std::int64_t>& v,
                     const std::vector<std::uint64_t>& d) override {
    out().writeIntArray(p, v, d);
  }
  void writeFloatArray(const std::string& p, const std::vector<float>& v,
                       const std::vector<std::uint64_t>& d) override {
    out().writeFloatArray(p, v, d);
  }
  void writeStrings(const std::string& p, const std::vector<std::string>& v) override { out().writeStrings(p, v); }
  void writeClientRows(const std::string& p, const std::vector<double>& v, std::uint64_t w) override {
    out().writeClientRows(p, v, w);
  }
  void writeClientMatrix(const std::string& p, const std::vector<double>& v, std::uint64_t w) override {
    out().writeClientMatrix(p, v, w);
  }
  void writeClientIntRows(const std::string& p, const std::vector<std::int64_t>& v, std::uint64_t w) override {
    out().writeClientIntRows(p, v, w);
  }
  void writeClientFloatRows(const std::string& p, const std::vector<float>& v, std::uint64_t w) override {
    out().writeClientFloatRows(p, v, w);
  }
  void writeStringAttribute(const std::string& p, const std::string& n, const std::string& v) override {
    out().writeStringAttribute(p, n, v);
  }
  void writeNumberAttribute(const std::string& p, const std::string& n, double v) override {
    out().writeNumberAttribute(p, n, v);
  }

 protected:
  RecordSink& out() {
    FEDSILO_ASSERT(target_ != nullptr, "a forwarding sink was used before it had a target");
    return *target_;
  }

 private:
  RecordSink* target_;
};

}  // namespace fedsilo
