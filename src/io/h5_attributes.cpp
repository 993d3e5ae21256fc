#include "io/h5_attributes.hpp"

#include <algorithm>

#include "core/h5_handle.hpp"

namespace fedsilo::h5 {

bool pathExists(hid_t file, const std::string& path) {
  for (std::size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
    const std::string prefix = at == std::string::npos ? path : path.substr(0, at);
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (at == std::string::npos) return true;
  }
}

std::optional<std::string> fixedStringAttribute(hid_t obj, const char* name) {
  if (H5Aexists(obj, name) <= 0) return std::nullopt;
  Handle a = Handle::adopt(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  if (!a.valid()) return std::nullopt;
  Handle type = Handle::adopt(H5Aget_type(a), H5Tclose);
  if (!type.valid() || H5Tget_class(type) != H5T_STRING || H5Tis_variable_str(type) != 0) return std::nullopt;
  std::string s(H5Tget_size(type), '\0');
  if (H5Aread(a, type, s.data()) < 0) return std::nullopt;
  s.erase(std::find(s.begin(), s.end(), '\0'), s.end());
  return s;
}

std::optional<std::int64_t> integerAttribute(hid_t obj, const char* name) {
  if (H5Aexists(obj, name) <= 0) return std::nullopt;
  Handle a = Handle::adopt(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  if (!a.valid()) return std::nullopt;
  Handle type = Handle::adopt(H5Aget_type(a), H5Tclose);
  Handle space = Handle::adopt(H5Aget_space(a), H5Sclose);
  if (!type.valid() || !space.valid() || H5Tget_class(type) != H5T_INTEGER ||
      H5Sget_simple_extent_npoints(space) != 1)
    return std::nullopt;
  std::int64_t v = 0;
  if (H5Aread(a, H5T_NATIVE_INT64, &v) < 0) return std::nullopt;
  return v;
}

}  // namespace fedsilo::h5
