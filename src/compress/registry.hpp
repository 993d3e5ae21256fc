// The compressors by name: one table (registry.cpp) maps each fl.compress value to its codec.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compress/compress_config.hpp"
#include "compress/compressor.hpp"

namespace fedsilo {

struct CompressorEntry {
  CompressMethod method;
  const char* name;     // the fl.compress value
  const char* summary;  // one line for --help and the docs
  std::unique_ptr<Compressor> (*make)(const CompressConfig&);
};

const std::vector<CompressorEntry>& compressorTable();

// The fl.compress value of a method and back; an unknown name is a ConfigError naming fl.compress.
const char* compressMethodName(CompressMethod m);
CompressMethod parseCompressMethod(const std::string& name);

// The codec the (validated) configuration names; zfp in a build without ZFP is a ConfigError.
std::unique_ptr<Compressor> makeCompressor(const CompressConfig& config);

}  // namespace fedsilo
