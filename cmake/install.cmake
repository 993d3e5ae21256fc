# cmake --install BUILD --prefix P lays out (docs/extending.md):
#   bin/fedsilo, bin/fedsilo-analysis       the executable; the analysis wrapper (runs Debian's python3 on
#                                           share/fedsilo/python, found relative to itself)
#   lib/libfedsilo_<module>.a               one static library per module
#   include/fedsilo/<module>/...            the public headers: what an out-of-tree algorithm includes
#   lib/cmake/fedsilo/                      the CMake package: fedsiloConfig.cmake, fedsiloConfigVersion.cmake,
#                                           fedsiloTargets*.cmake (fedsilo::core ... fedsilo::app, fedsilo::fedsilo)
#   share/man/man1/fedsilo.1                the man page generated from --help
#   share/fedsilo/python/analysis           the analysis package, without its tests
#   share/fedsilo/examples/custom_algorithm an out-of-tree algorithm built against this installation
#   share/fedsilo/data/heart_disease        the UCI heart-disease files (dataset = heart finds them here)
include(CMakePackageConfigHelpers)
set(FEDSILO_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/fedsilo)
set(FEDSILO_INCLUDE_DIR ${CMAKE_INSTALL_INCLUDEDIR}/fedsilo)

install(TARGETS fedsilo RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/fedsilo-analysis DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/analysis DESTINATION share/fedsilo/python
        PATTERN tests EXCLUDE PATTERN __pycache__ EXCLUDE PATTERN "*.pyc" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION share/fedsilo/examples
        PATTERN build EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/data/heart_disease DESTINATION share/fedsilo/data)

# Public headers, under include/fedsilo so that the include lines stay `#include "fl/algorithm.hpp"`
# (fedsilo::options adds include/fedsilo to its users' include path). Public: what an algorithm of its
# own needs (core, nn, optim, data, fl with the built-in algorithms to derive from, privacy, which fl's
# headers use for differentially private training, robust, compress and sim, which fl/robust_round.hpp, fl/compressed_upload.hpp and fl/sim_round.hpp use), comm's interface without MPI (the communicator and
# the placement; mpi.h stays inside the library), and the entry point. Not public: io, the rest of app,
# and the headers that pull in HDF5 (core/h5_handle.hpp) or define the allocator (core/malloc_counter.hpp,
# for tests and benchmarks only).
foreach(module core nn optim data fl privacy robust compress sim)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/${module} DESTINATION ${FEDSILO_INCLUDE_DIR}
          FILES_MATCHING PATTERN "*.hpp" PATTERN h5_handle.hpp EXCLUDE PATTERN malloc_counter.hpp EXCLUDE)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/src/comm/communicator.hpp ${PROJECT_SOURCE_DIR}/src/comm/placement.hpp
        DESTINATION ${FEDSILO_INCLUDE_DIR}/comm)
install(FILES ${PROJECT_SOURCE_DIR}/src/app/run_main.hpp DESTINATION ${FEDSILO_INCLUDE_DIR}/app)

# The libraries and the CMake package. fedsiloConfig.cmake finds the same dependencies again (the
# libraries are static, so their users link MPI, HDF5, BLAS, Boost and zlib themselves).
install(TARGETS fedsilo_options fedsilo_all ${FEDSILO_MODULE_TARGETS} EXPORT fedsiloTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT fedsiloTargets NAMESPACE fedsilo:: DESTINATION ${FEDSILO_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/fedsiloConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/fedsiloConfig.cmake INSTALL_DESTINATION ${FEDSILO_CMAKE_DIR})
# 0.x: a minor release may change the interfaces.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/fedsiloConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/fedsiloConfig.cmake ${PROJECT_BINARY_DIR}/fedsiloConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/hdf5_target.cmake
        DESTINATION ${FEDSILO_CMAKE_DIR})

if(FEDSILO_MAN_PAGE)
  # A build of the executable alone (FEDSILO_BUILD_TARGETS=fedsilo) has no page yet: make it now.
  install(CODE "if(NOT EXISTS \"${FEDSILO_MAN_PAGE}\")
                  execute_process(COMMAND bash \"${PROJECT_SOURCE_DIR}/tools/gen_man_page.sh\"
                                          \"$<TARGET_FILE:fedsilo>\" \"${FEDSILO_MAN_PAGE}\" RESULT_VARIABLE _rc)
                  if(NOT _rc EQUAL 0)
                    message(FATAL_ERROR \"tools/gen_man_page.sh failed (\${_rc})\")
                  endif()
                endif()")
  install(FILES ${FEDSILO_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
