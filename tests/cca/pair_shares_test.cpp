// The stream pairs of many-stream CCA shared out among workers (simkit/cca.hpp, "several
// workers"): trackers of the same tuples, each solving its share of the pairs, merged in
// pair order, give exactly one tracker's reports (every mode: batched and one step at a
// time, skip, vectors, approx with its random samples), and stop at the singular window
// one tracker meets first, with its message. (Several ranks: tests/cluster.)
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "cca_fixture.hpp"
#include "simkit/cca.hpp"
#include "simkit/threads.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

// One tracker's reports, or the shares' merged, and the singular window that stopped them.
cca::Reports track_all(const cca::Layout& layout, const cca::Options& options, const std::vector<double>& stream,
                       std::size_t parts, std::size_t chunk = 97) {
  std::vector<std::unique_ptr<cca::Tracker>> trackers;
  for (std::size_t p = 0; p < parts; ++p) {
    cca::Options mine = options;
    if (parts > 1) mine.pairs = cca::share_pairs(layout, p, parts);
    trackers.push_back(std::make_unique<cca::Tracker>(layout, mine));
  }
  cca::Reports all;
  const std::size_t d = layout.total(), count = stream.size() / d;
  for (std::size_t at = 0; at < count && !all.singular; at += chunk) {
    std::vector<cca::Reports> found(parts);
    run_parts(parts, [&](std::size_t p) {  // a thread a tracker, as simkit cca drives them
      try {
        trackers[p]->push(stream.data() + at * d, std::min(chunk, count - at),
                          [&](const cca::Report& r) { found[p].reports.push_back(r); });
      } catch (const cca::SingularWindow& e) {
        found[p].singular = e;
      }
    });
    cca::Reports merged = cca::merge_reports(std::move(found));
    for (cca::Report& r : merged.reports) all.reports.push_back(std::move(r));
    all.singular = merged.singular;
  }
  return all;
}

// Bit for bit: the shares compute each pair as one tracker does.
void expect_identical(const cca::Reports& got, const cca::Reports& want, const std::string& what) {
  ASSERT_EQ(got.reports.size(), want.reports.size()) << what;
  for (std::size_t i = 0; i < want.reports.size(); ++i) {
    const cca::Report &g = got.reports[i], &w = want.reports[i];
    ASSERT_EQ(g.t, w.t) << what;
    ASSERT_EQ(g.recomputed, w.recomputed) << what << ", t " << w.t;
    ASSERT_EQ(g.pairs.size(), w.pairs.size()) << what << ", t " << w.t;
    for (std::size_t p = 0; p < w.pairs.size(); ++p) {
      const cca::PairResult &gp = g.pairs[p], &wp = w.pairs[p];
      ASSERT_EQ(std::make_pair(gp.a, gp.b), std::make_pair(wp.a, wp.b)) << what << ", t " << w.t;
      ASSERT_EQ(gp.rho, wp.rho) << what << ", t " << w.t << ", pair " << p;
      ASSERT_EQ(gp.a_vectors, wp.a_vectors) << what << ", t " << w.t;
      ASSERT_EQ(gp.b_vectors, wp.b_vectors) << what << ", t " << w.t;
      ASSERT_EQ(std::make_pair(gp.a_kept, gp.b_kept), std::make_pair(wp.a_kept, wp.b_kept)) << what << ", t " << w.t;
      ASSERT_EQ(gp.exact_rho, wp.exact_rho) << what << ", t " << w.t;
    }
  }
  ASSERT_EQ(got.singular.has_value(), want.singular.has_value()) << what;
  if (want.singular) {
    EXPECT_EQ(got.singular->step(), want.singular->step()) << what;
    EXPECT_EQ(got.singular->pair(), want.singular->pair()) << what;
    EXPECT_EQ(std::string(got.singular->what()), want.singular->what()) << what;
  }
}

TEST(PairShares, CoverEveryPairInOrderBalancedByCost) {
  const cca::Layout even{{8, 8, 8, 8, 8, 8, 8}};  // 21 pairs
  for (const std::size_t parts : {1u, 2u, 3u, 4u, 21u, 30u}) {
    std::size_t next = 0, least = SIZE_MAX, most = 0;
    for (std::size_t p = 0; p < parts; ++p) {
      const cca::PairRange share = cca::share_pairs(even, p, parts);
      EXPECT_EQ(share.begin, next) << parts;
      EXPECT_LE(share.begin, share.end) << parts;
      next = share.end;
      least = std::min(least, share.end - share.begin);
      most = std::max(most, share.end - share.begin);
    }
    EXPECT_EQ(next, 21u) << parts;
    EXPECT_LE(most - least, 1u) << parts;  // equal widths: counts within one
  }
  // Wide streams weigh more: no share's cost passes its due by more than one pair's.
  const cca::Layout uneven{{40, 2, 2, 30, 2, 2, 2, 10}};
  std::vector<double> cost;
  for (std::size_t a = 0; a < 8; ++a)
    for (std::size_t b = a + 1; b < 8; ++b) cost.push_back(std::pow(double(uneven.dims[a] + uneven.dims[b]), 3));
  double total = 0, largest = 0;
  for (const double c : cost) total += c, largest = std::max(largest, c);
  for (std::size_t p = 0; p < 3; ++p) {
    const cca::PairRange share = cca::share_pairs(uneven, p, 3);
    double mine = 0;
    for (std::size_t i = share.begin; i < share.end; ++i) mine += cost[i];
    EXPECT_LE(mine, total / 3 + largest) << p;
  }
}

TEST(PairShares, SharesEqualOneTrackerInEveryMode) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const cca::Layout layout{{5, 4, 6, 3, 5}};  // 10 pairs
  const std::vector<double> stream = test::linear_stream(random, 700, 12, 11, 3);
  struct Case {
    const char* name;
    cca::Options options;
  };
  std::vector<Case> cases;
  const auto with = [](auto change) {
    cca::Options o;
    o.window = 120;
    o.k = 3;
    change(o);
    return o;
  };
  cases.push_back({"batched", with([](cca::Options&) {})});
  cases.push_back({"batched every 3", with([](cca::Options& o) { o.every = 3; })});
  cases.push_back({"one step at a time", with([](cca::Options& o) { o.batch = 1; })});
  cases.push_back({"every 40, recentred often", with([](cca::Options& o) { o.every = 40, o.recenter = 50; })});
  cases.push_back({"skip", with([](cca::Options& o) { o.skip = 0.05; })});
  cases.push_back({"vectors", with([](cca::Options& o) { o.vectors = true, o.every = 7; })});
  cases.push_back({"approx", with([](cca::Options& o) {
                     o.mode = cca::Mode::approx, o.epsilon = 0.9, o.alpha = 0.01, o.compare_exact = true;
                     o.k = 2;
                     o.seed = 11;
                   })});
  for (const Case& c : cases) {
    const cca::Reports want = track_all(layout, c.options, stream, 1);
    ASSERT_FALSE(want.reports.empty()) << c.name;
    ASSERT_EQ(want.reports.front().pairs.size(), 10u) << c.name;
    for (const std::size_t parts : {2u, 3u, 4u, 13u})
      expect_identical(track_all(layout, c.options, stream, parts), want, std::string(c.name) + ", " +
                                                                             std::to_string(parts) + " shares");
  }
  // The approx case sampled (else it would not test the shared random draws).
  const cca::Reports approx = track_all(layout, cases.back().options, stream, 1);
  bool sampled = false;
  for (const cca::Report& r : approx.reports)
    for (const cca::PairResult& p : r.pairs) sampled = sampled || p.a_kept < layout.dims[p.a];
  EXPECT_TRUE(sampled);
}

// The digit stream's image rows as 4 streams of 16 pixels: the real data.
TEST(PairShares, DigitRowsEqualOneTracker) {
  std::size_t count = 0;
  const std::vector<double> stream = test::digit_halves(count);
  const cca::Layout layout{{16, 16, 16, 16}};
  cca::Options options;
  options.window = 200;
  options.k = 2;
  options.ridge = 0.01;
  const cca::Reports want = track_all(layout, options, stream, 1);
  ASSERT_EQ(want.reports.size(), count - 200 + 1);
  for (const std::size_t parts : {2u, 3u}) expect_identical(track_all(layout, options, stream, parts), want, "digits");
}

// Stream 1 turns constant in one column at tuple 500 (singular from 580) and stream 2 at
// 450 (from 530): one tracker stops at 530 on pair (0,2), the second pair; every split of
// the pairs stops there too, after the same reports, with the same message.
TEST(PairShares, StopAtTheSingularWindowOneTrackerMeetsFirst) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  // Column 9 (stream 1: columns 6..9) as the fixture makes it; column 12 (stream 2) the
  // same way but zero from 450 (small integers, 0 first: its moments stay exact).
  std::vector<double> stream = test::stream_turning_singular(random, 6, 8);
  for (std::size_t t = 0; t < 700; ++t) stream[t * 14 + 12] = t == 0 || t >= 450 ? 0.0 : random.integer(1, 5);
  const cca::Layout layout{{6, 4, 4}};
  for (const std::size_t batch : {std::size_t{0}, std::size_t{1}}) {
    cca::Options options;
    options.window = 80;
    options.k = 2;
    options.batch = batch;
    const cca::Reports want = track_all(layout, options, stream, 1);
    ASSERT_TRUE(want.singular.has_value());
    EXPECT_EQ(want.singular->step(), 530u);
    EXPECT_EQ(want.singular->pair(), 1u);
    EXPECT_NE(std::string(want.singular->what()).find("singular covariance of stream 3"), std::string::npos)
        << want.singular->what();
    EXPECT_EQ(want.reports.size(), 530u - 80);
    for (const std::size_t parts : {2u, 3u})
      expect_identical(track_all(layout, options, stream, parts), want, "batch " + std::to_string(batch));
  }
}

// Shares on GPU trackers (two and three on one GPU) equal one GPU tracker: the same steps
// and pairs, correlations within the GPU's batched solver's 1e-8 (a tracker sizes its
// batches by the memory left, which trackers beside it take).
TEST(PairShares, GpuSharesEqualOneGpuTracker) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  const cca::Layout layout{{5, 4, 6, 3, 5}};
  const std::vector<double> stream = test::linear_stream(random, 700, 12, 11, 3);
  for (const bool vectors : {false, true}) {
    cca::Options options;
    options.window = 120;
    options.k = 3;
    options.device = 0;
    options.vectors = vectors;
    const cca::Reports want = track_all(layout, options, stream, 1);
    for (const std::size_t parts : {2u, 3u}) {
      const cca::Reports got = track_all(layout, options, stream, parts);
      ASSERT_EQ(got.reports.size(), want.reports.size());
      EXPECT_FALSE(got.singular.has_value());
      for (std::size_t i = 0; i < want.reports.size(); ++i) {
        ASSERT_EQ(got.reports[i].t, want.reports[i].t);
        ASSERT_EQ(got.reports[i].pairs.size(), want.reports[i].pairs.size());
        for (std::size_t p = 0; p < want.reports[i].pairs.size(); ++p)
          for (std::size_t j = 0; j < 3; ++j)
            ASSERT_NEAR(got.reports[i].pairs[p].rho[j], want.reports[i].pairs[p].rho[j], 1e-8)
                << "t " << want.reports[i].t << ", pair " << p;
      }
    }
  }
}

}  // namespace
}  // namespace simkit
