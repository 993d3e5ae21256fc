#include "nn/bf16.hpp"

#include "core/error.hpp"
#include "nn/kernels.hpp"

namespace fedsilo {

namespace {
bool gBf16 = false;
}

std::string bf16Missing() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512bf16")) return "this CPU lacks AVX512-BF16 (cpuid flag avx512_bf16)";
  if (activeIsa() != Isa::Avx512)
    return fmt("the kernel set is ", isaName(activeIsa()), " (FEDSILO_ISA or another rank's CPU), bf16 needs avx512");
  return "";
}

void selectBf16(bool on) {
  if (on) {
    const std::string missing = bf16Missing();
    if (!missing.empty()) throw ConfigError(fmt("train.precision = bf16: ", missing));
  }
  gBf16 = on;
}

bool bf16Active() { return gBf16; }

}  // namespace fedsilo
