// Checkpoint files (<output>.ckpt) over parallel HDF5: the StateArchive that Experiment::checkpoint
// and Algorithm::checkpoint save to and restore from (docs/hpc.md).
//
// Layout (every rank makes every metadata call with identical arguments; docs/hpc.md, "File layout"):
//   root attributes          format, version, config, next_round, rows, partial_kept, ...,
//                            info_crc32c (a CRC-32C over all of them)
//   /replicated/<name>       1-D array, identical on every rank (rank 0 writes it); attribute crc32c
//   /clients/<name>/length   int64 [K]: length of client k's vector, -1 if the client has none
//   /clients/<name>/crc32c   int64 [K]: CRC-32C of client k's vector, -1 if the client has none
//   /clients/<name>/values   [K, n] when every stored vector has the same length n (the usual case),
//                            else the vectors concatenated in client order (1-D)
// Every array is checked against its checksum when it is read; a mismatch is an agreed RuntimeError
// (exit 1) naming the file and the array, and the file is left as it is.
// Per-client vectors are stored by CLIENT ID, never by rank: each rank writes its clients' rows through
// a hyperslab and, on load, reads the rows of the clients it hosts now. So a checkpoint taken at P
// ranks restores at any other rank count.
//
// RNG streams are keyed by (seed, client, round, purpose), so no generator positions are stored: the
// round number is enough to continue every stream.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "core/state_archive.hpp"

namespace fedsilo {

// The checkpoint of results file <output>.
std::string checkpointPath(const std::string& output);

// Root attributes of a checkpoint.
struct CheckpointInfo {
  std::string version;          // fedsilo version that wrote it
  std::string config;           // resolved configuration (INI) of the run that wrote it
  std::int64_t nextRound = 0;   // first round a resumed run executes
  std::int64_t rows = 0;        // /rounds rows written to the results file up to the checkpoint
  // 1 when <output>.partial was closed cleanly immediately before this checkpoint (a stop on a
  // signal), with its size in bytes; a resume then re-opens it. 0 for periodic checkpoints: the run
  // kept writing the partial file, so a resume rebuilds it from the rows stored here.
  std::int64_t partialKept = 0;
  std::int64_t partialSize = -1;
  std::int64_t partialCrc = -1;  // CRC-32C of the partial file's bytes when partial_kept = 1
  std::int64_t numClients = 0;
  std::int64_t numRanks = 0;
  std::string roundNames;       // the /rounds datasets stored under replicated/ and clients/ "rounds/"
  // The global model's layer blocks (layerTableText in io/model_reader.hpp), so that model.init can
  // check a checkpoint's model by names and sizes as it checks a results file's /model/layers.
  std::string modelLayers;
  // The fingerprint of the run's inputs, which the configuration alone does not pin down: CRC-32C of
  // the loaded data (every sample's features and label, train and test) and of the partition (every
  // client's train, validation and test indices). A resume with other data files, or a partition
  // that comes out differently, is refused (docs/hpc.md, "Checkpoints").
  std::int64_t dataCrc = -1;
  std::int64_t partitionCrc = -1;
};

class Checkpoint final : public StateArchive {
 public:
  // Collective. Creates `path`.tmp for writing; commit() renames it to `path`.
  static std::unique_ptr<Checkpoint> create(const std::string& path, const Communicator& comm,
                                            const Placement& placement, const CheckpointInfo& info);
  // Collective. Opens an existing checkpoint for reading and reads its attributes.
  static std::unique_ptr<Checkpoint> open(const std::string& path, const Communicator& comm,
                                          const Placement& placement);
  // The placement under which per-client state is read from now on: the experiment's, which is only
  // known once its data is partitioned (fl.placement = samples). Same number of clients.
  void usePlacement(const Placement& placement) {
    FEDSILO_ASSERT(placement.numClients() == placement_.numClients());
    placement_ = placement;
  }
  // Collective: closes. A checkpoint being written and never committed is removed. A checkpoint
  // destroyed by stack unwinding is abandoned instead (its handles left open, nothing removed):
  // closing is collective, and here this rank cannot tell whether the other ranks are unwinding too
  // or blocked in a collective call, where a close would hang. The code that catches the error can
  // tell (agreedFailure() in comm/communicator.hpp): after an agreed failure it destroys the
  // checkpoint inside its catch block, which closes it normally; otherwise main() aborts every rank.
  ~Checkpoint() override;
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;

  // Collective: flushes and closes `path`.tmp (each checked), reads it back on rank 0 (every array
  // against its checksum), then renames it to `path`, so `path` is always a complete, verified
  // checkpoint and the previous one stays until the new one is. A failed flush or close throws on
  // the rank that saw it (not agreed: main aborts every rank); a failed read-back or rename throws
  // StorageError on every rank (agreed), and the destructor removes `path`.tmp.
  void commit();
  const CheckpointInfo& info() const { return info_; }

  bool saving() const override { return saving_; }
  void floats(const std::string& name, std::vector<float>& v) override;
  void doubles(const std::string& name, std::vector<double>& v) override;
  void clientFloats(const std::string& name, std::unordered_map<int, std::vector<float>>& perClient) override;
  void clientDoubles(const std::string& name, std::unordered_map<int, std::vector<double>>& perClient) override;

 public:
  struct Impl;  // HDF5 handles (opaque; public only for the helpers in checkpoint.cpp)

 private:
  Checkpoint(std::unique_ptr<Impl> impl, bool saving, const Communicator& comm, const Placement& placement);
  template <typename T>
  void replicated(const std::string& name, std::vector<T>& v);
  template <typename T>
  void perClient(const std::string& name, std::unordered_map<int, std::vector<T>>& m);
  // Every client's vector length (-1: none) and CRC-32C (-1: none), by client id.
  struct ClientIndex {
    std::vector<std::int64_t> length, crc;
  };
  // Collective: the index on every rank, also saved as /clients/<name>/length and /crc32c.
  template <typename T>
  ClientIndex shareClientIndex(const std::string& name, const std::unordered_map<int, std::vector<T>>& m);
  ClientIndex readClientIndex(const std::string& name);

  std::unique_ptr<Impl> impl_;
  bool saving_;
  int unwindingAtCreation_;  // std::uncaught_exceptions() when created: more at destruction = unwinding
  const Communicator& comm_;
  Placement placement_;
  CheckpointInfo info_;
  std::string path_;
  bool committed_ = false;
};


}  // namespace fedsilo
