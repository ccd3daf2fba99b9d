// Fused scoring and filtering on tensor cores: dot products of two sets of half-precision
// rows, computed tile by tile in registers and never written out; only the scores that
// can still enter a row's top k leave the kernel, as candidates. The score matrix of a
// batch (1024 queries x 2.2M rows: 9 GB as floats) thus costs no memory traffic at all.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "engine/cuda/select.hpp"
#include "simkit/pairwise.hpp"

namespace simkit::cuda {

enum class HalfType { Fp16, Bf16 };

// Whether rows of `stride` elements fit the kernel: it keeps 128 rows of A in shared
// memory, which allows up to 768 elements (two blocks an SM up to 320).
bool dot_candidates_supports(std::size_t stride);

// How scores are compared with the bars. Exact (the default): a score is offered when it
// ranks before its row's bar. Filtering for exact rescoring: the rows of A are unit
// vectors standing for rows of norm scale[i], and a score is offered when
// (score + slack) * scale[i] reaches the bar, so that every row whose exact score ranks
// before the bar is offered when the computed score is within slack of the exact one.
struct Filter {
  const float* scale = nullptr;  // device, one per row of A (relative to `a`)
  float slack = 0;
};

// Rows of A (`rows_a`, each `stride` elements, 16-byte aligned, zero-padded) against rows
// of B (`rows_b`, same stride; row j carries index b_first + j). Every score that ranks
// before row i's bar (state row row0 + i, slot lists.bar) is offered to lists row i.
// Products are exact in fp32 and summed in fp32 in the tensor cores' order.
void dot_candidates(HalfType type, const void* a, std::size_t rows_a, const void* b,
                    std::size_t rows_b, std::size_t b_first, std::size_t stride, std::size_t row0,
                    TopKState state, const Filter& filter, const gpu::CandidateLists& lists,
                    cudaStream_t stream);

// Merges candidate lists rows [0, rows) into state rows [row0, row0 + rows), then empties
// the lists; a list that received more offers than its capacity sets *overflow to 1 (the
// caller must then recompute those rows another way).
void merge_candidates(const gpu::CandidateLists& lists, std::size_t rows, std::size_t row0,
                      TopKState state, unsigned* overflow, cudaStream_t stream);

}  // namespace simkit::cuda
