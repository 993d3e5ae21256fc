// The float kernel set of a run (nn/kernels.hpp), agreed by every rank at start-up.
#pragma once
#include "comm/communicator.hpp"
#include "core/config.hpp"
#include "nn/isa.hpp"

namespace fedsilo {

// Every rank asks for its own set (its CPU's best, or FEDSILO_ISA's) and all of them select the
// lowest of those, so that a run on nodes of mixed CPUs computes with one set everywhere (the sets
// are meant to give the same bits, but results must not rest on that). A bad FEDSILO_ISA on any rank
// fails the run on every rank (ConfigError, exit 2). Collective: every rank calls it once.
Isa agreeKernelSet(const Communicator& comm);

// train.precision (nn/bf16.hpp), after agreeKernelSet: bf16 needs AVX512-BF16 and the avx512 set on
// every rank; a rank without them fails the run on every rank (ConfigError, exit 2, one line naming
// train.precision = bf16 and what is missing). Collective: every rank calls it once.
void agreePrecision(const Communicator& comm, Precision precision);

}  // namespace fedsilo
