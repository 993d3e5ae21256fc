// Reads that the checkpoint and the model reader (model.init) share: whether a path exists in a file,
// and scalar attributes read without throwing, so that each caller words its own error (a checkpoint
// that lacks an attribute is damaged; a results file passed to model.init is the user's mistake).
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <string>

namespace fedsilo::h5 {

// Whether `path` (absolute, e.g. "/model/layers/name") names a link in `file`. H5Lexists fails,
// rather than saying no, when an intermediate group is missing, so every prefix is tested.
bool pathExists(hid_t file, const std::string& path);

// The fixed-length string attribute `name` of `obj` (as checkpoints write them, NUL-padded), or
// nothing when there is none or it is not a fixed-length string.
std::optional<std::string> fixedStringAttribute(hid_t obj, const char* name);

// The integer scalar attribute `name` of `obj`, or nothing when there is none or it is not one.
std::optional<std::int64_t> integerAttribute(hid_t obj, const char* name);

}  // namespace fedsilo::h5
