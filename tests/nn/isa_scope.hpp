// Test helpers for the run-time kernel sets (nn/kernels.hpp): every set this CPU runs, and a scope
// that makes one of them the active set and restores the previous one.
#pragma once
#include <vector>

#include "nn/kernels.hpp"

namespace fedsilo::test {

inline std::vector<Isa> runnableIsas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::Avx512, Isa::Avx2, Isa::Generic})
    if (static_cast<int>(isa) <= static_cast<int>(cpuIsa())) out.push_back(isa);
  return out;
}

class IsaScope {
 public:
  explicit IsaScope(Isa isa) : saved_(activeIsa()) { selectIsa(isa); }
  ~IsaScope() { selectIsa(saved_); }
  IsaScope(const IsaScope&) = delete;
  IsaScope& operator=(const IsaScope&) = delete;

 private:
  Isa saved_;
};

}  // namespace fedsilo::test
