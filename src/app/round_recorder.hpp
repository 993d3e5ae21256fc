// Keeps the /rounds rows on their way to the results file, so that they go into every checkpoint: a
// resume after a hard kill (the partial file was open, and may be damaged) rebuilds the partial file
// from them.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "app/forwarding_sink.hpp"
#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "core/state_archive.hpp"
#include "fl/round_driver.hpp"

namespace fedsilo {

class RoundRecorder final : public ForwardingSink {
 public:
  // `placement` (kept by reference) is the experiment's: the rows of this rank's clients.
  RoundRecorder(const Communicator& comm, const Placement& placement) : comm_(comm), placement_(placement) {}
  std::uint64_t rows() const { return rows_; }

  void appendRoundScalar(const std::string& name, double value) override;
  void appendRoundInt(const std::string& name, std::int64_t value) override;
  void appendRoundClients(const std::string& name, const std::vector<double>& local) override;
  void endRound() override;

  // "s:name" (replicated scalar), "i:name" (replicated integer) and "c:name" (client row) lines, in
  // first-append order: the checkpoint's record of what the rows are.
  std::string names() const;
  // The kept rows into a checkpoint (client rows by client id), and back (collective).
  void save(StateArchive& ar);
  void load(StateArchive& ar, const std::string& file, const std::string& names, std::uint64_t rows);
  // Writes the kept rows to `out` (a fresh results file), as the original run appended them.
  void replay(RecordSink& out) const;
  // The kept rows' round figures, as the round driver summarised them (collective; complete on rank 0:
  // the client figures are gathered there): what a resumed run rewrites its JSON Lines stream from.
  std::vector<RoundSummary> summaries(const ExperimentConfig& cfg) const;
  // A kept column of replicated scalars ("seconds"), empty when there is none.
  std::vector<double> scalarColumn(const std::string& name) const;

 private:
  void note(char kind, const std::string& name);
  std::vector<std::vector<double>> gatherClientRows(const std::string& name) const;

  const Communicator& comm_;
  const Placement& placement_;
  std::uint64_t rows_ = 0;
  std::vector<std::pair<char, std::string>> order_;
  std::map<std::string, std::vector<double>> scalars_;
  std::map<std::string, std::vector<std::vector<double>>> clients_;  // name -> rows of local values
};

}  // namespace fedsilo
