// Out of memory as one line: model parameters, model workspaces and layer workspaces that cannot be
// allocated fail with OutOfMemoryError naming what was being allocated and its size, before anything
// is allocated when the size exceeds the memory available, and from std::bad_alloc otherwise.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "core/memory.hpp"
#include "nn/dense.hpp"
#include "nn/lstm.hpp"
#include "nn/presets.hpp"

namespace fedsilo {
namespace {

// Runs fn, expects an OutOfMemoryError whose message holds every part.
template <typename F>
void expectOutOfMemory(F&& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(e.code(), ExitCode::Other);
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg << " lacks " << p;
  }
}

// Makes availableMemoryBytes() report `bytes` for the lifetime of the object.
struct FakeAvailableMemory {
  explicit FakeAvailableMemory(std::uint64_t bytes) { detail::setAvailableMemoryForTesting(bytes); }
  ~FakeAvailableMemory() { detail::setAvailableMemoryForTesting(0); }
};

TEST(Memory, MegabytesAndAvailable) {
  EXPECT_EQ(megabytes(0), "0.0 MB");
  EXPECT_EQ(megabytes(3 << 20), "3.0 MB");
  EXPECT_EQ(megabytes((5 << 20) + (1 << 19)), "5.5 MB");
  EXPECT_EQ(bytesOf<float>(UINT64_MAX / 2), UINT64_MAX);  // saturates instead of wrapping
  // The real figure comes from /proc/meminfo (and the cgroup), not from the override.
  const std::uint64_t real = availableMemoryBytes();
  EXPECT_GT(real, 0u);
  {
    FakeAvailableMemory fake(123u << 20);
    EXPECT_EQ(availableMemoryBytes(), 123u << 20);
  }
  EXPECT_NE(availableMemoryBytes(), 123u << 20);
}

TEST(Memory, RequireMemoryRefusesMoreThanAvailable) {
  FakeAvailableMemory fake(std::uint64_t(64) << 20);
  EXPECT_NO_THROW(requireMemory("small", std::uint64_t(63) << 20));
  expectOutOfMemory([] { requireMemory("the thing", std::uint64_t(100) << 20); },
                    {"out of memory: the thing needs 100.0 MB", "only 64.0 MB are available"});
  // Below the threshold nothing is checked, even when more than "available".
  FakeAvailableMemory tiny(1);
  EXPECT_NO_THROW(requireMemory("tiny", kMemoryCheckThreshold - 1));
}

TEST(Memory, AbsurdModelIsRefusedBeforeAllocating) {
  // 2^40 weights: 8 TB of parameters and gradients on any machine this runs on.
  Model m(Shape{1 << 20, 1, 1}, 1 << 20);
  m.add(std::make_unique<Dense>(1 << 20, 1 << 20), "fc1");
  expectOutOfMemory([&] { m.finalize(); }, {"the model's parameters and gradients (1099512676352 parameters)",
                                            "needs 8388616.0 MB"});
}

TEST(Memory, PresetAboveAvailableMemoryNamesItsSize) {
  // An MLP 784-4096-4096-10: 20037642 parameters, 152.9 MB of parameters and gradients.
  ModelConfig cfg;
  cfg.hidden = {4096, 4096};
  const InputSpec in{Shape{1, 28, 28}, 10, 0};
  {
    FakeAvailableMemory fake(std::uint64_t(100) << 20);
    expectOutOfMemory([&] { buildModel<float>(cfg, in); },
                      {"the model's parameters and gradients (20037642 parameters)", "needs 152.9 MB",
                       "only 100.0 MB are available"});
  }
  EXPECT_EQ(buildModel<float>(cfg, in)->numParams(), 20037642);  // fits once the memory is there
}

TEST(Memory, WorkspacesForAHugeBatchAreRefusedAndTheModelStaysUsable) {
  ModelConfig cfg;
  cfg.hidden = {32};
  auto m = buildModel<float>(cfg, InputSpec{Shape{8, 1, 1}, 3, 0});
  m->reserve(16);
  // Per sample: activations 32 (dense) + 32 (relu) + 3 (logits), two gradient buffers of the widest
  // layer (2 x 32) and the logits' gradient (3): 134 floats, 536 bytes; 2^30 samples are 536 GB.
  {
    FakeAvailableMemory fake(std::uint64_t(1) << 30);
    expectOutOfMemory([&] { m->reserve(1 << 30); },
                      {"the model's activations and gradients for batches of 1073741824 samples", "needs 548864.0 MB"});
  }
  EXPECT_EQ(m->maxBatch(), 16);
  std::vector<float> x(8 * 16, 0.5f);
  EXPECT_EQ(m->forward(x.data(), 16, false).cols(), 16);
}

TEST(Memory, LayerWorkspacesNameTheLayer) {
  FakeAvailableMemory fake(std::uint64_t(1) << 30);
  Dense dense(10, 1 << 20);
  expectOutOfMemory([&] { dense.reserve(1 << 12); },
                    {"the dense 10 -> 1048576 workspace for batches of 4096 samples", "needs 16384.0 MB"});
  Lstm lstm(64, 1024, 100, false);
  expectOutOfMemory([&] { lstm.reserve(4096); },
                    {"the lstm 64 -> 1024 workspace for batches of 4096 sequences of 100"});
}

// A figure of this process now from /proc/self/status (VmSize: virtual memory, VmRSS: resident), bytes.
std::uint64_t statusBytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == field + ":") {
      std::uint64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
    in.ignore(1 << 12, '\n');
  }
  return 0;
}
std::uint64_t virtualBytes() { return statusBytes("VmSize"); }
std::uint64_t residentBytes() { return statusBytes("VmRSS"); }

// The allocation is granted by the check (the memory looks available) but fails in the allocator,
// as under a ulimit or a cgroup whose limit the check did not see: std::bad_alloc becomes the same
// one-line error. Runs in a child process, whose address space is capped with RLIMIT_AS.
TEST(MemoryDeathTest, BadAllocBecomesOneLineError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto child = [] {
    const std::uint64_t cap = virtualBytes() + (std::uint64_t(256) << 20);
    const rlimit lim{cap, cap};
    if (cap <= (256u << 20) || setrlimit(RLIMIT_AS, &lim) != 0) std::_Exit(2);
    detail::setAvailableMemoryForTesting(std::uint64_t(1) << 50);
    Model m(Shape{1000, 1, 1}, 100000);  // 100M weights: 800 MB of parameters and gradients
    m.add(std::make_unique<Dense>(1000, 100000), "fc1");
    try {
      m.finalize();
    } catch (const OutOfMemoryError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      std::_Exit(0);
    }
    std::_Exit(1);
  };
  EXPECT_EXIT(child(), testing::ExitedWithCode(0),
              "^out of memory: allocating the model's parameters and gradients \\(100100000 parameters\\) "
              "\\(763\\.7 MB\\) failed\n$");
}

// An MLP 8-8192-10 whose activations and gradients for batches of 2048 samples take 256.2 MB: per
// sample 8192 + 8192 + 10 activations, two gradient buffers of the widest layer (2 x 8192) and 10
// logit gradients, 32788 floats. (The dense layers' own workspaces add 8202 floats, 64.1 MB.)
constexpr int kBigBatch = 2048;
const char* const kBigActivations = "the model's activations and gradients for batches of 2048 samples";
std::unique_ptr<Model> wideMlp() {
  ModelConfig cfg;
  cfg.hidden = {8192};
  return buildModel<float>(cfg, InputSpec{Shape{8, 1, 1}, 10, 0});
}

// reserve() allocates the activations but writes none of them: their pages come when a pass writes
// them (a --dry-run, which never does, does not pay for them); a pass over the reserved batch finds
// them in place (no allocation after reserve(): tests/nn/no_alloc_test.cpp).
TEST(Memory, ReserveMapsNoActivationPageUntilAPassWritesIt) {
  auto m = wideMlp();
  const std::uint64_t before = residentBytes();
  m->reserve(kBigBatch);
  const std::uint64_t reserved = residentBytes();
  EXPECT_LT(reserved - before, std::uint64_t(128) << 20) << "reserve() touched the 256.2 MB of activations";
  std::vector<float> x(static_cast<std::size_t>(8) * kBigBatch, 0.25f);
  EXPECT_EQ(m->forward(x.data(), kBigBatch, true).cols(), kBigBatch);
  // (The ReLU's output, 64 MB: the dense layer's own output is not stored when it is fused with its ReLU.)
  EXPECT_GT(residentBytes() - reserved, std::uint64_t(48) << 20) << "the forward pass wrote the activations";
}

// The activations are still allocated by reserve(), at start-up: an allocator that cannot give them
// fails there with the one-line error (the check is passed, as under a limit it does not see).
TEST(MemoryDeathTest, ActivationsAreAllocatedByReserve) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto child = [] {
    auto m = wideMlp();
    const std::uint64_t cap = virtualBytes() + (std::uint64_t(128) << 20);
    const rlimit lim{cap, cap};
    if (setrlimit(RLIMIT_AS, &lim) != 0) std::_Exit(2);
    detail::setAvailableMemoryForTesting(std::uint64_t(1) << 50);
    try {
      m->reserve(kBigBatch);
    } catch (const OutOfMemoryError& e) {
      std::fprintf(stderr, "%s\n", e.what());
      std::_Exit(0);
    }
    std::_Exit(1);
  };
  EXPECT_EXIT(child(), testing::ExitedWithCode(0),
              std::string("^out of memory: allocating ") + kBigActivations + " \\(256\\.2 MB\\) failed\n$");
}

}  // namespace
}  // namespace fedsilo
