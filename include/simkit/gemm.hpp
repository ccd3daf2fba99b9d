// simkit's own tiled matrix product on the GPU (seed 002, part A) and the seed's study of
// it: each thread computes a TM x TN block of C held in registers, a block of 16 x 16
// threads a (16 TM) x (16 TN) tile, the operands staged through shared memory BK columns
// of A (rows of B) at a time, double-buffered. The same kernel takes an epilogue (what is
// done with each finished C entry); the plain store makes it a GEMM.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace simkit::gemm {

// A register tile and shared-memory depth.
struct Tile {
  int tm = 8, tn = 8;  // C entries a thread computes: tm rows x tn columns
  int bk = 8;          // the K depth staged in shared memory at a time
  std::string name() const {  // "8x8/8"
    return std::to_string(tm) + "x" + std::to_string(tn) + "/" + std::to_string(bk);
  }
};

// The tiles this build has kernels for (the study's grid).
const std::vector<Tile>& tiles();

// C (m x n) = A (m x k) . B (k x n), fp32, row-major, on CUDA device `device` with the
// given tile (one of tiles()); pointers on the device, no stream ordering beyond the
// default stream. Throws UsageError for a tile the build lacks, Failure on CUDA errors.
void multiply(const Tile& tile, std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b,
              float* c);

// The tensor-core product (Hopper, compute capability 9.0): C (m x n) = A (m x k) . B^T
// with B given as n x k rows (both operands row-major along K), in TF32 (each operand's
// top 10 fraction bits; fp32 sums), on warpgroup MMA. A tile is the C block of one thread
// block (128 x bn), the stages of K its shared-memory ring holds, and the row tiles a
// raster group spans (blocks go down `group` row tiles, then to the next column tile).
struct TensorTile {
  int bm = 128, bn = 256;
  int stages = 4;
  int group = 8;
  std::string name() const {  // "wgmma tf32 128x256/4 g8"
    return "wgmma tf32 " + std::to_string(bm) + "x" + std::to_string(bn) + "/" + std::to_string(stages) + " g" +
           std::to_string(group);
  }
};
// The tiles this build and device have (empty without a Hopper GPU or an sm_90a build).
const std::vector<TensorTile>& tensor_tiles();
// Needs k a multiple of 4 and 16-byte aligned A and B (throws UsageError otherwise, or
// when tensor_tiles() is empty).
void multiply_tf32(const TensorTile& tile, std::size_t m, std::size_t n, std::size_t k, const float* a,
                   const float* b, float* c);

// The seed's study: every tile at each size (square products), beside cuBLAS fp32 and
// TF32 in the same run, timed with device events (median of `reps` after a warm-up), each
// tile's product checked against cuBLAS fp32 (max relative error over the entries). Then,
// on Hopper, C = A . B^T: cuBLAS TF32 and fp32 on that layout and each tensor tile (sizes
// that are multiples of 4).
struct StudyOptions {
  std::vector<std::size_t> sizes{512, 8192};
  int reps = 5;
  int device = 0;
};
struct Timing {
  std::string name;           // a tile's name, or "cuBLAS fp32", "cuBLAS tf32", "cuBLAS tf32 A.B^T"
  std::size_t size = 0;       // m = n = k
  double ms = 0, tflops = 0;  // median time, rate
  double max_relative_error = 0;  // against cuBLAS fp32 on the same layout (tiles only)
};
std::vector<Timing> study(const StudyOptions& options);

}  // namespace simkit::gemm
