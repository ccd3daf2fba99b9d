// The documents shared out among workers (simkit/postings.hpp, "several workers"): shards
// cut by documents_between, answered by every algorithm and concatenated in document order,
// equal the whole index's answers (ids and counts); alone, DistributedIndex is the plain
// search; on a GPU, two workers on shards equal the CPU. (Several ranks: tests/cluster.)
#include <gtest/gtest.h>

#include "postings_fixture.hpp"
#include "simkit/pairwise.hpp"
#include "simkit/postings.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

using postings::Algorithm;

constexpr Algorithm kAlgorithms[] = {Algorithm::svs,  Algorithm::adaptive, Algorithm::hash,     Algorithm::galloping,
                                     Algorithm::simd, Algorithm::bitmap,   Algorithm::automatic};

void expect_same(const postings::Results& got, const postings::Results& want, const std::string& what) {
  EXPECT_EQ(got.counts, want.counts) << what;
  EXPECT_EQ(got.offsets, want.offsets) << what;
  EXPECT_EQ(got.ids, want.ids) << what;
}

// The index cut into `parts` shares as share_rows cuts it, each answered by `algorithm`.
postings::Results by_shards(const postings::Index& index, const postings::Queries& queries, std::size_t parts,
                            Algorithm algorithm, bool count_only) {
  std::vector<postings::Results> found;
  for (std::size_t p = 0; p < parts; ++p) {
    const RowRange rows = share_rows(index.documents, false, p, parts);
    const postings::Index shard = postings::documents_between(index, {rows.begin, rows.end});
    for (std::size_t t = 0; t < shard.terms(); ++t)
      for (const postings::DocId id : shard.list(t)) {
        EXPECT_GE(id, rows.begin);
        EXPECT_LT(id, rows.end);
      }
    found.push_back(postings::intersect_cpu(shard, queries, algorithm, count_only));
  }
  return postings::concatenate(found, queries.size(), count_only);
}

TEST(Shards, EveryAlgorithmOnRandomIndexes) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const postings::Index index = test::random_index(random, 120, 90000);
  const postings::Queries queries = test::random_queries(random, index, 300);
  const postings::Results want = test::reference_results(index, queries);
  for (const std::size_t parts : {1u, 2u, 3u, 7u})
    for (const Algorithm a : kAlgorithms) {
      const std::string what = std::to_string(parts) + " shards, " + postings::algorithm_name(a);
      expect_same(by_shards(index, queries, parts, a, false), want, what);
      EXPECT_EQ(by_shards(index, queries, parts, a, true).counts, want.counts) << what;
    }
}

TEST(Shards, KeepEveryIdOnceAndTheRangesBounds) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const postings::Index index = test::random_index(random, 60, 5000);
  std::size_t kept = 0;
  for (std::size_t p = 0; p < 4; ++p) {
    const postings::Index shard = postings::documents_between(index, {1250 * p, 1250 * (p + 1)});
    EXPECT_EQ(shard.terms(), index.terms());
    EXPECT_EQ(shard.first_document, 1250 * p);
    EXPECT_EQ(shard.documents, 1250 * (p + 1));
    kept += shard.ids.size();
  }
  EXPECT_EQ(kept, index.ids.size());
  // Ranges past the index are cut to it; an empty range keeps nothing.
  const postings::Index past = postings::documents_between(index, {4000, 1u << 31});
  EXPECT_EQ(past.documents, index.documents);
  EXPECT_TRUE(postings::documents_between(index, {3000, 3000}).ids.empty());
}

// The real sample (the Brown sentences and their queries): shards equal the whole index.
TEST(Shards, RealSample) {
  const postings::Index index = postings::build_index({test::sample_corpus().string()}, {});
  const postings::Queries queries = postings::read_queries(test::sample_queries().string(), index, true);
  for (const Algorithm a : kAlgorithms) {
    const postings::Results want = postings::intersect_cpu(index, queries, a);
    for (const std::size_t parts : {2u, 3u})
      expect_same(by_shards(index, queries, parts, a, false), want,
                  std::to_string(parts) + " shards, " + postings::algorithm_name(a));
  }
}

TEST(DistributedIndex, AloneIsThePlainSearch) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const postings::Index index = test::random_index(random, 80, 40000);
  const postings::Queries queries = test::random_queries(random, index, 200);
  for (const Algorithm a : {Algorithm::svs, Algorithm::automatic}) {
    postings::DistributedOptions options;
    options.algorithm = a;
    postings::DistributedIndex shared(index, options);
    EXPECT_EQ(shared.workers(), 1u);
    ASSERT_EQ(shared.local_documents().size(), 1u);
    EXPECT_EQ(shared.local_documents()[0].end, index.documents);
    expect_same(shared.intersect(queries), postings::intersect_cpu(index, queries, a), postings::algorithm_name(a));
    EXPECT_EQ(shared.intersect(queries, true).counts, postings::intersect_cpu(index, queries, a, true).counts);
  }
}

// Two and three workers on one GPU (each its shard, as --device cuda:0,0 would give) equal
// the CPU, both kernels, resident or not.
TEST(DistributedIndex, GpuWorkersEqualTheCpu) {
  SIMKIT_REQUIRE_GPU();
  test::Random random;
  SCOPED_TRACE(random.seed());
  const postings::Index index = test::random_index(random, 150, 200000);
  const postings::Queries queries = test::random_queries(random, index, 500);
  const postings::Results want = postings::intersect_cpu(index, queries, Algorithm::automatic);
  for (const std::size_t workers : {2u, 3u})
    for (const postings::GpuKernel kernel : {postings::GpuKernel::flat, postings::GpuKernel::sliced})
      for (const bool resident : {true, false}) {
        postings::DistributedOptions options;
        options.gpus.assign(workers, 0);
        options.gpu.kernel = kernel;
        options.gpu.resident = resident;
        postings::DistributedIndex shared(index, options);
        EXPECT_EQ(shared.workers(), workers);
        double ms = -1;
        const std::string what = std::to_string(workers) + " workers, " +
                                 (kernel == postings::GpuKernel::flat ? "flat" : "sliced") +
                                 (resident ? ", resident" : ", copied");
        expect_same(shared.intersect(queries, false, nullptr, &ms), want, what);
        EXPECT_GE(ms, 0) << what;
        EXPECT_EQ(shared.intersect(queries, true).counts, want.counts) << what;
      }
}

}  // namespace
}  // namespace simkit
