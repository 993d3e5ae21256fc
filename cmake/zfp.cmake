# The ZFP library for the optional `zfp` update compressor (FEDSILO_ZFP=ON): zfp::zfp from ZFP's own
# CMake package (Debian's libzfp-dev ships it), else from pkg-config; neither is a configure error,
# since the option asked for the backend explicitly.
find_package(zfp 1.0 CONFIG QUIET)
if(NOT TARGET zfp::zfp)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(FEDSILO_ZFP_PC QUIET IMPORTED_TARGET zfp>=1.0)
  endif()
  if(TARGET PkgConfig::FEDSILO_ZFP_PC)
    add_library(zfp::zfp ALIAS PkgConfig::FEDSILO_ZFP_PC)
  else()
    message(FATAL_ERROR "FEDSILO_ZFP=ON but ZFP >= 1.0 was found neither as a CMake package nor through "
                        "pkg-config (Debian: apt-get install libzfp-dev)")
  endif()
endif()
message(STATUS "ZFP backend of the zfp compressor: on")
