// CSV tabular data (data.file): a header row, then one sample per row (RFC 4180 quoting: "..." with ""
// for a quote; CRLF or LF line ends; blank lines ignored).
//  * data.label_column (default "label"): integer class ids 0..C-1 as they are, each below
//    data.max_classes; any other labels (negative integers: numerically sorted; text: byte-order
//    sorted) are mapped to 0..C-1 in sorted order of their distinct values, at most data.max_classes.
//  * data.client_column (optional): natural partition, values mapped to 0..K-1 the same way.
//  * every other column is a numeric feature (shape {features, 1, 1}), a number that is finite as a
//    32-bit float.
// The file has no separate test set, so the last 20% of a seeded shuffle of the rows (floor(n/5)) is
// held out as the global test set (detail::holdOutTest); both parts keep file order. Features are then
// standardised with the TRAIN rows' mean and (population) standard deviation, constant columns only
// centred, so that no test statistic leaks into training.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "core/strings.hpp"
#include "data/loader_util.hpp"

namespace fedsilo::detail {

namespace {

struct Record {
  std::vector<std::string> fields;
  long long line = 0;  // 1-based line of the record's first character
};

std::vector<Record> parseCsv(const std::string& text, const std::string& path) {
  std::vector<Record> rows;
  std::size_t i = 0;
  long long line = 1;
  const std::size_t n = text.size();
  while (i < n) {
    Record rec;
    rec.line = line;
    std::string field;
    bool quotedAny = false;
    for (;;) {
      if (i < n && text[i] == '"' && field.empty()) {
        // Quoted field.
        quotedAny = true;
        const long long startLine = line;
        ++i;
        for (;;) {
          if (i >= n) throw DataError(fmt("'", path, "' line ", startLine, ": unterminated quoted field"));
          if (text[i] == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              field += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          if (text[i] == '\n') ++line;
          field += text[i++];
        }
        if (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
          throw DataError(fmt("'", path, "' line ", line, ": unexpected character after a closing quote"));
      }
      while (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r') field += text[i++];
      rec.fields.push_back(std::move(field));
      field.clear();
      if (i < n && text[i] == ',') {
        ++i;
        continue;
      }
      // End of record.
      if (i < n && text[i] == '\r') ++i;
      if (i < n && text[i] == '\n') ++i;
      ++line;
      break;
    }
    const bool blank = !quotedAny && rec.fields.size() == 1 && trim(rec.fields[0]).empty();
    if (!blank) rows.push_back(std::move(rec));
  }
  return rows;
}


// Parses a whole cell as a finite double.
bool parseNumber(const std::string& cell, double* out) {
  const std::string t = trim(cell);
  if (t.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || errno == ERANGE || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool parseInteger(const std::string& cell, long long* out) {
  const std::string t = trim(cell);
  if (t.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (end != t.c_str() + t.size() || errno == ERANGE) return false;
  *out = v;
  return true;
}

// The cells as integers, or false when one of them is not an integer.
bool allIntegers(const std::vector<std::string>& cells, std::vector<std::int64_t>* ints) {
  ints->resize(cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i) {
    long long v;
    if (!parseInteger(cells[i], &v)) return false;
    (*ints)[i] = v;
  }
  return true;
}

// Dense ids 0..K-1 of text values, in byte order of the distinct (trimmed) values.
std::vector<std::int32_t> textIds(const std::vector<std::string>& cells, int* numDistinct) {
  std::map<std::string, std::int32_t> ids;
  for (const auto& c : cells) ids.emplace(trim(c), 0);
  std::int32_t next = 0;
  for (auto& kv : ids) kv.second = next++;
  std::vector<std::int32_t> out(cells.size());
  for (std::size_t i = 0; i < cells.size(); ++i) out[i] = ids[trim(cells[i])];
  *numDistinct = next;
  return out;
}

// Class ids of the label column (see the header comment). Non-negative integer labels are the ids
// themselves, so each must be below maxClasses (checked per row, naming the line, before the number
// of classes is derived from them); mapped labels are bounded by their number of distinct values.
std::vector<std::int32_t> labelIds(const std::vector<std::string>& cells, const std::vector<long long>& lines,
                                   const std::string& where, int maxClasses, int* numClasses) {
  std::vector<std::int64_t> ints;
  std::vector<std::int32_t> out;
  if (!allIntegers(cells, &ints)) {
    out = textIds(cells, numClasses);
  } else if (*std::min_element(ints.begin(), ints.end()) < 0) {
    out = denseIds(ints, numClasses);
  } else {
    for (std::size_t i = 0; i < ints.size(); ++i)
      if (!validClassId(ints[i], maxClasses)) badClassId(ints[i], maxClasses, fmt(where, " line ", lines[i]));
    out.assign(ints.begin(), ints.end());
    *numClasses = static_cast<int>(*std::max_element(ints.begin(), ints.end()) + 1);
    return out;
  }
  requireClassCount(*numClasses, maxClasses, fmt(where, ": the label column"));
  return out;
}

// Client ids of the client column: always dense 0..K-1 (an unused id would be a client without data);
// integer names in numeric order, other names in byte order.
std::vector<std::int32_t> clientIds(const std::vector<std::string>& cells, int* numClients) {
  std::vector<std::int64_t> ints;
  if (allIntegers(cells, &ints)) return denseIds(ints, numClients);
  return textIds(cells, numClients);
}

void standardise(DataBundle& b) {
  const std::size_t d = static_cast<std::size_t>(b.train.dim());
  const std::size_t n = static_cast<std::size_t>(b.train.size());
  std::vector<double> mean(d, 0.0), var(d, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t f = 0; f < d; ++f) mean[f] += b.train.f32[i * d + f];
  for (auto& m : mean) m /= static_cast<double>(std::max<std::size_t>(n, 1));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t f = 0; f < d; ++f) {
      const double z = b.train.f32[i * d + f] - mean[f];
      var[f] += z * z;
    }
  std::vector<double> inv(d);
  for (std::size_t f = 0; f < d; ++f) {
    const double sd = std::sqrt(var[f] / static_cast<double>(std::max<std::size_t>(n, 1)));
    inv[f] = sd > 1e-12 ? 1.0 / sd : 1.0;
  }
  for (Dataset* ds : {&b.train, &b.test}) {
    const std::size_t m = static_cast<std::size_t>(ds->size());
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t f = 0; f < d; ++f) {
        float& x = ds->f32[i * d + f];
        x = static_cast<float>((x - mean[f]) * inv[f]);
      }
  }
}

}  // namespace

DataBundle loadCsv(const DataConfig& cfg, std::uint64_t seed) {
  if (cfg.file.empty()) throw ConfigError("data.file is required for dataset 'csv'");
  requireFile(cfg.file, "CSV");
  const std::string& path = cfg.file;
  const std::vector<Record> rows = parseCsv(readFileBytes(path), path);
  if (rows.empty()) throw DataError(fmt("'", path, "' is empty (expected a header row)"));
  std::vector<std::string> header;
  for (const auto& h : rows[0].fields) header.push_back(trim(h));
  const std::size_t cols = header.size();
  auto findColumn = [&](const std::string& name) -> long {
    for (std::size_t c = 0; c < cols; ++c)
      if (header[c] == name) return static_cast<long>(c);
    return -1;
  };
  auto columnList = [&]() {
    std::string s;
    for (const auto& h : header) s += (s.empty() ? "" : ", ") + h;
    return s;
  };
  const long labelCol = findColumn(cfg.labelColumn);
  if (labelCol < 0)
    throw DataError(fmt("'", path, "': no label column '", cfg.labelColumn, "' in the header (columns: ", columnList(), ")"));
  long clientCol = -1;
  if (!cfg.clientColumn.empty()) {
    clientCol = findColumn(cfg.clientColumn);
    if (clientCol < 0)
      throw DataError(fmt("'", path, "': no client column '", cfg.clientColumn, "' in the header (columns: ",
                          columnList(), ")"));
    if (clientCol == labelCol) throw ConfigError("data.client_column and data.label_column name the same column");
  }
  std::vector<std::size_t> featureCols;
  for (std::size_t c = 0; c < cols; ++c)
    if (static_cast<long>(c) != labelCol && static_cast<long>(c) != clientCol) featureCols.push_back(c);
  if (featureCols.empty()) throw DataError(fmt("'", path, "': no feature columns besides the label/client columns"));
  const std::size_t n = rows.size() - 1;
  if (n == 0) throw DataError(fmt("'", path, "': header only, no data rows"));

  DataBundle b;
  b.name = "csv";
  b.train.shape = Shape{static_cast<int>(featureCols.size()), 1, 1};
  allocateOrFail(fmt("the features of '", path, "' (", n, " rows x ", featureCols.size(), " columns)"),
                 bytesOf<float>(n * featureCols.size()), [&] { b.train.f32.resize(n * featureCols.size()); });
  std::vector<std::string> labelCells(n), clientCells;
  std::vector<long long> lines(n);
  if (clientCol >= 0) clientCells.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const Record& rec = rows[r + 1];
    if (rec.fields.size() != cols)
      throw DataError(fmt("'", path, "' line ", rec.line, ": ", rec.fields.size(), " fields, but the header has ", cols));
    for (std::size_t j = 0; j < featureCols.size(); ++j) {
      double v;
      const std::string& cell = rec.fields[featureCols[j]];
      if (!parseNumber(cell, &v))
        throw DataError(fmt("'", path, "' line ", rec.line, ", column '", header[featureCols[j]], "': '", cell,
                            "' is not a finite number"));
      if (!finiteAsFloat(v))
        badFeature(fmt("'", path, "' line ", rec.line, ", column '", header[featureCols[j]], "'"), v);
      b.train.f32[r * featureCols.size() + j] = static_cast<float>(v);
    }
    labelCells[r] = rec.fields[static_cast<std::size_t>(labelCol)];
    lines[r] = rec.line;
    if (trim(labelCells[r]).empty())
      throw DataError(fmt("'", path, "' line ", rec.line, ", column '", cfg.labelColumn, "': empty label"));
    if (clientCol >= 0) clientCells[r] = rec.fields[static_cast<std::size_t>(clientCol)];
  }
  int classes = 0;
  b.train.labels = labelIds(labelCells, lines, fmt("'", path, "'"), cfg.maxClasses, &classes);
  b.train.numClasses = classes;
  if (clientCol >= 0) b.naturalClient = clientIds(clientCells, &b.numNaturalClients);
  holdOutTest(b, seed);
  standardise(b);
  return b;
}

}  // namespace fedsilo::detail
