// io/Checkpoint at 1, 2 and 4 ranks: every layout of the archive round-trips (replicated arrays,
// per-client arrays of equal length, of different lengths, with clients that have none, empty
// vectors, none at all), the atomic .tmp -> rename, and the errors for missing or doubled names;
// what happens to the file when an error ends a checkpoint (closed after an agreed failure, abandoned
// by stack unwinding).
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/placement.hpp"
#include "io/checkpoint.hpp"
#include "support/test_support.hpp"

using namespace fedsilo;

namespace {

// One directory for all ranks (test::tempDir is per process), removed at the end of the test.
class SharedDir {
 public:
  SharedDir(const Communicator& comm, const std::string& tag) : comm_(comm) {
    if (comm.isRoot()) path_ = test::tempDir(tag);
    comm.bcast(path_, 0);
  }
  ~SharedDir() {
    comm_.barrier();
    if (comm_.isRoot()) std::filesystem::remove_all(path_);
  }
  const std::string& path() const { return path_; }

 private:
  const Communicator& comm_;
  std::string path_;
};

std::vector<float> valuesOf(int client, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(client * 1000 + static_cast<int>(i)) + 0.25f;
  return v;
}

}  // namespace

TEST(Checkpoint, EveryLayoutRoundTrips) {
  Communicator comm = Communicator::world();
  const int K = 7;
  const Placement pl(K, comm.size());
  const SharedDir dir_ckpt(comm, "ckpt");
  const std::string path = dir_ckpt.path() + "/run.h5.ckpt";
  CheckpointInfo info;
  info.version = "test";
  info.config = "algorithm = fedavg\n";
  info.nextRound = 3;
  info.rows = 2;
  info.numClients = K;
  info.numRanks = comm.size();
  info.roundNames = "i:round\ns:seconds\n";
  info.modelLayers = "fc1 25120\nfc2 330\n";

  std::vector<float> global{1.5f, -2.0f, 3.25f};
  std::vector<double> empty, state{0.1, 0.2};
  std::unordered_map<int, std::vector<float>> uniform, ragged, sparse, none, zeros;
  std::unordered_map<int, std::vector<double>> figures;
  for (int k : pl.clients(comm.rank())) {
    uniform[k] = valuesOf(k, 5);
    ragged[k] = valuesOf(k, static_cast<std::size_t>(k % 3 + 1));
    if (k % 2 == 0) sparse[k] = valuesOf(k, 4);  // odd clients have no state yet
    zeros[k] = {};
    figures[k] = {k + 0.5, -1.0 * k};
  }
  {
    std::unique_ptr<Checkpoint> ck = Checkpoint::create(path, comm, pl, info);
    EXPECT_TRUE(ck->saving());
    ck->floats("driver/global", global);
    ck->doubles("empty", empty);
    ck->doubles("server_state", state);
    ck->clientFloats("uniform", uniform);
    ck->clientFloats("ragged", ragged);
    ck->clientFloats("sparse", sparse);
    ck->clientFloats("none", none);
    ck->clientFloats("zeros", zeros);
    ck->clientDoubles("figures", figures);
    // Before commit only the .tmp file exists.
    comm.barrier();
    if (comm.isRoot()) {
      EXPECT_TRUE(std::filesystem::exists(path + ".tmp"));
      EXPECT_FALSE(std::filesystem::exists(path));
    }
    comm.barrier();
    ck->commit();
  }
  if (comm.isRoot()) {
    EXPECT_TRUE(std::filesystem::exists(path));
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  }

  std::unique_ptr<Checkpoint> in = Checkpoint::open(path, comm, pl);
  EXPECT_FALSE(in->saving());
  EXPECT_EQ(in->info().nextRound, 3);
  EXPECT_EQ(in->info().rows, 2);
  EXPECT_EQ(in->info().config, info.config);
  EXPECT_EQ(in->info().roundNames, info.roundNames);
  EXPECT_EQ(in->info().modelLayers, info.modelLayers);
  EXPECT_EQ(in->info().numRanks, comm.size());
  std::vector<float> g2;
  std::vector<double> e2{9.0}, s2;
  in->floats("driver/global", g2);
  in->doubles("empty", e2);
  in->doubles("server_state", s2);
  EXPECT_EQ(g2, global);
  EXPECT_TRUE(e2.empty());
  EXPECT_EQ(s2, state);
  std::unordered_map<int, std::vector<float>> u2, r2, sp2, n2, z2;
  std::unordered_map<int, std::vector<double>> f2;
  n2[0] = {1.0f};  // a load replaces whatever the map held
  in->clientFloats("uniform", u2);
  in->clientFloats("ragged", r2);
  in->clientFloats("sparse", sp2);
  in->clientFloats("none", n2);
  in->clientFloats("zeros", z2);
  in->clientDoubles("figures", f2);
  EXPECT_EQ(u2, uniform);
  EXPECT_EQ(r2, ragged);
  EXPECT_EQ(sp2, sparse);
  EXPECT_TRUE(n2.empty());
  EXPECT_EQ(z2, zeros);
  EXPECT_EQ(f2, figures);
  // A name that was never saved is an error on every rank, not a crash or a hang.
  std::vector<double> missing;
  EXPECT_THROW(in->doubles("no_such_array", missing), RuntimeError);
  std::unordered_map<int, std::vector<float>> m;
  EXPECT_THROW(in->clientFloats("no_such_array", m), RuntimeError);
}

TEST(Checkpoint, RestoresAtAnotherRankCount) {
  // Saved by P ranks, each writing its own clients' rows; read back by rank 0 alone as a 1-rank run
  // (no MPI: Communicator::single), which must find every client's vector by its id. The placement
  // balances uneven client sizes, which at 2 and 4 ranks gives each rank clients that are not adjacent.
  Communicator comm = Communicator::world();
  const std::vector<std::int64_t> sizes{6280, 6232, 3711, 6594, 3774, 3032, 7093, 7225, 5828, 10231};
  const int K = static_cast<int>(sizes.size());
  const Placement pl(sizes, comm.size());
  if (comm.size() == 2 || comm.size() == 4) {
    ASSERT_FALSE(pl.contiguous());
  }
  const SharedDir dir_ckpt2(comm, "ckpt2");
  const std::string path = dir_ckpt2.path() + "/x.ckpt";
  CheckpointInfo info;
  info.numClients = K;
  std::unordered_map<int, std::vector<float>> mine;
  for (int k : pl.clients(comm.rank()))
    if (k != 4) mine[k] = valuesOf(k, static_cast<std::size_t>(k == 7 ? 2 : 3));  // ragged, one absent
  {
    auto ck = Checkpoint::create(path, comm, pl, info);
    ck->clientFloats("personal", mine);
    ck->commit();
  }
  comm.barrier();
  if (comm.isRoot()) {
    Communicator one = Communicator::single();
    const Placement all(K, 1);
    auto in = Checkpoint::open(path, one, all);
    std::unordered_map<int, std::vector<float>> got;
    in->clientFloats("personal", got);
    EXPECT_EQ(got.size(), static_cast<std::size_t>(K - 1));
    EXPECT_EQ(got.count(4), 0u);
    for (int k = 0; k < K; ++k) {
      if (k == 4) continue;
      EXPECT_EQ(got.at(k), valuesOf(k, static_cast<std::size_t>(k == 7 ? 2 : 3))) << k;
    }
  }
  comm.barrier();
}

TEST(Checkpoint, UncommittedCheckpointLeavesNoFile) {
  Communicator comm = Communicator::world();
  const Placement pl(4, comm.size());
  const SharedDir dir_ckpt3(comm, "ckpt3");
  const std::string path = dir_ckpt3.path() + "/y.ckpt";
  CheckpointInfo info;
  info.numClients = 4;
  {
    auto ck = Checkpoint::create(path, comm, pl, info);
    std::vector<double> v{1, 2, 3};
    ck->doubles("a", v);
    EXPECT_THROW(ck->doubles("a", v), RuntimeError);  // saved twice
  }
  comm.barrier();
  if (comm.isRoot()) {
    EXPECT_FALSE(std::filesystem::exists(path));
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  }
}

TEST(Checkpoint, OpenRejectsOtherFilesOnEveryRank) {
  Communicator comm = Communicator::world();
  const Placement pl(4, comm.size());
  const SharedDir dir_ckpt4(comm, "ckpt4");
  const std::string dir = dir_ckpt4.path();
  if (comm.isRoot()) {
    std::FILE* f = std::fopen((dir + "/junk.ckpt").c_str(), "w");
    std::fputs("not hdf5", f);
    std::fclose(f);
  }
  comm.barrier();
  EXPECT_ANY_THROW(Checkpoint::open(dir + "/junk.ckpt", comm, pl));
}

namespace {

ssize_t openFiles() { return H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_FILE); }

}  // namespace

TEST(Checkpoint, AgreedOpenFailureClosesTheFileOnEveryRank) {
  Communicator comm = Communicator::world();
  const Placement pl(4, comm.size());
  const SharedDir dir_ckpt5(comm, "ckpt5");
  const std::string path = dir_ckpt5.path() + "/plain.ckpt";
  if (comm.isRoot()) H5Fclose(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));  // no attributes
  comm.barrier();
  const ssize_t before = openFiles();
  bool agreed = false;
  try {
    Checkpoint::open(path, comm, pl);
  } catch (const std::exception& e) {
    agreed = agreedFailure(e);
  }
  EXPECT_TRUE(agreed);
  // The file opened, its attributes failed the check on every rank, and every rank closed it.
  EXPECT_EQ(openFiles(), before);
}

TEST(Checkpoint, DestroyedByUnwindingIsAbandonedNotClosed) {
  Communicator comm = Communicator::world();
  const Placement pl(4, comm.size());
  const SharedDir dir_ckpt6(comm, "ckpt6");
  const std::string path = dir_ckpt6.path() + "/z.ckpt";
  CheckpointInfo info;
  info.numClients = 4;
  const ssize_t before = openFiles();
  try {
    auto ck = Checkpoint::create(path, comm, pl, info);
    throw std::runtime_error("this rank failed");  // not agreed: the other ranks could be anywhere
  } catch (const std::runtime_error&) {
  }
  // Left open, and the .tmp left for main() to remove (closing could hang in a real failure).
  ASSERT_EQ(openFiles(), before + 1);
  comm.barrier();
  if (comm.isRoot()) {
    EXPECT_TRUE(std::filesystem::exists(path + ".tmp"));
  }
  // Here every rank threw alike, so the test can close the abandoned file together.
  hid_t abandoned = -1;
  std::vector<hid_t> ids(static_cast<std::size_t>(openFiles()));
  H5Fget_obj_ids(H5F_OBJ_ALL, H5F_OBJ_FILE, ids.size(), ids.data());
  for (hid_t id : ids) {
    char name[4096] = {0};
    H5Fget_name(id, name, sizeof name);
    if (std::string(name) == path + ".tmp") abandoned = id;
  }
  ASSERT_GE(abandoned, 0);
  EXPECT_GE(H5Fclose(abandoned), 0);
  EXPECT_EQ(openFiles(), before);
}

namespace {

// Flips one byte of the stored values of dataset `dataset` (contiguous) at byte `at` of its data, on
// rank 0 with plain file I/O, as a failing disk or a stray write would.
void flipDataByte(const Communicator& comm, const std::string& path, const std::string& dataset, std::size_t at) {
  if (comm.isRoot()) {
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
    const haddr_t offset = H5Dget_offset(d);
    H5Dclose(d);
    H5Fclose(f);
    ASSERT_NE(offset, HADDR_UNDEF) << dataset;
    std::FILE* raw = std::fopen(path.c_str(), "r+b");
    std::fseek(raw, static_cast<long>(offset + at), SEEK_SET);
    const int byte = std::fgetc(raw);
    std::fseek(raw, static_cast<long>(offset + at), SEEK_SET);
    std::fputc(byte ^ 0x5a, raw);
    std::fclose(raw);
  }
  comm.barrier();
}

std::string fileBytes(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  std::string bytes;
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) bytes.push_back(static_cast<char>(c));
  std::fclose(f);
  return bytes;
}

// What each rank saw when it read the damaged array: agreed, and the message where it was printed.
struct Outcome {
  bool threw = false, agreed = false;
  std::string message;
};

template <typename F>
Outcome readDamaged(F&& read) {
  Outcome o;
  try {
    read();
  } catch (const PeerFailure& e) {
    o = {true, agreedFailure(e), ""};
  } catch (const RuntimeError& e) {
    o = {true, agreedFailure(e), e.what()};
  }
  return o;
}

// A committed checkpoint with one replicated array and one per-client array (client k: 3 values).
std::string saveSmall(const Communicator& comm, const Placement& pl, const std::string& dir) {
  const std::string path = dir + "/damaged.ckpt";
  CheckpointInfo info;
  info.numClients = pl.numClients();
  info.nextRound = 2;
  info.rows = 2;
  std::vector<double> global{0.5, 1.5, 2.5, 3.5};
  std::unordered_map<int, std::vector<float>> personal;
  for (int k : pl.clients(comm.rank())) personal[k] = valuesOf(k, 3);
  auto ck = Checkpoint::create(path, comm, pl, info);
  ck->doubles("driver/global", global);
  ck->clientFloats("personal", personal);
  ck->commit();
  return path;
}

}  // namespace

TEST(Checkpoint, DamagedReplicatedDataIsAnAgreedErrorNamingTheFile) {
  Communicator comm = Communicator::world();
  const Placement pl(6, comm.size());
  const SharedDir dir(comm, "ckpt_damage1");
  const std::string path = saveSmall(comm, pl, dir.path());
  flipDataByte(comm, path, "/replicated/driver/global", 13);  // inside the second value, not a header
  const std::string before = comm.isRoot() ? fileBytes(path) : "";
  auto in = Checkpoint::open(path, comm, pl);
  std::vector<double> global;
  const Outcome o = readDamaged([&] { in->doubles("driver/global", global); });
  EXPECT_TRUE(o.threw);
  EXPECT_TRUE(o.agreed);
  if (comm.isRoot()) {
    EXPECT_NE(o.message.find("checkpoint " + path + ": array '/replicated/driver/global' does not match its checksum"),
              std::string::npos)
        << o.message;
  }
  in.reset();  // agreed: every rank closes it together
  if (comm.isRoot()) {
    EXPECT_EQ(fileBytes(path), before);  // left as it is
  }
}

TEST(Checkpoint, DamagedRowOfOneRanksClientIsAgreedByEveryRank) {
  Communicator comm = Communicator::world();
  const Placement pl(6, comm.size());
  const SharedDir dir(comm, "ckpt_damage2");
  const std::string path = saveSmall(comm, pl, dir.path());
  // The last client's row (uniform [K, 3] float32): only the last rank reads it.
  flipDataByte(comm, path, "/clients/personal/values", (6 - 1) * 3 * sizeof(float) + 5);
  auto in = Checkpoint::open(path, comm, pl);
  std::vector<double> global;
  in->doubles("driver/global", global);  // undamaged: reads fine
  EXPECT_EQ(global, (std::vector<double>{0.5, 1.5, 2.5, 3.5}));
  std::unordered_map<int, std::vector<float>> personal;
  const Outcome o = readDamaged([&] { in->clientFloats("personal", personal); });
  EXPECT_TRUE(o.threw);
  EXPECT_TRUE(o.agreed);
  if (comm.rank() == comm.size() - 1) {
    EXPECT_NE(o.message.find("array '/clients/personal/values' does not match its checksum"), std::string::npos)
        << o.message;
  } else {
    EXPECT_EQ(o.message, "");  // another rank reports it
  }
  in.reset();
}

TEST(Checkpoint, ChangedAttributesAreRefusedOnOpen) {
  Communicator comm = Communicator::world();
  const Placement pl(6, comm.size());
  const SharedDir dir(comm, "ckpt_damage3");
  const std::string path = saveSmall(comm, pl, dir.path());
  if (comm.isRoot()) {  // next_round 2 -> 5, as an edit or a damaged attribute would
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t a = H5Aopen(f, "next_round", H5P_DEFAULT);
    const long long five = 5;
    H5Awrite(a, H5T_NATIVE_LLONG, &five);
    H5Aclose(a);
    H5Fclose(f);
  }
  comm.barrier();
  const Outcome o = readDamaged([&] { Checkpoint::open(path, comm, pl); });
  EXPECT_TRUE(o.threw);
  EXPECT_TRUE(o.agreed);
  if (comm.isRoot()) {
    EXPECT_NE(o.message.find("attributes do not match their checksum"), std::string::npos) << o.message;
  }
}
