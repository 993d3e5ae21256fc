#include "support/world_vs_single.hpp"

#include <cmath>
#include <cstdint>
#include <iterator>
#include <sstream>

#include "core/record_sink.hpp"

namespace fedsilo::test {
namespace {

// Wall times (/rounds/seconds, /summary/seconds_per_round, ...) differ from run to run.
bool isWallTime(const std::string& name) { return name.find("seconds") != std::string::npos; }

template <typename Map>
void dropWallTimes(Map& m) {
  for (auto it = m.begin(); it != m.end();) it = isWallTime(it->first) ? m.erase(it) : std::next(it);
}

template <typename T>
std::vector<double> asDoubles(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// Keeps everything a run writes; per-client rows stay this rank's own until gatherInto().
class GatheringSink : public RecordSink {
 public:
  void appendRoundScalar(const std::string& name, double v) override {
    out_.roundScalars[name].push_back(v);
  }
  void appendRoundInt(const std::string& name, std::int64_t v) override {
    out_.roundScalars[name].push_back(static_cast<double>(v));
  }
  void appendRoundClients(const std::string& name, const std::vector<double>& local) override {
    roundRows_[name].push_back(local);
  }
  void endRound() override {}
  void writeScalar(const std::string& path, double v) override { out_.datasets[path] = {v}; }
  void writeIntScalar(const std::string& path, std::int64_t v) override {
    out_.datasets[path] = {static_cast<double>(v)};
  }
  void writeArray(const std::string& path, const std::vector<double>& v, const std::vector<std::uint64_t>&) override {
    out_.datasets[path] = v;
  }
  void writeIntArray(const std::string& path, const std::vector<std::int64_t>& v,
                     const std::vector<std::uint64_t>&) override {
    out_.datasets[path] = asDoubles(v);
  }
  void writeFloatArray(const std::string& path, const std::vector<float>& v, const std::vector<std::uint64_t>&) override {
    out_.datasets[path] = asDoubles(v);
  }
  void writeStrings(const std::string& path, const std::vector<std::string>& v) override { out_.strings[path] = v; }
  void writeClientRows(const std::string& path, const std::vector<double>& local, std::uint64_t) override {
    clientRows_[path] = local;
  }
  void writeClientMatrix(const std::string& path, const std::vector<double>& local, std::uint64_t) override {
    clientRows_[path] = local;
  }
  void writeClientIntRows(const std::string& path, const std::vector<std::int64_t>& local, std::uint64_t) override {
    if (path != "/clients/rank") clientRows_[path] = asDoubles(local);
  }
  void writeClientFloatRows(const std::string& path, const std::vector<float>& local, std::uint64_t) override {
    clientRows_[path] = asDoubles(local);
  }
  void writeStringAttribute(const std::string& path, const std::string& name, const std::string& value) override {
    out_.strings[path + "@" + name] = {value};
  }
  void writeNumberAttribute(const std::string& path, const std::string& name, double value) override {
    out_.datasets[path + "@" + name] = {value};
  }

  // Collective: the client rows of every rank, gathered rank by rank and put in client order. Every
  // rank holds the same paths, so the maps are walked in the same order.
  RunRecords gatherInto(const Communicator& comm, const Placement& placement) {
    const auto inClientOrder = [&](const std::vector<double>& local) {
      const std::vector<double> all = comm.allgatherv(local);
      return placement.toClientOrder(all, all.size() / static_cast<std::size_t>(placement.numClients()));
    };
    for (const auto& [path, local] : clientRows_) out_.datasets[path] = inClientOrder(local);
    dropWallTimes(out_.roundScalars);
    dropWallTimes(out_.datasets);
    for (const auto& [name, rounds] : roundRows_)
      for (const auto& local : rounds) out_.roundClients[name].push_back(inClientOrder(local));
    return out_;
  }

 private:
  RunRecords out_;
  std::map<std::string, std::vector<double>> clientRows_;
  std::map<std::string, std::vector<std::vector<double>>> roundRows_;
};

bool sameValue(double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); }

// Appends to `why` the first difference between a and b, if any; returns whether they are identical.
bool compareValues(const std::string& what, const std::vector<double>& a, const std::vector<double>& b,
                   std::ostringstream& why) {
  if (a.size() != b.size()) {
    why << "\n  " << what << ": " << a.size() << " values vs " << b.size();
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!sameValue(a[i], b[i])) {
      why.precision(17);
      why << "\n  " << what << "[" << i << "]: " << a[i] << " vs " << b[i];
      return false;
    }
  }
  return true;
}

template <typename Map, typename CompareEntry>
bool compareMaps(const std::string& what, const Map& a, const Map& b, std::ostringstream& why,
                 CompareEntry compareEntry) {
  bool same = true;
  for (const auto& [key, va] : a) {
    const auto it = b.find(key);
    if (it == b.end()) {
      why << "\n  " << what << " " << key << ": only in the first run";
      same = false;
    } else {
      same = compareEntry(what + " " + key, va, it->second) && same;
    }
  }
  for (const auto& entry : b) {
    if (!a.count(entry.first)) {
      why << "\n  " << what << " " << entry.first << ": only in the second run";
      same = false;
    }
  }
  return same;
}

}  // namespace

RunRecords runAndGather(const ExperimentConfig& cfg, const Communicator& comm, const InspectRun& inspect) {
  Experiment exp(cfg, comm);
  GatheringSink sink;
  exp.run(sink);
  exp.writeFinal(sink);
  RunRecords out = sink.gatherInto(comm, exp.placement());
  out.global = exp.global();
  out.lastClientAccuracy = comm.allgatherv(exp.lastClientAccuracy());
  if (inspect) inspect(exp, out);
  return out;
}

WorldAndSingle runOnWorldAndAlone(const ExperimentConfig& cfg, const InspectRun& inspect) {
  const Communicator world = Communicator::world();
  const Communicator single = Communicator::single();
  WorldAndSingle r;
  r.world = runAndGather(cfg, world, inspect);
  r.single = runAndGather(cfg, single, inspect);
  return r;
}

::testing::AssertionResult identicalRecords(const RunRecords& a, const RunRecords& b) {
  std::ostringstream why;
  const auto values = [&why](const std::string& what, const std::vector<double>& x, const std::vector<double>& y) {
    return compareValues(what, x, y, why);
  };
  const auto perRound = [&why](const std::string& what, const std::vector<std::vector<double>>& x,
                               const std::vector<std::vector<double>>& y) {
    if (x.size() != y.size()) {
      why << "\n  " << what << ": " << x.size() << " rounds vs " << y.size();
      return false;
    }
    bool same = true;
    for (std::size_t t = 0; t < x.size(); ++t)
      same = compareValues(what + " round " + std::to_string(t), x[t], y[t], why) && same;
    return same;
  };
  bool same = compareValues("global model", asDoubles(a.global), asDoubles(b.global), why);
  same = compareValues("last client accuracy", a.lastClientAccuracy, b.lastClientAccuracy, why) && same;
  same = compareMaps("round scalar", a.roundScalars, b.roundScalars, why, values) && same;
  same = compareMaps("round clients", a.roundClients, b.roundClients, why, perRound) && same;
  same = compareMaps("dataset", a.datasets, b.datasets, why, values) && same;
  same = compareMaps("extra", a.extra, b.extra, why, values) && same;
  same = compareMaps("strings", a.strings, b.strings, why,
                     [&why](const std::string& what, const std::vector<std::string>& x, const std::vector<std::string>& y) {
                       if (x == y) return true;
                       why << "\n  " << what << ": the strings differ";
                       return false;
                     }) &&
         same;
  if (same) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "the runs differ:" << why.str();
}

}  // namespace fedsilo::test
