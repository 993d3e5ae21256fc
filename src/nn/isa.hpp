// The kernel sets fedsilo compiles, ordered: a CPU that runs one runs every lower one (nn/kernels.hpp).
#pragma once

namespace fedsilo {

enum class Isa : int { Generic = 0, Avx2 = 1, Avx512 = 2 };

}  // namespace fedsilo
