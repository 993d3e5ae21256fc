#include "fl/state_packer.hpp"

#include "core/error.hpp"

namespace fedsilo {

void StatePacker::doubles(const std::vector<double>& v) {
  out_.push_back(static_cast<double>(v.size()));
  out_.insert(out_.end(), v.begin(), v.end());
}

void StatePacker::floats(const std::vector<float>& v) {
  out_.push_back(static_cast<double>(v.size()));
  out_.insert(out_.end(), v.begin(), v.end());
}

void StatePacker::ints(const std::vector<int>& v) {
  out_.push_back(static_cast<double>(v.size()));
  out_.insert(out_.end(), v.begin(), v.end());
}

double StateReader::scalar() {
  FEDSILO_ASSERT(pos_ < s_.size(), "server state too short");
  return s_[pos_++];
}

std::vector<double> StateReader::doubles() {
  const auto n = static_cast<std::size_t>(scalar());
  FEDSILO_ASSERT(pos_ + n <= s_.size(), "server state too short");
  std::vector<double> v(s_.begin() + static_cast<std::ptrdiff_t>(pos_),
                        s_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
  pos_ += n;
  return v;
}

std::vector<float> StateReader::floats() {
  const std::vector<double> d = doubles();
  return std::vector<float>(d.begin(), d.end());
}

std::vector<int> StateReader::ints() {
  const std::vector<double> d = doubles();
  std::vector<int> v(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) v[i] = static_cast<int>(d[i]);
  return v;
}

std::vector<double> flattenRows(const std::vector<std::vector<double>>& rows) {
  std::vector<double> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return flat;
}

std::vector<std::vector<double>> splitRows(const std::vector<double>& flat, std::size_t width) {
  std::vector<std::vector<double>> rows;
  for (std::size_t i = 0; width > 0 && i + width <= flat.size(); i += width)
    rows.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(i),
                      flat.begin() + static_cast<std::ptrdiff_t>(i + width));
  return rows;
}

}  // namespace fedsilo
