# hdf5::hdf5 for the CMake versions whose FindHDF5 does not create it yet (before 3.19): the C
# include directories, definition flags and libraries FindHDF5 reported. Included after find_package(HDF5)
# by the build and by the installed fedsiloConfig.cmake.
if(NOT TARGET hdf5::hdf5)
  add_library(hdf5::hdf5 INTERFACE IMPORTED)
  set_target_properties(hdf5::hdf5 PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${HDF5_C_INCLUDE_DIRS}"
    INTERFACE_COMPILE_OPTIONS "${HDF5_C_DEFINITIONS}"
    INTERFACE_LINK_LIBRARIES "${HDF5_C_LIBRARIES}")
endif()
