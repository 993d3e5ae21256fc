// Where a run's records go (implemented by io/ResultsWriter over parallel HDF5; a memory sink in tests).
//
// Every method is COLLECTIVE: all ranks call it in the same order with the same name and shape.
// "Replicated" data must be identical on every rank (only rank 0's copy is written); "client rows"
// are each rank's own clients, in ascending id order (Placement::clients), of the K rows.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fedsilo {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // Per-round rows (/rounds/<name>): a replicated scalar per round (float64, or int64 for
  // appendRoundInt), or a [T, K] row of client values. Every round appends one row.
  virtual void appendRoundScalar(const std::string& name, double value) = 0;
  virtual void appendRoundInt(const std::string& name, std::int64_t value) = 0;
  virtual void appendRoundClients(const std::string& name, const std::vector<double>& localValues) = 0;
  // Call once per written round after all appends of that round.
  virtual void endRound() = 0;

  // Whole datasets at an absolute path ("/summary/mean"). Replicated.
  virtual void writeScalar(const std::string& path, double value) = 0;
  virtual void writeIntScalar(const std::string& path, std::int64_t value) = 0;
  virtual void writeArray(const std::string& path, const std::vector<double>& values,
                          const std::vector<std::uint64_t>& dims) = 0;
  virtual void writeIntArray(const std::string& path, const std::vector<std::int64_t>& values,
                             const std::vector<std::uint64_t>& dims) = 0;
  virtual void writeFloatArray(const std::string& path, const std::vector<float>& values,
                               const std::vector<std::uint64_t>& dims) = 0;
  virtual void writeStrings(const std::string& path, const std::vector<std::string>& values) = 0;
  // Per-client rows: [K, width] (width 1 -> [K]); localRows holds count*width values of this rank.
  virtual void writeClientRows(const std::string& path, const std::vector<double>& localRows, std::uint64_t width) = 0;
  // As writeClientRows, but always [K, width], also for width 1 (a per-layer table of a one-layer model).
  virtual void writeClientMatrix(const std::string& path, const std::vector<double>& localRows, std::uint64_t width) = 0;
  virtual void writeClientIntRows(const std::string& path, const std::vector<std::int64_t>& localRows,
                                  std::uint64_t width) = 0;
  virtual void writeClientFloatRows(const std::string& path, const std::vector<float>& localRows,
                                    std::uint64_t width) = 0;
  // String attribute on a dataset or group (replicated).
  virtual void writeStringAttribute(const std::string& path, const std::string& name, const std::string& value) = 0;
  // float64 attribute on a dataset or group (replicated).
  virtual void writeNumberAttribute(const std::string& path, const std::string& name, double value) = 0;
};

}  // namespace fedsilo
