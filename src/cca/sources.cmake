list(APPEND SIMKIT_CPU_SOURCES
  cca/tuples.cpp
  cca/tracker.cpp
  cca/cpu.cpp
  cca/distributed.cpp
)
list(APPEND SIMKIT_CUDA_SOURCES cca/cuda/backend.cu cca/cuda/steps.cu)
set(SIMKIT_NO_CUDA_SOURCES ${SIMKIT_NO_CUDA_SOURCES} cca/backend_no_cuda.cpp)
