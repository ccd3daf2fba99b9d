// Signatures grouped by block size, for all-pairs work: two signatures can score only
// when their block sizes are equal or one is double the other, so only a group and
// itself, or a group and the group of twice its size, ever meet.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <oneapi/tbb/parallel_sort.h>

namespace simkit::dedup {

class CompatibleGroups {
 public:
  struct Group {
    std::uint64_t block_size;
    std::uint32_t begin, end;  // a slice of order()
  };
  // Where groups meet: `x` with itself (i < j only) or `x` with `y`, whose block size is
  // twice x's.
  struct Meeting {
    std::uint32_t x, y;
    bool same() const { return x == y; }
  };

  explicit CompatibleGroups(const std::vector<std::uint64_t>& block_sizes) : group_of_(block_sizes.size()) {
    order_.resize(block_sizes.size());
    for (std::uint32_t i = 0; i < order_.size(); ++i) order_[i] = i;
    // By (block size, index): a stable sort by size, in parallel.
    tbb::parallel_sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
      return block_sizes[a] != block_sizes[b] ? block_sizes[a] < block_sizes[b] : a < b;
    });
    for (std::uint32_t k = 0; k < order_.size(); ++k) {
      const std::uint64_t size = block_sizes[order_[k]];
      if (groups_.empty() || groups_.back().block_size != size) {
        by_size_[size] = static_cast<std::uint32_t>(groups_.size());
        groups_.push_back({size, k, k});
      }
      groups_.back().end = k + 1;
      group_of_[order_[k]] = static_cast<std::uint32_t>(groups_.size() - 1);
    }
    for (std::uint32_t g = 0; g < groups_.size(); ++g) {
      meetings_.push_back({g, g});
      const std::uint64_t size = groups_[g].block_size;
      if (size != 0 && size <= UINT64_MAX / 2)  // (0 doubled is 0: the group itself)
        if (const auto it = by_size_.find(size * 2); it != by_size_.end()) meetings_.push_back({g, it->second});
    }
  }

  // Signature indices ordered by (block size, index).
  const std::vector<std::uint32_t>& order() const { return order_; }
  const std::vector<Group>& groups() const { return groups_; }
  const std::vector<Meeting>& meetings() const { return meetings_; }

  // How many signatures j > i can meet signature i.
  std::uint64_t later_count(std::uint32_t i) const {
    std::uint64_t count = 0;
    for_each_compatible_group(i, [&](const std::uint32_t* begin, const std::uint32_t* end) { count += end - begin; });
    return count;
  }
  // Calls meet(j) for every signature j > i that can meet signature i.
  template <typename Meet>
  void for_each_later(std::uint32_t i, const Meet& meet) const {
    for_each_compatible_group(i, [&](const std::uint32_t* begin, const std::uint32_t* end) {
      for (const std::uint32_t* j = begin; j != end; ++j) meet(*j);
    });
  }

 private:
  // The later members (index > i) of each group i can meet, as slices of order().
  template <typename Visit>
  void for_each_compatible_group(std::uint32_t i, const Visit& visit) const {
    const std::uint64_t size = groups_[group_of_[i]].block_size;
    // The size itself, its double and its half, each once (0 has only itself).
    const bool more = size != 0;
    const std::pair<bool, std::uint64_t> sizes[3] = {
        {true, size}, {more && size <= UINT64_MAX / 2, size * 2}, {more && size % 2 == 0, size / 2}};
    for (const auto& [present, s] : sizes) {
      const auto it = present ? by_size_.find(s) : by_size_.end();
      if (it == by_size_.end()) continue;
      const Group& g = groups_[it->second];
      const std::uint32_t* begin = order_.data() + g.begin;
      const std::uint32_t* end = order_.data() + g.end;
      visit(std::upper_bound(begin, end, i), end);
    }
  }

  std::vector<std::uint32_t> order_, group_of_;
  std::vector<Group> groups_;
  std::vector<Meeting> meetings_;
  std::map<std::uint64_t, std::uint32_t> by_size_;
};

}  // namespace simkit::dedup
