// Integer-valued vectors and a plain dot-product scorer: every score is exact in
// float32 on any device and in any blocking, so engines must agree bit for bit.
#pragma once

#include <vector>

#include "engine/pairwise_common.hpp"
#include "simkit/pairwise.hpp"
#include "simkit/topk.hpp"
#include "test_support.hpp"

namespace simkit::test {

struct DotData {
  std::size_t rows_a = 0, rows_b = 0, dim = 0;
  std::vector<float> a, b;  // row-major
};

inline DotData make_dot_data(Random& random, std::size_t rows_a, std::size_t rows_b, std::size_t dim,
                             bool same = false) {
  DotData d{rows_a, rows_b, dim, random.small_integers(rows_a * dim, -3, 3), {}};
  d.b = same ? d.a : random.small_integers(rows_b * dim, -3, 3);
  return d;
}

inline float dot(const float* x, const float* y, std::size_t dim) {
  float s = 0;
  for (std::size_t i = 0; i < dim; ++i) s += x[i] * y[i];
  return s;
}

inline BlockScoreFn dot_scorer(const DotData& d) {
  return [&d](RowRange a, RowRange b, float* out, std::size_t ld) {
    for (std::size_t i = a.begin; i < a.end; ++i)
      for (std::size_t j = b.begin; j < b.end; ++j)
        out[(i - a.begin) * ld + (j - b.begin)] = dot(&d.a[i * d.dim], &d.b[j * d.dim], d.dim);
  };
}

// The answer by brute force: the full matrix, sorted rows, every qualifying pair.
inline PairwiseResult reference(const DotData& d, const PairwiseJob& job) {
  std::vector<float> full(d.rows_a * d.rows_b);
  for (std::size_t i = 0; i < d.rows_a; ++i)
    for (std::size_t j = 0; j < d.rows_b; ++j) {
      const bool self = job.exclude_self && i == j;
      full[i * d.rows_b + j] = self ? std::numeric_limits<float>::quiet_NaN()
                                    : dot(&d.a[i * d.dim], &d.b[j * d.dim], d.dim);
    }
  PairwiseResult result;
  if (job.k > 0) result.topk = topk_reference(full.data(), d.rows_a, d.rows_b, job.k);
  if (job.threshold)
    for (std::uint32_t i = 0; i < d.rows_a; ++i)
      for (std::uint32_t j = job.symmetric ? i : 0; j < d.rows_b; ++j)
        if (full[i * d.rows_b + j] >= *job.threshold) result.pairs.push_back({i, j, full[i * d.rows_b + j]});
  return result;
}

// A case of the engine tests, named for the test list ("a37_b211_d5_k7_sym_self_thr").
struct PairwiseCase {
  std::size_t rows_a, rows_b, dim, k;
  bool symmetric, exclude_self, threshold;
};

inline void PrintTo(const PairwiseCase& c, std::ostream* os) {
  *os << c.rows_a << "x" << c.rows_b << " dim " << c.dim << " k " << c.k << (c.symmetric ? " symmetric" : "")
      << (c.exclude_self ? " exclude-self" : "") << (c.threshold ? " threshold" : "");
}

inline std::string case_name(const ::testing::TestParamInfo<PairwiseCase>& info) {
  const PairwiseCase& c = info.param;
  return "a" + std::to_string(c.rows_a) + "_b" + std::to_string(c.rows_b) + "_d" + std::to_string(c.dim) + "_k" +
         std::to_string(c.k) + (c.symmetric ? "_sym" : "") + (c.exclude_self ? "_self" : "") +
         (c.threshold ? "_thr" : "");
}

// A job's shares, each run by `run` (one PairwiseJob with its a_rows), put together as
// the engines' callers do: top-k lists merged row by row, threshold pairs in (a, b) order.
template <typename Run>
PairwiseResult merged_shares(const PairwiseJob& job, const std::vector<std::vector<RowRange>>& shares, Run run) {
  PairwiseResult merged;
  for (std::size_t p = 0; p < shares.size(); ++p) {
    PairwiseJob mine = job;
    mine.a_rows = shares[p];
    PairwiseResult got = run(mine);
    if (p == 0) {
      merged.topk = std::move(got.topk);
    } else {
      merge_topk(merged.topk, got.topk);
    }
    merged.pairs.insert(merged.pairs.end(), got.pairs.begin(), got.pairs.end());
  }
  detail::sort_pairs(merged.pairs);
  return merged;
}

inline void expect_same_result(const PairwiseResult& got, const PairwiseResult& want) {
  ASSERT_EQ(got.topk.rows, want.topk.rows);
  ASSERT_EQ(got.topk.k, want.topk.k);
  EXPECT_EQ(got.topk.indices, want.topk.indices);
  for (std::size_t i = 0; i < want.topk.indices.size(); ++i)
    if (want.topk.indices[i] != kNoIndex) {
      ASSERT_EQ(got.topk.scores[i], want.topk.scores[i]) << "slot " << i;
    }
  ASSERT_EQ(got.pairs.size(), want.pairs.size());
  EXPECT_TRUE(got.pairs == want.pairs);
}

}  // namespace simkit::test
