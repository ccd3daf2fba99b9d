list(APPEND SIMKIT_CPU_SOURCES
  neighbors/format_npy.cpp
  neighbors/format_skv.cpp
  neighbors/format_text.cpp
  neighbors/format_word2vec_binary.cpp
  neighbors/evaluate.cpp
  neighbors/model.cpp
  neighbors/query.cpp
  neighbors/search.cpp
  neighbors/search_cpu.cpp
)
list(APPEND SIMKIT_CUDA_SOURCES
  neighbors/search_cuda.cu
)
set(SIMKIT_NO_CUDA_SOURCES ${SIMKIT_NO_CUDA_SOURCES} neighbors/search_no_cuda.cpp)
