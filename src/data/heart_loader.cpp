// dataset = heart: the UCI Heart Disease data of four hospitals (data/heart_disease/README.md), one
// silo per hospital, as the PLayer-FL paper (Elhussein, Pollet, Gürsoy, arXiv 2502.08829) and FLamby
// (Fed-Heart-Disease; du Terrail et al., NeurIPS 2022) use it.
//  * The four files processed.{cleveland,hungarian,switzerland,va}.data in data.dir must be the UCI
//    originals: each file's SHA-256 is checked before it is read (a damaged file is a DataError naming it).
//  * Columns 11-13 (slope, ca, thal; missing for most patients outside Cleveland) are dropped, then
//    every patient with a missing value ('?') in the other eleven columns: 740 patients remain
//    (303, 261, 46, 130).
//  * Per hospital, a seeded shuffle (Rng(seed, k, -1, Split, kHoldOutStream)) holds out
//    round(data.split[2] x n_k) patients as the hospital's test set (naturalClientTest); the rest are
//    its training pool (naturalClient), which data.split cuts into train and validation. Both parts
//    keep file order.
//  * data.heart_variant = playerfl (the PLayer-FL authors' code/datasets/dataset_processing.py): the
//    10 columns as features, the 0-4 diagnosis as the class; seven columns are standardised with the
//    fixed means and variances of the authors' scaler (below), sex, fbs and exang are left as 0/1.
//  * data.heart_variant = flamby (FLamby's fed_heart_disease/dataset.py): cp and restecg one-hot coded
//    without their first level (13 features), the class is 1 when the diagnosis is above 0; each
//    hospital's features are standardised with the mean and sample standard deviation of its own
//    training pool, (x - mean) / (sd + 1e-9).
#include <array>
#include <cmath>
#include <cstdlib>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/sha256.hpp"
#include "core/strings.hpp"
#include "data/loader_util.hpp"
#include "data/loaders.hpp"

namespace fedsilo::detail {

namespace {

struct HospitalFile {
  const char* name;    // processed.<name>.data
  const char* sha256;  // of the UCI original (data/heart_disease/README.md lists MD5s as well)
};
constexpr std::array<HospitalFile, kHeartHospitals> kHospitals = {{
    {"cleveland", "a74b7efa387bc9d108d7d0115d831fe9b414b29ae7124f331b622b4efa0427c8"},
    {"hungarian", "d1ad108f785768cd3d7e82dc522e6f5a61eea93cccfb3a46ee8076f73fc3d796"},
    {"switzerland", "834a405ccf5b66ab4056bb77794adc8df0b7125186454c0a1d002d33c6c3b314"},
    {"va", "e7c93d8d0d2acdadfa4c5e8de768e2191e7f618b952e29623f1f0d5949ff6b8f"},
}};

constexpr int kColumns = 14;      // 13 attributes and the diagnosis
constexpr int kRawFeatures = 10;  // age .. oldpeak: the attributes kept
constexpr int kDiagnosis = 13;    // 0 (no disease) .. 4
constexpr int kChestPain = 2, kRestEcg = 6;
constexpr int kFlambyFeatures = 13;

struct Patient {
  std::array<double, kRawFeatures> x{};
  int diagnosis = 0;
};

std::string hospitalPath(const DataConfig& cfg, const HospitalFile& h) {
  return joinPath(cfg.dir, std::string("processed.") + h.name + ".data");
}

std::string verifiedContents(const std::string& path, const HospitalFile& h) {
  requireFile(path, "heart");
  const std::string bytes = readFileBytes(path);
  const std::string digest = sha256Hex(bytes);
  if (digest != h.sha256)
    throw DataError(fmt("'", path, "': SHA-256 ", digest, " is not the UCI file's ", h.sha256,
                        " (the file is damaged or not processed.", h.name, ".data of UCI Heart Disease)"));
  return bytes;
}

// The patients of one file with no value missing in the kept columns, in file order.
std::vector<Patient> readPatients(const std::string& text, const std::string& path) {
  std::vector<Patient> out;
  long long line = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string row = trim(text.substr(start, end - start));
    start = end + 1;
    ++line;
    if (row.empty()) continue;
    const std::vector<std::string> fields = splitList(row, ',');
    if (static_cast<int>(fields.size()) != kColumns)
      throw DataError(fmt("'", path, "' line ", line, ": ", fields.size(), " fields, expected ", kColumns));
    Patient p;
    bool missing = false;
    for (int c = 0; c < kColumns; ++c) {
      if (c >= kRawFeatures && c != kDiagnosis) continue;  // slope, ca, thal: dropped
      const std::string value = trim(fields[static_cast<std::size_t>(c)]);
      if (value == "?") {
        missing = true;
        continue;
      }
      char* stop = nullptr;
      const double v = std::strtod(value.c_str(), &stop);
      if (value.empty() || *stop != '\0' || !finiteAsFloat(v))
        throw DataError(fmt("'", path, "' line ", line, " column ", c + 1, ": '", value, "' is not a number"));
      if (c == kDiagnosis) {
        if (v != std::floor(v) || v < 0 || v > 4)
          throw DataError(fmt("'", path, "' line ", line, ": diagnosis ", value, ", expected 0, 1, 2, 3 or 4"));
        p.diagnosis = static_cast<int>(v);
      } else {
        p.x[static_cast<std::size_t>(c)] = v;
      }
    }
    if (!missing) out.push_back(p);
  }
  return out;
}

// The PLayer-FL authors' scaler: fixed (mean, variance) per standardised column, the other columns
// (sex, fbs, exang) unscaled. These are not the statistics of the 740 patients (their mean age is
// 53.10 with variance 88.4): the authors' code states them as constants, and so does this.
struct ColumnScale {
  int column;
  double mean, variance;
};
constexpr std::array<ColumnScale, 7> kPlayerFlScale = {{
    {0, 53.0872973, 70.1459463},     // age
    {2, 3.23702703, 0.817756772},    // chest pain type
    {3, 132.74405405, 345.493057},   // resting blood pressure
    {4, 220.23648649, 4884.30934},   // cholesterol
    {6, 0.64513514, 0.592069868},    // resting ECG
    {7, 138.75459459, 529.172208},   // maximum heart rate
    {9, 0.89532432, 1.11317517},     // ST depression
}};

std::vector<double> playerFlFeatures(const Patient& p) {
  std::vector<double> f(p.x.begin(), p.x.end());
  for (const ColumnScale& s : kPlayerFlScale) {
    double& v = f[static_cast<std::size_t>(s.column)];
    v = (v - s.mean) / std::sqrt(s.variance);
  }
  return f;
}

// FLamby's columns: the eight non-categorical attributes in file order, then cp = 2, 3, 4 and
// restecg = 1, 2 as 0/1 (pandas.get_dummies with drop_first over the levels present, which are
// cp 1-4 and restecg 0-2 in all four files).
std::vector<double> flambyFeatures(const Patient& p) {
  std::vector<double> f;
  f.reserve(kFlambyFeatures);
  for (int c = 0; c < kRawFeatures; ++c)
    if (c != kChestPain && c != kRestEcg) f.push_back(p.x[static_cast<std::size_t>(c)]);
  for (double level : {2.0, 3.0, 4.0}) f.push_back(p.x[kChestPain] == level ? 1.0 : 0.0);
  for (double level : {1.0, 2.0}) f.push_back(p.x[kRestEcg] == level ? 1.0 : 0.0);
  return f;
}

// Which of a hospital's n patients are held out as its test set: round(fraction x n) of a seeded shuffle.
std::vector<bool> heldOut(Index n, double fraction, std::uint64_t seed, int hospital) {
  IndexList order(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  Rng rng(seed, hospital, -1, Purpose::Split, kHoldOutStream);
  rng.shuffle(order);
  const Index test = std::llround(fraction * static_cast<double>(n));
  std::vector<bool> out(static_cast<std::size_t>(n), false);
  for (Index i = 0; i < test; ++i) out[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = true;
  return out;
}

// FLamby's per-hospital scaling: mean and sample standard deviation of the training pool's rows.
void standardiseHospital(std::vector<std::vector<double>>& rows, const std::vector<bool>& test) {
  const std::size_t d = rows.empty() ? 0 : rows.front().size();
  std::vector<double> mean(d, 0.0), sq(d, 0.0);
  double n = 0;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (!test[i]) {
      n += 1;
      for (std::size_t j = 0; j < d; ++j) mean[j] += rows[i][j];
    }
  if (n < 2) return;  // no spread to scale by (a split that leaves a hospital one training patient)
  for (double& m : mean) m /= n;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (!test[i])
      for (std::size_t j = 0; j < d; ++j) sq[j] += (rows[i][j] - mean[j]) * (rows[i][j] - mean[j]);
  for (auto& row : rows)
    for (std::size_t j = 0; j < d; ++j) row[j] = (row[j] - mean[j]) / (std::sqrt(sq[j] / (n - 1)) + 1e-9);
}

void append(Dataset& ds, const std::vector<double>& features, int label) {
  for (double v : features) ds.f32.push_back(static_cast<float>(v));
  ds.labels.push_back(label);
}

}  // namespace

DataBundle loadHeart(const DataConfig& cfg, std::uint64_t seed) {
  requireDir(cfg.dir, "heart");
  const bool flamby = cfg.heartVariant == HeartVariant::Flamby;
  const int dim = flamby ? kFlambyFeatures : kRawFeatures;
  DataBundle b;
  for (Dataset* ds : {&b.train, &b.test}) {
    ds->shape = Shape{dim, 1, 1};
    ds->numClasses = flamby ? 2 : 5;
  }
  b.numNaturalClients = kHeartHospitals;
  for (int k = 0; k < kHeartHospitals; ++k) {
    const HospitalFile& h = kHospitals[static_cast<std::size_t>(k)];
    const std::string path = hospitalPath(cfg, h);
    const std::vector<Patient> patients = readPatients(verifiedContents(path, h), path);
    const std::vector<bool> test = heldOut(static_cast<Index>(patients.size()), cfg.split[2], seed, k);
    std::vector<std::vector<double>> rows;
    for (const Patient& p : patients) rows.push_back(flamby ? flambyFeatures(p) : playerFlFeatures(p));
    if (flamby) standardiseHospital(rows, test);
    for (std::size_t i = 0; i < patients.size(); ++i) {
      const int label = flamby ? (patients[i].diagnosis > 0 ? 1 : 0) : patients[i].diagnosis;
      append(test[i] ? b.test : b.train, rows[i], label);
      (test[i] ? b.naturalClientTest : b.naturalClient).push_back(k);
    }
  }
  return b;
}

}  // namespace fedsilo::detail
