# Word vectors: PPMI (disco's counting) and a randomized truncated SVD, CPU and GPU.
list(APPEND SIMKIT_CPU_SOURCES
  embed/svd.cpp
  embed/svd_cpu.cpp
  embed/vectors.cpp
)
list(APPEND SIMKIT_CUDA_SOURCES embed/cuda/svd.cu)
set(SIMKIT_NO_CUDA_SOURCES ${SIMKIT_NO_CUDA_SOURCES} embed/svd_no_cuda.cpp)
