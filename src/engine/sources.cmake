# The pairwise engine: block plans, CPU and GPU drivers, top-k selection, the GEMM kernels
# with fused epilogues.
list(APPEND SIMKIT_CPU_SOURCES
  engine/pairwise_common.cpp
  engine/pairwise_cpu.cpp
  engine/topk.cpp
  engine/dense_topk.cpp
  engine/distributed.cpp)
list(APPEND SIMKIT_CUDA_SOURCES
  engine/cuda/pairwise.cu
  engine/cuda/select.cu
  engine/cuda/dot_candidates.cu
  engine/cuda/topk_host.cu
  engine/cuda/gemm.cu
  engine/cuda/gemm_fused.cu
  engine/cuda/cublas_product.cu
  engine/cuda/dense_topk.cu)
list(APPEND SIMKIT_NO_CUDA_SOURCES engine/gemm_no_cuda.cpp engine/dense_topk_no_cuda.cpp)
