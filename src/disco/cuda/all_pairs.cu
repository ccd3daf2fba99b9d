// Dense Lin similarity (or PPMI's cosine) on the GPU. Two ways to every word's top k:
// - the pairwise engine with a BlockScorer: the [M|A] rows of every word stay on the
//   device when they fit the budget's half, and cuBLAS multiplies their halves in place
//   (fp32, TF32 or fp16 tensor cores); otherwise the engine loads blocks of [A|M] and
//   [M|A] rows built on the host. A small kernel divides each score by s_i + s_j, and the
//   engine selects each row's top k of both triangles. From 4,096 words the resident rows
//   may hold only the commoner columns: the others' terms are summed from inverted lists
//   (feature_lists.cuh) by the pass that then divides (product_columns says how many);
// - simkit's fused self-join (gemm::self_top_k, Hopper, TF32 or fp16 rows resident, k <=
//   16): each pair multiplied once, the division and the tiles' top k in the epilogue.
//   --kernel auto times both on the first 8,192 words and keeps the faster (cuBLAS
//   alone when the rarer columns are summed from lists, below: the self-join multiplies
//   whole rows).
//
// fp32 on resident rows is split TF32: A = hi + lo with hi A rounded to TF32 (11
// significant bits) and lo = A - hi (exact in fp32). M is 0/1, exact in TF32, so
// A.M^T = hi.M^T + lo.M^T loses only lo's bits past TF32's, 2^-22 of A: fp32 accuracy
// from four tensor-core products instead of two on the CUDA cores, 3.9x faster at
// N = 100,000 (bench/results/disco.md). SIMKIT_DISCO_FP32=cores keeps the CUDA cores
// (the benchmark's baseline); so do blocks built on the host, and resident rows when
// A's low parts do not fit the budget. fp16 keeps the rows as halves (M exact, A
// rounded to 11 significant bits), resident only.
//
// PPMI's cosine takes the same path on rows A / |A| (one half, no M): the rotation is 0,
// split TF32 adds lo_a.hi_b^T + hi_a.lo_b^T (lo.lo^T, under 2^-22 of a term, dropped),
// no division follows, and the self-join scores plain dot products.
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <type_traits>
#include <vector>

#include <oneapi/tbb/parallel_for.h>

#include "core/cuda/check.hpp"
#include "core/phase_clock.hpp"
#include "core/cuda/cublas_handle.hpp"
#include "engine/cuda/cublas_product.hpp"
#include "core/cuda/memory.hpp"
#include "core/text.hpp"
#include "disco/cuda/feature_lists.cuh"
#include "disco/cuda/lin_tile.hpp"
#include "disco/gpu.hpp"
#include "simkit/device.hpp"
#include "simkit/error.hpp"
#include "simkit/gemm.hpp"
#include "simkit/progress.hpp"

namespace simkit::disco::detail {

namespace {

// The entries page-locked, once a process (by the first GPU's scorer, or ahead of the job
// by lock_entries).
void lock_once(const DenseRows::Entries& entries) {
  const auto span = [](const auto& array) { return cuda::HostSpan{array.data(), array.size() * sizeof(array[0])}; };
  cuda::lock_once(entries.page_locked, {span(entries.offsets), span(entries.columns), span(entries.values)});
}

__global__ void divide_kernel(float* tile, std::size_t ld, std::size_t rows, std::size_t cols, const float* sums_a,
                              const float* sums_b) {
  for (std::size_t i = blockIdx.x; i < rows; i += gridDim.x)
    for (std::size_t j = threadIdx.x; j < cols; j += blockDim.x) {
      const float d = sums_a[i] + sums_b[j];
      float& s = tile[i * ld + j];
      s = d > 0 ? s / d : 0.0f;
    }
}

// x rounded to the nearest TF32 value (the low 13 of 23 fraction bits cleared).
__device__ __forceinline__ float to_tf32(float x) {
  std::uint32_t u = __float_as_uint(x);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
  return __uint_as_float(u);
}

// Rows [M|A] (with `pattern`; width 2 pitch) or [A] (width pitch), zeroed before, from
// the words' entries (column, value), column c at slot_of[c] (kListed: not in the rows;
// no map: at c); with `low`, A's high TF32 part goes to the row and the rest to low
// (pitch a row).
constexpr std::uint32_t kListed = 0xffffffffu;
__global__ void scatter_rows(const std::uint64_t* offsets, const std::uint32_t* columns, const float* values,
                             const std::uint32_t* slot_of, std::size_t words, std::size_t pitch, bool pattern,
                             float* rows, float* low) {
  for (std::size_t w = blockIdx.x; w < words; w += gridDim.x)
    for (std::uint64_t e = offsets[w] + threadIdx.x; e < offsets[w + 1]; e += blockDim.x) {
      const std::size_t c = slot_of != nullptr ? slot_of[columns[e]] : columns[e];
      if (c == kListed) continue;
      const float v = values[e];
      float* row = rows + w * (pattern ? 2 : 1) * pitch;
      float* a = pattern ? row + pitch : row;
      if (pattern) row[c] = 1.0f;
      if (low != nullptr) {
        const float hi = to_tf32(v);
        a[c] = hi;
        low[w * pitch + c] = v - hi;
      } else {
        a[c] = v;
      }
    }
}

bool fp32_on_cuda_cores() {
  const char* env = std::getenv("SIMKIT_DISCO_FP32");
  return env != nullptr && std::strcmp(env, "cores") == 0;
}

// How many of the dense columns, most common first, the product takes; the others'
// terms are summed from their inverted lists (`df`: words having each column, most
// common first). The product costs every pair its depth whatever the rows hold; a listed
// column costs the pairs of words having it (a term each) and, per score tile a word's
// row meets, a search of its postings. The rates are a least-squares fit (with a
// constant for the rest of the job, which does not change the choice) to the job's
// device times over 64 to 10,000 columns in the product (H100, TF32, fp16 and split fp32,
// 23 runs, residuals -36 to +14 ms; bench/results/disco.md); the cheapest total wins.
// SIMKIT_DISCO_PRODUCT_COLUMNS=N sets the number instead (tests, benchmarks).
std::size_t product_columns(const std::vector<std::uint32_t>& df, std::size_t words, Precision precision, bool split,
                            bool cosine) {
  const std::size_t all = df.size();
  if (const char* env = std::getenv("SIMKIT_DISCO_PRODUCT_COLUMNS"); env != nullptr && *env != 0) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(env, &end, 10);
    if (*end != 0 || n == 0 || *env == '-')
      throw UsageError(cat("SIMKIT_DISCO_PRODUCT_COLUMNS must be a number of columns (1 or more), not '", env, "'"));
    return std::min<std::size_t>(n, std::max<std::size_t>(all, 1));
  }
  if (words < kGpuTileRows) return all;  // a few tiles: nothing worth saving
  const double pairs = 0.5 * static_cast<double>(words) * static_cast<double>(words);
  const double tiles_a_row = 0.5 * static_cast<double>((words + kGpuTileRows - 1) / kGpuTileRows + 1);
  // Multiply-adds a second on tensor cores (split fp32: TF32's, at twice the depth) or
  // the CUDA cores.
  const double rate = precision == Precision::fp16 ? 5.2e14 : precision == Precision::tf32 || split ? 2.4e14 : 2.5e13;
  constexpr double kTermsPerSecond = 5.7e11, kLookupsPerSecond = 1.55e9;
  // Listed costs of columns c.. (suffix sums), then the best multiple of 64.
  std::vector<double> listed(all + 1, 0.0);
  for (std::size_t c = all; c-- > 0;) {
    const double n = df[c];
    listed[c] = listed[c + 1] + 0.5 * n * (n - 1) / kTermsPerSecond + n * tiles_a_row / kLookupsPerSecond;
  }
  std::size_t best = all;
  double best_cost = 1e300;
  for (std::size_t d = std::min<std::size_t>(64, all);; d = std::min(d + 64, all)) {
    const double depth = static_cast<double>((cosine ? 1 : 2) * ((d + 63) / 64 * 64)) * (split ? 2 : 1);
    const double cost = pairs * depth / rate + listed[d];
    if (cost < best_cost) best_cost = cost, best = d;
    if (d == all) break;
  }
  return best;
}

class DenseScorer final : public gpu::BlockScorer {
 public:
  static constexpr std::size_t kTileBytes = kGpuTileRows * kGpuTileRows * sizeof(float);

  // `lists`: the rarer columns may be summed from inverted lists beside the product of
  // the common ones (not for the fused self-join, which multiplies whole rows).
  DenseScorer(const Model& model, const DenseRows& rows, Precision precision, std::size_t budget, bool lists)
      : model_(model), rows_(rows), pitch_(rows.pitch), width_(rows.row_width(rows.pitch)), precision_(precision),
        cublas_(cuda::make_cublas()) {
    sums_ = cuda::DeviceBuffer<float>(model.size());
    SIMKIT_CUDA_CHECK(cudaMemcpy(sums_.get(), rows.sums.data(), model.size() * sizeof(float), cudaMemcpyHostToDevice));
    split_ = precision == Precision::fp32 && !fp32_on_cuda_cores();
    const auto started = std::chrono::steady_clock::now();
    // Each word's entries among the columns (gathered once a process).
    const DenseRows::Entries& entries = rows.entries(model);
    const auto gathered = std::chrono::steady_clock::now();
    std::vector<std::uint32_t> slot_of;  // the product's column of each dense column (kListed: none)
    std::vector<std::uint32_t> list_of, sizes;  // the listed columns' lists (columns one word has: none)
    std::size_t kept = rows.width;  // columns in the product
    if (lists && rows.width > 0) {
      const std::vector<std::uint32_t>& df = entries.words_having;
      std::vector<std::uint32_t> order(rows.width);
      std::iota(order.begin(), order.end(), 0u);
      std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) { return df[x] > df[y]; });
      std::vector<std::uint32_t> sorted(rows.width);
      for (std::size_t c = 0; c < rows.width; ++c) sorted[c] = df[order[c]];
      kept = product_columns(sorted, model.size(), precision, split_, rows.cosine);
      if (kept < rows.width) {
        // The kept columns in their own order (all of them kept: the rows as without lists).
        std::vector<bool> in_product(rows.width, false);
        for (std::size_t c = 0; c < kept; ++c) in_product[order[c]] = true;
        slot_of.assign(rows.width, kListed);
        list_of.assign(rows.width, FeatureListsOnDevice::kNoList);
        std::uint32_t slot = 0;
        for (std::size_t c = 0; c < rows.width; ++c)
          if (in_product[c]) {
            slot_of[c] = slot++;
          } else if (df[c] >= 2) {  // a column one word has adds nothing to any pair
            list_of[c] = static_cast<std::uint32_t>(sizes.size());
            sizes.push_back(df[c]);
          }
        pitch_ = (kept + 63) / 64 * 64;
        width_ = rows.row_width(pitch_);
      }
    }
    const std::size_t pitch = pitch_;
    // The lists, and what making them takes beside the rows for a while.
    const std::size_t row_bytes =
        model.size() * width_ * sizeof(float) +
        (sizes.empty() ? 0 : FeatureListsOnDevice::build_bytes(model.size(), entries.columns.size(), rows.width, sizes));
    // Without room for A's low parts, fp32 on the CUDA cores keeps the rows resident.
    if (split_ && row_bytes + model.size() * pitch * sizeof(float) > budget / 2) split_ = false;
    if (row_bytes > budget / 2) {
      if (precision == Precision::fp16)
        throw UsageError(cat("--precision fp16 needs every word's rows on the GPU (",
                             format_byte_size(row_bytes), " while they are made, half the memory budget at most); "
                             "raise --memory-budget, or use --precision tf32 --kernel cublas"));
      // Blocks of whole rows built on the host.
      pitch_ = rows.pitch;
      width_ = rows.row_width(pitch_);
      return;
    }
    // Every [M|A] (or [A]) row resident (and A's low parts for split TF32), scattered on
    // the device from the words' entries: a few bytes a feature cross the bus, not 2F
    // floats a word.
    resident_rows_ = true;
    resident_ = cuda::DeviceBuffer<float>(model.size() * width_);
    SIMKIT_CUDA_CHECK(cudaMemset(resident_.get(), 0, resident_.size() * sizeof(float)));
    if (split_) {
      low_ = cuda::DeviceBuffer<float>(model.size() * pitch);
      SIMKIT_CUDA_CHECK(cudaMemset(low_.get(), 0, low_.size() * sizeof(float)));
    }
    // The entries page-locked (once, for every worker of the process): they go up at the
    // link's rate, not the driver's staging rate.
    const auto uploading = std::chrono::steady_clock::now();
    lock_once(entries);
    const auto d_offsets = cuda::to_device(entries.offsets.data(), entries.offsets.size());
    const auto d_columns = cuda::to_device(entries.columns.data(), entries.columns.size());
    const auto d_values = cuda::to_device(entries.values.data(), entries.values.size());
    const auto d_slots = cuda::to_device(slot_of.data(), slot_of.size());
    SIMKIT_CUDA_CHECK(cudaStreamSynchronize(nullptr));  // (the upload's time, for the stats line)
    const auto uploaded = std::chrono::steady_clock::now();
    scatter_rows<<<static_cast<unsigned>(std::min<std::size_t>(std::max<std::size_t>(model.size(), 1), 65535)), 128>>>(
        d_offsets.get(), d_columns.get(), d_values.get(), slot_of.empty() ? nullptr : d_slots.get(), model.size(),
        pitch, !rows.cosine, resident_.get(), split_ ? low_.get() : nullptr);
    SIMKIT_CUDA_CHECK_LAUNCH();
    if (!sizes.empty())
      lists_ = FeatureListsOnDevice(model.size(), d_offsets.get(), d_columns.get(), d_values.get(), list_of, sizes);
    if (precision == Precision::fp16) {  // halves in place of the floats
      half_ = cuda::DeviceBuffer<std::uint16_t>(resident_.size());
      gemm::to_fp16(resident_.get(), resident_.size(), 1.0f, half_.get());
      SIMKIT_CUDA_CHECK(cudaDeviceSynchronize());  // the floats are read until here
      resident_ = cuda::DeviceBuffer<float>();
    }
    SIMKIT_CUDA_CHECK(cudaDeviceSynchronize());
    if (std::getenv("SIMKIT_ENGINE_STATS") != nullptr)
      std::fprintf(stderr,
                   "disco: rows on the GPU: entries %.1f ms (%zu), columns in the product %zu of %zu (%zu listed "
                   "entries), upload, scatter and lists %.1f ms (the entries locked and uploaded %.1f ms)\n",
                   std::chrono::duration<double, std::milli>(gathered - started).count(), entries.values.size(),
                   kept, rows.width,
                   static_cast<std::size_t>(std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0})),
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - gathered).count(),
                   std::chrono::duration<double, std::milli>(uploaded - uploading).count());
  }

  // Whether the rarer columns are summed from lists (the rows then hold only the others).
  bool has_lists() const { return !lists_.empty(); }

  bool resident() const { return resident_rows_; }

  // The fused self-join of the first `words` words: each one's k best others; the
  // self-join's own time (events around it: its kernels, merges and scratch) to *ms.
  TopKLists self_join(std::size_t words, std::size_t k, std::size_t budget, double* ms = nullptr) {
    TopKLists out(words, k);
    if (words == 0 || k == 0) return out;
    const gemm::ScoreSpec spec = rows_.cosine ? gemm::ScoreSpec{gemm::Score::Dot, sums_.get(), sums_.get(), 0}
                                              : gemm::ScoreSpec{gemm::Score::Lin, sums_.get(), sums_.get(), width_ / 2};
    cuda::DeviceBuffer<float> scores(words * k);
    cuda::DeviceBuffer<std::uint32_t> indices(words * k);
    const bool half = precision_ == Precision::fp16;
    cuda::Event start(cudaEventDefault), stop(cudaEventDefault);
    start.record(nullptr);
    gemm::self_top_k(spec, half ? gemm::Operands::fp16 : gemm::Operands::tf32, words, width_,
                     half ? static_cast<const void*>(half_.get()) : resident_.get(), static_cast<int>(k),
                     scores.get(), indices.get(), budget);
    stop.record(nullptr);
    SIMKIT_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    if (ms != nullptr) *ms = cuda::elapsed_ms(start, stop);
    SIMKIT_CUDA_CHECK(cudaMemcpy(out.scores.data(), scores.get(), words * k * sizeof(float), cudaMemcpyDeviceToHost));
    SIMKIT_CUDA_CHECK(
        cudaMemcpy(out.indices.data(), indices.get(), words * k * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    return out;
  }

  // With every [M|A] row resident, blocks of A need no staging: their halves are read in
  // place (see score()).
  std::size_t bytes_per_row_a() const override { return b_resident() ? sizeof(float) : width_ * sizeof(float); }
  std::size_t bytes_per_row_b() const override { return width_ * sizeof(float); }
  bool b_resident() const override { return resident(); }
  // The products are 2F deep: a 64 MiB tile (4096 x 4096) ran TF32 all pairs at N =
  // 100,000 in 0.57 s against 0.71 s at the default 32 MiB (H100, bench/results/disco.md).
  std::size_t preferred_tile_bytes() const override { return kTileBytes; }
  void load_a(RowRange rows, void* slot, gpu::Stream stream) override {
    if (!b_resident()) load(rows, true, slot, stream);
  }
  void load_b(RowRange rows, void* slot, gpu::Stream stream) override { load(rows, false, slot, stream); }
  void score(const void* a_slot, RowRange a, const void* b_slot, RowRange b, float* tile, std::size_t ld,
             gpu::Stream stream) override {
    SIMKIT_CUBLAS_CHECK(cublasSetStream(cublas_.get(), stream));
    const bool half = precision_ == Precision::fp16;
    const cudaDataType type = half ? CUDA_R_16F : CUDA_R_32F;
    const cublasComputeType_t compute =
        precision_ == Precision::tf32 || split_ ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const std::size_t w = width_, p = pitch_;
    if (b_resident()) {
      // Rows [M|A] of both blocks in place, A's read rotated by half a row: one rotated
      // product gives A_a.M_b^T + M_a.A_b^T. Cosine: rows [A], no rotation, A_a.A_b^T.
      const auto* rows = half ? static_cast<const char*>(static_cast<const void*>(half_.get()))
                              : static_cast<const char*>(static_cast<const void*>(resident_.get()));
      const std::size_t row_bytes = w * (half ? 2 : 4);
      cuda::rotated_product(cublas_.get(), type, compute, rows + a.begin * row_bytes, a.size(),
                            rows + b.begin * row_bytes, b.size(), w, rows_.cosine ? 0 : p, tile, ld, stream);
      if (split_) {  // the low parts of A, with the rows' first halves: lo_a.M_b^T + M_a.lo_b^T (cosine: M is hi)
        const float one = 1.0f;
        const auto add = [&](const float* b_rows, std::size_t lead_b, const float* a_rows, std::size_t lead_a) {
          SIMKIT_CUBLAS_CHECK(cublasGemmEx(cublas_.get(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(b.size()),
                                           static_cast<int>(a.size()), static_cast<int>(p), &one, b_rows, CUDA_R_32F,
                                           static_cast<int>(lead_b), a_rows, CUDA_R_32F, static_cast<int>(lead_a),
                                           &one, tile, CUDA_R_32F, static_cast<int>(ld), compute, CUBLAS_GEMM_DEFAULT));
        };
        add(resident_.get() + b.begin * w, w, low_.get() + a.begin * p, p);
        add(low_.get() + b.begin * p, p, resident_.get() + a.begin * w, w);
      }
    } else {
      // Blocks built on the host: [A|M] rows of a against [M|A] rows of b (cosine: [A]
      // against [A]), one product.
      cuda::rotated_product(cublas_.get(), type, compute, a_slot, a.size(), b_slot, b.size(), w, 0, tile, ld, stream);
    }
    // Unit rows need no division; with lists, their pass adds the listed columns' terms
    // and divides.
    if (has_lists())
      lists_.add(a, b, rows_.cosine, true, rows_.cosine ? nullptr : sums_.get(), tile, ld, stream);
    else if (!rows_.cosine)
      divide_by_sums(tile, ld, a.size(), b.size(), sums_.get() + a.begin, sums_.get() + b.begin, stream);
  }

 private:
  // Built on the host and copied before returning (the host buffer is reused at once).
  void load(RowRange rows, bool left, void* slot, gpu::Stream stream) {
    host_.resize(rows.size() * width_);
    rows_.write(model_, rows.begin, rows.size(), left, host_.data(), rows_.pitch);
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(slot, host_.data(), host_.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
    SIMKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  const Model& model_;
  const DenseRows& rows_;
  std::size_t pitch_;  // values a half row takes on the device: rows_.pitch, or fewer with lists
  std::size_t width_;
  bool resident_rows_ = false;
  Precision precision_;
  bool split_ = false;  // fp32 as split TF32 (resident rows only)
  cuda::CublasHandle cublas_;
  cuda::DeviceBuffer<float> sums_, resident_, low_;
  cuda::DeviceBuffer<std::uint16_t> half_;  // fp16: the resident rows as halves (resident_ then empty)
  FeatureListsOnDevice lists_;  // the columns left out of the product
  std::vector<float> host_;
};

}  // namespace

void lock_entries(const Model& model, const DenseRows& rows, int device) {
  const DenseRows::Entries& entries = rows.entries(model);
  const cuda::DeviceGuard guard(device);
  lock_once(entries);
}

void divide_by_sums(float* tile, std::size_t ld, std::size_t rows, std::size_t cols, const float* sums_a,
                    const float* sums_b, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(rows, 65535));
  divide_kernel<<<blocks, 256, 0, stream>>>(tile, ld, rows, cols, sums_a, sums_b);
  SIMKIT_CUDA_CHECK_LAUNCH();
}

std::size_t job_budget(const AllPairsOptions& options) {
  return options.memory_budget != 0 ? options.memory_budget : gpu_memory(options.device).free / 10 * 8;
}

TopKLists run_engine(const PairwiseJob& job, gpu::BlockScorer& scorer, const AllPairsOptions& options,
                     std::size_t budget, double* device_ms) {
  gpu::Engine engine(options.device);
  PairwiseJob j = job;
  j.memory_budget = budget / 2;
  PairwiseResult result = engine.run(j, scorer);
  if (device_ms != nullptr) *device_ms = engine.last_ms();
  return std::move(result.topk);
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Which scorer auto takes: the fused self-join only when it beats the engine on cuBLAS by
// a clear margin (the two round differently, TF32 truncated against rounded, so a coin
// toss between near-equal times would make identical runs differ). Both run on the first
// 8,192 words (or every word), a warm-up and then the faster of two runs each; when that
// is every word, the faster one's answer is the job's.
struct Choice {
  bool fused = false;
  std::optional<TopKLists> lists;  // the whole job's answer, when the probe was the job
  double ms = 0;                   // then the time of its faster run (host clock)
};
Choice choose_scorer(DenseScorer& scorer, const PairwiseJob& job, const AllPairsOptions& options,
                     std::size_t budget) {
  PairwiseJob probe = job;
  probe.rows_a = probe.rows_b = std::min<std::size_t>(job.rows_a, 8192);
  probe.progress = nullptr;
  const auto best_of = [&](auto&& run, TopKLists& lists) {
    double best = 1e30;
    for (int r = 0; r < 3; ++r) {
      const auto start = std::chrono::steady_clock::now();
      lists = run();
      if (r > 0) best = std::min(best, seconds_since(start));
    }
    return best;
  };
  TopKLists by_cublas, by_fused;
  const double cublas_s = best_of([&] { return run_engine(probe, scorer, options, budget, nullptr); }, by_cublas);
  const double fused_s = best_of([&] { return scorer.self_join(probe.rows_a, probe.k, budget / 4); }, by_fused);
  if (std::getenv("SIMKIT_ENGINE_STATS") != nullptr)
    std::fprintf(stderr, "disco: all pairs of %zu words: cuBLAS engine %.2f ms, fused self-join %.2f ms\n",
                 probe.rows_a, 1e3 * cublas_s, 1e3 * fused_s);
  Choice choice;
  choice.fused = fused_s < 0.9 * cublas_s;
  if (probe.rows_a == job.rows_a) {
    choice.lists = std::move(choice.fused ? by_fused : by_cublas);
    choice.ms = 1e3 * (choice.fused ? fused_s : cublas_s);
  }
  return choice;
}

}  // namespace

TopKLists all_pairs_gpu(const Model& model, const DenseRows& rows, const PairwiseJob& job,
                        const AllPairsOptions& options, double* device_ms) {
  const cuda::DeviceGuard guard(options.device);
  const std::size_t budget = job_budget(options);
  const bool forced = options.kernel == ProductKernel::simkit;
  if (forced) {
    if (options.precision == Precision::fp32)
      throw UsageError("--kernel simkit scores tf32 or fp16 (use --precision tf32 or fp16)");
    if (gemm::tensor_tiles().empty())
      throw UsageError(
          "--kernel simkit needs a Hopper GPU (compute capability 9.0) and a build for sm_90; use --kernel cublas");
    if (job.k == 0 || job.k > static_cast<std::size_t>(gemm::kMaxSelfTop))
      throw UsageError(cat("--kernel simkit keeps 1 to ", gemm::kMaxSelfTop, " similar words a word (k = ", job.k,
                           "); use --kernel cublas"));
  }
  PhaseClock clock("disco on cuda", options.device);
  DenseScorer scorer(model, rows, options.precision, budget, !forced);
  clock.mark("rows on the GPU");
  // The fused self-join takes whole resident rows, tf32 or fp16, and k <= 16, on Hopper.
  const bool fusable = scorer.resident() && !scorer.has_lists() && options.precision != Precision::fp32 && options.kernel !=
                       ProductKernel::cublas && job.k >= 1 && job.k <= static_cast<std::size_t>(gemm::kMaxSelfTop) &&
                       !gemm::tensor_tiles().empty();
  if (forced && !fusable)
    throw UsageError(cat("--kernel simkit needs every word's rows on the GPU (",
                         format_byte_size(model.size() * rows.row_width(rows.pitch) * sizeof(float)),
                         ", half the memory budget at most); raise --memory-budget or use --kernel cublas"));
  Choice choice;
  choice.fused = forced;
  if (fusable && !forced) {
    try {
      choice = choose_scorer(scorer, job, options, budget);
    } catch (const Error&) {  // no room for the probe (or any CUDA error in it): cuBLAS
      cudaGetLastError();
      choice = Choice{};
    }
  }
  const std::uint64_t pairs = model.size() * (model.size() - (model.size() > 0)) / 2;
  if (choice.lists) {  // the probe was the whole job
    if (device_ms != nullptr) *device_ms = choice.ms;
    if (job.progress != nullptr) job.progress->advance(pairs);
    return std::move(*choice.lists);
  }
  if (!choice.fused) {
    TopKLists lists = run_engine(job, scorer, options, budget, device_ms);
    clock.mark("the engine");
    return lists;
  }
  TopKLists lists = scorer.self_join(model.size(), job.k, budget / 4, device_ms);
  if (job.progress != nullptr) job.progress->advance(pairs);
  return lists;
}

}  // namespace simkit::disco::detail
