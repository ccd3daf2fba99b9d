# Warnings, sanitizers and fuzzing flags, applied to simkit's own targets through
# the interface library simkit_flags (third-party headers are included as SYSTEM).
add_library(simkit_flags INTERFACE)
target_compile_options(simkit_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-missing-field-initializers>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wshadow=local>
  # clang under sanitizers may decline `omp simd` vectorisation; that is not a defect.
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:Clang>>:-Wshadow-uncaptured-local -Wno-pass-failed>
  # GCC 12 reports impossible overlaps inside std::string (GCC bug 105651).
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-restrict>)
# `#pragma omp simd` vectorises hot loops; no OpenMP runtime is involved.
target_compile_options(simkit_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fopenmp-simd>)
if(SIMKIT_WERROR)
  target_compile_options(simkit_flags INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>
                                                $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>)
endif()
if(SIMKIT_WITH_CUDA)
  target_compile_options(simkit_flags INTERFACE
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-Wall,-Wextra,-Wno-missing-field-initializers,-Wno-restrict -lineinfo>)
  # fmt's compile-time format checks do not survive nvcc: CUDA sources build their
  # messages with simkit::cat (core/text.hpp) instead of fmt.
endif()

if(SIMKIT_SANITIZE)
  if(SIMKIT_WITH_CUDA)
    message(FATAL_ERROR "SIMKIT_SANITIZE is for CPU-only builds: add -DSIMKIT_CUDA=OFF")
  endif()
  set(_san "-fsanitize=${SIMKIT_SANITIZE}" -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_compile_options(${_san})
  add_link_options(${_san})
endif()

if(SIMKIT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "SIMKIT_FUZZ needs clang (CXX=clang++)")
  endif()
  if(SIMKIT_WITH_CUDA)
    message(FATAL_ERROR "SIMKIT_FUZZ is for CPU-only builds: add -DSIMKIT_CUDA=OFF")
  endif()
  # Everything is built with coverage instrumentation and ASan/UBSan; fuzz targets add the driver.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  # The standard libFuzzer switch: parsers skip checks a fuzzer cannot pass (checksums).
  add_compile_definitions(FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION)
  add_link_options(-fsanitize=address,undefined)
endif()
