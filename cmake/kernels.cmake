# The hand-written kernels (src/nn/kernels_*.cpp): one translation unit per instruction set, each
# compiled with its own flags after the build's own (the last -march wins, so a native build's
# -march=native does not leak into them), chosen at run time from the CPU (src/nn/kernels.cpp).
# -ffp-contract=off: the kernels spell out every fused multiply-add; the compiler may not add any, so
# that every set computes the same chains (and the same bits).
set(_fedsilo_kernel_tune -mtune=generic)
if(FEDSILO_NATIVE)
  set(_fedsilo_kernel_tune -mtune=native)
endif()
# GCC 12's avx512fintrin.h initialises its "undefined" vectors from themselves, which -Wall reports as
# (maybe-)uninitialised wherever a shuffle is inlined (GCC bug 105593, fixed in GCC 13; a pragma in the
# header does not reach the inlined copies): silenced for the AVX-512 file only.
set(_fedsilo_avx512_nowarn "")
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  set(_fedsilo_avx512_nowarn "-Wno-uninitialized;-Wno-maybe-uninitialized")
endif()
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/nn/kernels_avx512.cpp PROPERTIES COMPILE_OPTIONS
  "-march=x86-64;-mavx2;-mfma;-mavx512f;-mavx512bw;-mavx512dq;-mavx512vl;${_fedsilo_kernel_tune};-ffp-contract=off;${_fedsilo_avx512_nowarn}")
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/nn/kernels_avx2.cpp PROPERTIES COMPILE_OPTIONS
  "-march=x86-64;-mavx2;-mfma;${_fedsilo_kernel_tune};-ffp-contract=off")
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/nn/kernels_generic.cpp PROPERTIES COMPILE_OPTIONS
  "-march=x86-64;-mtune=generic;-ffp-contract=off")

# Portable build (FEDSILO_NATIVE=OFF): everything but the kernels targets x86-64-v2 (SSE4.2, POPCNT:
# every x86-64 server CPU since 2009), so the binary runs on any cluster node; the kernels still run
# the best set the node has.
# Why FEDSILO_NATIVE stays ON by default (measured, docs/performance.md "Kernel sets chosen at run
# time"): the portable build trained W1 at 1.02x and W2 at 0.90x the native build's samples/s, back
# to back on an AVX-512 machine. It is good enough for a cluster whose nodes differ (build it there),
# but not faster anywhere, what it loses on W2 lies outside the kernels (pooling, the padded-input copy,
# Eigen's loss and the exact aggregation, compiled for SSE4.2), and switching the default would change
# the bits of every result against earlier runs (Eigen's reductions follow the build's vector width).
if(NOT FEDSILO_NATIVE)
  target_compile_options(fedsilo_options INTERFACE -march=x86-64-v2)
endif()

# The bf16 kernels (src/nn/kernels_bf16.cpp: convolutions, src/nn/kernels_bf16_dense.cpp: dense layers):
# AVX512-BF16's dot products, called only on a CPU that has them (train.precision = bf16, src/nn/bf16.cpp
# checks cpuid).
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/nn/kernels_bf16.cpp
  ${PROJECT_SOURCE_DIR}/src/nn/kernels_bf16_dense.cpp PROPERTIES COMPILE_OPTIONS
  "-march=x86-64;-mavx2;-mfma;-mavx512f;-mavx512bw;-mavx512dq;-mavx512vl;-mavx512bf16;${_fedsilo_kernel_tune};-ffp-contract=off;${_fedsilo_avx512_nowarn}")

# The single-precision normal sampler of DP-SGD (src/privacy/normal_f32_*.cpp): one translation unit per
# instruction set like the kernels, chosen at run time (src/privacy/gaussian_f32.cpp). -ffp-contract=off
# keeps every set's bits the same; -fno-math-errno lets sqrt vectorise (its argument is never negative).
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/privacy/normal_f32_avx512.cpp PROPERTIES COMPILE_OPTIONS
  "-march=x86-64;-mavx2;-mfma;-mavx512f;-mavx512bw;-mavx512dq;-mavx512vl;${_fedsilo_kernel_tune};-ffp-contract=off;-fno-math-errno;${_fedsilo_avx512_nowarn}")
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/privacy/normal_f32_avx2.cpp PROPERTIES COMPILE_OPTIONS
  "-march=x86-64;-mavx2;-mfma;${_fedsilo_kernel_tune};-ffp-contract=off;-fno-math-errno")
set_source_files_properties(${PROJECT_SOURCE_DIR}/src/privacy/normal_f32_generic.cpp PROPERTIES COMPILE_OPTIONS
  "-march=x86-64;-mtune=generic;-ffp-contract=off;-fno-math-errno")
