# Which BLAS fedsilo links (FEDSILO_BLAS), found through CMake's FindBLAS, and what it offers.
#   openblas  OpenBLAS (the default; Debian's libopenblas-dev)
#   blis      BLIS (FindBLAS's vendor FLAME; Debian's libblis-dev)
#   generic   whatever libblas is (Debian: the libblas.so.3 alternative; the reference BLAS of
#             libblas-dev when that is selected)
# -DBLAS_LIBRARIES=/path/libX.so overrides the search with exactly that library (Spack passes its
# provider this way). Another BLAS wants a fresh build directory: FindBLAS caches what it found.
# With the default FEDSILO_GEMM=eigen the training kernels do not call BLAS at all; FEDSILO_GEMM=openblas
# routes Eigen's products through whichever BLAS this is.
set(FEDSILO_BLAS "openblas" CACHE STRING "BLAS library: openblas, blis or generic")
set_property(CACHE FEDSILO_BLAS PROPERTY STRINGS openblas blis generic)
if(FEDSILO_BLAS STREQUAL "openblas")
  set(BLA_VENDOR OpenBLAS)
elseif(FEDSILO_BLAS STREQUAL "blis")
  set(BLA_VENDOR FLAME)
elseif(FEDSILO_BLAS STREQUAL "generic")
  set(BLA_VENDOR Generic)
else()
  message(FATAL_ERROR "FEDSILO_BLAS='${FEDSILO_BLAS}': expected openblas, blis or generic")
endif()
find_package(BLAS REQUIRED)

# OpenBLAS's own calls (openblas_set_num_threads: one BLAS thread per rank) are made only when the BLAS
# found exports them: a link check against it, redone whenever the libraries change.
include(CheckFunctionExists)
if(NOT "${BLAS_LIBRARIES}" STREQUAL "${FEDSILO_BLAS_CHECKED}")
  unset(FEDSILO_HAVE_OPENBLAS_THREADS CACHE)
endif()
set(CMAKE_REQUIRED_LIBRARIES ${BLAS_LIBRARIES})
set(CMAKE_REQUIRED_QUIET ON)
check_function_exists(openblas_set_num_threads FEDSILO_HAVE_OPENBLAS_THREADS)
unset(CMAKE_REQUIRED_LIBRARIES)
unset(CMAKE_REQUIRED_QUIET)
set(FEDSILO_BLAS_CHECKED "${BLAS_LIBRARIES}" CACHE INTERNAL "the BLAS libraries FEDSILO_HAVE_OPENBLAS_THREADS was checked for")
if(FEDSILO_HAVE_OPENBLAS_THREADS)
  set(FEDSILO_BLAS_IS_OPENBLAS ON)
else()
  set(FEDSILO_BLAS_IS_OPENBLAS OFF)
endif()
message(STATUS "fedsilo BLAS (FEDSILO_BLAS=${FEDSILO_BLAS}): ${BLAS_LIBRARIES}; OpenBLAS thread control: ${FEDSILO_BLAS_IS_OPENBLAS}")

# fedsilo_blas_definitions(TARGET): FEDSILO_OPENBLAS_THREADS on TARGET's own sources when the BLAS has
# openblas_set_num_threads.
function(fedsilo_blas_definitions target)
  if(FEDSILO_BLAS_IS_OPENBLAS)
    target_compile_definitions(${target} PRIVATE FEDSILO_OPENBLAS_THREADS)
  endif()
endfunction()
