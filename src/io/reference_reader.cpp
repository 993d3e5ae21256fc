#include "io/reference_reader.hpp"

#include <cmath>
#include <cstdint>
#include <sstream>

#include "core/error.hpp"
#include "core/h5_handle.hpp"
#include "core/strings.hpp"
#include "core/weighted_mean.hpp"

namespace fedsilo {

namespace {

std::vector<double> readVector(hid_t file, const std::string& path, const std::string& fileName) {
  if (H5Lexists(file, path.c_str(), H5P_DEFAULT) <= 0)
    throw ConfigError(
        fmt("alpha_fedavg.reference = ", fileName, ": no dataset ", path, " (not a finished fedsilo results file?)"));
  h5::Handle d(H5Dopen2(file, path.c_str(), H5P_DEFAULT), H5Dclose, "open " + path);
  h5::Handle s(H5Dget_space(d), H5Sclose, "space " + path);
  const int nd = H5Sget_simple_extent_ndims(s);
  if (nd != 1)
    throw ConfigError(fmt("alpha_fedavg.reference = ", fileName, ": ", path, " has ", nd, " dimensions, expected 1"));
  h5::Handle t(H5Dget_type(d), H5Tclose, "type " + path);
  const H5T_class_t cls = H5Tget_class(t);
  if (cls != H5T_FLOAT && cls != H5T_INTEGER)
    throw ConfigError(
        fmt("alpha_fedavg.reference = ", fileName, ": ", path, " is not numeric (expected float64 or int64)"));
  hsize_t n = 0;
  H5Sget_simple_extent_dims(s, &n, nullptr);
  std::vector<double> v(static_cast<std::size_t>(n));
  if (n > 0) h5::check(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), "read " + path);
  return v;
}

}  // namespace

ReferenceResults readReferenceResults(const std::string& path) {
  const h5::QuietErrors quiet;  // a bad file gets our one-line ConfigError, not HDF5's error stack
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) throw ConfigError(fmt("alpha_fedavg.reference = ", path, ": cannot open the results file"));
  h5::Handle file(f, H5Fclose, "open " + path);
  ReferenceResults r;
  r.accuracy = readVector(file, "/summary/client_accuracy", path);
  r.numTrain = readVector(file, "/clients/num_train", path);  // int64 on disk, converted by HDF5
  if (r.accuracy.size() != r.numTrain.size() || r.accuracy.empty())
    throw ConfigError(fmt("alpha_fedavg.reference = ", path, ": ", r.accuracy.size(), " accuracies for ",
                          r.numTrain.size(), " clients"));
  r.efficiency = finiteWeightedMean(r.accuracy, r.numTrain);
  if (!std::isfinite(r.efficiency))
    throw ConfigError(fmt("alpha_fedavg.reference = ", path, ": no finite client accuracy"));
  return r;
}

double readEfficiencyTarget(const std::string& path) { return readReferenceResults(path).efficiency; }

void resolveAlphaFedAvgReference(OptionValues& algo) {
  if (!algo.has("alpha_fedavg.reference")) return;
  const std::string path = trim(algo.raw("alpha_fedavg.reference"));
  if (path.empty()) return;
  const ReferenceResults r = readReferenceResults(path);
  std::ostringstream os;
  os.precision(17);
  for (std::size_t k = 0; k < r.accuracy.size(); ++k) os << (k ? "," : "") << r.accuracy[k];
  algo.set("alpha_fedavg.reference_accuracy", os.str());
  if (trim(algo.raw("alpha_fedavg.efficiency_target")).empty()) {
    std::ostringstream e;
    e.precision(17);
    e << r.efficiency;
    algo.set("alpha_fedavg.efficiency_target", e.str());
  }
}

}  // namespace fedsilo
