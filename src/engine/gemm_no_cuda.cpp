// The tiled product of a CPU-only build: it has no tiles and says so when asked.
#include "simkit/error.hpp"
#include "simkit/gemm.hpp"

namespace simkit::gemm {

const std::vector<Tile>& tiles() {
  static const std::vector<Tile> none;
  return none;
}

void multiply(const Tile&, std::size_t, std::size_t, std::size_t, const float*, const float*, float*) {
  throw UsageError("the tiled product runs on a GPU; this simkit was built without CUDA");
}

const std::vector<TensorTile>& tensor_tiles() {
  static const std::vector<TensorTile> none;
  return none;
}

void multiply_tf32(const TensorTile&, std::size_t, std::size_t, std::size_t, const float*, const float*, float*) {
  throw UsageError("the tensor-core product runs on a GPU; this simkit was built without CUDA");
}

void multiply_fp16(const TensorTile&, std::size_t, std::size_t, std::size_t, const std::uint16_t*, const std::uint16_t*,
                   float*) {
  throw UsageError("the tensor-core product runs on a GPU; this simkit was built without CUDA");
}

void to_fp16(const float*, std::size_t, float, std::uint16_t*) {
  throw UsageError("fp16 device rows need a GPU; this simkit was built without CUDA");
}

void self_top_k(const ScoreSpec&, Operands, std::size_t, std::size_t, const void*, int, float*, std::uint32_t*,
                std::size_t) {
  throw UsageError("the fused self-join runs on a GPU; this simkit was built without CUDA");
}

void self_top_k_cublas(const ScoreSpec&, Operands, std::size_t, std::size_t, const void*, int, float*,
                       std::uint32_t*) {
  throw UsageError("the cuBLAS self-join runs on a GPU; this simkit was built without CUDA");
}

void multiply_tf32x3(std::size_t, std::size_t, std::size_t, const float*, const float*, float*) {
  throw UsageError("the tensor-core product runs on a GPU; this simkit was built without CUDA");
}

void top_k_tf32(const ScoreSpec&, std::size_t, std::size_t, std::size_t, const float*, const float*, int, float*,
                std::uint32_t*) {
  throw UsageError("the fused top k runs on a GPU; this simkit was built without CUDA");
}

void top_k_cublas(const ScoreSpec&, std::size_t, std::size_t, std::size_t, const float*, const float*, int, float*,
                  std::uint32_t*, std::size_t) {
  throw UsageError("the cuBLAS top k runs on a GPU; this simkit was built without CUDA");
}

std::size_t threshold_tf32(const ScoreSpec&, std::size_t, std::size_t, std::size_t, const float*, const float*, float,
                           ScoredPair*, std::size_t) {
  throw UsageError("the fused threshold runs on a GPU; this simkit was built without CUDA");
}

std::vector<FusedTiming> fused_study(const FusedOptions&) {
  throw UsageError("simkit bench gemm needs a GPU; this simkit was built without CUDA");
}

std::vector<Timing> study(const StudyOptions&) {
  throw UsageError("simkit bench gemm needs a GPU; this simkit was built without CUDA");
}

}  // namespace simkit::gemm
