// Random strings for the edit-distance tests (CPU and GPU): alphabets from 2 letters (long
// common subsequences, many ties in the DP) to all 256 byte values, and sets with planted
// close pairs so that rates below a threshold actually occur.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "dedup/edit_detail.hpp"
#include "dedup/edit_distance.hpp"
#include "random_edits.hpp"
#include "test_support.hpp"

namespace simkit::test {

inline std::string random_string(Random& random, int length, int letters) {
  std::string s(static_cast<std::size_t>(length), '\0');
  for (char& c : s) c = static_cast<char>(random.integer(0, letters - 1) + (letters <= 64 ? 'A' : 0));
  return s;
}

// A copy of s with `edits` random substitutions, insertions and deletions.
inline std::string edited(Random& random, std::string s, int edits, int letters) {
  apply_random_edits(s, edits, random.engine(), [&](std::mt19937_64&) { return random_string(random, 1, letters)[0]; });
  return s;
}

// `count` strings of lengths 0..max_length over `letters` letters; every third one an
// edited copy of an earlier one.
inline dedup::StringSet random_set(Random& random, int count, int max_length, int letters) {
  dedup::StringSet set;
  std::vector<std::string> kept;
  for (int i = 0; i < count; ++i) {
    std::string s;
    if (i % 3 == 2) {
      s = edited(random, kept[static_cast<std::size_t>(random.integer(0, i - 1))], random.integer(0, 12), letters);
      if (s.size() > static_cast<std::size_t>(max_length)) s.resize(static_cast<std::size_t>(max_length));
    } else {
      s = random_string(random, random.integer(0, max_length), letters);
    }
    kept.push_back(s);
    set.add(s);
  }
  return set;
}

// Every pair of xs and ys (i < j with `triangle`) with its distance by the reference DP,
// computed once; passing(rule) gives the pairs each rule asked keeps.
struct ReferencePairs {
  std::vector<dedup::EditPair> all;
  std::vector<std::pair<std::size_t, std::size_t>> lengths;

  ReferencePairs(const dedup::StringSet& xs, const dedup::StringSet& ys, bool triangle) {
    for (std::uint32_t i = 0; i < xs.size(); ++i)
      for (std::uint32_t j = triangle ? i + 1 : 0; j < ys.size(); ++j) {
        all.push_back({i, j, dedup::edit_distance_reference(xs[i], ys[j])});
        lengths.emplace_back(xs[i].size(), ys[j].size());
      }
  }
  std::vector<dedup::EditPair> passing(dedup::PairRule rule) const {
    std::vector<dedup::EditPair> out;
    for (std::size_t k = 0; k < all.size(); ++k)
      if (all[k].distance <= rule.max_distance ||
          dedup::below_rate(all[k].distance, lengths[k].first, lengths[k].second, rule.rate))
        out.push_back(all[k]);
    return out;
  }
};

// `count` blocks of pairs of a set of n strings: triangles and rectangles, some empty, some
// overlapping one another (a pair in two blocks comes twice), and one the whole set.
inline std::vector<dedup::PairBlock> random_blocks(Random& random, int n, int count) {
  std::vector<dedup::PairBlock> blocks{{0, static_cast<std::uint32_t>(n), 0, static_cast<std::uint32_t>(n), true}};
  const auto range = [&](std::uint32_t& first, std::uint32_t& size) {
    first = static_cast<std::uint32_t>(random.integer(0, n));
    size = static_cast<std::uint32_t>(random.integer(0, n - static_cast<int>(first)));
  };
  for (int k = 1; k < count; ++k) {
    dedup::PairBlock b;
    range(b.x, b.rows);
    if (random.integer(0, 2) == 0) {
      b.triangle = true;
      b.y = b.x;
      b.columns = b.rows;
    } else {
      range(b.y, b.columns);
    }
    blocks.push_back(b);
  }
  return blocks;
}

// The pairs of `blocks` that pass `rule`, sorted by (a, b), from the reference DP's
// distances of every pair of the set (distance[i][j]).
inline std::vector<dedup::EditPair> block_pairs(const dedup::StringSet& set,
                                                const std::vector<std::vector<std::uint32_t>>& distance,
                                                const std::vector<dedup::PairBlock>& blocks, dedup::PairRule rule) {
  std::vector<dedup::EditPair> out;
  for (const dedup::PairBlock& b : blocks)
    for (std::uint32_t r = 0; r < b.rows; ++r)
      for (std::uint32_t c = b.triangle ? r + 1 : 0; c < b.columns; ++c) {
        const std::uint32_t i = b.x + r, j = b.y + c;
        if (rule.passes(distance[i][j], set[i].size(), set[j].size())) out.push_back({i, j, distance[i][j]});
      }
  dedup::detail::sort_pairs(out);
  return out;
}

inline std::vector<std::vector<std::uint32_t>> all_distances(const dedup::StringSet& set) {
  std::vector<std::vector<std::uint32_t>> d(set.size(), std::vector<std::uint32_t>(set.size()));
  for (std::size_t i = 0; i < set.size(); ++i)
    for (std::size_t j = i; j < set.size(); ++j) d[i][j] = d[j][i] = dedup::edit_distance_reference(set[i], set[j]);
  return d;
}

// Rules that keep few pairs and rules that keep most, with and without a distance that
// passes whatever the lengths.
inline const std::vector<dedup::PairRule>& pair_rules() {
  static const std::vector<dedup::PairRule> rules = {{0.02, 0}, {0.1, 0}, {0.05, 24}, {0.3, 0}, {0.02, 60}, {0.6, 0}};
  return rules;
}

inline std::string describe(dedup::PairRule rule) {
  return "rate " + std::to_string(rule.rate) + ", max distance " + std::to_string(rule.max_distance);
}

}  // namespace simkit::test
