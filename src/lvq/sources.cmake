list(APPEND SIMKIT_CPU_SOURCES
  lvq/dataset.cpp
  lvq/files.cpp
  lvq/init.cpp
  lvq/train.cpp
  lvq/cpu.cpp
  lvq/distributed.cpp
)
list(APPEND SIMKIT_CUDA_SOURCES lvq/cuda/train.cu)
set(SIMKIT_NO_CUDA_SOURCES ${SIMKIT_NO_CUDA_SOURCES} lvq/train_no_cuda.cpp)
