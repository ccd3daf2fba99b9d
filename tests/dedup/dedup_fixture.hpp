// Planted near-duplicates for the edit-rate tests (CPU and GPU): real headers and copies
// with a few random edits, and the pairs a correct pipeline must report.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "dedup/edit_distance.hpp"
#include "simkit/ctph.hpp"
#include "simkit/dedup.hpp"
#include "random_edits.hpp"
#include "test_support.hpp"

namespace simkit::test {

// The signatures read as libfuzzy reads them, each expected well-formed.
inline std::vector<ctph::Prepared> prepare_all(const std::vector<std::string>& signatures) {
  std::vector<ctph::Prepared> out(signatures.size());
  for (std::size_t i = 0; i < signatures.size(); ++i) EXPECT_TRUE(ctph::prepare(signatures[i], out[i])) << signatures[i];
  return out;
}

// The reference: every pair (i < j) scored by ctph::compare, those at `threshold` or more.
inline dedup::MatchList every_pair_scored(const std::vector<ctph::Prepared>& prepared, int threshold) {
  dedup::MatchList want;
  for (std::uint32_t i = 0; i < prepared.size(); ++i)
    for (std::uint32_t j = i + 1; j < prepared.size(); ++j)
      if (const int s = ctph::compare(prepared[i], prepared[j]); s >= threshold) want.push_back({i, j, s});
  return want;
}

// `length` characters drawn from the first `letters` of base64's alphabet (few letters:
// long common subsequences and shared substrings), for signatures made to be hard.
inline std::string random_base64(Random& random, int length, int letters) {
  static constexpr const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string s;
  for (int i = 0; i < length; ++i) s += kAlphabet[random.integer(0, letters - 1)];
  return s;
}

// Text as generators, templates and logs write it, `length` bytes: a line pattern
// repeated with small changes, or a short piece repeated exactly. Such text has few piece
// boundaries at most block sizes, and signatures that shrink abruptly as the block size
// doubles: what once made the edit-rate filter miss near-duplicates.
inline std::string repetitive_text(Random& random, std::size_t length) {
  std::string out;
  const int kind = random.integer(0, 3);
  const std::string piece = random_base64(random, random.integer(1, 40), random.integer(1, 8));
  for (int n = 0; out.size() < length; ++n) {
    switch (kind) {
      case 0:  // preprocessed templates: the same declaration at growing arity
        out += "template< typename F, typename T" + std::to_string(n % 10) + " > struct apply_wrap" +
               std::to_string(n % 10) + " : apply_wrap_impl" + std::to_string(n % 10) + "< F,T" +
               std::to_string(n % 10) + " > { };\n";
        break;
      case 1:  // a log: one line with a few changing fields
        out += "2026-11-25T10:" + std::to_string(10 + n / 60 % 50) + ":" + std::to_string(10 + n % 50) +
               " INFO worker " + std::to_string(random.integer(1, 4)) + " served /index.html in " +
               std::to_string(random.integer(1, 3)) + " ms\n";
        break;
      case 2:  // a piece repeated exactly
        out += piece;
        break;
      default:  // boilerplate lines with a counter
        out += "    BOOST_PP_REPEAT(" + std::to_string(n) + ", MACRO, data)\n";
    }
  }
  out.resize(length);
  return out;
}

// Documents from data the repository ships, so that a seed gives the same ones on every
// machine: the bundled Boost headers (plain and preprocessed), prose from the bundled Brown
// sentences, and repetitive text made up here. Lengths `min_length` to `max_length`.
inline std::vector<std::string> sample_documents(Random& random, std::size_t count, std::size_t min_length,
                                                 std::size_t max_length) {
  namespace fs = std::filesystem;
  std::vector<fs::path> headers;
  for (const auto& entry : fs::recursive_directory_iterator(source_dir() / "data/samples/boost"))
    if (entry.is_regular_file() && entry.file_size() >= min_length && entry.file_size() <= max_length &&
        entry.path().extension() == ".hpp")
      headers.push_back(entry.path());
  std::sort(headers.begin(), headers.end());
  std::shuffle(headers.begin(), headers.end(), random.engine());
  const std::string prose = read_file(source_dir() / "data/samples/postings/brown-sample.txt");
  std::vector<std::string> out;
  std::size_t next_header = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const auto length = static_cast<std::size_t>(random.integer(static_cast<int>(min_length), static_cast<int>(max_length)));
    switch (i % 4) {
      case 0:
      case 1:
        if (!headers.empty()) {
          out.push_back(read_file(headers[next_header++ % headers.size()]));
          break;
        }
        [[fallthrough]];
      case 2: {
        const std::size_t at = static_cast<std::size_t>(random.integer(0, static_cast<int>(prose.size() - length)));
        out.push_back(prose.substr(at, length));
        break;
      }
      default: out.push_back(repetitive_text(random, length));
    }
  }
  return out;
}

// `count` documents (sample_documents, 500 to 8,000 bytes unless said), each beside a copy
// with 1 to 3 random substitutions, insertions and deletions (an edit rate under 1%).
// Returns the files: file 2i is a document, 2i + 1 its copy.
inline std::vector<std::string> plant_near_duplicates(const std::filesystem::path& dir, std::size_t count,
                                                      Random& random, std::size_t min_length = 500,
                                                      std::size_t max_length = 8000) {
  std::vector<std::string> files;
  std::size_t i = 0;
  for (std::string text : sample_documents(random, count, min_length, max_length)) {
    const std::string original = (dir / ("doc" + std::to_string(i) + ".h")).string();
    write_file(original, text);
    apply_random_edits(text, random.integer(1, 3), random.engine(), printable);
    const std::string copy = (dir / ("doc" + std::to_string(i) + "-edited.h")).string();
    write_file(copy, text);
    files.push_back(original);
    files.push_back(copy);
    ++i;
  }
  return files;
}

// Every pair of files whose exact edit rate is below `rate`, by brute force.
inline std::vector<dedup::RateMatch> pairs_below_rate(const std::vector<std::string>& files, double rate) {
  std::vector<std::string> texts;
  for (const std::string& f : files) texts.push_back(read_file(f));
  std::vector<dedup::RateMatch> out;
  for (std::uint32_t i = 0; i < texts.size(); ++i)
    for (std::uint32_t j = i + 1; j < texts.size(); ++j) {
      const std::size_t la = texts[i].size(), lb = texts[j].size();
      if (!dedup::below_rate(static_cast<std::uint32_t>(la > lb ? la - lb : lb - la), la, lb, rate)) continue;
      // Only distances below the rate matter: the banded distance (itself tested against
      // the textbook DP) up to the largest of them.
      auto limit = static_cast<std::uint32_t>(rate * static_cast<double>(la + lb));
      while (limit > 0 && !dedup::below_rate(limit, la, lb, rate)) --limit;
      const std::optional<std::uint32_t> d = dedup::edit_distance_within(texts[i], texts[j], limit);
      if (d && dedup::below_rate(*d, la, lb, rate))
        out.push_back({i, j, *d, la + lb == 0 ? 0.0 : static_cast<double>(*d) / static_cast<double>(la + lb)});
    }
  return out;
}

// What a correct edit-rate pipeline reports for planted near-duplicates: only pairs whose
// exact rate is below `rate` (with their exact distance: a subset of the brute force), and
// every planted pair among them.
inline void expect_planted_found(const std::vector<std::string>& files, const std::vector<dedup::RateMatch>& got,
                                 double rate) {
  const std::vector<dedup::RateMatch> all = pairs_below_rate(files, rate);
  for (const dedup::RateMatch& m : got)
    EXPECT_NE(std::find(all.begin(), all.end(), m), all.end())
        << "not a pair below the rate (or a wrong distance): " << files[m.a] << " " << files[m.b] << " " << m.distance;
  std::set<std::pair<std::uint32_t, std::uint32_t>> found;
  for (const dedup::RateMatch& m : got) found.emplace(m.a, m.b);
  for (std::uint32_t i = 0; i + 1 < files.size(); i += 2)
    EXPECT_TRUE(found.count({i, i + 1})) << "planted pair missed: " << files[i + 1];
  EXPECT_TRUE(std::is_sorted(got.begin(), got.end(), [](const auto& p, const auto& q) {
    return p.a != q.a ? p.a < q.a : p.b < q.b;
  }));
}

// Matches in (a, b) order: workers' shares concatenated, compared with one list.
inline dedup::MatchList sorted_by_pair(dedup::MatchList matches) {
  std::sort(matches.begin(), matches.end(),
            [](const dedup::Match& p, const dedup::Match& q) { return p.a != q.a ? p.a < q.a : p.b < q.b; });
  return matches;
}

}  // namespace simkit::test
