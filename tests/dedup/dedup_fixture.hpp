// Planted near-duplicates for the edit-rate tests (CPU and GPU): real headers and copies
// with a few random edits, and the pairs a correct pipeline must report.
#pragma once

#include <algorithm>
#include <set>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "dedup/edit_distance.hpp"
#include "simkit/dedup.hpp"
#include "random_edits.hpp"
#include "test_support.hpp"

namespace simkit::test {

// `length` characters drawn from the first `letters` of base64's alphabet (few letters:
// long common subsequences and shared substrings), for signatures made to be hard.
inline std::string random_base64(Random& random, int length, int letters) {
  static constexpr const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string s;
  for (int i = 0; i < length; ++i) s += kAlphabet[random.integer(0, letters - 1)];
  return s;
}

// `count` headers of /usr/include of 500 to 8,000 bytes, each beside a copy with 1 to 3
// random substitutions, insertions and deletions (an edit rate under 1%, and few enough
// edits that the copy's CTPH signature stays close). Returns the files: file 2i is a
// header, 2i + 1 its copy.
inline std::vector<std::string> plant_near_duplicates(const std::filesystem::path& dir, std::size_t count,
                                                      Random& random) {
  namespace fs = std::filesystem;
  std::vector<fs::path> headers;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator("/usr/include", ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec) && it->file_size(ec) >= 500 && it->file_size(ec) <= 8000) headers.push_back(it->path());
  std::sort(headers.begin(), headers.end());
  std::shuffle(headers.begin(), headers.end(), random.engine());
  headers.resize(std::min(count, headers.size()));
  std::vector<std::string> files;
  for (std::size_t i = 0; i < headers.size(); ++i) {
    std::ifstream in(headers[i], std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    const std::string original = (dir / ("doc" + std::to_string(i) + ".h")).string();
    write_file(original, text);
    apply_random_edits(text, random.integer(1, 3), random.engine(), printable);
    const std::string copy = (dir / ("doc" + std::to_string(i) + "-edited.h")).string();
    write_file(copy, text);
    files.push_back(original);
    files.push_back(copy);
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
      const std::uint32_t d = dedup::edit_distance(texts[i], texts[j]);
      if (dedup::below_rate(d, la, lb, rate))
        out.push_back({i, j, d, la + lb == 0 ? 0.0 : static_cast<double>(d) / static_cast<double>(la + lb)});
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

}  // namespace simkit::test
