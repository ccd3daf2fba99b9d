// Ceilings of the GPU measured in the same run as a benchmark (GPU.md: every speed
// figure is a ratio against a baseline measured alongside it).
#pragma once

namespace simkit::bench {

struct GpuCeilings {
  double copy_tb_s = 0;        // device-to-device copy, bytes read + written
  double fp32_tflop_s = 0;     // 8192^3 cuBLAS SGEMM
  double tf32_tflop_s = 0;     // the same on tensor cores (TF32)
  double bf16_tflop_s = 0;     // bf16 inputs, fp32 accumulation
  double fp16_tflop_s = 0;
};

// Measures the ceilings on CUDA device `device` (a few seconds). Zeros without CUDA.
GpuCeilings measure_gpu_ceilings(int device);

}  // namespace simkit::bench
