// RecordSinks for in-process tests: NullSink drops everything; MemorySink keeps the per-round
// client rows of this rank and the replicated scalars, so tests can compare runs.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/record_sink.hpp"

namespace fedsilo::test {

class NullSink : public RecordSink {
 public:
  void appendRoundScalar(const std::string&, double) override {}
  void appendRoundInt(const std::string&, std::int64_t) override {}
  void appendRoundClients(const std::string&, const std::vector<double>&) override {}
  void endRound() override {}
  void writeScalar(const std::string&, double) override {}
  void writeIntScalar(const std::string&, std::int64_t) override {}
  void writeArray(const std::string&, const std::vector<double>&, const std::vector<std::uint64_t>&) override {}
  void writeIntArray(const std::string&, const std::vector<std::int64_t>&, const std::vector<std::uint64_t>&) override {}
  void writeFloatArray(const std::string&, const std::vector<float>&, const std::vector<std::uint64_t>&) override {}
  void writeStrings(const std::string&, const std::vector<std::string>&) override {}
  void writeClientRows(const std::string&, const std::vector<double>&, std::uint64_t) override {}
  void writeClientMatrix(const std::string&, const std::vector<double>&, std::uint64_t) override {}
  void writeClientIntRows(const std::string&, const std::vector<std::int64_t>&, std::uint64_t) override {}
  void writeClientFloatRows(const std::string&, const std::vector<float>&, std::uint64_t) override {}
  void writeStringAttribute(const std::string&, const std::string&, const std::string&) override {}
  void writeNumberAttribute(const std::string&, const std::string&, double) override {}
};

class MemorySink : public NullSink {
 public:
  void appendRoundScalar(const std::string& name, double v) override { scalars[name].push_back(v); }
  void appendRoundInt(const std::string& name, std::int64_t v) override { scalars[name].push_back(static_cast<double>(v)); }
  void appendRoundClients(const std::string& name, const std::vector<double>& local) override {
    rows[name].push_back(local);
  }
  void writeScalar(const std::string& path, double v) override { values[path] = {v}; }
  void writeIntScalar(const std::string& path, std::int64_t v) override { values[path] = {static_cast<double>(v)}; }
  void writeArray(const std::string& path, const std::vector<double>& v, const std::vector<std::uint64_t>&) override {
    values[path] = v;
  }
  void writeClientRows(const std::string& path, const std::vector<double>& local, std::uint64_t) override {
    values[path] = local;
  }
  void writeClientMatrix(const std::string& path, const std::vector<double>& local, std::uint64_t) override {
    values[path] = local;
  }
  void writeClientIntRows(const std::string& path, const std::vector<std::int64_t>& local, std::uint64_t) override {
    values[path].assign(local.begin(), local.end());
  }
  std::map<std::string, std::vector<double>> scalars;                    // /rounds scalars per round
  std::map<std::string, std::vector<std::vector<double>>> rows;          // /rounds client rows (this rank's)
  std::map<std::string, std::vector<double>> values;                     // whole datasets (this rank's rows)
};

}  // namespace fedsilo::test
