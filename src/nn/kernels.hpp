// Run-time choice of the float kernel set (the hand-written products of Dense and Conv2D).
//
// Three sets are compiled into every build, each in its own translation unit with its own flags
// (cmake/kernels.cmake): avx512 (AVX-512F/BW/DQ/VL + FMA), avx2 (AVX2 + FMA) and generic (baseline
// x86-64, no vector extension assumed). At start-up the best set the CPU supports is chosen
// (cpuid, through __builtin_cpu_supports); the environment variable FEDSILO_ISA=avx512|avx2|generic
// asks for a lower one (tests, benchmarks, mixed clusters). The kernels fix the order of every sum
// and multiply-add with one rounding (std::fma in the generic set), so all three sets give the same
// bits; a run still uses one agreed set on every rank (the lowest common one, app/kernel_choice.*),
// so that this does not rest on one property of today's kernels.
//
// bf16 mixed precision (train.precision = bf16) needs AVX512-BF16 (vdpbf16ps) and the avx512 set:
// products in bf16 with fp32 accumulation, everything else (master weights, optimiser,
// aggregation) in fp32.
#pragma once
#include <optional>
#include <string>

#include "nn/isa.hpp"

namespace fedsilo {

const char* isaName(Isa isa);
std::optional<Isa> findIsa(const std::string& name);

// The best set this CPU runs.
Isa cpuIsa();
// Whether this CPU has the bf16 dot-product instructions the bf16 kernels use (AVX512-BF16).
bool cpuHasBf16();
// cpuIsa(), or the lower set named by FEDSILO_ISA; throws ConfigError (exit 2) for an unknown name
// or for a set this CPU cannot run.
Isa requestedIsa();

// The process's kernel set. Chosen once, before any model runs (the default before any call is
// requestedIsa()); not thread-safe by design (ranks are processes, one thread each).
void selectIsa(Isa isa);
Isa activeIsa();

// fp32, or bf16 products with fp32 accumulation. setBf16(true) throws ConfigError when the active
// set has no bf16 kernels (not avx512, or no AVX512-BF16 on this CPU).
void setBf16(bool on);
bool bf16Active();
// Whether the active set can run bf16 products on this CPU.
bool bf16Supported();

}  // namespace fedsilo
