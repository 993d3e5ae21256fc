#include "nn/kernels.hpp"

#include <cstdlib>

#include "core/error.hpp"
#include "nn/kernel_table.hpp"

namespace fedsilo {

namespace {

const kernels::KernelTable* gActive = nullptr;

const kernels::KernelTable& tableFor(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return kernels::avx512Kernels();
    case Isa::Avx2: return kernels::avx2Kernels();
    case Isa::Generic: break;
  }
  return kernels::genericKernels();
}

}  // namespace

const char* isaName(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return "avx512";
    case Isa::Avx2: return "avx2";
    case Isa::Generic: break;
  }
  return "generic";
}

std::optional<Isa> findIsa(const std::string& name) {
  for (Isa isa : {Isa::Avx512, Isa::Avx2, Isa::Generic})
    if (name == isaName(isa)) return isa;
  return std::nullopt;
}

Isa cpuIsa() {
  __builtin_cpu_init();
  // The avx512 set also uses BW/DQ/VL encodings (masked moves, 128/256-bit forms of AVX-512 instructions).
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma"))
    return Isa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
  return Isa::Generic;
}

Isa requestedIsa() {
  const Isa best = cpuIsa();
  const char* env = std::getenv("FEDSILO_ISA");
  if (env == nullptr || *env == '\0') return best;
  const std::optional<Isa> asked = findIsa(env);
  if (!asked) throw ConfigError(fmt("FEDSILO_ISA = ", env, ": expected avx512, avx2 or generic"));
  if (static_cast<int>(*asked) > static_cast<int>(best))
    throw ConfigError(fmt("FEDSILO_ISA = ", env, ": this CPU runs at most the ", isaName(best), " kernels"));
  return *asked;
}

void selectIsa(Isa isa) { gActive = &tableFor(isa); }

Isa activeIsa() { return kernels::active().isa; }

namespace kernels {

const KernelTable& active() {
  if (gActive == nullptr) gActive = &tableFor(requestedIsa());
  return *gActive;
}

}  // namespace kernels

}  // namespace fedsilo
