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
#pragma once
#include <optional>
#include <string>

#include "nn/isa.hpp"

namespace fedsilo {

const char* isaName(Isa isa);
std::optional<Isa> findIsa(const std::string& name);

// The best set this CPU runs.
Isa cpuIsa();
// cpuIsa(), or the lower set named by FEDSILO_ISA; throws ConfigError (exit 2) for an unknown name
// or for a set this CPU cannot run.
Isa requestedIsa();

// The process's kernel set. Chosen once, before any model runs (the default before any call is
// requestedIsa()); not thread-safe by design (ranks are processes, one thread each).
void selectIsa(Isa isa);
Isa activeIsa();

}  // namespace fedsilo
