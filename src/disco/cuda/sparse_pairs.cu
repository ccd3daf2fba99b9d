// Lin similarity in the sparse (compressed) form on the GPU: every feature of every word,
// no column reduction, the same scores as the CPU's merges.
//
// The numerator of formula 3.8 for words i, j is the sum over their shared features f of
// A_if + A_jf. Pairs share few features in real corpora: the sum over features of
// (words having f)^2 is 5 x 10^8 for 73,181 words with 3 million features
// (bench/results/disco.md), so the work is in the inverted lists, not in a product.
// The device holds each word's features (ids ascending) and each feature's posting list
// (words ascending, with their MI). A tile of words I x J is zeroed, then a warp per word
// i walks i's features in order: the part of f's postings inside J comes from two binary
// searches, and the lanes add A_if + A_jf to distinct words j of it. Each score gets its
// terms in the order of i's features, so runs repeat exactly. Features only one word has
// add nothing to any pair and are left out. A last pass divides by s_i + s_j (the
// model's float64 MI sums, as the CPU).
//
// PPMI's cosine: the same lists hold each word's values over its norm, the lanes add
// their products a_if a_jf, and no division follows.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "core/text.hpp"
#include "disco/cuda/lin_tile.hpp"
#include "disco/gpu.hpp"
#include "simkit/device.hpp"
#include "simkit/error.hpp"

namespace simkit::disco::detail {

namespace {

constexpr int kWarpsPerBlock = 8;

// First position in [lo, hi) of words[] (ascending) holding a word >= w.
__device__ __forceinline__ std::uint32_t lower_bound(const std::uint32_t* words, std::uint32_t lo, std::uint32_t hi,
                                                     std::uint32_t w) {
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (words[mid] < w) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

struct DeviceLists {
  const std::uint64_t* word_offsets;  // N + 1: word i's features at [word_offsets[i], word_offsets[i+1])
  const std::uint32_t* word_features;  // list numbers (into list_offsets)
  const float* word_mi;
  const std::uint32_t* list_offsets;  // lists + 1: list f's postings
  const std::uint32_t* list_words;
  const float* list_mi;
};

// kProduct: cosine's terms a_if a_jf, else Lin's a_if + a_jf.
template <bool kProduct>
__global__ void add_shared_features(DeviceLists d, std::size_t a0, std::size_t rows, std::uint32_t b0,
                                    std::uint32_t b1, float* tile, std::size_t ld) {
  const std::size_t r = static_cast<std::size_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (r >= rows) return;
  const int lane = threadIdx.x & 31;
  float* row = tile + r * ld;
  const std::size_t word = a0 + r;
  for (std::uint64_t e = d.word_offsets[word]; e < d.word_offsets[word + 1]; ++e) {
    const std::uint32_t list = d.word_features[e];
    const float mine = d.word_mi[e];
    const std::uint32_t lo = lower_bound(d.list_words, d.list_offsets[list], d.list_offsets[list + 1], b0);
    const std::uint32_t hi = lower_bound(d.list_words, lo, d.list_offsets[list + 1], b1);
    for (std::uint32_t q = lo + lane; q < hi; q += 32)
      row[d.list_words[q] - b0] += kProduct ? mine * d.list_mi[q] : mine + d.list_mi[q];
    __syncwarp();  // the next feature's adds to the same scores come after these
  }
}


class SparseScorer final : public gpu::BlockScorer {
 public:
  SparseScorer(const Model& model, std::size_t budget) : cosine_(model.measure == Measure::ppmi) {
    // Posting lists of the features two or more words have, numbered by feature id.
    std::uint32_t max_feature = 0;
    for (const std::uint32_t f : model.features) max_feature = std::max(max_feature, f);
    std::vector<std::uint32_t> df(model.features.empty() ? 0 : std::size_t{max_feature} + 1, 0);
    for (const std::uint32_t f : model.features) ++df[f];
    // Postings are numbered in 32 bits on the device: refuse (before allocating) what
    // would not fit.
    std::uint64_t total = 0;
    for (const std::uint32_t n : df)
      if (n >= 2) total += n;
    if (total >= kNoList)
      throw UsageError(cat("the sparse form on the GPU takes at most 4,294,967,294 shared features (this model has ",
                           total, "); use --device cpu or --form dense"));
    std::vector<std::uint32_t> list_of(df.size(), kNoList), list_offsets{0};
    for (std::size_t f = 0; f < df.size(); ++f)
      if (df[f] >= 2) {
        list_of[f] = static_cast<std::uint32_t>(list_offsets.size() - 1);
        list_offsets.push_back(list_offsets.back() + df[f]);
      }
    const std::size_t postings = list_offsets.back();
    std::vector<std::uint32_t> list_words(postings), fill(list_offsets.begin(), list_offsets.end() - 1);
    std::vector<float> list_mi(postings);
    std::vector<std::uint64_t> word_offsets{0};
    std::vector<std::uint32_t> word_features;
    std::vector<float> word_mi;
    word_features.reserve(postings);
    word_mi.reserve(postings);
    for (std::size_t w = 0; w < model.size(); ++w) {  // words ascending: each list comes out sorted
      for (std::uint64_t i = model.offsets[w]; i < model.offsets[w + 1]; ++i) {
        const std::uint32_t list = list_of[model.features[i]];
        if (list == kNoList) continue;
        const float value = cosine_ ? static_cast<float>(model.mi[i] / model.norms[w]) : model.mi[i];
        word_features.push_back(list);
        word_mi.push_back(value);
        list_words[fill[list]] = static_cast<std::uint32_t>(w);
        list_mi[fill[list]++] = value;
      }
      word_offsets.push_back(word_features.size());
    }
    const std::size_t bytes = word_offsets.size() * 8 + postings * 16 + list_offsets.size() * 4 + model.size() * 4;
    if (bytes > budget / 2)
      throw UsageError(cat("the sparse form needs ", format_byte_size(bytes),
                           " of GPU memory for its lists, more than half the memory budget (",
                           format_byte_size(budget), "); raise --memory-budget or use --device cpu"));
    std::vector<float> sums(model.size());
    for (std::size_t w = 0; w < model.size(); ++w) sums[w] = static_cast<float>(model.mi_sums[w]);
    word_offsets_ = cuda::to_device(word_offsets.data(), word_offsets.size());
    word_features_ = cuda::to_device(word_features.data(), word_features.size());
    word_mi_ = cuda::to_device(word_mi.data(), word_mi.size());
    list_offsets_ = cuda::to_device(list_offsets.data(), list_offsets.size());
    list_words_ = cuda::to_device(list_words.data(), list_words.size());
    list_mi_ = cuda::to_device(list_mi.data(), list_mi.size());
    sums_ = cuda::to_device(sums.data(), sums.size());
  }

  std::size_t bytes_per_row_a() const override { return sizeof(float); }
  std::size_t bytes_per_row_b() const override { return sizeof(float); }
  bool b_resident() const override { return true; }
  void load_a(RowRange, void*, gpu::Stream) override {}
  void load_b(RowRange, void*, gpu::Stream) override {}
  void score(const void*, RowRange a, const void*, RowRange b, float* tile, std::size_t ld,
             gpu::Stream stream) override {
    SIMKIT_CUDA_CHECK(
        cudaMemset2DAsync(tile, ld * sizeof(float), 0, b.size() * sizeof(float), a.size(), stream));
    const DeviceLists d{word_offsets_.get(), word_features_.get(), word_mi_.get(),
                        list_offsets_.get(), list_words_.get(),    list_mi_.get()};
    const auto blocks = static_cast<unsigned>((a.size() + kWarpsPerBlock - 1) / kWarpsPerBlock);
    const auto b0 = static_cast<std::uint32_t>(b.begin), b1 = static_cast<std::uint32_t>(b.end);
    if (cosine_)
      add_shared_features<true><<<blocks, 32 * kWarpsPerBlock, 0, stream>>>(d, a.begin, a.size(), b0, b1, tile, ld);
    else
      add_shared_features<false><<<blocks, 32 * kWarpsPerBlock, 0, stream>>>(d, a.begin, a.size(), b0, b1, tile, ld);
    SIMKIT_CUDA_CHECK_LAUNCH();
    if (!cosine_) divide_by_sums(tile, ld, a.size(), b.size(), sums_.get() + a.begin, sums_.get() + b.begin, stream);
  }

 private:
  static constexpr std::uint32_t kNoList = 0xffffffffu;
  bool cosine_ = false;  // PPMI: unit rows, products
  cuda::DeviceBuffer<std::uint64_t> word_offsets_;
  cuda::DeviceBuffer<std::uint32_t> word_features_, list_offsets_, list_words_;
  cuda::DeviceBuffer<float> word_mi_, list_mi_, sums_;
};

}  // namespace

TopKLists all_pairs_sparse_gpu(const Model& model, const PairwiseJob& job, const AllPairsOptions& options,
                               double* device_ms) {
  const cuda::DeviceGuard guard(options.device);
  const std::size_t budget = job_budget(options);
  SparseScorer scorer(model, budget);
  return run_engine(job, scorer, options, budget, device_ms);
}

}  // namespace simkit::disco::detail
