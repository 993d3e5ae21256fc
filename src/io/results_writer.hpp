// The results file: parallel HDF5, written collectively (docs/results.md). The file is written as
// <output>.partial and renamed to <output> by commit(); a writer destroyed without commit() removes
// the partial file, so a failed run leaves no results file behind. String datasets are variable-length
// (a long token costs its own length, not the vocabulary's size times it): parallel HDF5 1.10 cannot
// write those collectively, so writeStrings keeps them and commit() writes them from rank 0 after the
// collective close.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "core/record_sink.hpp"
#include "core/h5_handle.hpp"
#include "io/h5_ranges.hpp"

namespace fedsilo {

class ResultsWriter : public RecordSink {
 public:
  // Collective. numClients/placement define the client rows; firstRows > 0 re-opens an existing
  // partial file (resume) whose /rounds datasets already hold that many rows.
  ResultsWriter(const std::string& path, const Communicator& comm, const Placement& placement, bool reopen = false);
  ~ResultsWriter() override;

  void writeRootAttribute(const std::string& name, const std::string& value);
  void writeRootAttribute(const std::string& name, std::int64_t value);
  // Closes the file and renames <output>.partial to <output> (collective).
  void commit();
  // Closes the file and LEAVES <output>.partial (collective): a run stopped by a signal after writing
  // its checkpoint; the resumed run re-opens the partial file (reopen = true, truncateRounds).
  void closeKeepingPartial();
  // Rows already in /rounds (resume).
  std::uint64_t roundsWritten() const { return rows_; }
  // Truncates the /rounds datasets to `rows` (resume after a checkpoint taken at that row count).
  void truncateRounds(std::uint64_t rows);
  const std::string& partialPath() const { return partial_; }

  void appendRoundScalar(const std::string& name, double value) override;
  void appendRoundInt(const std::string& name, std::int64_t value) override;
  void appendRoundClients(const std::string& name, const std::vector<double>& localValues) override;
  void endRound() override;
  void writeScalar(const std::string& path, double value) override;
  void writeIntScalar(const std::string& path, std::int64_t value) override;
  void writeArray(const std::string& path, const std::vector<double>& values,
                  const std::vector<std::uint64_t>& dims) override;
  void writeIntArray(const std::string& path, const std::vector<std::int64_t>& values,
                     const std::vector<std::uint64_t>& dims) override;
  void writeFloatArray(const std::string& path, const std::vector<float>& values,
                       const std::vector<std::uint64_t>& dims) override;
  void writeStrings(const std::string& path, const std::vector<std::string>& values) override;
  void writeClientRows(const std::string& path, const std::vector<double>& localRows, std::uint64_t width) override;
  void writeClientMatrix(const std::string& path, const std::vector<double>& localRows, std::uint64_t width) override;
  void writeClientIntRows(const std::string& path, const std::vector<std::int64_t>& localRows,
                          std::uint64_t width) override;
  void writeClientFloatRows(const std::string& path, const std::vector<float>& localRows, std::uint64_t width) override;
  void writeStringAttribute(const std::string& path, const std::string& name, const std::string& value) override;
  void writeNumberAttribute(const std::string& path, const std::string& name, double value) override;

 private:
  void writeReplicated(const std::string& path, hid_t memType, hid_t fileType, const void* data,
                       const std::vector<std::uint64_t>& dims);
  // [K, width] rows of the clients of this rank; a [K] dataset when width is 1 unless `matrix`.
  void writeRows(const std::string& path, hid_t memType, hid_t fileType, const void* data, std::uint64_t width,
                 bool matrix = false);
  hid_t roundDataset(const std::string& name, bool perClient, hid_t fileType);
  // Rank 0, after the collective close: writes the kept string datasets serially. "" or what failed.
  std::string writePendingStrings();
  void appendRoundValue(const std::string& name, hid_t memType, hid_t fileType, const void* value);
  // Collective: flushes and closes every handle, each result checked (throws on the failing rank).
  void closeFile();

  // First member, so it is the last to go: HDF5 stays quiet until every handle below is closed.
  h5::QuietErrors quietErrors_;
  const Communicator& comm_;
  Placement placement_;
  Ranges myRows_;  // the rows (client ids) of this rank's clients, for every per-client selection
  std::string path_, partial_;
  h5::Handle file_, dxpl_, lcpl_;
  std::map<std::string, h5::Handle> rounds_;
  std::map<std::string, std::vector<std::string>> pendingStrings_;  // rank 0: path -> strings, for commit()
  std::uint64_t rows_ = 0;
  bool committed_ = false;
};

}  // namespace fedsilo
