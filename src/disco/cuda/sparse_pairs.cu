// Lin similarity in the sparse (compressed) form on the GPU: every feature of every word,
// no column reduction, the same scores as the CPU's merges.
//
// The numerator of formula 3.8 for words i, j is the sum over their shared features f of
// A_if + A_jf. Pairs share few features in real corpora: the sum over features of
// (words having f)^2 is 5 x 10^8 for 73,181 words with 3 million features
// (bench/results/disco.md), so the work is in the inverted lists, not in a product.
// The device holds each word's features and each feature's postings
// (disco/cuda/feature_lists.cuh); a tile is zeroed and gets the shared features' terms.
// Features only one word has add nothing to any pair and are left out. A last pass
// divides by s_i + s_j (the model's float64 MI sums, as the CPU).
//
// PPMI's cosine: the same lists hold each word's values over its norm, the terms are
// products a_if a_jf, and no division follows.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <oneapi/tbb/parallel_for.h>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "core/text.hpp"
#include "disco/cuda/feature_lists.cuh"
#include "disco/cuda/lin_tile.hpp"
#include "disco/dense.hpp"
#include "disco/gpu.hpp"
#include "simkit/device.hpp"
#include "simkit/error.hpp"

namespace simkit::disco::detail {

namespace {

class SparseScorer final : public gpu::BlockScorer {
 public:
  SparseScorer(const Model& model, std::size_t budget) : cosine_(model.measure == Measure::ppmi) {
    // Posting lists of the features two or more words have, numbered by feature id.
    std::uint32_t max_feature = 0;
    for (const std::uint32_t f : model.features) max_feature = std::max(max_feature, f);
    const std::vector<std::uint32_t> df =
        count_keys(model.features.data(), model.features.size(), model.features.empty() ? 0 : std::size_t{max_feature} + 1);
    std::vector<std::uint32_t> list_of(df.size(), FeatureListsOnDevice::kNoList), sizes;
    for (std::size_t f = 0; f < df.size(); ++f)
      if (df[f] >= 2) {
        list_of[f] = static_cast<std::uint32_t>(sizes.size());
        sizes.push_back(df[f]);
      }
    // The lists as they are made (the most they take) and the sums.
    const std::size_t bytes =
        FeatureListsOnDevice::build_bytes(model.size(), model.features.size(), df.size(), sizes) + model.size() * 4;
    if (bytes > budget / 2)
      throw UsageError(cat("the sparse form needs ", format_byte_size(bytes),
                           " of GPU memory for its lists while they are made, more than half the memory budget (",
                           format_byte_size(budget), "); raise --memory-budget or use --device cpu"));
    // The words' entries go up, and the lists are made there.
    std::vector<float> unit;  // cosine: each word's values over its norm
    if (cosine_) {
      unit.resize(model.mi.size());
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, model.size(), 256), [&](const auto& range) {
        for (std::size_t w = range.begin(); w < range.end(); ++w)
          for (std::uint64_t i = model.offsets[w]; i < model.offsets[w + 1]; ++i)
            unit[i] = static_cast<float>(model.mi[i] / model.norms[w]);
      });
    }
    const auto offsets = cuda::to_device(model.offsets.data(), model.offsets.size());
    const auto features = cuda::to_device(model.features.data(), model.features.size());
    const auto values = cuda::to_device(cosine_ ? unit.data() : model.mi.data(), model.mi.size());
    lists_ = FeatureListsOnDevice(model.size(), offsets.get(), features.get(), values.get(), list_of, sizes);
    std::vector<float> sums(model.size());
    for (std::size_t w = 0; w < model.size(); ++w) sums[w] = static_cast<float>(model.mi_sums[w]);
    sums_ = cuda::to_device(sums.data(), sums.size());
  }

  std::size_t bytes_per_row_a() const override { return sizeof(float); }
  std::size_t bytes_per_row_b() const override { return sizeof(float); }
  bool b_resident() const override { return true; }
  void load_a(RowRange, void*, gpu::Stream) override {}
  void load_b(RowRange, void*, gpu::Stream) override {}
  void score(const void*, RowRange a, const void*, RowRange b, float* tile, std::size_t ld,
             gpu::Stream stream) override {
    // Every score written: the shared features' sums (Lin: over s_i + s_j).
    lists_.add(a, b, cosine_, false, cosine_ ? nullptr : sums_.get(), tile, ld, stream);
  }

 private:
  bool cosine_ = false;  // PPMI: unit rows, products
  FeatureListsOnDevice lists_;
  cuda::DeviceBuffer<float> sums_;
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
