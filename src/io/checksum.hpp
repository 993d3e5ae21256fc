// CRC-32C (Castagnoli polynomial 0x1EDC6F41, reflected; the checksum of iSCSI, ext4 metadata and
// Btrfs) over byte ranges, for the integrity checks of checkpoints and of the partial results file
// (docs/hpc.md, "Integrity checks"). Uses the SSE4.2 crc32 instruction when the CPU has it (about 20x
// faster than the table), the same values either way.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fedsilo {

// Continues a CRC-32C: crc32c(b, crc32c(a)) == crc32c(a followed by b). Start with 0.
std::uint32_t crc32c(const void* data, std::size_t bytes, std::uint32_t crc = 0);
// The portable table-driven version (tests compare the two).
std::uint32_t crc32cPortable(const void* data, std::size_t bytes, std::uint32_t crc = 0);

// Of a vector's element bytes as they are in memory (little-endian on every platform fedsilo builds
// for; checkpoints store the same little-endian bytes).
template <typename T>
std::uint32_t crc32cOf(const std::vector<T>& v, std::uint32_t crc = 0) {
  return crc32c(v.data(), v.size() * sizeof(T), crc);
}

// CRC-32C of a whole file's bytes, read in 1 MiB blocks. Returns false (with the system's reason in
// `error`) when the file cannot be read.
bool crc32cOfFile(const std::string& path, std::uint32_t& crc, std::string& error);

}  // namespace fedsilo
