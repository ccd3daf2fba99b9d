list(APPEND SIMKIT_CPU_SOURCES
  postings/index_io.cpp
  postings/queries.cpp
  postings/build.cpp
  postings/bitmaps.cpp
  postings/gpu_tables.cpp
  postings/algorithms.cpp
  postings/intersect_cpu.cpp
  postings/distributed.cpp
)
list(APPEND SIMKIT_CUDA_SOURCES postings/cuda/intersect.cu)
set(SIMKIT_NO_CUDA_SOURCES ${SIMKIT_NO_CUDA_SOURCES} postings/intersect_no_cuda.cpp)
