// io/reference_reader: a FedAvg results file as α-FedAvg's reference (E_T and the search's accuracies).
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/error.hpp"
#include "io/reference_reader.hpp"
#include "support/test_support.hpp"

using namespace fedsilo;

namespace {

// A minimal results file: /summary/client_accuracy [K] (float64) and /clients/num_train [K] (int64).
std::string writeReference(const std::vector<double>& acc, const std::vector<long long>& n) {
  const std::string path = test::tempDir("reference") + "/fedavg.h5";
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Gclose(H5Gcreate2(f, "/summary", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Gclose(H5Gcreate2(f, "/clients", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  hsize_t dims[1] = {acc.size()};
  hid_t s = H5Screate_simple(1, dims, nullptr);
  hid_t d = H5Dcreate2(f, "/summary/client_accuracy", H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, acc.data());
  H5Dclose(d);
  d = H5Dcreate2(f, "/clients/num_train", H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(d, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, n.data());
  H5Dclose(d);
  H5Sclose(s);
  H5Fclose(f);
  return path;
}

}  // namespace

TEST(ReferenceReader, ReadsAccuraciesAndSampleWeightedEfficiency) {
  const std::string path = writeReference({0.5, 1.0, std::nan("")}, {1, 3, 10});
  const ReferenceResults r = readReferenceResults(path);
  ASSERT_EQ(r.accuracy.size(), 3u);
  EXPECT_EQ(r.numTrain, (std::vector<double>{1, 3, 10}));
  EXPECT_DOUBLE_EQ(r.efficiency, 0.875);  // (0.5·1 + 1·3) / 4; the NaN client is skipped
  EXPECT_DOUBLE_EQ(readEfficiencyTarget(path), 0.875);

  OptionValues o;
  o.set("alpha_fedavg.reference", path);
  o.set("alpha_fedavg.reference_accuracy", "");
  o.set("alpha_fedavg.efficiency_target", "");
  resolveAlphaFedAvgReference(o);
  EXPECT_EQ(o.getDouble("alpha_fedavg.efficiency_target", 0, 1), 0.875);
  EXPECT_EQ(o.raw("alpha_fedavg.reference_accuracy").substr(0, 8), "0.5,1,na");
  // A target given by the user is kept.
  o.set("alpha_fedavg.efficiency_target", "0.7");
  resolveAlphaFedAvgReference(o);
  EXPECT_EQ(o.raw("alpha_fedavg.efficiency_target"), "0.7");
  // No reference: nothing changes.
  OptionValues none;
  none.set("alpha_fedavg.reference", "");
  none.set("alpha_fedavg.reference_accuracy", "");
  resolveAlphaFedAvgReference(none);
  EXPECT_EQ(none.raw("alpha_fedavg.reference_accuracy"), "");
}

TEST(ReferenceReader, MissingFileIsAConfigErrorNamingTheOption) {
  try {
    readReferenceResults("/nonexistent/fedavg.h5");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("alpha_fedavg.reference = /nonexistent/fedavg.h5"), std::string::npos);
  }
  const std::string path = test::tempDir("reference_empty") + "/x.h5";
  H5Fclose(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  EXPECT_THROW(readReferenceResults(path), ConfigError);
}
