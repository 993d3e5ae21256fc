// gtest main for MPI tests: every rank runs every test; non-zero ranks print only their own failures;
// a per-test Allreduce makes rank 0 report a failure seen on any rank; all ranks return the same code.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

namespace {

class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int r) : rank_(r) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, r.file_name() ? r.file_name() : "?",
                   r.line_number(), r.summary());
  }

 private:
  int rank_;
};

class CollectiveVerdict : public ::testing::EmptyTestEventListener {
 public:
  CollectiveVerdict(int r, int s) : rank_(r), size_(s) {}
  void OnTestEnd(const ::testing::TestInfo& info) override {
    int mine = info.result()->Failed() ? 1 : 0, nfail = 0;
    MPI_Allreduce(&mine, &nfail, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank_ == 0 && nfail > 0 && !mine)
      ADD_FAILURE() << info.test_suite_name() << "." << info.name() << " failed on " << nfail << " of " << size_
                    << " ranks (see [rank N] lines on stderr)";
  }

 private:
  int rank_, size_;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto& L = ::testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) {
    delete L.Release(L.default_result_printer());
    L.Append(new RankFailurePrinter(rank));
    ::testing::GTEST_FLAG(output) = "";
  }
  L.Append(new CollectiveVerdict(rank, size));
  int local = RUN_ALL_TESTS(), global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return global;
}
