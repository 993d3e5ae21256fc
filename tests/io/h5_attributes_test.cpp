// io/h5_attributes: the reads the checkpoint and model.init share. Each answer is checked against a
// file written here with every case the callers meet: nested paths with a missing group on the way,
// fixed-length strings (NUL-padded, as checkpoints write them), variable-length strings (as results
// files write them: refused), integer scalars, integer arrays and floats (refused).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "core/h5_handle.hpp"
#include "io/h5_attributes.hpp"
#include "support/test_support.hpp"

using namespace fedsilo;

namespace {

void fixedString(hid_t obj, const char* name, const std::string& value, std::size_t padTo) {
  h5::Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "type");
  h5::check(H5Tset_size(type, padTo), "size");
  h5::check(H5Tset_strpad(type, H5T_STR_NULLPAD), "pad");
  h5::Handle space(H5Screate(H5S_SCALAR), H5Sclose, "space");
  h5::Handle a(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, name);
  std::string padded = value;
  padded.resize(padTo, '\0');
  h5::check(H5Awrite(a, type, padded.data()), name);
}

void variableString(hid_t obj, const char* name, const char* value) {
  h5::Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "type");
  h5::check(H5Tset_size(type, H5T_VARIABLE), "size");
  h5::Handle space(H5Screate(H5S_SCALAR), H5Sclose, "space");
  h5::Handle a(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, name);
  h5::check(H5Awrite(a, type, &value), name);
}

template <typename T>
void numbers(hid_t obj, const char* name, hid_t fileType, hid_t memType, const T* values, hsize_t n) {
  h5::Handle space(n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose, "space");
  h5::Handle a(H5Acreate2(obj, name, fileType, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, name);
  h5::check(H5Awrite(a, memType, values), name);
}

class H5Attributes : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = test::tempDir("h5_attributes") + "/a.h5";
    file_ = h5::Handle(H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, "create");
    h5::Handle group(H5Gcreate2(file_, "/model", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose, "group");
    const hsize_t n = 3;
    h5::Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose, "space");
    h5::Handle d(H5Dcreate2(file_, "/model/global", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                 H5Dclose, "dataset");
    fixedString(file_, "format", "fedsilo-checkpoint-4", 32);
    fixedString(file_, "exact", "conv1 832", 9);
    variableString(file_, "variable", "fedsilo");
    const std::int64_t crc = 4023233417LL, pair[2] = {1, 2};
    const std::int32_t small = -7;
    const float real = 0.5f;
    numbers(d, "crc32c", H5T_STD_I64LE, H5T_NATIVE_INT64, &crc, 1);
    numbers(file_, "small", H5T_STD_I32LE, H5T_NATIVE_INT32, &small, 1);
    numbers(file_, "pair", H5T_STD_I64LE, H5T_NATIVE_INT64, pair, 2);
    numbers(file_, "real", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, &real, 1);
  }
  h5::QuietErrors quiet_;
  std::string path_;
  h5::Handle file_;
};

TEST_F(H5Attributes, PathExistsFollowsEveryPrefix) {
  EXPECT_TRUE(h5::pathExists(file_, "/model"));
  EXPECT_TRUE(h5::pathExists(file_, "/model/global"));
  EXPECT_TRUE(h5::pathExists(file_, "model/global"));
  EXPECT_FALSE(h5::pathExists(file_, "/model/layers"));
  EXPECT_FALSE(h5::pathExists(file_, "/model/layers/name"));  // the group on the way is missing
  EXPECT_FALSE(h5::pathExists(file_, "/replicated/driver/global"));
}

TEST_F(H5Attributes, FixedStringsLoseTheirPadding) {
  EXPECT_EQ(h5::fixedStringAttribute(file_, "format"), std::string("fedsilo-checkpoint-4"));
  EXPECT_EQ(h5::fixedStringAttribute(file_, "exact"), std::string("conv1 832"));
}

TEST_F(H5Attributes, StringReadRefusesWhatIsNotAFixedString) {
  EXPECT_FALSE(h5::fixedStringAttribute(file_, "missing").has_value());
  EXPECT_FALSE(h5::fixedStringAttribute(file_, "variable").has_value());
  EXPECT_FALSE(h5::fixedStringAttribute(file_, "small").has_value());
}

TEST_F(H5Attributes, IntegerScalarsOfAnyWidth) {
  h5::Handle d(H5Dopen2(file_, "/model/global", H5P_DEFAULT), H5Dclose, "open");
  EXPECT_EQ(h5::integerAttribute(d, "crc32c"), std::int64_t{4023233417LL});
  EXPECT_EQ(h5::integerAttribute(file_, "small"), std::int64_t{-7});
}

TEST_F(H5Attributes, IntegerReadRefusesArraysStringsAndReals) {
  EXPECT_FALSE(h5::integerAttribute(file_, "missing").has_value());
  EXPECT_FALSE(h5::integerAttribute(file_, "pair").has_value());
  EXPECT_FALSE(h5::integerAttribute(file_, "format").has_value());
  EXPECT_FALSE(h5::integerAttribute(file_, "real").has_value());
}

}  // namespace
