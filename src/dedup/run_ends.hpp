// Where each item's run of equal keys ends, in items sorted by key (the CPU matcher's
// index: each posting's run of signatures sharing its key).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

namespace simkit::dedup {

// ends[i]: one past the last item of item i's run, on all cores a range of `grain` items
// at a time; a run that goes on past its range ends where its key's items end (a binary
// search: the items are sorted by key(item)).
template <typename Item, typename Key>
void fill_run_ends(std::span<const Item> items, const Key& key, std::span<std::uint32_t> ends,
                   std::size_t grain = std::size_t{1} << 16) {
  const std::size_t n = items.size();
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, std::max<std::size_t>(grain, 1)), [&](const auto& range) {
    std::size_t end_here = range.end();
    if (range.end() < n && key(items[range.end()]) == key(items[range.end() - 1])) {
      const auto last = key(items[range.end() - 1]);
      end_here = static_cast<std::size_t>(
          std::partition_point(items.begin() + static_cast<std::ptrdiff_t>(range.end()), items.end(),
                               [&](const Item& item) { return key(item) == last; }) -
          items.begin());
    }
    for (std::size_t i = range.end(); i-- > range.begin();) {
      if (i + 1 < range.end() && key(items[i + 1]) != key(items[i])) end_here = i + 1;
      ends[i] = static_cast<std::uint32_t>(end_here);
    }
  });
}

}  // namespace simkit::dedup
