// The fused epilogues of the tensor-core product (include/simkit/gemm.hpp): each score
// (dot, cosine, Lin, squared distance) with its per-row top k and its threshold, against
// float64 on the CPU and against the three-pass cuBLAS + select path, on shapes no tile
// divides (1 x 1, long and skinny ones, K past one slice); and the 3xTF32 product against
// float64 at fp32's accuracy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "simkit/error.hpp"
#include "simkit/gemm.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

struct Shape {
  std::size_t m, n, k;
};

// One job's inputs on the host and the device, and its float64 scores with the bound of
// TF32's rounding on each.
struct Job {
  gemm::Score kind;
  Shape s;
  std::vector<float> a, b, row_a, row_b;
  std::size_t rotate = 0;
  std::vector<double> score, tol;
  cuda::DeviceBuffer<float> da, db, dra, drb;

  double key(std::size_t i, std::size_t j) const {
    return kind == gemm::Score::SquaredDistance ? -score[i * s.n + j] : score[i * s.n + j];
  }
  gemm::ScoreSpec spec() const { return {kind, dra.get(), drb.get(), rotate}; }
};

// self: B is A (s.n = s.m), the self-join's input.
Job make_job(gemm::Score kind, Shape s, test::Random& random, bool self = false) {
  if (kind == gemm::Score::Lin) s.k = s.k / 8 * 8;  // [M | A] halves of a multiple of 4
  Job job{kind, s};
  if (kind == gemm::Score::Lin) {
    // DISCO rows [M | A], f = k / 2 features: A's rows read rotated by f.
    const std::size_t f = s.k / 2;
    job.rotate = s.k > 0 ? f : 0;
    const auto rows = [&](std::size_t count) {
      std::vector<float> out(count * s.k, 0.0f);
      const std::vector<float> u = random.floats(count * f, 0, 1);
      for (std::size_t r = 0; r < count; ++r)
        for (std::size_t c = 0; c < f; ++c)
          if (u[r * f + c] < 0.3f) {
            out[r * s.k + c] = 1.0f;
            out[r * s.k + f + c] = u[r * f + c] * 3;
          }
      return out;
    };
    job.a = rows(s.m);
    job.b = self ? job.a : rows(s.n);
  } else {
    job.a = random.floats(s.m * s.k);
    job.b = self ? job.a : random.floats(s.n * s.k);
  }
  // The per-row inputs each score takes.
  const auto per_row = [&](const std::vector<float>& x, std::size_t count) {
    std::vector<float> out(count, 0.0f);
    for (std::size_t r = 0; r < count; ++r) {
      double sum = 0, squares = 0;
      for (std::size_t c = 0; c < s.k; ++c) {
        squares += double(x[r * s.k + c]) * x[r * s.k + c];
        if (c >= s.k / 2) sum += x[r * s.k + c];
      }
      if (kind == gemm::Score::Cosine) out[r] = squares > 0 ? static_cast<float>(1 / std::sqrt(squares)) : 0.0f;
      if (kind == gemm::Score::Lin) out[r] = static_cast<float>(sum);
      if (kind == gemm::Score::SquaredDistance) out[r] = static_cast<float>(squares);
    }
    return out;
  };
  job.row_a = per_row(job.a, s.m);
  job.row_b = per_row(job.b, s.n);
  job.score.assign(s.m * s.n, 0.0);
  job.tol.assign(s.m * s.n, 0.0);
  for (std::size_t i = 0; i < s.m; ++i)
    for (std::size_t j = 0; j < s.n; ++j) {
      double p = 0, magnitude = 0;
      for (std::size_t l = 0; l < s.k; ++l) {
        const std::size_t la = (l + job.rotate) % std::max<std::size_t>(s.k, 1);
        const double term = double(job.a[i * s.k + la]) * job.b[j * s.k + l];
        p += term;
        magnitude += std::fabs(term);
      }
      const double bound = 0x1p-8 * magnitude;  // TF32: each operand within 2^-10 of itself
      double score = p, tol = bound;
      switch (kind) {
        case gemm::Score::Dot: break;
        case gemm::Score::Cosine:
          score = p * job.row_a[i] * job.row_b[j];
          tol = bound * job.row_a[i] * job.row_b[j];
          break;
        case gemm::Score::Lin: {
          const double d = double(job.row_a[i]) + job.row_b[j];
          score = d > 0 ? p / d : 0;
          tol = d > 0 ? bound / d : 0;
          break;
        }
        case gemm::Score::SquaredDistance:
          score = std::max(0.0, double(job.row_a[i]) + job.row_b[j] - 2 * p);
          tol = 2 * bound + 1e-6 * (double(job.row_a[i]) + job.row_b[j]);
          break;
      }
      job.score[i * s.n + j] = score;
      job.tol[i * s.n + j] = tol + 1e-6 * std::fabs(score) + 1e-30;
    }
  // (Never empty: the kernels take valid, aligned pointers also when k = 0.)
  const auto upload = [](std::vector<float> x) {
    x.resize(std::max<std::size_t>(x.size(), 4), 0.0f);
    return cuda::to_device(x.data(), x.size());
  };
  job.da = upload(job.a);
  job.db = upload(job.b);
  job.dra = upload(job.row_a);
  job.drb = upload(job.row_b);
  return job;
}

struct TopK {
  std::vector<float> scores;
  std::vector<std::uint32_t> columns;
};

template <typename Run>
TopK run_top(const Job& job, int top, Run&& run) {
  const std::size_t slots = job.s.m * top;
  cuda::DeviceBuffer<float> scores(std::max<std::size_t>(slots, 1));
  cuda::DeviceBuffer<std::uint32_t> columns(std::max<std::size_t>(slots, 1));
  run(job.spec(), job.s.m, job.s.n, job.s.k, job.da.get(), job.db.get(), top, scores.get(), columns.get());
  TopK out{std::vector<float>(slots), std::vector<std::uint32_t>(slots)};
  SIMKIT_CUDA_CHECK(cudaMemcpy(out.scores.data(), scores.get(), slots * sizeof(float), cudaMemcpyDeviceToHost));
  SIMKIT_CUDA_CHECK(cudaMemcpy(out.columns.data(), columns.get(), slots * 4, cudaMemcpyDeviceToHost));
  return out;
}

// A top-k answer is right when its columns are distinct, each score is its column's
// float64 score within TF32's bound, keys never increase, no column left out beats the
// last one kept by more than the bounds (equal up to ties), and missing slots are empty.
// self: a self-join's answer, where no row lists itself.
void expect_top_k(const Job& job, int top, const TopK& got, bool self = false) {
  const bool distance = job.kind == gemm::Score::SquaredDistance;
  const std::size_t kept = std::min<std::size_t>(top, self ? job.s.n - (job.s.n > 0) : job.s.n);
  for (std::size_t i = 0; i < job.s.m; ++i) {
    SCOPED_TRACE(testing::Message() << "row " << i);
    std::set<std::uint32_t> seen;
    for (std::size_t r = 0; r < std::size_t(top); ++r) {
      const float score = got.scores[i * top + r];
      const std::uint32_t column = got.columns[i * top + r];
      if (r >= kept) {
        ASSERT_EQ(column, 0xffffffffu) << "slot " << r;
        ASSERT_EQ(score, distance ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity());
        continue;
      }
      ASSERT_LT(column, job.s.n) << "slot " << r;
      ASSERT_TRUE(seen.insert(column).second) << "column " << column << " twice";
      if (self) ASSERT_NE(column, i) << "slot " << r << ": a row lists itself";
      const std::size_t e = i * job.s.n + column;
      ASSERT_NEAR(score, job.score[e], job.tol[e]) << "slot " << r << ", column " << column;
      if (r > 0) {
        const float before = got.scores[i * top + r - 1];
        ASSERT_TRUE(distance ? before <= score : before >= score) << "slot " << r << " out of order";
      }
    }
    if (kept == 0) continue;
    const std::size_t last = got.columns[i * top + kept - 1];
    for (std::size_t j = 0; j < job.s.n; ++j)
      if (!seen.count(static_cast<std::uint32_t>(j)) && !(self && j == i))
        ASSERT_LE(job.key(i, j), job.key(i, last) + job.tol[i * job.s.n + j] + job.tol[i * job.s.n + last])
            << "column " << j << " belongs in the top " << top;
  }
}

// Two answers name the same column in each slot, but where two scores tie within the bounds.
void expect_same_up_to_ties(const Job& job, int top, const TopK& x, const TopK& y) {
  for (std::size_t e = 0; e < x.columns.size(); ++e) {
    if (x.columns[e] == y.columns[e]) continue;
    const std::size_t i = e / top;
    ASSERT_LT(x.columns[e], job.s.n);
    ASSERT_LT(y.columns[e], job.s.n);
    const std::size_t f = i * job.s.n + x.columns[e], b = i * job.s.n + y.columns[e];
    ASSERT_NEAR(job.score[f], job.score[b], job.tol[f] + job.tol[b]) << "slot " << e % top << " of row " << i;
  }
}

// Both paths' answers right (see expect_top_k) and equal up to ties.
void expect_both_paths(const Job& job, int top, const TopK& fused, const TopK& base, bool self = false) {
  {
    SCOPED_TRACE("fused");
    expect_top_k(job, top, fused, self);
  }
  {
    SCOPED_TRACE("cuBLAS + select");
    expect_top_k(job, top, base, self);
  }
  expect_same_up_to_ties(job, top, fused, base);
}

// (130 x 2000 x 32: one K slice a tile, so that a block streaming many tiles wraps the
// ring of column factors; 70 x 600 x 2056: rows long enough for a tile a block; 190 x 700
// x 320: Lin's rotation in whole slices, which the TMA loader takes, an odd count of row
// tiles for its pairs.)
const Shape kShapes[] = {{1, 1, 4},        {7, 13, 40},     {130, 300, 68},  {1, 1000, 64},
                         {1000, 1, 64},    {257, 513, 304}, {300, 600, 1032}, {130, 2000, 32},
                         {70, 600, 2056}, {190, 700, 320}, {4, 3, 0}};
const gemm::Score kScores[] = {gemm::Score::Dot, gemm::Score::Cosine, gemm::Score::Lin,
                               gemm::Score::SquaredDistance};

TEST(GpuGemmFused, TopKOfEveryScoreEqualsFloat64AndTheCublasPath) {
  SIMKIT_REQUIRE_GPU();
  if (gemm::tensor_tiles().empty()) GTEST_SKIP() << "no Hopper GPU or no sm_90a build";
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (const gemm::Score kind : kScores)
    for (const Shape& shape : kShapes) {
      if (test::quick() && shape.m * shape.n > 100000) continue;
      const Job job = make_job(kind, shape, random);
      const Shape& s = job.s;
      // Tops up to 13 run on the 256-column tile, larger ones on the 128-column one; both
      // tiles at 1 and 10 (SIMKIT_FUSED_TILE forces the small one). Small products give
      // every column tile its own block; SIMKIT_FUSED_SHARES = 1 or 2 makes blocks stream
      // several tiles, as large ones do. The loader is TMA unless SIMKIT_GEMM_TMA says
      // 2 (TMA multicast in block pairs) or 0 (cp.async).
      struct Variant {
        int top;
        const char* tile;
        const char* shares;
        const char* tma;
      };
      const std::vector<Variant> all{
          {1, nullptr, nullptr, nullptr}, {10, nullptr, nullptr, nullptr}, {32, nullptr, nullptr, nullptr},
          {1, "128", nullptr, nullptr},   {10, "128", nullptr, nullptr},   {10, nullptr, "1", nullptr},
          {13, nullptr, "2", nullptr},    {32, nullptr, "2", nullptr},     {10, "128", "1", nullptr},
          {10, nullptr, nullptr, "0"},    {10, nullptr, "2", "2"},         {32, nullptr, "2", "0"}};
      // (Under compute-sanitizer: one variant of each path.)
      const std::vector<Variant> quick{{32, nullptr, nullptr, nullptr},
                                       {10, nullptr, "2", nullptr},
                                       {10, "128", "1", nullptr},
                                       {10, nullptr, "2", "2"},
                                       {10, nullptr, "2", "0"}};
      for (const Variant& v : test::quick() ? quick : all) {
        const int top = v.top;
        SCOPED_TRACE(testing::Message() << gemm::score_name(kind) << " top " << top << " on " << s.m << " x " << s.n
                                        << " x " << s.k << (v.tile ? ", 128-column tile" : "")
                                        << (v.shares ? ", shares " : "") << (v.shares ? v.shares : "")
                                        << (v.tma ? ", SIMKIT_GEMM_TMA " : "") << (v.tma ? v.tma : ""));
        std::optional<test::ScopedEnv> tile, shares, tma;
        if (v.tile) tile.emplace("SIMKIT_FUSED_TILE", v.tile);
        if (v.shares) shares.emplace("SIMKIT_FUSED_SHARES", v.shares);
        if (v.tma) tma.emplace("SIMKIT_GEMM_TMA", v.tma);
        const TopK fused = run_top(job, top, gemm::top_k_tf32);
        const TopK base = run_top(job, top, [](auto&&... args) { gemm::top_k_cublas(args...); });
        expect_both_paths(job, top, fused, base);
      }
    }
}

// The fused self-join (each pair multiplied once; a tile above the diagonal feeds its rows'
// and its columns' lists) of every score, in TF32 and fp16, against float64 and against
// the pairwise engine's symmetric cuBLAS path in the same precision: row counts no tile
// divides (1, 2, 129, 300, 700), K of one or several slices and k = 0, tops 1, 10 and 16,
// the lists' bands whole or one row tile at a time.
TEST(GpuGemmFused, SelfJoinOfEveryScoreEqualsFloat64AndTheCublasPath) {
  SIMKIT_REQUIRE_GPU();
  if (gemm::tensor_tiles().empty()) GTEST_SKIP() << "no Hopper GPU or no sm_90a build";
  test::Random random;
  SCOPED_TRACE(random.seed());
  // (Lin's rotation is half of k in whole 128-byte slices: k a multiple of 128.)
  const Shape shapes[] = {{1, 1, 128}, {2, 2, 128}, {129, 129, 256}, {300, 300, 128}, {700, 700, 384}, {40, 40, 0}};
  for (const gemm::Score kind : kScores)
    for (const Shape& shape : shapes) {
      if (test::quick() && shape.m > 300) continue;
      const Job job = make_job(kind, shape, random, true);
      const Shape& s = job.s;
      const auto fp16 = [&] {
        cuda::DeviceBuffer<std::uint16_t> h(std::max<std::size_t>(s.m * s.k, 8));
        gemm::to_fp16(job.da.get(), s.m * s.k, 1.0f, h.get());
        return h;
      }();
      for (const gemm::Operands operands : {gemm::Operands::tf32, gemm::Operands::fp16})
        for (const int top : {1, 10, gemm::kMaxSelfTop})
          for (const std::size_t budget : {std::size_t{0}, std::size_t{1}}) {
            if (test::quick() && (top == 1 || budget == 0)) continue;
            SCOPED_TRACE(testing::Message() << gemm::score_name(kind) << " " << gemm::operands_name(operands)
                                            << " top " << top << " on " << s.m << " x " << s.k
                                            << (budget ? ", a band a row tile" : ""));
            const void* rows = operands == gemm::Operands::fp16 ? static_cast<const void*>(fp16.get()) : job.da.get();
            const auto run = [&](bool fused) {
              return run_top(job, top, [&](const gemm::ScoreSpec& spec, std::size_t, std::size_t n, std::size_t k,
                                           const float*, const float*, int t, float* scores, std::uint32_t* columns) {
                if (fused)
                  gemm::self_top_k(spec, operands, n, k, rows, t, scores, columns, budget);
                else
                  gemm::self_top_k_cublas(spec, operands, n, k, rows, t, scores, columns);
              });
            };
            const TopK fused = run(true), base = run(false);
            expect_both_paths(job, top, fused, base, true);
          }
    }
}

// Ties broken by the lower index, exactly: on 0/1 rows every product is an integer that
// TF32 and fp16 hold exactly, so dot products and squared distances tie often and both
// paths must give the float64 lists slot for slot. 1,200 rows: tiles with ties in both
// halves of their 256 columns, and bands of 8 row tiles (the budget rounds 9 down) after
// which a second band starts at row tile 8 (lists offset by its first column tile).
TEST(GpuGemmFused, SelfJoinBreaksTiesByLowerIndex) {
  SIMKIT_REQUIRE_GPU();
  if (gemm::tensor_tiles().empty()) GTEST_SKIP() << "no Hopper GPU or no sm_90a build";
  test::Random random;
  SCOPED_TRACE(random.seed());
  const std::size_t n = test::quick() ? 300 : 1200, k = 64;
  std::vector<float> rows = random.floats(n * k, 0, 1);
  for (float& x : rows) x = x < 0.2f ? 1.0f : 0.0f;
  std::vector<float> norms(n, 0.0f);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t l = 0; l < k; ++l) norms[i] += rows[i * k + l];
  const auto d_rows = cuda::to_device(rows.data(), rows.size()), d_norms = cuda::to_device(norms.data(), n);
  cuda::DeviceBuffer<std::uint16_t> halves(n * k);
  gemm::to_fp16(d_rows.get(), n * k, 1.0f, halves.get());
  const std::size_t tiles_n = (n + 255) / 256;
  for (const gemm::Score kind : {gemm::Score::Dot, gemm::Score::SquaredDistance}) {
    const bool distance = kind == gemm::Score::SquaredDistance;
    const gemm::ScoreSpec spec{kind, distance ? d_norms.get() : nullptr, distance ? d_norms.get() : nullptr, 0};
    for (const int top : {10, gemm::kMaxSelfTop}) {
      // Each row's list in float64: keys descending, ties by lower index.
      std::vector<float> want_scores(n * top);
      std::vector<std::uint32_t> want_columns(n * top);
      for (std::size_t i = 0; i < n; ++i) {
        std::vector<std::pair<double, std::uint32_t>> all;
        for (std::size_t j = 0; j < n; ++j) {
          if (j == i) continue;
          double p = 0;
          for (std::size_t l = 0; l < k; ++l) p += double(rows[i * k + l]) * rows[j * k + l];
          all.push_back({distance ? -(norms[i] + norms[j] - 2 * p) : p, static_cast<std::uint32_t>(j)});
        }
        std::partial_sort(all.begin(), all.begin() + top, all.end(), [](const auto& x, const auto& y) {
          return x.first != y.first ? x.first > y.first : x.second < y.second;
        });
        for (int r = 0; r < top; ++r) {
          want_scores[i * top + r] = static_cast<float>(distance ? -all[r].first : all[r].first);
          want_columns[i * top + r] = all[r].second;
        }
      }
      const std::size_t per_tile = (128 * tiles_n + n) * top * 8;  // a row tile's lists (self_top_k's plan)
      for (const gemm::Operands operands : {gemm::Operands::tf32, gemm::Operands::fp16})
        for (const std::size_t budget : {std::size_t{0}, 9 * per_tile}) {
          SCOPED_TRACE(testing::Message() << gemm::score_name(kind) << " " << gemm::operands_name(operands) << " top "
                                          << top << (budget ? ", bands of 8 row tiles" : ""));
          const void* data =
              operands == gemm::Operands::fp16 ? static_cast<const void*>(halves.get()) : d_rows.get();
          cuda::DeviceBuffer<float> scores(n * top);
          cuda::DeviceBuffer<std::uint32_t> columns(n * top);
          for (const bool fused : {true, false}) {
            SCOPED_TRACE(fused ? "fused" : "cuBLAS + select");
            if (fused)
              gemm::self_top_k(spec, operands, n, k, data, top, scores.get(), columns.get(), budget);
            else
              gemm::self_top_k_cublas(spec, operands, n, k, data, top, scores.get(), columns.get());
            std::vector<float> got_scores(n * top);
            std::vector<std::uint32_t> got_columns(n * top);
            SIMKIT_CUDA_CHECK(
                cudaMemcpy(got_scores.data(), scores.get(), n * top * sizeof(float), cudaMemcpyDeviceToHost));
            SIMKIT_CUDA_CHECK(cudaMemcpy(got_columns.data(), columns.get(), n * top * 4, cudaMemcpyDeviceToHost));
            for (std::size_t e = 0; e < n * top; ++e) {
              ASSERT_EQ(got_columns[e], want_columns[e]) << "row " << e / top << ", slot " << e % top;
              ASSERT_EQ(got_scores[e], want_scores[e]) << "row " << e / top << ", slot " << e % top;
            }
          }
        }
    }
  }
}

TEST(GpuGemmFused, ThresholdOfEveryScoreKeepsExactlyThePairsPastIt) {
  SIMKIT_REQUIRE_GPU();
  if (gemm::tensor_tiles().empty()) GTEST_SKIP() << "no Hopper GPU or no sm_90a build";
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (const gemm::Score kind : kScores)
    for (const Shape& shape : {Shape{130, 300, 68}, Shape{257, 513, 304}, Shape{1, 1000, 64}, Shape{190, 700, 320}}) {
      const Job job = make_job(kind, shape, random);
      const Shape& s = job.s;  // (Lin's k rounded down to a multiple of 8)
      SCOPED_TRACE(testing::Message() << gemm::score_name(kind) << " on " << s.m << " x " << s.n << " x " << s.k);
      const bool distance = kind == gemm::Score::SquaredDistance;
      // About 2% of the pairs pass.
      std::vector<double> keys;
      for (std::size_t i = 0; i < s.m; ++i)
        for (std::size_t j = 0; j < s.n; ++j) keys.push_back(job.key(i, j));
      std::sort(keys.begin(), keys.end());
      const double key = keys[keys.size() * 98 / 100];
      const float threshold = static_cast<float>(distance ? -key : key);
      const std::size_t capacity = s.m * s.n;
      cuda::DeviceBuffer<ScoredPair> hits(capacity);
      const std::size_t count = gemm::threshold_tf32(job.spec(), s.m, s.n, s.k, job.da.get(), job.db.get(),
                                                     threshold, hits.get(), capacity);
      ASSERT_LE(count, capacity);
      std::vector<ScoredPair> got(count);
      SIMKIT_CUDA_CHECK(cudaMemcpy(got.data(), hits.get(), count * sizeof(ScoredPair), cudaMemcpyDeviceToHost));
      std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
      for (const ScoredPair& h : got) {
        ASSERT_LT(h.a, s.m);
        ASSERT_LT(h.b, s.n);
        ASSERT_TRUE(seen.insert({h.a, h.b}).second) << "pair " << h.a << ", " << h.b << " twice";
        const std::size_t e = h.a * s.n + h.b;
        ASSERT_NEAR(h.score, job.score[e], job.tol[e]);
        ASSERT_TRUE(distance ? h.score <= threshold : h.score >= threshold);
      }
      for (std::size_t i = 0; i < s.m; ++i)
        for (std::size_t j = 0; j < s.n; ++j)
          if (job.key(i, j) >= key + job.tol[i * s.n + j])
            ASSERT_TRUE(seen.count({static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j)}))
                << "pair " << i << ", " << j << " is missing";
      // Too little room: the count still says how many there are.
      EXPECT_EQ(gemm::threshold_tf32(job.spec(), s.m, s.n, s.k, job.da.get(), job.db.get(), threshold, hits.get(), 1),
                count);
    }
}

// 3xTF32 against float64: within fp32's rounding bound on every entry, and on long rows
// (k >= 1024, where summing dominates the split's own 2^-22 a term) no further off than
// fp32 sums in plain order (a TF32 product is ~100x further).
TEST(GpuGemmFused, ThreeTf32ProductsReachFp32Accuracy) {
  SIMKIT_REQUIRE_GPU();
  if (gemm::tensor_tiles().empty()) GTEST_SKIP() << "no Hopper GPU or no sm_90a build";
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (const Shape& s :
       {Shape{1, 1, 4}, Shape{130, 300, 68}, Shape{257, 129, 1028}, Shape{1000, 1, 64}, Shape{64, 64, 4096}}) {
    SCOPED_TRACE(testing::Message() << s.m << " x " << s.n << " x " << s.k);
    const std::vector<float> a = random.floats(s.m * s.k), b = random.floats(s.n * s.k);
    const auto da = cuda::to_device(a.data(), a.size()), db = cuda::to_device(b.data(), b.size());
    cuda::DeviceBuffer<float> dc(s.m * s.n);
    SIMKIT_CUDA_CHECK(cudaMemset(dc.get(), 0xFF, s.m * s.n * sizeof(float)));
    gemm::multiply_tf32x3(s.m, s.n, s.k, da.get(), db.get(), dc.get());
    std::vector<float> got(s.m * s.n);
    SIMKIT_CUDA_CHECK(cudaMemcpy(got.data(), dc.get(), got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    double largest = 0, error = 0, plain_error = 0;
    for (std::size_t i = 0; i < s.m; ++i)
      for (std::size_t j = 0; j < s.n; ++j) {
        double want = 0, magnitude = 0;
        float plain = 0;
        for (std::size_t l = 0; l < s.k; ++l) {
          want += double(a[i * s.k + l]) * b[j * s.k + l];
          magnitude += std::fabs(double(a[i * s.k + l]) * b[j * s.k + l]);
          plain = std::fma(a[i * s.k + l], b[j * s.k + l], plain);
        }
        ASSERT_NEAR(got[i * s.n + j], want, (double(s.k) * 6e-8 + 0x1p-20) * magnitude + 1e-30)
            << "entry " << i << ", " << j;
        largest = std::max(largest, std::fabs(want));
        error = std::max(error, std::fabs(got[i * s.n + j] - want));
        plain_error = std::max(plain_error, std::fabs(plain - want));
      }
    if (s.k >= 1024) EXPECT_LE(error, 2 * plain_error) << "fp32 in plain order: " << plain_error;
  }
}

TEST(GpuGemmFused, RefusesWhatItCannotDo) {
  SIMKIT_REQUIRE_GPU();
  if (gemm::tensor_tiles().empty()) GTEST_SKIP() << "no Hopper GPU or no sm_90a build";
  cuda::DeviceBuffer<float> x(256);
  cuda::DeviceBuffer<std::uint32_t> c(256);
  const gemm::ScoreSpec dot{};
  EXPECT_THROW(gemm::top_k_tf32(dot, 2, 2, 8, x.get(), x.get(), 0, x.get(), c.get()), UsageError);
  EXPECT_THROW(gemm::top_k_tf32(dot, 2, 2, 8, x.get(), x.get(), gemm::kMaxFusedTop + 1, x.get(), c.get()),
               UsageError);
  EXPECT_THROW(gemm::top_k_tf32(dot, 2, 2, 6, x.get(), x.get(), 1, x.get(), c.get()), UsageError);
  EXPECT_THROW(gemm::top_k_tf32({gemm::Score::Dot, nullptr, nullptr, 2}, 2, 2, 8, x.get(), x.get(), 1, x.get(),
                                c.get()),
               UsageError);
  EXPECT_THROW(gemm::multiply_tf32x3(2, 2, 6, x.get(), x.get(), x.get()), UsageError);
  // Cosine, Lin and distances read a factor a row: missing ones are refused, not read.
  EXPECT_THROW(gemm::top_k_tf32({gemm::Score::Cosine}, 2, 2, 8, x.get(), x.get(), 1, x.get(), c.get()), UsageError);
  EXPECT_THROW(gemm::threshold_tf32({gemm::Score::Lin}, 2, 2, 8, x.get(), x.get(), 0.5f, nullptr, 0), UsageError);
  // The self-join: tops 1 .. kMaxSelfTop, whole 16-byte pieces, rotations in whole slices.
  using gemm::Operands;
  EXPECT_THROW(gemm::self_top_k(dot, Operands::tf32, 2, 8, x.get(), 0, x.get(), c.get()), UsageError);
  EXPECT_THROW(gemm::self_top_k(dot, Operands::tf32, 2, 8, x.get(), gemm::kMaxSelfTop + 1, x.get(), c.get()),
               UsageError);
  EXPECT_THROW(gemm::self_top_k(dot, Operands::fp16, 2, 12, x.get(), 1, x.get(), c.get()), UsageError);
  EXPECT_THROW(gemm::self_top_k({gemm::Score::Dot, nullptr, nullptr, 16}, Operands::tf32, 2, 64, x.get(), 1, x.get(),
                                c.get()),
               UsageError);
  EXPECT_THROW(gemm::self_top_k({gemm::Score::Cosine}, Operands::tf32, 2, 8, x.get(), 1, x.get(), c.get()),
               UsageError);
  // Rotations other than 0 and k / 2 would make the scores asymmetric.
  EXPECT_THROW(gemm::self_top_k({gemm::Score::Dot, nullptr, nullptr, 32}, Operands::tf32, 2, 128, x.get(), 1, x.get(),
                                c.get()),
               UsageError);
  EXPECT_THROW(gemm::self_top_k_cublas({gemm::Score::Dot, nullptr, nullptr, 32}, Operands::tf32, 2, 128, x.get(), 1,
                                       x.get(), c.get()),
               UsageError);
}

}  // namespace
}  // namespace simkit
