// Writers for small files in the real on-disk formats, shared by the data tests.
#pragma once
#include <gtest/gtest.h>
#include <hdf5.h>
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace fedsilo::test {

inline void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << path;
}

inline void writeGzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

// IDX bytes: magic 00 00 08 ndim, big-endian dims, payload.
inline std::string idxBytes(const std::vector<int>& dims, const std::vector<std::uint8_t>& payload) {
  std::string s{'\0', '\0', '\x08', static_cast<char>(dims.size())};
  for (int d : dims) {
    s += static_cast<char>((d >> 24) & 0xff);
    s += static_cast<char>((d >> 16) & 0xff);
    s += static_cast<char>((d >> 8) & 0xff);
    s += static_cast<char>(d & 0xff);
  }
  s.append(payload.begin(), payload.end());
  return s;
}

// .npy v1 bytes of a 1-D little-endian array with the given descr and raw element bytes.
inline std::string npyBytes(const std::string& descr, std::size_t n, const std::string& raw, int major = 1,
                            const std::string& shapeText = "") {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
                       (shapeText.empty() ? std::to_string(n) + "," : shapeText) + "), }";
  const std::size_t pre = major == 1 ? 10 : 12;
  while ((pre + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += '\0';
  const std::size_t len = header.size();
  s += static_cast<char>(len & 0xff);
  s += static_cast<char>((len >> 8) & 0xff);
  if (major == 2) {
    s += static_cast<char>((len >> 16) & 0xff);
    s += static_cast<char>((len >> 24) & 0xff);
  }
  return s + header + raw;
}

template <typename T>
std::string rawLe(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// Writes one dataset of the given shape into an open HDF5 file.
inline void h5Write(hid_t file, const char* name, hid_t memType, hid_t fileType, const std::vector<hsize_t>& dims,
                    const void* data) {
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t ds = H5Dcreate2(file, name, fileType, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(ds, 0);
  ASSERT_GE(H5Dwrite(ds, memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
  H5Dclose(ds);
  H5Sclose(space);
}

// Runs fn, expects a DataError whose message contains every one of `parts`.
inline void expectDataError(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "expected DataError";
  } catch (const DataError& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
  }
}

inline void expectConfigError(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "expected ConfigError";
  } catch (const ConfigError& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
  }
}

}  // namespace fedsilo::test
