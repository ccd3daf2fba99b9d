// simkit's own tiled matrix product on the GPU (seed 002, part A) and the seed's study of
// it: each thread computes a TM x TN block of C held in registers, a block of 16 x 16
// threads a (16 TM) x (16 TN) tile, the operands staged through shared memory BK columns
// of A (rows of B) at a time, double-buffered. The same kernel takes an epilogue (what is
// done with each finished C entry); the plain store makes it a GEMM.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "simkit/pairwise.hpp"

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
  // How the slices reach shared memory: 0, cp.async from every thread; 1, TMA (the tensor
  // memory accelerator) issued by one thread; 2, TMA in clusters of two blocks (two row
  // tiles) that multicast each slice of B to both, halving B's reads from L2.
  int tma = 0;
  bool fp16 = false;  // fp16 operands (multiply_fp16), else TF32 (multiply_tf32)
  std::string name() const {  // "wgmma tf32 128x256/4 g8", "... tma", "... tma x2", "wgmma fp16 ..."
    return std::string(fp16 ? "wgmma fp16 " : "wgmma tf32 ") + std::to_string(bm) + "x" + std::to_string(bn) + "/" +
           std::to_string(stages) + " g" + std::to_string(group) + (tma == 1 ? " tma" : tma == 2 ? " tma x2" : "");
  }
};
// The tiles this build and device have (empty without a Hopper GPU or an sm_90a build).
const std::vector<TensorTile>& tensor_tiles();
// Needs k a multiple of 4 and 16-byte aligned A and B (throws UsageError otherwise, or
// when tensor_tiles() is empty).
void multiply_tf32(const TensorTile& tile, std::size_t m, std::size_t n, std::size_t k, const float* a,
                   const float* b, float* c);

// The same product with fp16 operands (IEEE half bits, as to_fp16 makes them), fp32 sums,
// on a tile with `fp16` set: twice TF32's tensor-core rate and half its bytes. fp16 keeps
// TF32's 10 fraction bits, rounded to nearest (the TF32 kernel truncates), but 5 exponent
// bits: magnitudes from 6.1e-5 to 65504 keep them all (scale the data into that range).
// Needs k a multiple of 8 and 16-byte aligned operands.
void multiply_fp16(const TensorTile& tile, std::size_t m, std::size_t n, std::size_t k, const std::uint16_t* a,
                   const std::uint16_t* b, float* c);
// out[i] = fp16(x[i] * scale), rounded to nearest (device pointers; `count` entries).
void to_fp16(const float* x, std::size_t count, float scale, std::uint16_t* out);

// fp32 accuracy on TF32 tensor cores (3xTF32): each operand split into hi = TF32(x) and
// lo = TF32(x - hi), C = hi.hi^T + hi.lo^T + lo.hi^T (lo.lo^T, under 2^-22 of a term,
// dropped), one product of [hi|hi|lo] rows against [hi|lo|hi] ones with 3k columns. The
// tensor cores' own sums truncate, so they are added to fp32 registers every 128
// elements of K (128 x 128 tiles). Needs 12 (m + n) k bytes of device scratch; the same
// layout and limits as multiply_tf32.
void multiply_tf32x3(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c);

// Fused scores on the tensor-core product: each entry p = A_i . B_j becomes a score in
// the kernel's epilogue, and only each row's top k (or the entries past a threshold)
// leave it; the m x n score matrix is never written.
enum class Score {
  Dot,              // p
  Cosine,           // p * row_a[i] * row_b[j] (the rows' inverse norms)
  Lin,              // p / (row_a[i] + row_b[j]), 0 where that is 0 (DISCO's Lin; row sums)
  SquaredDistance,  // row_a[i] + row_b[j] - 2 p, at least 0 (squared norms); smaller ranks first
};
inline const char* score_name(Score score) {
  switch (score) {
    case Score::Dot: return "dot";
    case Score::Cosine: return "cosine";
    case Score::Lin: return "Lin";
    case Score::SquaredDistance: return "squared distance";
  }
  return "?";
}
struct ScoreSpec {
  Score kind = Score::Dot;
  const float* row_a = nullptr;  // device, one per row of A, as the score says (unused by Dot)
  const float* row_b = nullptr;  // device, one per row of B
  // Rows of A read from this column on, wrapping (a multiple of 4; 0: as they are). On
  // DISCO's rows [M|A] of pitch P, P reads A as [A|M], so that one product gives the Lin
  // numerator A_i.M_j^T + M_i.A_j^T.
  std::size_t rotate_a = 0;
};

// Largest k the fused top-k keeps (its lists sit in shared memory beside the operands).
inline constexpr int kMaxFusedTop = 32;

// Each row's `top` best columns (1..kMaxFusedTop): highest score first (smallest
// distance first), ties by lower column; scores and columns are m x top (device). Rows
// with fewer than `top` columns end in (-inf, or +inf for distances; column 0xffffffff).
// TF32 products as multiply_tf32, on a Hopper GPU; the same layout and limits.
void top_k_tf32(const ScoreSpec& spec, std::size_t m, std::size_t n, std::size_t k, const float* a,
                const float* b, int top, float* scores, std::uint32_t* columns);
// The same result by the three-pass path the fused kernel replaces: cuBLAS TF32 products
// in tiles of `tile_bytes`, the scores written out, then the engine's row selection.
// Any CUDA GPU; the benchmark's baseline and the tests' reference.
void top_k_cublas(const ScoreSpec& spec, std::size_t m, std::size_t n, std::size_t k, const float* a,
                  const float* b, int top, float* scores, std::uint32_t* columns,
                  std::size_t tile_bytes = std::size_t{64} << 20);

// The fused self-join, for A = B (every row against every other): each row's `top`
// (1..kMaxSelfTop) best other rows, as top_k_tf32 gives them (scores and columns n x top,
// device; ties by lower index; a row never lists itself). Each pair i < j is multiplied
// once: a tile above the diagonal feeds its rows' lists and its columns', a tile's lists
// are merged by the engine's selection after each band of row tiles. Bands are as many
// row tiles as keep their lists within `budget` bytes (0: a quarter of the free memory),
// but at least one: a budget below one row tile's lists still runs, over it. `rows` holds
// n rows of k elements: floats (Operands::tf32, k a multiple of 4) or fp16 bits
// (Operands::fp16, k a multiple of 8), 16-byte aligned; spec.row_a holds the rows'
// factors (row_b is not read); spec.rotate_a is 0 or k / 2 in whole 128-byte slices (32
// floats, 64 halves), so that every score is symmetric (Lin's [M|A] rows read as [A|M]).
// A key of -inf (a score of -inf, a distance of +inf) counts as no entry. Hopper only.
enum class Operands { tf32, fp16 };
inline const char* operands_name(Operands operands) { return operands == Operands::fp16 ? "fp16" : "tf32"; }
inline constexpr int kMaxSelfTop = 16;
void self_top_k(const ScoreSpec& spec, Operands operands, std::size_t n, std::size_t k, const void* rows, int top,
                float* scores, std::uint32_t* columns, std::size_t budget = 0);
// The same answer by the cuBLAS + select path the fused self-join replaces: the pairwise
// engine in symmetric mode (blocks i <= j; cuBLAS products of the operands in 64 MiB score
// tiles, then the selection of both triangles). Any CUDA GPU with tensor cores; the
// benchmark's baseline and the tests' reference.
void self_top_k_cublas(const ScoreSpec& spec, Operands operands, std::size_t n, std::size_t k, const void* rows,
                       int top, float* scores, std::uint32_t* columns);

// Every (i, j) with score >= threshold (distance <= threshold), in no order, into hits
// as (a = i, b = j, score)
// (device, `capacity` of them); returns how many there are, also past the capacity (then
// only `capacity` were written: call again with room for all).
std::size_t threshold_tf32(const ScoreSpec& spec, std::size_t m, std::size_t n, std::size_t k, const float* a,
                           const float* b, float threshold, ScoredPair* hits, std::size_t capacity);

// The seed's study: every tile at each size (square products), beside cuBLAS fp32 and
// TF32 in the same run, timed with device events (median of `reps` after a warm-up), each
// tile's product checked against cuBLAS fp32 (max relative error over the entries). Then,
// on Hopper, C = A . B^T: cuBLAS TF32 and fp32 on that layout, each tensor tile and the
// 3xTF32 product (sizes that are multiples of 4), each also against float64 (DGEMM).
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
  double float64_error = -1;      // against the float64 product (C = A . B^T rows; -1: not measured)
};
std::vector<Timing> study(const StudyOptions& options);

// The fused top k beside the three-pass path it replaces (top_k_cublas), on the same
// random inputs, each timed end to end with device events (median of `reps` after a
// warm-up): cosine and squared-distance top k of `queries` rows against `rows` rows of
// `dims` (uniform in (-1, 1)), and Lin top k of `lin_words` DISCO rows [M|A] against
// themselves (M 0/1 with `lin_density` ones, A = M x U(0, 1), `lin_features` each, each
// half padded with zeros to a multiple of 64 elements as DISCO pads it); then the Lin
// self-join (each word's top k of the other words, each pair once) in TF32 and in fp16
// against self_top_k_cublas in the same precision.
struct FusedOptions {
  std::size_t queries = 1024, rows = 2196016, dims = 300;
  std::size_t lin_words = 100000, lin_features = 10000;
  double lin_density = 0.05;
  int top = 10;
  int reps = 3;
  int device = 0;
};
struct FusedTiming {
  std::string job;              // "cosine top-10"
  std::size_t m = 0, n = 0, k = 0;
  double fused_ms = 0, cublas_ms = 0;
  double same_columns = 0;        // fraction of (row, rank) slots with the same column in both
  double max_score_difference = 0;  // max |fused - cuBLAS| over the slots, over max |score|
};
std::vector<FusedTiming> fused_study(const FusedOptions& options);

}  // namespace simkit::gemm
