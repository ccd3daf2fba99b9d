// Posting lists on the GPU: each kernel, resident or copied per batch, explicit or managed
// memory, in one part or many, equal to the reference (integers: exactly).
#include <gtest/gtest.h>

#include "postings_fixture.hpp"

namespace simkit {
namespace {

void expect_same(const postings::Results& got, const postings::Results& want, const std::string& what) {
  EXPECT_EQ(got.counts, want.counts) << what;
  EXPECT_EQ(got.offsets, want.offsets) << what;
  EXPECT_EQ(got.ids, want.ids) << what;
}

TEST(GpuPostings, EachKernelAndMemoryEqualsTheReference) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  // A sparse universe (no list dense), and a small one where long lists have bitmaps.
  postings::Results reused;
  for (const std::uint32_t documents : {3'000'000u, 40'000u}) {
    const postings::Index index = test::random_index(random, test::quick() ? 80 : 400, documents);
    EXPECT_EQ(index.bitmap_terms.empty(), documents > 1'000'000);
    const postings::Queries queries = test::random_queries(random, index, test::quick() ? 150 : 1000);
    const postings::Results want = test::reference_results(index, queries);
    for (const auto kernel : {postings::GpuKernel::sliced, postings::GpuKernel::flat})
      for (const bool managed : {false, true}) {
        postings::GpuOptions options;
        options.kernel = kernel;
        options.managed_memory = managed;
        postings::GpuIndex gpu(index, options);
        EXPECT_TRUE(gpu.resident());
        const std::string what = std::string(kernel == postings::GpuKernel::sliced ? "sliced" : "flat") +
                                 (managed ? ", managed" : ", explicit") + ", " + std::to_string(documents) + " documents";
        double ms = -1;
        expect_same(gpu.intersect(queries, false, &ms), want, what);
        EXPECT_GE(ms, 0.0);
        const postings::Results counted = gpu.intersect(queries, true);
        EXPECT_EQ(counted.counts, want.counts) << what << ", counts";
        EXPECT_TRUE(counted.ids.empty());
        gpu.intersect(queries, reused);  // stale answers of the last kernel or shape in it
        expect_same(reused, want, what + ", into a reused Results");
      }
  }
}

// A budget too small to hold the index: every batch copies its lists, in many parts, and
// a query whose lists alone exceed the budget is answered on the CPU.
TEST(GpuPostings, SmallBudgetRunsInParts) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  const postings::Index index = test::random_index(random, 120, 60'000);  // dense lists too: searched, not tested by bit
  const postings::Queries queries = test::random_queries(random, index, 300);
  postings::GpuOptions options;
  options.memory_budget = 400'000;  // 200 KB a part: a few lists at a time
  postings::GpuIndex gpu(index, options);
  EXPECT_FALSE(gpu.resident());
  const postings::Results want = test::reference_results(index, queries);
  expect_same(gpu.intersect(queries), want, "parts");
  postings::Results reused;  // page-locked, grown part by part
  gpu.intersect(queries, reused);
  expect_same(reused, want, "parts, into a reused Results");
}

// Answers large enough to come down in several pieces (65,536 ids or more each), from a
// resident index and from lists copied per part, into a new and a reused Results.
TEST(GpuPostings, LargeAnswersComeDownInPieces) {
  SIMKIT_REQUIRE_GPU();
  postings::Index index;
  index.documents = 4'000'000;
  const auto add = [&](std::uint32_t count, std::uint32_t step) {
    for (std::uint32_t i = 0; i < count; ++i) index.ids.push_back(i * step);
    index.offsets.push_back(index.ids.size());
  };
  add(300'000, 2);    // term 0: the even ids below 600,000
  add(200'000, 3);    // term 1: the multiples of 3 below 600,000
  add(1'000'000, 1);  // term 2: every id below 1,000,000
  add(3'000'000, 1);  // term 3, never asked for: the bulk of the index (18 MB in all)
  postings::add_bitmaps(index);
  postings::Queries queries;
  for (const std::vector<std::uint32_t>& q : {std::vector<std::uint32_t>{0, 2}, {0, 1}, {1}, {2, 0, 1}}) {
    queries.terms.insert(queries.terms.end(), q.begin(), q.end());
    queries.offsets.push_back(queries.terms.size());
  }
  const postings::Results want = test::reference_results(index, queries);
  ASSERT_EQ(want.counts[0], 300'000u);  // four pieces
  postings::Results reused;
  for (const std::size_t budget : {std::size_t{0}, std::size_t{24'000'000}}) {
    postings::GpuOptions options;
    options.memory_budget = budget;  // 24 MB: the index (18 MB and bitmaps) not resident, each part's lists copied
    postings::GpuIndex gpu(index, options);
    EXPECT_EQ(gpu.resident(), budget == 0);
    const std::string what = budget == 0 ? "resident" : "copied per part";
    expect_same(gpu.intersect(queries), want, what);
    gpu.intersect(queries, reused);
    expect_same(reused, want, what + ", into a reused Results");
    // The reused ids are page-locked (the answers come down into them); a copy is on the heap.
    EXPECT_NE(reused.ids.get_allocator().memory, nullptr);
    const postings::Results copy = reused;
    EXPECT_EQ(copy.ids.get_allocator().memory, nullptr);
    expect_same(copy, want, what + ", a copy of the reused Results");
  }
}

TEST(GpuPostings, RealSampleEqualsTheCpu) {
  SIMKIT_REQUIRE_GPU();
  const postings::Index index = postings::build_index({test::sample_corpus().string()}, {});
  const postings::Queries queries = postings::read_queries(test::sample_queries().string(), index, true);
  const postings::Results cpu = postings::intersect_cpu(index, queries, postings::Algorithm::svs);
  expect_same(postings::intersect_gpu(index, queries, {}), cpu, "sample");
}

}  // namespace
}  // namespace simkit
