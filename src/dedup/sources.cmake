list(APPEND SIMKIT_CPU_SOURCES
  dedup/ctph_hash.cpp
  dedup/ctph_compare.cpp
  dedup/files.cpp
  dedup/match.cpp
  dedup/match_shared.cpp
  dedup/hash_list.cpp
  dedup/inputs.cpp
  dedup/edit_rate.cpp
)
list(APPEND SIMKIT_CUDA_SOURCES
  dedup/cuda/match.cu
  dedup/cuda/match_index.cu
)
set(SIMKIT_NO_CUDA_SOURCES ${SIMKIT_NO_CUDA_SOURCES} dedup/match_no_cuda.cpp)
list(APPEND SIMKIT_CPU_SOURCES dedup/edit_distance_cpu.cpp)
list(APPEND SIMKIT_CUDA_SOURCES dedup/cuda/edit_pairs.cu dedup/cuda/verify_pairs.cu)
set(SIMKIT_NO_CUDA_SOURCES ${SIMKIT_NO_CUDA_SOURCES} dedup/edit_pairs_no_cuda.cpp)
