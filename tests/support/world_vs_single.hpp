// Rank invariance, the harness: the same configuration run in-process on MPI_COMM_WORLD (clients spread
// over the ranks) and, on every rank, on a single-rank communicator (all clients local), with every
// record gathered so that the two compare value for value.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "core/config.hpp"
#include "fl/experiment.hpp"

namespace fedsilo::test {

// What one in-process run wrote (run() and writeFinal()), per-client rows gathered over the ranks so
// that they hold all K clients in client order. Records that legitimately differ between runs are
// left out: wall times (every record named *seconds*) and the rank of each client (/clients/rank).
struct RunRecords {
  std::vector<float> global;                                        // the final global parameters
  std::vector<double> lastClientAccuracy;                           // K values
  std::map<std::string, std::vector<double>> roundScalars;          // /rounds/<name>, one value per round
  std::map<std::string, std::vector<std::vector<double>>> roundClients;  // /rounds/<name>, K values per round
  std::map<std::string, std::vector<double>> datasets;              // every dataset by path (ints as doubles)
  std::map<std::string, std::vector<std::string>> strings;          // string datasets; attributes as path@name
  std::map<std::string, std::vector<double>> extra;                 // whatever an inspect callback adds
};

// Called on every rank after the run, before the experiment is destroyed: reads what the records do
// not hold (an algorithm's own state) into RunRecords::extra. Any collective inside must be called
// on every rank alike.
using InspectRun = std::function<void(Experiment&, RunRecords&)>;

// Runs `cfg` on `comm` (run, then writeFinal) and gathers the records. Collective over `comm`.
RunRecords runAndGather(const ExperimentConfig& cfg, const Communicator& comm, const InspectRun& inspect = {});

struct WorldAndSingle {
  RunRecords world;   // on MPI_COMM_WORLD
  RunRecords single;  // on this rank alone
};
// The same configuration on the world communicator and then on Communicator::single().
WorldAndSingle runOnWorldAndAlone(const ExperimentConfig& cfg, const InspectRun& inspect = {});

// Success when `a` and `b` hold the same records with bit-identical values (NaN matches NaN); else
// names the first difference of each differing record.
::testing::AssertionResult identicalRecords(const RunRecords& a, const RunRecords& b);

}  // namespace fedsilo::test
