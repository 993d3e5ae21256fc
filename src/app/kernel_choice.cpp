#include "app/kernel_choice.hpp"

#include "nn/bf16.hpp"
#include "nn/kernels.hpp"

namespace fedsilo {

Isa agreeKernelSet(const Communicator& comm) {
  Isa mine = Isa::Generic;
  coordinated(comm, [&] { mine = requestedIsa(); });
  const Isa agreed = static_cast<Isa>(comm.allreduceMin<int>(static_cast<int>(mine)));
  selectIsa(agreed);
  return agreed;
}

void agreePrecision(const Communicator& comm, Precision precision) {
  coordinated(comm, [&] { selectBf16(precision == Precision::Bf16); });
}

}  // namespace fedsilo
