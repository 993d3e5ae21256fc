#include "nn/elementwise.hpp"

#include <algorithm>
#include <cmath>

namespace fedsilo {

namespace {

// out[i] = f(in[i]) for i in [0, n), f a function of one Eigen packet: whole packets from the start,
// then the remainder copied into one packet padded with zeros, so that every element goes through the
// same instructions.
template <typename T, typename PacketFn>
void applyPacketwise(const T* in, T* out, Eigen::Index n, PacketFn f) {
  using Packet = typename Eigen::internal::packet_traits<T>::type;
  constexpr Eigen::Index kWidth = Eigen::internal::packet_traits<T>::size;
  Eigen::Index i = 0;
  for (; i + kWidth <= n; i += kWidth) Eigen::internal::pstoreu(out + i, f(Eigen::internal::ploadu<Packet>(in + i)));
  if (i == n) return;
  T tail[kWidth] = {};
  std::copy(in + i, in + n, tail);
  Eigen::internal::pstoreu(tail, f(Eigen::internal::ploadu<Packet>(tail)));
  std::copy(tail, tail + (n - i), out + i);
}

}  // namespace

template <typename T>
void logisticOf(const T* in, T* out, Eigen::Index n) {
  applyPacketwise(in, out, n, [](const auto& x) { return Eigen::internal::scalar_logistic_op<T>().packetOp(x); });
}

template <typename T>
void tanhOf(const T* in, T* out, Eigen::Index n) {
  if constexpr (Eigen::internal::packet_traits<T>::HasTanh) {
    applyPacketwise(in, out, n, [](const auto& x) { return Eigen::internal::ptanh(x); });
  } else {
    for (Eigen::Index i = 0; i < n; ++i) out[i] = std::tanh(in[i]);
  }
}

template void logisticOf<float>(const float*, float*, Eigen::Index);
template void logisticOf<double>(const double*, double*, Eigen::Index);
template void tanhOf<float>(const float*, float*, Eigen::Index);
template void tanhOf<double>(const double*, double*, Eigen::Index);

}  // namespace fedsilo
