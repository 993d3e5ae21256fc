// LEAF benchmark JSON (Caldas et al. 2018, https://github.com/TalwalkarLab/leaf): dir/train/*.json and
// dir/test/*.json, each {"users": [...], "num_samples": [...], "user_data": {"<user>": {"x": [...],
// "y": [...]}}}. Files are read in sorted name order; users keep their order within each file, and a
// user's index in that train order is its natural client id.
//
// Sample formats:
//  * x a vector of numbers (FEMNIST: 784 pixels in [0, 1]; LEAF Synthetic: 60 floats) -> f32
//    features, each finite as a float; 784 features get shape {1, 28, 28} so that CNNs apply,
//    anything else {d, 1, 1}. y integer class ids in [0, data.max_classes).
//  * x a string, or an array of strings whose LAST element is the text (Sent140's raw records are
//    [id, date, query, user, text]) -> token ids. Word-level (lower-cased ASCII, split on
//    whitespace, punctuation kept) when y is numeric (Sent140-like); character-level (UTF-8 code
//    points) when y is a string (Shakespeare-like next-character prediction, where y maps through the
//    same vocabulary and numClasses = vocabulary size).
// Vocabulary: built from the TRAIN files only (x and, for character level, y), id 0 = "<pad>",
// 1 = "<unk>", then tokens by descending frequency, ties in byte order; no size cap. Sequences are
// right-aligned in cfg.seqLength slots (left-padded with 0) so that a recurrent model's last step sees
// the last real token. Over-long word sequences keep their first seqLength words (the start of a
// tweet), character sequences their last seqLength characters (the context just before the
// character being predicted). Token ids are stored as floats in f32, shape {1, 1, seqLength}.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "core/error.hpp"
#include "data/json.hpp"
#include "data/loader_util.hpp"

namespace fedsilo::detail {

namespace {

namespace fs = std::filesystem;
using json::Value;

enum class Mode { Unknown, Numeric, Words, Chars };

std::vector<std::string> jsonFiles(const std::string& dir) {
  requireDir(dir, "LEAF");
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw DataError(fmt("LEAF directory '", dir, "' holds no .json files"));
  return files;
}

[[noreturn]] void bad(const std::string& file, const Value& at, const std::string& what) {
  throw DataError(fmt("'", file, "': at byte ", at.offset, ": ", what));
}

const Value& member(const std::string& file, const Value& obj, const std::string& key) {
  if (obj.type != Value::Type::Object) bad(file, obj, fmt("expected an object with key \"", key, "\""));
  const Value* v = obj.find(key);
  if (!v) bad(file, obj, fmt("missing key \"", key, "\""));
  return *v;
}

// One sample's label as a class id in [0, maxClasses).
std::int32_t intLabel(const std::string& file, const Value& y, double v, const std::string& user, std::size_t i,
                      int maxClasses) {
  if (!(v >= 0.0) || v != std::floor(v))
    bad(file, y, fmt("user '", user, "' sample ", i, ": label ", v, " is not a non-negative integer"));
  if (!(v < static_cast<double>(maxClasses)))
    badClassId(v < 9e18 ? std::to_string(static_cast<long long>(v)) : fmt(v), maxClasses,
               fmt("'", file, "': at byte ", y.offset, ": user '", user, "' sample ", i));
  return static_cast<std::int32_t>(v);
}

// One feature as a float; a value that is not finite as a float is a DataError naming its place.
float feature(const std::string& file, const Value& at, double v, const std::string& user, std::size_t i,
              std::size_t j) {
  if (!finiteAsFloat(v))
    badFeature(fmt("'", file, "': at byte ", at.offset, ": user '", user, "' sample ", i, ", feature ", j), v);
  return static_cast<float>(v);
}

// Splits text into tokens (words or UTF-8 characters).
std::vector<std::string> tokenize(const std::string& text, Mode mode) {
  std::vector<std::string> out;
  if (mode == Mode::Chars) {
    for (std::size_t i = 0; i < text.size();) {
      std::size_t n = 1;
      while (i + n < text.size() && (static_cast<unsigned char>(text[i + n]) & 0xC0) == 0x80) ++n;
      out.push_back(text.substr(i, n));
      i += n;
    }
    return out;
  }
  std::string cur;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += (u < 128) ? static_cast<char>(std::tolower(u)) : c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

// Raw content of one split (train or test), before tokenisation.
struct RawSplit {
  std::vector<float> features;      // Numeric mode
  std::vector<std::string> texts;   // text modes
  std::vector<std::int32_t> labels; // numeric labels
  std::vector<std::string> charLabels;
  std::vector<std::int32_t> client;
};

class LeafReader {
 public:
  LeafReader(Mode& mode, int& dim, int maxClasses) : mode_(mode), dim_(dim), maxClasses_(maxClasses) {}

  // Reads every file of a split. For train, users are appended to `users`; for test, each user must
  // already be a train user.
  void readSplit(const std::vector<std::string>& files, bool train, std::vector<std::string>& users,
                 std::unordered_map<std::string, int>& userIndex, RawSplit& out) {
    for (const auto& file : files) {
      const Value doc = json::parse(readFileBytes(file), file);
      const Value& userList = member(file, doc, "users");
      const Value& userData = member(file, doc, "user_data");
      if (!userList.isArray() || (userList.packed && userList.arraySize() > 0)) bad(file, userList, "\"users\" must be an array of strings");
      if (userData.type != Value::Type::Object) bad(file, userData, "\"user_data\" must be an object");
      const Value* numSamples = doc.find("num_samples");
      if (numSamples && (!numSamples->isArray() || numSamples->arraySize() != userList.arraySize()))
        bad(file, *numSamples, "\"num_samples\" must be an array with one count per user");
      for (std::size_t u = 0; u < userList.items.size(); ++u) {
        const Value& name = userList.items[u];
        if (name.type != Value::Type::String) bad(file, name, "user names must be strings");
        int client;
        if (train) {
          if (userIndex.count(name.string)) bad(file, name, fmt("user '", name.string, "' appears twice in the train files"));
          client = static_cast<int>(users.size());
          userIndex.emplace(name.string, client);
          users.push_back(name.string);
        } else {
          auto it = userIndex.find(name.string);
          if (it == userIndex.end())
            bad(file, name, fmt("test user '", name.string, "' has no train data (not in any train file)"));
          client = it->second;
        }
        const Value& ud = member(file, userData, name.string);
        const std::size_t n = readUser(file, name.string, ud, client, out);
        if (numSamples) {
          const double declared = numSamples->packed ? numSamples->numbers[u] : -1.0;
          if (declared != static_cast<double>(n))
            bad(file, *numSamples, fmt("num_samples[", u, "] does not match the ", n, " samples of user '",
                                       name.string, "'"));
        }
      }
    }
  }

 private:
  std::size_t readUser(const std::string& file, const std::string& user, const Value& ud, int client, RawSplit& out) {
    const Value& x = member(file, ud, "x");
    const Value& y = member(file, ud, "y");
    if (!x.isArray()) bad(file, x, fmt("user '", user, "': \"x\" must be an array"));
    if (!y.isArray()) bad(file, y, fmt("user '", user, "': \"y\" must be an array"));
    const std::size_t n = x.arraySize();
    if (y.arraySize() != n)
      bad(file, y, fmt("user '", user, "': ", n, " samples in \"x\" but ", y.arraySize(), " labels in \"y\""));
    if (n == 0) return 0;
    if (mode_ == Mode::Unknown) decideMode(file, x, y);
    for (std::size_t i = 0; i < n; ++i) {
      if (mode_ == Mode::Numeric) {
        if (x.packed) {  // scalar samples
          if (dim_ != 1) bad(file, x, fmt("user '", user, "' sample ", i, ": 1 feature, expected ", dim_));
          out.features.push_back(feature(file, x, x.numbers[i], user, i, 0));
        } else {
          const Value& xi = x.items[i];
          if (!xi.isArray() || !xi.packed || static_cast<int>(xi.numbers.size()) != dim_)
            bad(file, xi, fmt("user '", user, "' sample ", i, ": expected a vector of ", dim_, " numbers"));
          for (std::size_t j = 0; j < xi.numbers.size(); ++j)
            out.features.push_back(feature(file, xi, xi.numbers[j], user, i, j));
        }
      } else {
        if (x.packed) bad(file, x, fmt("user '", user, "': expected text samples, found numbers"));
        out.texts.push_back(textOf(file, user, x.items[i], i));
      }
      if (mode_ == Mode::Chars) {
        if (y.packed || y.items[i].type != Value::Type::String)
          bad(file, y, fmt("user '", user, "' sample ", i, ": expected a string label"));
        out.charLabels.push_back(y.items[i].string);
      } else {
        if (!y.packed) bad(file, y, fmt("user '", user, "' sample ", i, ": expected numeric labels"));
        out.labels.push_back(intLabel(file, y, y.numbers[i], user, i, maxClasses_));
      }
      out.client.push_back(client);
    }
    return n;
  }

  // The first sample fixes the format of the whole dataset.
  void decideMode(const std::string& file, const Value& x, const Value& y) {
    const bool stringLabels = !y.packed && y.items[0].type == Value::Type::String;
    if (x.packed) {
      mode_ = Mode::Numeric;
      dim_ = 1;
    } else {
      const Value& x0 = x.items[0];
      if (x0.isArray() && x0.packed && !x0.numbers.empty()) {
        mode_ = Mode::Numeric;
        dim_ = static_cast<int>(x0.numbers.size());
      } else if (x0.type == Value::Type::String || (x0.isArray() && !x0.packed)) {
        mode_ = stringLabels ? Mode::Chars : Mode::Words;
      } else {
        bad(file, x0, "a sample must be a vector of numbers, a string or an array of strings");
      }
    }
    if (mode_ == Mode::Numeric && stringLabels) bad(file, y, "numeric features need integer labels");
  }

  static std::string textOf(const std::string& file, const std::string& user, const Value& xi, std::size_t i) {
    if (xi.type == Value::Type::String) return xi.string;
    if (xi.isArray() && !xi.packed && !xi.items.empty() && xi.items.back().type == Value::Type::String)
      return xi.items.back().string;
    bad(file, xi, fmt("user '", user, "' sample ", i, ": expected a string or an array ending in a string"));
  }

  Mode& mode_;
  int& dim_;
  int maxClasses_;
};

std::vector<std::string> buildVocabulary(const RawSplit& train, Mode mode) {
  std::unordered_map<std::string, long long> freq;
  for (const auto& t : train.texts)
    for (auto& tok : tokenize(t, mode)) ++freq[tok];
  if (mode == Mode::Chars)
    for (const auto& c : train.charLabels) ++freq[c];
  std::vector<std::pair<std::string, long long>> items(freq.begin(), freq.end());
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<std::string> vocab{"<pad>", "<unk>"};
  for (auto& kv : items) vocab.push_back(kv.first);
  return vocab;
}

void encode(const RawSplit& raw, Mode mode, int seqLength, const std::unordered_map<std::string, int>& ids,
            Dataset& ds) {
  const std::size_t n = raw.texts.size();
  ds.f32.assign(n * static_cast<std::size_t>(seqLength), 0.0f);
  auto idOf = [&](const std::string& tok) {
    auto it = ids.find(tok);
    return it == ids.end() ? 1 : it->second;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const std::vector<std::string> toks = tokenize(raw.texts[i], mode);
    const std::size_t keep = std::min<std::size_t>(toks.size(), static_cast<std::size_t>(seqLength));
    const std::size_t first = mode == Mode::Chars ? toks.size() - keep : 0;
    float* row = ds.f32.data() + i * static_cast<std::size_t>(seqLength);
    const std::size_t pad = static_cast<std::size_t>(seqLength) - keep;
    for (std::size_t j = 0; j < keep; ++j) row[pad + j] = static_cast<float>(idOf(toks[first + j]));
  }
  if (mode == Mode::Chars) {
    ds.labels.resize(n);
    for (std::size_t i = 0; i < n; ++i) ds.labels[i] = idOf(raw.charLabels[i]);
  } else {
    ds.labels = raw.labels;
  }
}

}  // namespace

DataBundle loadLeaf(const DataConfig& cfg) {
  if (cfg.dir.empty()) throw ConfigError("data.dir is required for dataset 'leaf' (directory with train/ and test/)");
  requireDir(cfg.dir, "leaf");
  if (cfg.seqLength < 1) throw ConfigError(fmt("data.seq_length must be >= 1, got ", cfg.seqLength));
  const auto trainFiles = jsonFiles(joinPath(cfg.dir, "train"));
  const auto testFiles = jsonFiles(joinPath(cfg.dir, "test"));

  Mode mode = Mode::Unknown;
  int dim = 0;
  LeafReader reader(mode, dim, cfg.maxClasses);
  std::vector<std::string> users;
  std::unordered_map<std::string, int> userIndex;
  RawSplit rawTrain, rawTest;
  reader.readSplit(trainFiles, true, users, userIndex, rawTrain);
  if (rawTrain.client.empty()) throw DataError(fmt("LEAF train files in '", joinPath(cfg.dir, "train"), "' hold no samples"));
  reader.readSplit(testFiles, false, users, userIndex, rawTest);

  DataBundle b;
  b.name = "leaf";
  b.numNaturalClients = static_cast<int>(users.size());
  b.naturalClient = std::move(rawTrain.client);
  b.naturalClientTest = std::move(rawTest.client);
  if (mode == Mode::Numeric) {
    const Shape shape = dim == 784 ? Shape{1, 28, 28} : Shape{dim, 1, 1};
    b.train.shape = b.test.shape = shape;
    b.train.f32 = std::move(rawTrain.features);
    b.test.f32 = std::move(rawTest.features);
    b.train.labels = std::move(rawTrain.labels);
    b.test.labels = std::move(rawTest.labels);
  } else {
    b.vocabulary = buildVocabulary(rawTrain, mode);
    b.vocabSize = static_cast<int>(b.vocabulary.size());
    std::unordered_map<std::string, int> ids;
    for (std::size_t i = 0; i < b.vocabulary.size(); ++i) ids.emplace(b.vocabulary[i], static_cast<int>(i));
    b.train.shape = b.test.shape = Shape{1, 1, cfg.seqLength};
    encode(rawTrain, mode, cfg.seqLength, ids, b.train);
    encode(rawTest, mode, cfg.seqLength, ids, b.test);
  }
  int classes = 0;
  if (mode == Mode::Chars) {
    // Next-character prediction: every token of the vocabulary is a class.
    requireClassCount(static_cast<long long>(b.vocabulary.size()), cfg.maxClasses,
                      fmt("the character vocabulary of '", joinPath(cfg.dir, "train"), "'"));
    classes = static_cast<int>(b.vocabulary.size());
  } else {
    for (auto y : b.train.labels) classes = std::max(classes, y + 1);
    for (auto y : b.test.labels) classes = std::max(classes, y + 1);
  }
  b.train.numClasses = b.test.numClasses = classes;
  return b;
}

}  // namespace fedsilo::detail
