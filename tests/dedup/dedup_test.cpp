// simkit dedup's pieces: ssdeep hash lists, the index-based matcher on signatures that
// stress it, rate signatures, and the edit-rate pipeline on planted near-duplicates.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dedup/edit_distance.hpp"
#include "dedup/run_ends.hpp"
#include "dedup/sorted_runs.hpp"
#include "dedup_fixture.hpp"
#include "simkit/ctph.hpp"
#include "simkit/dedup.hpp"
#include "simkit/error.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

namespace fs = std::filesystem;

// The files below a folder as one plain walk finds them, one folder after another (the
// rules list_files keeps): links followed, a folder under every path that reaches it, a
// link back to a folder on the way (by its canonical path) not followed; sorted.
std::vector<std::string> files_below_one_by_one(const fs::path& top) {
  std::vector<std::string> found;
  std::vector<fs::path> ancestors{fs::canonical(top)};
  const auto options = fs::directory_options::skip_permission_denied | fs::directory_options::follow_directory_symlink;
  for (auto it = fs::recursive_directory_iterator(top, options); it != fs::recursive_directory_iterator(); ++it) {
    std::error_code kind;
    if (it->is_directory(kind)) {
      ancestors.resize(static_cast<std::size_t>(it.depth()) + 1);
      fs::path here = fs::canonical(it->path());
      if (std::find(ancestors.begin(), ancestors.end(), here) != ancestors.end()) it.disable_recursion_pending();
      else ancestors.push_back(std::move(here));
    } else if (it->is_regular_file(kind)) {
      found.push_back(it->path().string());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

// A generated tree (seeded): folders four deep with files, an empty folder, a link to a
// sibling folder (its files listed twice), links back to the top and to a parent (cycles,
// cut), a link to a file (listed) and a dangling link (not).
TEST(Files, FoldersListedAsOneWalkListsThem) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const test::TempDir dir;
  const fs::path top = dir / "top";
  std::vector<fs::path> folders{top};
  for (int i = 0; i < 60; ++i) {
    const fs::path& parent = folders[static_cast<std::size_t>(random.integer(0, static_cast<int>(folders.size()) - 1))];
    if (std::distance(top.begin(), top.end()) + 4 <= std::distance(parent.begin(), parent.end())) continue;
    folders.push_back(parent / ("d" + std::to_string(i)));
  }
  for (const fs::path& f : folders) fs::create_directories(f);
  for (int i = 0; i < 400; ++i)
    test::write_file(folders[static_cast<std::size_t>(random.integer(0, static_cast<int>(folders.size()) - 1))] /
                         ("f" + std::to_string(i) + ".txt"),
                     std::to_string(i));
  fs::create_directories(top / "empty");
  fs::create_symlink(folders[1], top / "link_to_folder");
  fs::create_symlink(top, folders.back() / "link_to_top");
  fs::create_symlink(folders[1].parent_path(), folders[1] / "link_to_parent");
  fs::create_symlink(top / "f0.txt", top / "link_to_file");
  test::write_file(top / "f0.txt", "zero");
  fs::create_symlink(top / "nowhere", top / "dangling");
  const std::vector<std::string> want = files_below_one_by_one(top);
  EXPECT_GT(want.size(), 400u);  // the linked folder's files twice
  EXPECT_EQ(dedup::list_files({top.string()}, true), want);
  // Several paths, files as given among them.
  const std::string file = (top / "f0.txt").string();
  std::vector<std::string> both = want;
  both.insert(both.begin(), file);
  EXPECT_EQ(dedup::list_files({file, top.string()}, true), both);
}

TEST(HashList, ReadsWhatItWrites) {
  const std::vector<std::pair<std::string, std::string>> entries = {
      {"3:abc:de", "plain.txt"}, {"6:rJPHPd:n", "a\"b.txt"}, {"3::", "dir/with,comma and space"}, {"96:AbC+/9:x", ""}};
  std::string text = std::string(dedup::kSsdeepHeader) + "\n";
  for (const auto& [sig, file] : entries) text += file.empty() ? sig + "\n" : dedup::list_line(sig, file);
  text += "\r\n";  // a blank line, CRLF
  ASSERT_TRUE(dedup::is_hash_list(text));
  const auto got = dedup::read_hash_list(text, "list.txt");
  ASSERT_EQ(got.size(), entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(got[i].signature, entries[i].first);
    EXPECT_EQ(got[i].file, entries[i].second);
  }
  EXPECT_EQ(dedup::list_line("3:a:b", "x\"y"), "3:a:b,\"x\\\"y\"\n");
}

TEST(HashList, MalformedLinesSayWhere) {
  const std::string header = std::string(dedup::kSsdeepHeader) + "\n";
  struct Case {
    std::string text;
    std::string where;  // "list:LINE:COLUMN"
  };
  const std::vector<Case> cases = {
      {"3:abc:def,\"x\"\n", "list:1:1"},                       // no header
      {header + "x:abc:def,\"x\"\n", "list:2:1"},              // no block size
      {header + "3:abc\n", "list:2:6"},                        // one part
      {header + "3:ab!c:def,\"x\"\n", "list:2:5"},             // not base64
      {header + "3:abc:def,x\n", "list:2:10"},                 // unquoted name
      {header + "3:abc:def,\"x\n", "list:2:13"},               // unclosed name
      {header + "3:" + std::string(65, 'a') + ":b\n", "list:2:3"},  // part too long
      {header + "12345678901234567890:a:b\n", "list:2:1"},     // block size too long
  };
  for (const Case& c : cases) {
    try {
      dedup::read_hash_list(c.text, "list");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const InputError& e) {
      EXPECT_EQ(to_string(e.where()), c.where) << e.what();
      EXPECT_NE(std::string(e.what()).find("expected"), std::string::npos) << e.what();
    }
  }
}

// A list of several megabytes is parsed in pieces on every core: the entries come out in
// the list's order, names with quotes, commas and CRLF line ends read as in a small list,
// and of two malformed lines in later pieces the earlier one is reported, at its line.
TEST(HashList, ListsOfManyPiecesReadAsOneList) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::string text = std::string(dedup::kSsdeepHeader) + "\n";
  std::vector<std::pair<std::string, std::string>> want;
  std::vector<std::uint64_t> line_of;  // each entry's line
  std::uint64_t line = 1;
  while (text.size() < (5u << 20)) {
    const std::string signature = fmt::format("{}:{}:{}", 3 << random.integer(0, 10), test::random_base64(random, random.integer(0, 64), 64),
                                              test::random_base64(random, random.integer(0, 32), 64));
    std::string file = fmt::format("dir/{}", want.size());
    if (random.integer(0, 20) == 0) file += "\"quoted, \\\" name\"";
    const bool no_name = random.integer(0, 50) == 0;
    std::string entry = no_name ? signature + "\n" : dedup::list_line(signature, file);
    if (random.integer(0, 10) == 0) entry.insert(entry.size() - 1, "\r");
    text += entry;
    want.emplace_back(signature, no_name ? "" : file);
    line_of.push_back(++line);
    if (random.integer(0, 30) == 0) text += "\n", ++line;  // a blank line
  }
  const auto got = dedup::read_hash_list(text, "big.ssdeep");
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].signature, want[i].first) << i;
    ASSERT_EQ(got[i].file, want[i].second) << i;
  }
  // Entries two fifths and four fifths in spoilt: a part with a '!', then a missing quote.
  const auto spoil = [&](std::size_t entry, std::string_view with) {
    std::size_t at = 0;
    for (std::uint64_t l = 1; l < line_of[entry]; ++l) at = text.find('\n', at) + 1;
    text.replace(at, text.find('\n', at) - at, with);
  };
  const std::size_t early = want.size() * 2 / 5, late = want.size() * 4 / 5;
  spoil(late, "3:abc:def,\"x");
  spoil(early, "3:ab!c:def,\"x\"");
  try {
    dedup::read_hash_list(text, "big.ssdeep");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(to_string(e.where()), fmt::format("big.ssdeep:{}:5", line_of[early])) << e.what();
  }
}

// The entries of a list estimated from its first 64 KiB: exact for a short list (with or
// without its last newline), within 5% for a long one whose lines vary, 0 for other text.
TEST(HashList, EntriesEstimatedFromTheFirstLines) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const std::string header = std::string(dedup::kSsdeepHeader) + "\n";
  std::string list = header;
  for (int i = 0; i < 100; ++i) list += dedup::list_line(fmt::format("3:{}:abc", test::random_base64(random, 20, 64)), "f");
  EXPECT_EQ(dedup::estimated_entries(list), 100u);
  list.pop_back();
  EXPECT_EQ(dedup::estimated_entries(list), 100u);
  std::size_t lines = 0;
  list = header;
  while (list.size() < (8u << 20)) {
    list += dedup::list_line(fmt::format("96:{}:{}", test::random_base64(random, random.integer(10, 64), 64),
                                         test::random_base64(random, random.integer(5, 32), 64)),
                             fmt::format("dir/{}", std::string(static_cast<std::size_t>(random.integer(1, 60)), 'x')));
    ++lines;
  }
  EXPECT_NEAR(static_cast<double>(dedup::estimated_entries(list)), static_cast<double>(lines), 0.05 * static_cast<double>(lines));
  EXPECT_EQ(dedup::estimated_entries(header), 0u);
  EXPECT_EQ(dedup::estimated_entries("not a list\n3:abc:def\n"), 0u);
}

// The index-based matcher against scoring every pair, on signatures made to stress it:
// identical short ones (no 7-gram to share), substrings common to nearly all (the
// fallback to meeting every compatible signature), and every block-size relation.
TEST(CtphMatch, IndexEqualsEveryPairOnHardSignatures) {
  test::Random random;
  const auto text = [&](int length, int letters) { return test::random_base64(random, length, letters); };
  std::vector<std::string> signatures;
  for (int i = 0; i < 400; ++i) {
    const std::uint64_t size = 3ull << random.integer(0, 4);
    switch (i % 4) {
      case 0: signatures.push_back(std::to_string(size) + ":" + text(random.integer(0, 6), 3) + ":" + text(random.integer(0, 3), 3)); break;
      case 1: signatures.push_back(std::to_string(size) + ":AAAbcdefgAAA" + text(random.integer(0, 40), 64) + ":" + text(20, 64)); break;
      case 2: signatures.push_back(std::to_string(size) + ":" + text(random.integer(20, 64), 4) + ":" + text(random.integer(10, 32), 4)); break;
      default: {
        const std::string copy = signatures[random.integer(0, i - 1)];
        signatures.push_back(copy);
        break;
      }
    }
  }
  const auto prepared = test::prepare_all(signatures);
  for (int threshold : {1, 40, 100}) {
    const auto want = test::every_pair_scored(prepared, threshold);
    EXPECT_EQ(dedup::match_all(prepared, threshold), want) << "threshold " << threshold;
    EXPECT_GT(want.size(), 100u);
  }
}

// Run ends made a range at a time equal one pass from the end, for ranges of 1 to 20
// items and runs from 1 item to all of them (so runs cross many range ends).
TEST(CtphMatch, RunEndsOfEveryRangeEqualOnePass) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (int round = 0; round < 300; ++round) {
    std::vector<std::uint64_t> keys(static_cast<std::size_t>(random.integer(0, 400)));
    const int distinct = random.integer(1, 50);
    for (auto& k : keys) k = static_cast<std::uint64_t>(random.integer(0, distinct - 1));
    std::sort(keys.begin(), keys.end());
    std::vector<std::uint32_t> want(keys.size()), got(keys.size(), 0);
    for (std::size_t i = keys.size(); i-- > 0;)
      want[i] = i + 1 < keys.size() && keys[i + 1] == keys[i] ? want[i + 1] : static_cast<std::uint32_t>(i + 1);
    const auto grain = static_cast<std::size_t>(random.integer(1, 20));
    dedup::fill_run_ends(std::span<const std::uint64_t>(keys), [](std::uint64_t k) { return k; },
                         std::span<std::uint32_t>(got), grain);
    ASSERT_EQ(got, want) << keys.size() << " keys, ranges of " << grain;
  }
}

// An index of more postings than one of its ranges holds (65,536): families of near
// copies (keys shared by a few) and a 7-character piece every signature of a block size
// holds (a run of keys longer than a range, crossing range ends): the CPU's matcher
// equals every pair scored.
TEST(CtphMatch, IndexOfManyRangesEqualsEveryPair) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::vector<std::string> signatures;
  std::string base;
  const int count = test::quick() ? 1200 : 2000;
  for (int i = 0; i < count; ++i) {
    if (i % 6 == 0) base = test::random_base64(random, 50, 64);
    std::string first = base;
    for (int e = random.integer(0, 4); e > 0; --e) first[static_cast<std::size_t>(random.integer(0, 49))] = 'Z';
    const std::uint64_t size = 3ull << random.integer(0, 2);
    signatures.push_back(fmt::format("{}:{}:{}ABCDEFG", size, first, test::random_base64(random, random.integer(0, 40), 64)));
  }
  const auto prepared = test::prepare_all(signatures);
  std::size_t postings = 0;
  for (const auto& p : prepared) postings += 1 + p.first.runs.size() + p.second.runs.size();
  ASSERT_GT(postings, 1u << 16);
  for (int threshold : {1, 50}) {
    const auto want = test::every_pair_scored(prepared, threshold);
    EXPECT_EQ(dedup::match_all(prepared, threshold), want) << "threshold " << threshold;
    EXPECT_GT(want.size(), static_cast<std::size_t>(count));
  }
}

// The workers' sorted shares merged (not sorted again) into what one sort of them all
// gives: runs of different lengths, empty ones, and enough matches for many pieces.
TEST(CtphMatch, SortedRunsMergeAsOneSort) {
  test::Random random;
  for (const std::size_t runs : {1u, 2u, 3u, 5u, 12u}) {
    SCOPED_TRACE(std::to_string(runs) + " runs, seed " + std::to_string(random.seed()));
    // Distinct pairs dealt to the runs at random, each run then sorted.
    using dedup::Match;
    dedup::MatchList every;
    for (std::uint32_t a = 0; a < 1500; ++a)  // about 450,000 matches: pieces of 65,536 merged apart
      for (std::uint32_t b = a + 1; b < 1500; b += 1 + static_cast<std::uint32_t>(random.integer(0, 3)))
        every.push_back(Match{a, b, random.integer(1, 100)});
    std::vector<dedup::MatchList> dealt(runs + 1);  // the last one stays empty
    for (const Match& m : every) dealt[static_cast<std::size_t>(random.integer(0, static_cast<int>(runs) - 1))].push_back(m);
    const auto by_pair = [](const Match& p, const Match& q) { return p.a != q.a ? p.a < q.a : p.b < q.b; };
    dedup::MatchList flat;
    std::vector<std::size_t> ends;
    for (auto& run : dealt) {
      std::sort(run.begin(), run.end(), by_pair);
      flat.insert(flat.end(), run.begin(), run.end());
      ends.push_back(flat.size());
    }
    dedup::MatchList want = flat;
    std::sort(want.begin(), want.end(), by_pair);
    EXPECT_EQ(dedup::merge_sorted_runs(dealt), want);
    EXPECT_EQ(dedup::merge_sorted_runs(flat, ends), want);
  }
  EXPECT_TRUE(dedup::merge_sorted_runs(std::vector<dedup::MatchList>(3)).empty());
}

// Block size 0 (only a hand-made list holds it): identical signatures still score 100, as
// libfuzzy scores them, and the group meets only itself, once.
TEST(CtphMatch, ZeroBlockSize) {
  const std::vector<std::string> signatures = {"0:abcdefghij:abc", "0:abcdefghij:abc", "0:abcdefghik:abc",
                                               "3:abcdefghij:abc", "0::", "0::", "6:abcdefghij:abc"};
  const auto prepared = test::prepare_all(signatures);
  const auto want = test::every_pair_scored(prepared, 1);
  EXPECT_EQ(dedup::match_all(prepared, 1), want);
  EXPECT_EQ(want.size(), 2u);  // the two identical pairs of block size 0
}

// Block sizes past 2^64 / 2 (strtoull saturates a hand-made one): libfuzzy compares equal
// ones' second parts at twice the size, wrapped, so the index keys those parts too.
TEST(CtphMatch, BlockSizesPastHalfTheRange) {
  const std::string huge = "18446744073709551615", less = "18446744073709551614";
  const std::vector<std::string> signatures = {huge + ":abc:ABCDEFGHIJKLMNOP", huge + ":xyz:ABCDEFGHIJKLMNOQ",
                                               less + ":ABCDEFGHIJKLMNOP:abc", huge + ":abc:ABCDEFGHIJKLMNOP",
                                               "9223372036854775807:ABCDEFGHIJKLMNOP:q"};
  const auto prepared = test::prepare_all(signatures);
  const auto want = test::every_pair_scored(prepared, 1);
  EXPECT_EQ(dedup::match_all(prepared, 1), want);
  EXPECT_GE(want.size(), 3u);  // 0-1 and 1-3 through the second parts, 0-3 identical
}

}  // namespace
}  // namespace simkit
