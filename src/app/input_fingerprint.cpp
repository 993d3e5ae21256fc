#include "app/input_fingerprint.hpp"

#include <string>

#include "io/checksum.hpp"

namespace fedsilo {

namespace {

// A vector with its length first, so that moving a value from one vector to the next changes the sum.
template <typename T>
std::uint32_t addVector(const std::vector<T>& v, std::uint32_t crc) {
  const std::uint64_t n = v.size();
  return crc32cOf(v, crc32c(&n, sizeof n, crc));
}

std::uint32_t addDataset(const Dataset& d, std::uint32_t crc) {
  const std::vector<std::int64_t> shape{d.shape.c, d.shape.h, d.shape.w};
  crc = addVector(shape, crc);
  crc = addVector(d.u8, crc);
  crc = addVector(d.f32, crc);
  return addVector(d.labels, crc);
}

}  // namespace

std::int64_t dataFingerprint(const DataBundle& data) {
  std::uint32_t crc = addDataset(data.train, 0);
  crc = addDataset(data.test, crc);
  crc = addVector(data.naturalClient, crc);
  crc = addVector(data.naturalClientTest, crc);
  for (const std::string& token : data.vocabulary) {
    const std::uint64_t n = token.size();
    crc = crc32c(token.data(), token.size(), crc32c(&n, sizeof n, crc));
  }
  return crc;
}

std::int64_t partitionFingerprint(const std::vector<ClientData>& clients) {
  std::uint32_t crc = 0;
  for (const ClientData& c : clients) {
    const std::int64_t head[2] = {c.id, c.testFromTestSet ? 1 : 0};
    crc = crc32c(head, sizeof head, crc);
    for (const IndexList* list : {&c.train, &c.val, &c.test}) crc = addVector(*list, crc);
  }
  return crc;
}

}  // namespace fedsilo
