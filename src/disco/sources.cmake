list(APPEND SIMKIT_CPU_SOURCES
  disco/stopwords.cpp
  disco/build.cpp
  disco/key_counts.cpp
  disco/similarity.cpp
  disco/model_io.cpp
  disco/all_pairs.cpp
)
list(APPEND SIMKIT_CUDA_SOURCES disco/cuda/all_pairs.cu disco/cuda/sparse_pairs.cu disco/cuda/feature_lists.cu disco/cuda/pair_counts.cu)
set(SIMKIT_NO_CUDA_SOURCES ${SIMKIT_NO_CUDA_SOURCES} disco/all_pairs_no_cuda.cpp)
