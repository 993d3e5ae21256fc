#include "data/loader_util.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "core/rng.hpp"

namespace fedsilo::detail {

namespace fs = std::filesystem;

void requireDir(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw DataError(fmt(what, " directory '", path, "' does not exist"));
  if (!fs::is_directory(path, ec)) throw DataError(fmt(what, " path '", path, "' is not a directory"));
}

void requireFile(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw DataError(fmt(what, " file '", path, "' does not exist"));
  if (fs::is_directory(path, ec)) throw DataError(fmt(what, " path '", path, "' is a directory, expected a file"));
}

std::string readFileBytes(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw DataError(fmt("cannot open '", path, "'"));
  std::string out;
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec) allocateOrFail(fmt("the contents of '", path, "'"), size, [&] { out.reserve(size); });
  char buf[1 << 16];
  for (;;) {
    const std::size_t got = std::fread(buf, 1, sizeof buf, f.get());
    out.append(buf, got);
    if (got < sizeof buf) break;
  }
  if (std::ferror(f.get())) throw DataError(fmt("read error in '", path, "'"));
  return out;
}

std::string joinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

Dataset takeRows(const Dataset& src, const IndexList& idx) {
  Dataset out;
  out.shape = src.shape;
  out.numClasses = src.numClasses;
  out.u8Scale = src.u8Scale;
  const std::size_t dim = static_cast<std::size_t>(src.dim());
  const std::uint64_t values = static_cast<std::uint64_t>(idx.size()) * dim;
  allocateOrFail(fmt("a copy of ", idx.size(), " samples of ", dim, " features"),
                 src.isU8() ? values : bytesOf<float>(values), [&] {
                   out.labels.reserve(idx.size());
                   if (src.isU8())
                     out.u8.resize(values);
                   else
                     out.f32.resize(values);
                 });
  for (std::size_t j = 0; j < idx.size(); ++j) {
    const std::size_t i = static_cast<std::size_t>(idx[j]);
    FEDSILO_ASSERT(idx[j] >= 0 && idx[j] < src.size(), "takeRows index out of range");
    out.labels.push_back(src.labels[i]);
    if (src.isU8())
      std::copy_n(src.u8.begin() + i * dim, dim, out.u8.begin() + j * dim);
    else
      std::copy_n(src.f32.begin() + i * dim, dim, out.f32.begin() + j * dim);
  }
  return out;
}

void holdOutTest(DataBundle& bundle, std::uint64_t seed) {
  const Index n = bundle.train.size();
  IndexList perm(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) perm[static_cast<std::size_t>(i)] = i;
  Rng rng(seed, -1, -1, Purpose::Split, kHoldOutStream);
  rng.shuffle(perm);
  const Index nTest = n / 5;
  IndexList trainIdx(perm.begin(), perm.end() - nTest), testIdx(perm.end() - nTest, perm.end());
  std::sort(trainIdx.begin(), trainIdx.end());
  std::sort(testIdx.begin(), testIdx.end());
  Dataset all = std::move(bundle.train);
  bundle.train = takeRows(all, trainIdx);
  bundle.test = takeRows(all, testIdx);
  if (!bundle.naturalClient.empty()) {
    std::vector<std::int32_t> natural = std::move(bundle.naturalClient);
    bundle.naturalClient.clear();
    bundle.naturalClientTest.clear();
    for (Index i : trainIdx) bundle.naturalClient.push_back(natural[static_cast<std::size_t>(i)]);
    for (Index i : testIdx) bundle.naturalClientTest.push_back(natural[static_cast<std::size_t>(i)]);
  }
}

void badClassId(const std::string& label, int maxClasses, const std::string& where) {
  throw DataError(fmt(where, ": label ", label, " is outside [0, ", maxClasses,
                      "): class ids must be >= 0 and below data.max_classes = ", maxClasses));
}

void requireClassCount(long long classes, int maxClasses, const std::string& what) {
  if (classes > maxClasses)
    throw DataError(fmt(what, " has ", classes, " distinct classes, more than data.max_classes = ", maxClasses));
}

bool finiteAsFloat(double v) { return std::isfinite(v) && std::fabs(v) <= static_cast<double>(FLT_MAX); }

void badFeature(const std::string& where, double value) {
  throw DataError(fmt(where, ": ", value, " is not a finite number (features are finite 32-bit floats, |x| <= ",
                      FLT_MAX, ")"));
}

std::vector<std::int32_t> denseIds(const std::vector<std::int64_t>& values, int* numDistinct) {
  std::map<std::int64_t, std::int32_t> ids;
  for (auto v : values) ids.emplace(v, 0);
  std::int32_t next = 0;
  for (auto& kv : ids) kv.second = next++;
  std::vector<std::int32_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = ids[values[i]];
  if (numDistinct) *numDistinct = next;
  return out;
}

}  // namespace fedsilo::detail
