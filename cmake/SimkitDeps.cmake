# Third-party libraries: all Debian packages (scripts/setup.sh installs them).
find_package(Threads REQUIRED)
find_package(TBB REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(Eigen3 REQUIRED NO_MODULE)
find_package(PkgConfig REQUIRED)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
# ICU: Unicode word boundaries and case mapping for the tokenizer.
pkg_check_modules(ICU REQUIRED IMPORTED_TARGET icu-uc)
# zlib, libbz2, libzstd: compressed text inputs (.gz, .bz2, .zst).
find_package(ZLIB REQUIRED)
find_package(BZip2 REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
# expat: Wikipedia XML dumps read as streams.
find_package(EXPAT REQUIRED)
# CRoaring: the bitmap intersection algorithm of simkit postings.
find_package(roaring REQUIRED)

# OpenBLAS explicitly: Debian's default libblas3 is the slow reference BLAS.
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)

if(SIMKIT_TESTS)
  find_package(GTest REQUIRED)
endif()
if(SIMKIT_BENCH)
  find_package(benchmark REQUIRED)
endif()

# MPI (Debian's OpenMPI): several simkit processes as one run (include/simkit/cluster.hpp).
string(TOUPPER "${SIMKIT_MPI}" _simkit_mpi)
set(SIMKIT_WITH_MPI OFF)
if(NOT _simkit_mpi STREQUAL "OFF")
  find_package(MPI COMPONENTS C)
  if(MPI_C_FOUND)
    set(SIMKIT_WITH_MPI ON)
  elseif(_simkit_mpi STREQUAL "ON")
    message(FATAL_ERROR "SIMKIT_MPI=ON but no MPI was found (run scripts/setup.sh: openmpi-bin, libopenmpi-dev)")
  endif()
endif()

# NCCL (shipped with the CUDA toolkit): GPU collectives, bootstrapped through MPI.
set(SIMKIT_WITH_NCCL OFF)
if(SIMKIT_WITH_CUDA)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(SIMKIT_WITH_NCCL ON)
  endif()
endif()
