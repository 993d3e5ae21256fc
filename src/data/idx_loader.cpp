// IDX reader (LeCun's MNIST format, also used by Fashion-MNIST and EMNIST) and the loaders of those
// three datasets.
//
// IDX layout (http://yann.lecun.com/exdb/mnist/): bytes 0-1 are zero, byte 2 the element type
// (0x08 = unsigned byte; the only type these datasets use), byte 3 the number of dimensions, then one
// big-endian uint32 per dimension, then the row-major payload. The files are distributed gzip
// compressed; we detect that by the gzip magic (1f 8b), never by the file name, so renamed or
// pre-decompressed files both work.
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "data/loader_util.hpp"
#include "data/loaders.hpp"

namespace fedsilo {

namespace {

// Sequential reader over a plain or gzip-compressed file.
class ByteReader {
 public:
  explicit ByteReader(const std::string& path) : path_(path) {
    detail::requireFile(path, "IDX");
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw DataError(fmt("cannot open IDX file '", path, "'"));
    unsigned char magic[2] = {0, 0};
    const std::size_t got = std::fread(magic, 1, 2, f);
    gzip_ = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (gzip_) {
      std::fclose(f);
      gz_ = gzopen(path.c_str(), "rb");
      if (!gz_) throw DataError(fmt("cannot open gzip file '", path, "'"));
      gzbuffer(gz_, 1 << 17);
    } else {
      std::rewind(f);
      file_ = f;
    }
  }
  ~ByteReader() {
    if (gz_) gzclose(gz_);
    if (file_) std::fclose(file_);
  }
  ByteReader(const ByteReader&) = delete;
  ByteReader& operator=(const ByteReader&) = delete;

  bool gzip() const { return gzip_; }

  // Reads up to n bytes; fewer only at end of data. A corrupt or cut-off gzip stream is a DataError.
  std::size_t read(void* buf, std::size_t n) {
    if (!gzip_) {
      const std::size_t got = std::fread(buf, 1, n, file_);
      if (got < n && std::ferror(file_)) throw DataError(fmt("read error in '", path_, "'"));
      return got;
    }
    std::size_t total = 0;
    auto* p = static_cast<unsigned char*>(buf);
    while (total < n) {
      const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(n - total, 1u << 30));
      const int got = gzread(gz_, p + total, chunk);
      if (got < 0) throw DataError(fmt("corrupt gzip data in '", path_, "': ", gzError()));
      total += static_cast<std::size_t>(got);
      if (static_cast<unsigned>(got) < chunk) {
        int err = Z_OK;
        gzerror(gz_, &err);
        // zlib reports a stream cut off before its end as Z_BUF_ERROR ("unexpected end of file").
        if (err != Z_OK) throw DataError(fmt("corrupt or truncated gzip stream in '", path_, "': ", gzError()));
        break;
      }
    }
    return total;
  }

 private:
  std::string gzError() {
    int err = Z_OK;
    const char* msg = gzerror(gz_, &err);
    return msg ? msg : "unknown zlib error";
  }

  std::string path_;
  bool gzip_ = false;
  gzFile gz_ = nullptr;
  std::FILE* file_ = nullptr;
};

std::string dimsText(const std::vector<int>& dims) {
  std::string s;
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

}  // namespace

IdxArray readIdx(const std::string& path) {
  ByteReader in(path);
  const char* kind = in.gzip() ? " (after gzip decompression)" : "";
  unsigned char head[4];
  const std::size_t gotHead = in.read(head, 4);
  if (gotHead < 4)
    throw DataError(fmt("'", path, "': truncated IDX file: expected at least 4 header bytes, got ", gotHead, kind));
  if (head[0] != 0 || head[1] != 0)
    throw DataError(fmt("'", path, "': not an IDX file (bad magic: first two bytes must be zero, got 0x", std::hex,
                        int(head[0]), " 0x", int(head[1]), ")"));
  if (head[2] != 0x08)
    throw DataError(fmt("'", path, "': unsupported IDX element type 0x", std::hex, int(head[2]),
                        " (only 0x08 = unsigned byte is supported)"));
  const int ndim = head[3];
  if (ndim < 1) throw DataError(fmt("'", path, "': IDX header declares 0 dimensions"));

  IdxArray out;
  std::vector<unsigned char> dimBytes(static_cast<std::size_t>(ndim) * 4);
  const std::size_t gotDims = in.read(dimBytes.data(), dimBytes.size());
  if (gotDims < dimBytes.size())
    throw DataError(fmt("'", path, "': truncated IDX header: expected ", 4 + dimBytes.size(), " bytes, got ",
                        4 + gotDims, kind));
  std::uint64_t payload = 1;
  for (int d = 0; d < ndim; ++d) {
    const unsigned char* b = &dimBytes[static_cast<std::size_t>(d) * 4];
    const std::uint64_t v = (std::uint64_t(b[0]) << 24) | (std::uint64_t(b[1]) << 16) | (std::uint64_t(b[2]) << 8) | b[3];
    if (v > 0x7fffffffULL) throw DataError(fmt("'", path, "': IDX dimension ", d, " is implausibly large (", v, ")"));
    out.dims.push_back(static_cast<int>(v));
    payload *= v;
    // Real IDX files are at most a few hundred MB; this only stops absurd headers from overflowing.
    if (payload > (std::uint64_t(1) << 40))
      throw DataError(fmt("'", path, "': IDX dimensions ", dimsText(out.dims), "... are implausibly large"));
  }
  const std::uint64_t headerBytes = 4 + dimBytes.size();

  // Read in chunks so that a header that lies about the size cannot make us allocate more than the
  // data actually present.
  constexpr std::size_t kChunk = std::size_t(1) << 22;
  out.data.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(payload, std::uint64_t(1) << 28)));
  std::uint64_t have = 0;
  while (have < payload) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(payload - have, kChunk));
    out.data.resize(static_cast<std::size_t>(have) + want);
    const std::size_t got = in.read(out.data.data() + have, want);
    have += got;
    if (got < want) break;
  }
  if (have < payload)
    throw DataError(fmt("'", path, "': truncated IDX file: dimensions ", dimsText(out.dims), " need ",
                        headerBytes + payload, " bytes (", headerBytes, "-byte header + ", payload,
                        " payload), got ", headerBytes + have, kind));
  out.data.resize(static_cast<std::size_t>(payload));
  std::uint64_t extra = 0;
  unsigned char sink[1 << 12];
  for (;;) {
    const std::size_t got = in.read(sink, sizeof sink);
    extra += got;
    if (got < sizeof sink) break;
  }
  if (extra > 0)
    throw DataError(fmt("'", path, "': IDX file has ", extra, " trailing bytes: dimensions ", dimsText(out.dims),
                        " need ", headerBytes + payload, " bytes, got ", headerBytes + payload + extra, kind));
  return out;
}

namespace detail {

namespace {

namespace fs = std::filesystem;

// Finds "<prefix><base>" or "<prefix><base>.gz" in dir, for the first of `bases` present.
std::string findIdx(const std::string& dir, const std::string& prefix, const std::vector<std::string>& bases) {
  std::string tried;
  for (const std::string& base : bases)
    for (const std::string& name : {prefix + base, prefix + base + ".gz"}) {
      const std::string p = joinPath(dir, name);
      std::error_code ec;
      if (fs::is_regular_file(p, ec)) return p;
      tried += (tried.empty() ? "'" : "' nor '") + p;
    }
  throw DataError(fmt("missing IDX file: neither ", tried, "' exists"));
}

// File-name prefix of the dataset in dir. The official MNIST / Fashion-MNIST files have none
// ("train-images-idx3-ubyte.gz"); EMNIST ships one set per split ("emnist-balanced-train-images-...").
// data.file names the prefix explicitly ("emnist-balanced"); otherwise a directory holding exactly one
// prefixed set is unambiguous.
std::string findPrefix(const std::string& dir, const std::string& explicitPrefix) {
  const std::string base = "train-images-idx3-ubyte";
  if (!explicitPrefix.empty()) return explicitPrefix.back() == '-' ? explicitPrefix : explicitPrefix + "-";
  for (const std::string& name : {base, base + ".gz"}) {
    std::error_code ec;
    if (fs::is_regular_file(joinPath(dir, name), ec)) return "";
  }
  std::set<std::string> prefixes;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    for (const std::string& suffix : {"-" + base, "-" + base + ".gz"}) {
      if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        prefixes.insert(name.substr(0, name.size() - suffix.size() + 1));
    }
  }
  if (prefixes.size() == 1) return *prefixes.begin();
  if (prefixes.empty())
    throw DataError(fmt("no '", base, "[.gz]' (or '<prefix>-", base, "[.gz]') in directory '", dir, "'"));
  std::string list;
  for (const auto& p : prefixes) list += (list.empty() ? "" : ", ") + p.substr(0, p.size() - 1);
  throw DataError(fmt("directory '", dir, "' holds several IDX sets (", list,
                      "): set data.file to the one to load"));
}

// EMNIST stores each image transposed relative to MNIST (column-major 28x28). Transposing makes the
// flattening row-major like MNIST, so the same models and visualisations apply.
void transposeImages(std::vector<std::uint8_t>& px, int count, int h, int w) {
  std::vector<std::uint8_t> tmp(static_cast<std::size_t>(h) * w);
  for (int i = 0; i < count; ++i) {
    std::uint8_t* img = px.data() + static_cast<std::size_t>(i) * h * w;
    // Stored image is w x h (rows are columns of the real image): real(r, c) = stored(c, r).
    for (int r = 0; r < h; ++r)
      for (int c = 0; c < w; ++c) tmp[static_cast<std::size_t>(r) * w + c] = img[static_cast<std::size_t>(c) * h + r];
    std::copy(tmp.begin(), tmp.end(), img);
  }
}

Dataset loadIdxPair(const std::string& imagesPath, const std::string& labelsPath, bool transpose) {
  IdxArray images = readIdx(imagesPath);
  IdxArray labels = readIdx(labelsPath);
  if (images.dims.size() != 3)
    throw DataError(fmt("'", imagesPath, "': expected a 3-D IDX array (count x rows x cols), got ",
                        images.dims.size(), " dimensions (", dimsText(images.dims), ")"));
  if (labels.dims.size() != 1)
    throw DataError(fmt("'", labelsPath, "': expected a 1-D IDX array of labels, got ", labels.dims.size(),
                        " dimensions (", dimsText(labels.dims), ")"));
  if (images.dims[0] != labels.dims[0])
    throw DataError(fmt("image/label count mismatch: '", imagesPath, "' has ", images.dims[0], " images but '",
                        labelsPath, "' has ", labels.dims[0], " labels"));
  if (images.dims[0] == 0) throw DataError(fmt("'", imagesPath, "' holds no images"));
  if (images.dims[1] <= 0 || images.dims[2] <= 0) throw DataError(fmt("'", imagesPath, "': empty image size"));
  Dataset ds;
  const int h = images.dims[1], w = images.dims[2];
  ds.shape = Shape{1, h, w};
  ds.u8 = std::move(images.data);
  if (transpose) transposeImages(ds.u8, images.dims[0], h, w);
  ds.labels.assign(labels.data.begin(), labels.data.end());
  return ds;
}

void checkLabels(const Dataset& ds, int classes, int maxClasses, const std::string& labelsPath) {
  for (std::size_t i = 0; i < ds.labels.size(); ++i) {
    if (!validClassId(ds.labels[i], maxClasses))
      badClassId(ds.labels[i], maxClasses, fmt("'", labelsPath, "' position ", i));
    if (ds.labels[i] >= classes)
      throw DataError(fmt("'", labelsPath, "': label ", ds.labels[i], " at position ", i, " is not below the ",
                          classes, " classes of this dataset"));
  }
}

}  // namespace

DataBundle loadIdxFamily(const DataConfig& cfg) {
  const std::string name = nameOf(cfg.dataset);
  const std::string dir = cfg.dir.empty() ? defaultDataDir(cfg.dataset) : cfg.dir;
  if (dir.empty()) throw ConfigError(fmt("data.dir is required for dataset '", name, "' (directory with the IDX files)"));
  requireDir(dir, name);
  const std::string prefix = findPrefix(dir, cfg.file);
  const bool emnist = cfg.dataset == DatasetKind::Emnist;
  DataBundle b;
  b.name = name;
  // The test files are "t10k-..." in MNIST and Fashion-MNIST, "<prefix>test-..." in EMNIST's archive.
  const std::string trImg = findIdx(dir, prefix, {"train-images-idx3-ubyte"});
  const std::string trLab = findIdx(dir, prefix, {"train-labels-idx1-ubyte"});
  const std::string teImg = findIdx(dir, prefix, {"t10k-images-idx3-ubyte", "test-images-idx3-ubyte"});
  const std::string teLab = findIdx(dir, prefix, {"t10k-labels-idx1-ubyte", "test-labels-idx1-ubyte"});
  b.train = loadIdxPair(trImg, trLab, emnist);
  b.test = loadIdxPair(teImg, teLab, emnist);
  if (!(b.train.shape == b.test.shape))
    throw DataError(fmt("image size differs between '", trImg, "' and '", teImg, "'"));
  int classes = 10;
  if (emnist) {
    // EMNIST splits have 10 (digits, mnist), 26 (letters; labels 1..26) or 47/62 classes.
    std::int32_t mx = 0;
    for (auto y : b.train.labels) mx = std::max(mx, y);
    for (auto y : b.test.labels) mx = std::max(mx, y);
    classes = mx + 1;
  }
  checkLabels(b.train, classes, cfg.maxClasses, trLab);
  checkLabels(b.test, classes, cfg.maxClasses, teLab);
  b.train.numClasses = b.test.numClasses = classes;
  return b;
}

}  // namespace detail

}  // namespace fedsilo
