// simkit postings build / query through the program: the TSV and JSON a user sees, the
// seed's ExpIndex and ExpQuery, and refusals.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace simkit {
namespace {

TEST(PostingsCli, BuildThenQueryWords) {
  test::TempDir dir;
  test::write_file(dir / "docs.txt", "The cat sat\nthe dog ran\ncat and dog\nA CAT, a dog, the end\n");
  test::write_file(dir / "q.txt", "cat dog\nthe\nzebra cat\ncat\n");
  const auto built = test::run_simkit({"postings", "build", (dir / "docs.txt").string(), "-o", (dir / "i.skp").string()});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const auto r = test::run_simkit({"postings", "query", "--index", (dir / "i.skp").string(), "--queries",
                                   (dir / "q.txt").string(), "--device", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\t2\t2\t3\n2\t3\t0\t1\t3\n3\t0\n4\t3\t0\t2\t3\n");
  for (const char* algorithm : {"svs", "adaptive", "hash", "galloping", "simd", "bitmap"}) {
    const auto again = test::run_simkit({"postings", "query", "--index", (dir / "i.skp").string(), "--queries",
                                         (dir / "q.txt").string(), "--algorithm", algorithm});
    EXPECT_EQ(again.out, r.out) << algorithm;
  }
  if (test::gpu_available()) {
    for (const char* kernel : {"sliced", "flat"}) {
      const auto gpu = test::run_simkit({"postings", "query", "--index", (dir / "i.skp").string(), "--queries",
                                         (dir / "q.txt").string(), "--device", "cuda", "--gpu-kernel", kernel});
      EXPECT_EQ(gpu.out, r.out) << kernel << ": " << gpu.err;
    }
    const auto managed = test::run_simkit({"postings", "query", "--index", (dir / "i.skp").string(), "--queries",
                                           (dir / "q.txt").string(), "--device", "cuda", "--managed"});
    EXPECT_EQ(managed.out, r.out) << managed.err;
  }
  // Term ids instead of words: the vocabulary is sorted (a, and, cat, dog, end, ran, sat,
  // the), so "cat" and "dog" are terms 2 and 3, "the" term 7.
  test::write_file(dir / "ids.txt", "2 3\n7\n");
  const auto ids = test::run_simkit({"postings", "query", "--index", (dir / "i.skp").string(), "--queries",
                                     (dir / "ids.txt").string(), "--term-ids", "--device", "cpu"});
  ASSERT_EQ(ids.exit_code, 0) << ids.err;
  EXPECT_EQ(ids.out, "1\t2\t2\t3\n2\t3\t0\t1\t3\n");
  // A gzip-compressed collection indexes as the plain one.
  test::run_shell("gzip -c '" + (dir / "docs.txt").string() + "' > '" + (dir / "docs.txt.gz").string() + "'");
  ASSERT_EQ(test::run_simkit({"postings", "build", (dir / "docs.txt.gz").string(), "-o", (dir / "gz.skp").string()})
                .exit_code,
            0);
  EXPECT_EQ(test::read_file(dir / "gz.skp"), test::read_file(dir / "i.skp"));
  const auto counted = test::run_simkit({"postings", "query", "--index", (dir / "i.skp").string(), "--queries",
                                         (dir / "q.txt").string(), "--count", "--device", "cpu"});
  EXPECT_EQ(counted.out, "1\t2\n2\t3\n3\t0\n4\t3\n");
  const auto json = test::run_simkit({"postings", "query", "--index", (dir / "i.skp").string(), "--queries",
                                      (dir / "q.txt").string(), "--format", "json", "--device", "cpu"});
  const auto lines = test::lines_of(json.out);
  ASSERT_EQ(lines.size(), 4u);
  const auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["query"], 1);
  EXPECT_EQ(first["ids"], nlohmann::json::parse("[2,3]"));
}

TEST(PostingsCli, ExpIndexAndExpQuery) {
  test::TempDir dir;
  std::string bytes;
  const auto put = [&](std::uint32_t v) { bytes.append(reinterpret_cast<const char*>(&v), 4); };
  for (const auto& list : std::vector<std::vector<std::uint32_t>>{{1, 5, 9, 12}, {}, {5, 9, 40}, {9}}) {
    put(static_cast<std::uint32_t>(list.size()));
    for (const auto id : list) put(id);
  }
  test::write_file(dir / "ExpIndex", bytes);
  test::write_file(dir / "ExpQuery", "0 2\n0 1\n3 2 0\n2\n");
  const auto r = test::run_simkit({"postings", "query", "--exp-index", (dir / "ExpIndex").string(), "--queries",
                                   (dir / "ExpQuery").string(), "--device", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\t2\t5\t9\n2\t0\n3\t1\t9\n4\t3\t5\t9\t40\n");
}

TEST(PostingsCli, Refusals) {
  test::TempDir dir;
  test::write_file(dir / "docs.txt", "alpha beta\n");
  test::write_file(dir / "q.txt", "alpha\n");
  ASSERT_EQ(test::run_simkit({"postings", "build", (dir / "docs.txt").string(), "-o", (dir / "i.skp").string()}).exit_code, 0);
  const std::string out = (dir / "out.tsv").string();
  test::expect_refused({"postings", "query", "--queries", (dir / "q.txt").string(), "-o", out}, "exactly one of --index",
                       out);
  test::expect_refused({"postings", "query", "--index", (dir / "i.skp").string(), "--queries", (dir / "q.txt").string(),
                        "--algorithm", "quick", "-o", out},
                       "unknown algorithm", out);
  test::expect_refused({"postings", "query", "--index", (dir / "nothing.skp").string(), "--queries",
                        (dir / "q.txt").string(), "-o", out},
                       "nothing.skp", out);
  test::expect_refused({"postings", "build", (dir / "empty-dir-does-not-exist").string(), "-o", out},
                       "empty-dir-does-not-exist", out);
}

}  // namespace
}  // namespace simkit
