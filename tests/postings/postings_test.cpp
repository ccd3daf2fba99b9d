// Posting lists on the CPU: every algorithm against std::set_intersection folded over the
// lists; the ExpIndex, .skp and query parsers; the tokenizer; building from real text.
#include <gtest/gtest.h>

#include <cstring>

#include <xxhash.h>

#include "sealed_file.hpp"
#include "postings/algorithms.hpp"
#include "postings_fixture.hpp"
#include "simkit/error.hpp"
#include "simkit/tokenize.hpp"

namespace simkit {
namespace {

using postings::Algorithm;
using postings::DocId;

constexpr Algorithm kAlgorithms[] = {Algorithm::svs,  Algorithm::adaptive, Algorithm::hash,     Algorithm::galloping,
                                     Algorithm::simd, Algorithm::bitmap,   Algorithm::automatic};

std::vector<DocId> run(const std::vector<std::vector<DocId>>& lists, Algorithm algorithm) {
  std::vector<std::span<const DocId>> spans(lists.begin(), lists.end());
  std::vector<DocId> out;
  postings::intersect_lists(spans, algorithm, out);
  return out;
}

void expect_all_equal_reference(const std::vector<std::vector<DocId>>& lists, const std::string& what) {
  const auto want = test::reference_intersection(lists);
  for (const Algorithm a : kAlgorithms) EXPECT_EQ(run(lists, a), want) << postings::algorithm_name(a) << ": " << what;
}

TEST(Intersect, HandMadeShapes) {
  const std::vector<DocId> a{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23};
  expect_all_equal_reference({a}, "one list");
  expect_all_equal_reference({a, {}}, "an empty list");
  expect_all_equal_reference({{}, {}}, "two empty lists");
  expect_all_equal_reference({a, a, a}, "identical lists");
  expect_all_equal_reference({a, {2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24}}, "disjoint");
  expect_all_equal_reference({a, {23}}, "the last id only");
  expect_all_equal_reference({{0}, {0, 1}}, "id 0");
  expect_all_equal_reference({{0xFFFFFFFFu}, {5, 0xFFFFFFFFu}}, "the largest id");
  expect_all_equal_reference({{0, 0xFFFFFFFEu, 0xFFFFFFFFu}, {0, 7, 0xFFFFFFFFu}, {0, 0xFFFFFFFFu}}, "both ends");
}

TEST(Intersect, RandomListsEveryShape) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (int trial = 0; trial < (test::quick() ? 100 : 600); ++trial) {
    const std::uint32_t documents = trial % 3 == 0 ? 64 : trial % 3 == 1 ? 5000 : 30'000'000;
    const int k = random.integer(1, 5);
    std::vector<std::vector<DocId>> lists;
    for (int i = 0; i < k; ++i) {
      const int shape = random.integer(0, 6);
      const std::size_t n = shape == 0 ? 0 : shape == 1 ? 1 : shape <= 3 ? random.integer(2, 100) : random.integer(100, 20000);
      lists.push_back(test::random_list(random, n, documents));
    }
    if (trial % 7 == 0) lists.push_back(lists[0]);  // a list twice
    if (trial % 11 == 0 && !lists[0].empty()) {     // one list a subset of another
      std::vector<DocId> subset;
      for (std::size_t i = 0; i < lists[0].size(); i += 3) subset.push_back(lists[0][i]);
      lists.push_back(subset);
    }
    expect_all_equal_reference(lists, "trial " + std::to_string(trial));
  }
}

TEST(Intersect, OneListMuchLongerThanTheOther) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const auto longer = test::random_list(random, 200000, 1'000'000);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<DocId> shorter;
    for (int i = 0; i < 30; ++i) shorter.push_back(longer[random.integer(0, static_cast<int>(longer.size()) - 1)] + (i % 2));
    std::sort(shorter.begin(), shorter.end());
    shorter.erase(std::unique(shorter.begin(), shorter.end()), shorter.end());
    expect_all_equal_reference({shorter, longer}, "short against long");
    expect_all_equal_reference({longer, shorter, longer}, "long, short, long");
  }
}

// One Results reused by batches of changing size (large, small, large again): each batch's
// answers are its own, never a stale answer an earlier, larger batch left in it.
TEST(Intersect, ReusedResultsFollowEachBatchsSize) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const postings::Index index = test::random_index(random, 200, 50'000);
  const postings::Queries large = test::random_queries(random, index, 300);
  const postings::Queries small = test::random_queries(random, index, 20);
  postings::Results reused;
  for (const Algorithm a : {Algorithm::automatic, Algorithm::simd, Algorithm::svs})
    for (const postings::Queries* queries : {&large, &small, &large, &small}) {
      const postings::Results want = test::reference_results(index, *queries);
      postings::intersect_cpu(index, *queries, a, reused);
      EXPECT_EQ(reused.ids, want.ids) << postings::algorithm_name(a) << ", " << queries->size() << " queries";
      EXPECT_EQ(reused.offsets, want.offsets) << postings::algorithm_name(a);
      EXPECT_EQ(reused.counts, want.counts) << postings::algorithm_name(a);
    }
}

TEST(Intersect, BatchEqualsTheReferenceEachAlgorithm) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  // A sparse universe, and a small one where many lists are dense (bitmaps in auto).
  postings::Results reused;  // one Results answering batch after batch (stale answers, counts-only ones)
  for (const std::uint32_t documents : {2'000'000u, 20'000u}) {
    const postings::Index index = test::random_index(random, 300, documents);
    const postings::Queries queries = test::random_queries(random, index, test::quick() ? 200 : 1000);
    const postings::Results want = test::reference_results(index, queries);
    for (const Algorithm a : kAlgorithms) {
      const postings::Results got = postings::intersect_cpu(index, queries, a);
      EXPECT_EQ(got.ids, want.ids) << postings::algorithm_name(a);
      EXPECT_EQ(got.offsets, want.offsets) << postings::algorithm_name(a);
      EXPECT_EQ(got.counts, want.counts) << postings::algorithm_name(a);
      EXPECT_TRUE(got.per_query.empty()) << "a new Results keeps no storage for reuse";
      const postings::Results counted = postings::intersect_cpu(index, queries, a, true);
      EXPECT_EQ(counted.counts, want.counts) << postings::algorithm_name(a) << " --count";
      EXPECT_TRUE(counted.ids.empty());
      postings::intersect_cpu(index, queries, a, reused);
      EXPECT_EQ(reused.ids, want.ids) << postings::algorithm_name(a) << " reused";
      EXPECT_EQ(reused.offsets, want.offsets) << postings::algorithm_name(a) << " reused";
      EXPECT_EQ(reused.counts, want.counts) << postings::algorithm_name(a) << " reused";
      postings::intersect_cpu(index, queries, a, reused, true);
      EXPECT_EQ(reused.counts, want.counts) << postings::algorithm_name(a) << " reused, --count";
      EXPECT_TRUE(reused.ids.empty());
    }
  }
}

TEST(Intersect, BucketDirectoryCoversEveryId) {
  test::Random random;
  for (const std::size_t n : {1, 7, 600, 70000}) {
    const auto list = test::random_list(random, n, 40'000'000);
    const auto d = postings::detail::make_directory(list);
    ASSERT_EQ(d.starts.back(), list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::size_t b = list[i] >> d.shift;
      EXPECT_LE(d.starts[b], i);
      EXPECT_GT(d.starts[b + 1], i);
    }
  }
}

// ExpIndex bytes: [length][ids] little-endian uint32 a list.
std::string exp_index_bytes(const std::vector<std::vector<DocId>>& lists) {
  std::string bytes;
  for (const auto& l : lists) {
    const auto n = static_cast<std::uint32_t>(l.size());
    bytes.append(reinterpret_cast<const char*>(&n), 4);
    bytes.append(reinterpret_cast<const char*>(l.data()), l.size() * 4);
  }
  return bytes;
}

using test::input_error_of;

TEST(ExpIndex, ReadsWhatWasWritten) {
  test::Random random;
  std::vector<std::vector<DocId>> lists;
  for (int i = 0; i < 50; ++i) lists.push_back(test::random_list(random, random.integer(0, 500), 100000));
  const postings::Index index = postings::parse_exp_index(exp_index_bytes(lists), "x");
  ASSERT_EQ(index.terms(), lists.size());
  DocId largest = 0;
  for (std::size_t t = 0; t < lists.size(); ++t) {
    EXPECT_EQ(std::vector<DocId>(index.list(t).begin(), index.list(t).end()), lists[t]);
    if (!lists[t].empty()) largest = std::max(largest, lists[t].back());
  }
  EXPECT_EQ(index.documents, std::uint64_t{largest} + 1);
  EXPECT_TRUE(index.vocabulary.empty());
  EXPECT_EQ(postings::parse_exp_index("", "empty").terms(), 0u);
}

TEST(ExpIndex, RefusesWithTheByteOffset) {
  const std::string good = exp_index_bytes({{1, 2, 3}, {4}});
  // (A cut at a list's end leaves a shorter valid index: the format has no list count.)
  for (std::size_t cut = 1; cut < good.size(); ++cut) {
    if (cut == 16) continue;
    EXPECT_NE(input_error_of([&] { postings::parse_exp_index(good.substr(0, cut), "f"); }).find("truncated"), std::string::npos)
        << cut;
  }
  EXPECT_NE(input_error_of([&] { postings::parse_exp_index(exp_index_bytes({{3, 2}}), "f"); }).find("f: byte 8: list 0"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { postings::parse_exp_index(exp_index_bytes({{}, {9, 9}}), "f"); }).find("duplicate id"),
            std::string::npos);
}

TEST(Skp, RoundTripAndDamage) {
  test::Random random;
  test::TempDir dir;
  postings::Index index = test::random_index(random, 40, 90000);
  for (std::size_t t = 0; t < index.terms(); ++t) index.vocabulary.push_back("w" + std::to_string(1000 + t));
  const std::string path = (dir / "i.skp").string();
  postings::write_index(index, path);
  const postings::Index back = postings::read_index(path);
  EXPECT_EQ(back.ids, index.ids);
  EXPECT_EQ(back.offsets, index.offsets);
  EXPECT_EQ(back.vocabulary, index.vocabulary);
  EXPECT_EQ(back.documents, index.documents);
  EXPECT_EQ(back.find("w1007"), 7);
  EXPECT_EQ(back.find("w999"), -1);
  EXPECT_EQ(postings::read_any_index(path).ids, index.ids);

  const std::string bytes = test::read_file(path);
  for (std::size_t cut : {std::size_t{0}, std::size_t{10}, std::size_t{64}, bytes.size() / 2, bytes.size() - 1})
    EXPECT_NE(input_error_of([&] { postings::parse_index(bytes.substr(0, cut), "f"); }).find("truncated"), std::string::npos)
        << cut;
  for (std::size_t at : {std::size_t{140}, bytes.size() / 2, bytes.size() - 12}) {  // past the 128-byte header
    std::string damaged = bytes;
    damaged[at] ^= 4;
    EXPECT_NE(input_error_of([&] { postings::parse_index(damaged, "f"); }).find("checksum mismatch"), std::string::npos) << at;
  }
  EXPECT_NE(input_error_of([&] { postings::parse_index(std::string(100, 'x'), "f"); }).find("wrong magic"), std::string::npos);
}

// The same index written as version 1 (64-byte header, no bitmaps), as simkit before
// bitmaps wrote it.
std::string skp_version_1(const postings::Index& index) {
  std::string words;
  std::vector<std::uint64_t> word_offsets{0};
  for (const std::string& w : index.vocabulary) words += w, word_offsets.push_back(words.size());
  std::string out(64, '\0');
  const auto put = [&](const void* data, std::size_t bytes) { out.append(static_cast<const char*>(data), bytes); };
  const auto pad = [&](std::size_t to) { out.resize((out.size() + to - 1) / to * to, '\0'); };
  put(index.offsets.data(), index.offsets.size() * 8);
  pad(64);
  put(index.ids.data(), index.ids.size() * 4);
  pad(64);
  if (!index.vocabulary.empty()) put(word_offsets.data(), word_offsets.size() * 8);
  pad(64);
  put(words.data(), words.size());
  pad(8);
  const std::uint64_t size = out.size() + 8;
  const std::uint32_t fields32[] = {1, 64};
  const std::uint64_t fields64[] = {index.terms(), index.ids.size(), index.documents, index.vocabulary.size(),
                                    words.size(), size};
  std::memcpy(out.data(), "SIMKITPL", 8);
  std::memcpy(out.data() + 8, fields32, 8);
  std::memcpy(out.data() + 16, fields64, 48);
  const std::uint64_t sum = XXH3_64bits(out.data(), out.size());
  put(&sum, 8);
  return out;
}

TEST(Skp, BitmapsKeptReadAndChecked) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  test::TempDir dir;
  postings::Index index = test::random_index(random, 60, 30000);
  for (std::size_t t = 0; t < index.terms(); ++t) index.vocabulary.push_back("w" + std::to_string(1000 + t));
  ASSERT_FALSE(index.bitmap_terms.empty());
  const std::string path = (dir / "i.skp").string();
  postings::write_index(index, path);
  const postings::Index back = postings::read_index(path);
  EXPECT_EQ(back.bitmap_terms, index.bitmap_terms);
  EXPECT_EQ(back.bitmap_words, index.bitmap_words);

  // Version 2 (one XXH3-64 of every byte, before the checksum in pieces): read alike; its
  // own rule checked (the pieces' sum under version 2 is refused).
  const std::string written = test::read_file(path);
  const postings::Index second = postings::parse_index(test::with_version(written, 2, false), "v2");
  EXPECT_EQ(second.ids, index.ids);
  EXPECT_EQ(second.bitmap_words, index.bitmap_words);
  EXPECT_NE(input_error_of([&] { postings::parse_index(test::with_version(written, 2, true), "v2"); })
                .find("checksum mismatch"),
            std::string::npos);

  // Version 1: the same lists, their bitmaps built on reading.
  const postings::Index old = postings::parse_index(skp_version_1(index), "v1");
  EXPECT_EQ(old.ids, index.ids);
  EXPECT_EQ(old.vocabulary, index.vocabulary);
  EXPECT_EQ(old.bitmap_terms, index.bitmap_terms);
  EXPECT_EQ(old.bitmap_words, index.bitmap_words);

  // A bitmap with one bit more, or one less, than its list (checksum made to match).
  const std::string bytes = test::read_file(path);
  std::uint64_t first_word = 0;
  std::memcpy(&first_word, bytes.data() + 16, 8);  // terms
  const std::size_t bitmap_terms_at = (64 + 64 + (first_word + 1) * 8 + 63) / 64 * 64 + (index.ids.size() * 4 + 63) / 64 * 64;
  const std::size_t words_at = bitmap_terms_at + (index.bitmap_terms.size() * 4 + 63) / 64 * 64;
  const DocId first_id = index.list(index.bitmap_terms[0])[0];
  for (const std::size_t bit : {std::size_t{first_id}, std::size_t{first_id} + 1 - (first_id > 0 ? 2 : 0)}) {
    std::string damaged = bytes;
    damaged[words_at + bit / 8] = static_cast<char>(damaged[words_at + bit / 8] ^ (1 << (bit % 8)));
    EXPECT_NE(input_error_of([&] { postings::parse_index(test::sealed(damaged, true), "f"); })
                  .find("bitmap 0 differs from the list of term " + std::to_string(index.bitmap_terms[0])),
              std::string::npos)
        << bit;
  }
}

// The lists of `index` as one bitmap each: what Index::bitmap must hold.
void expect_bitmaps_equal_lists(const postings::Index& index) {
  const std::uint64_t documents = index.documents - index.first_document;
  std::size_t with = 0;
  for (std::size_t t = 0; t < index.terms(); ++t) {
    const std::span<const DocId> list = index.list(t);
    const std::uint64_t* bits = index.bitmap(t);
    const bool dense = list.size() >= 1024 && list.size() * 32 >= documents;
    ASSERT_EQ(bits != nullptr, dense) << "term " << t << " of " << list.size() << " ids";
    if (bits == nullptr) continue;
    ++with;
    std::vector<DocId> set;
    for (std::uint64_t d = 0; d < documents; ++d)
      if ((bits[d / 64] >> (d % 64)) & 1) set.push_back(static_cast<DocId>(index.first_document + d));
    EXPECT_EQ(set, std::vector<DocId>(list.begin(), list.end())) << "term " << t;
  }
  EXPECT_EQ(with, index.bitmap_terms.size());
  EXPECT_EQ(index.bitmap_words.size(), with * index.bitmap_stride());
}

TEST(Bitmaps, EachDenseListHasOneEqualToIt) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const postings::Index index = test::random_index(random, 200, 40000);
  ASSERT_GT(index.bitmap_terms.size(), 5u);  // the shapes include lists of 3,000+ ids among 40,000
  expect_bitmaps_equal_lists(index);
  // A shard's bitmaps cover its own documents (bit 0 = its first document), so lists
  // dense in the shard get one.
  for (const postings::DocRange range : {postings::DocRange{0, 10000}, postings::DocRange{12345, 40000}}) {
    const postings::Index shard = postings::documents_between(index, range);
    EXPECT_EQ(shard.bitmap_stride(), (range.end - range.begin + 63) / 64);
    expect_bitmaps_equal_lists(shard);
  }
}

TEST(Bitmaps, RefusedForIdsOutsideTheDocumentsAndRebuiltOnReading) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  postings::Index index = test::random_index(random, 30, 20000);
  ASSERT_FALSE(index.bitmap_terms.empty());
  postings::Index small = index;
  small.documents = 1000;  // below most lists' ids
  EXPECT_THROW(postings::add_bitmaps(small), Failure);
  EXPECT_EQ(small.bitmap(index.bitmap_terms[0]), nullptr);  // stale bitmaps of another stride: unused
  // An index written without bitmaps (made by hand) gets them when it is read.
  test::TempDir dir;
  postings::Index bare = index;
  bare.bitmap_terms.clear();
  bare.bitmap_words.clear();
  const std::string path = (dir / "bare.skp").string();
  postings::write_index(bare, path);
  const postings::Index back = postings::read_index(path);
  EXPECT_EQ(back.bitmap_terms, index.bitmap_terms);
  EXPECT_EQ(back.bitmap_words, index.bitmap_words);
}

TEST(Queries, TermIdsAndWords) {
  postings::Index index;
  index.ids = {1, 2, 3, 2, 3, 3};
  index.offsets = {0, 3, 5, 6};
  index.documents = 4;
  const postings::Queries q = postings::parse_queries("0 2\n1\t 0  \r\n2\n", "q", index, false);
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(std::vector<std::uint32_t>(q.query(1).begin(), q.query(1).end()), (std::vector<std::uint32_t>{1, 0}));
  EXPECT_NE(input_error_of([&] { postings::parse_queries("0\n3\n", "q", index, false); }).find("q:2:1: term id 3 is out of range"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { postings::parse_queries("0\n\n1\n", "q", index, false); }).find("q:2: "), std::string::npos);
  EXPECT_NE(input_error_of([&] { postings::parse_queries("0 1x\n", "q", index, false); }).find("q:1:3: expected a term id"),
            std::string::npos);
  EXPECT_THROW(postings::parse_queries("alpha\n", "q", index, true), UsageError);  // no vocabulary

  index.vocabulary = {"alpha", "beta", "gamma"};
  const postings::Queries w = postings::parse_queries("Gamma, ALPHA\nbeta delta\n", "q", index, true);
  const postings::Results r = postings::intersect_cpu(index, w, Algorithm::automatic);
  EXPECT_EQ(std::vector<DocId>(r.answer(0).begin(), r.answer(0).end()), (std::vector<DocId>{3}));
  EXPECT_EQ(r.counts[1], 0u);  // delta is not in the vocabulary: nothing matches
  EXPECT_NE(input_error_of([&] { postings::parse_queries("beta\n...\n", "q", index, true); }).find("q:2: "), std::string::npos);
}

TEST(Tokenizer, UnicodeWordBoundaries) {
  Tokenizer lower;
  std::vector<std::string> words;
  lower.split("Naïve CAFÉ-owners don't sell 3.14 pies; e-mail: x@y.org!", words);  // ICU keeps addresses whole
  EXPECT_EQ(words, (std::vector<std::string>{"naïve", "café", "owners", "don't", "sell", "3.14", "pies", "e", "mail",
                                             "x@y.org"}));
  lower.split("ÉCLAIR Straße ΣΟΦΊΑ", words);
  EXPECT_EQ(words, (std::vector<std::string>{"éclair", "straße", "σοφία"}));
  lower.split("東京タワーへ行く。", words);  // split by ICU's dictionary, punctuation dropped
  ASSERT_GE(words.size(), 2u);
  std::string joined;
  for (const auto& w : words) joined += w;
  EXPECT_EQ(joined, "東京タワーへ行く");
  lower.split(" \t,.;!? -- ", words);
  EXPECT_TRUE(words.empty());
  Tokenizer keep(false);
  keep.split("Keep The Case", words);
  EXPECT_EQ(words, (std::vector<std::string>{"Keep", "The", "Case"}));
}

TEST(Tokenizer, PlainAsciiTakenDirectlyAsIcuWould) {
  // Lines of ASCII letters, digits, spaces and tabs are split without ICU; the same line
  // with " ." appended goes through ICU (the period is no word): both give the same words,
  // lower-cased or not.
  test::Random random;
  SCOPED_TRACE(random.seed());
  const std::string alphabet = "abcXYZ019  \t";
  for (const bool lowercase : {true, false}) {
    Tokenizer tokenizer(lowercase);
    std::vector<std::string> direct, icu;
    for (int line = 0; line < 2000; ++line) {
      std::string text;
      for (int i = random.integer(0, 30); i > 0; --i)
        text += alphabet[static_cast<std::size_t>(random.integer(0, static_cast<int>(alphabet.size()) - 1))];
      tokenizer.split(text, direct);
      tokenizer.split(text + " .", icu);
      ASSERT_EQ(direct, icu) << "'" << text << "'";
    }
  }
}

TEST(Build, IndexOfHandMadeText) {
  test::TempDir dir;
  test::write_file(dir / "a.txt", "The cat sat.\nA dog; the DOG!\n\ncat and dog\n");
  test::write_file(dir / "b.txt", "naïve cat\n");
  const postings::Index index = postings::build_index({(dir / "a.txt").string(), (dir / "b.txt").string()}, {});
  EXPECT_EQ(index.documents, 5u);  // the empty line keeps its id
  const auto list = [&](const char* w) {
    const auto t = index.find(w);
    return t < 0 ? std::vector<DocId>{} : std::vector<DocId>(index.list(t).begin(), index.list(t).end());
  };
  EXPECT_EQ(list("cat"), (std::vector<DocId>{0, 3, 4}));
  EXPECT_EQ(list("dog"), (std::vector<DocId>{1, 3}));
  EXPECT_EQ(list("the"), (std::vector<DocId>{0, 1}));
  EXPECT_EQ(list("naïve"), (std::vector<DocId>{4}));
  EXPECT_TRUE(std::is_sorted(index.vocabulary.begin(), index.vocabulary.end()));

  postings::BuildOptions per_file;
  per_file.document_per_file = true;
  per_file.min_count = 2;
  const postings::Index files = postings::build_index({(dir / "a.txt").string(), (dir / "b.txt").string()}, per_file);
  EXPECT_EQ(files.documents, 2u);
  EXPECT_EQ(files.vocabulary, (std::vector<std::string>{"cat"}));  // the only word in both files

  test::write_file(dir / "bad.txt", "fine\nbroken \xC3\x28 here\n");
  EXPECT_NE(input_error_of([&] { postings::build_index({(dir / "bad.txt").string()}, {}); }).find("bad.txt:2:8: not valid UTF-8"),
            std::string::npos);
}

// The real sample: every algorithm equals the reference on the bundled queries.
TEST(Build, RealSampleEveryAlgorithm) {
  const postings::Index index = postings::build_index({test::sample_corpus().string()}, {});
  const postings::Queries queries = postings::read_queries(test::sample_queries().string(), index, true);
  ASSERT_EQ(queries.size(), 1000u);
  // The reference over the index's own lists, words missing from the vocabulary as empty.
  postings::Results want;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    std::vector<std::vector<DocId>> lists;
    for (const std::uint32_t t : queries.query(q))
      lists.push_back(t < index.terms() ? std::vector<DocId>(index.list(t).begin(), index.list(t).end())
                                        : std::vector<DocId>{});
    const auto answer = test::reference_intersection(lists);
    want.ids.insert(want.ids.end(), answer.begin(), answer.end());
    want.counts.push_back(answer.size());
  }
  std::size_t matched = 0;
  for (const auto c : want.counts) matched += c > 0;
  EXPECT_GT(matched, 700u);  // queries come from real sentences
  for (const Algorithm a : kAlgorithms) {
    const postings::Results got = postings::intersect_cpu(index, queries, a);
    EXPECT_EQ(got.ids, want.ids) << postings::algorithm_name(a);
    EXPECT_EQ(got.counts, want.counts) << postings::algorithm_name(a);
  }
}

}  // namespace
}  // namespace simkit
