// All-pairs matching of prepared CTPH signatures on the CPU (see simkit/dedup.hpp).
#include <algorithm>
#include <map>

#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>

#include "simkit/dedup.hpp"

namespace simkit::dedup {

std::vector<Match> match_all(const std::vector<ctph::Prepared>& signatures, int threshold) {
  // Signatures by block size, each list in index order: a signature meets the later
  // ones of its own size, of twice it and of half it.
  std::map<std::uint64_t, std::vector<std::uint32_t>> by_size;
  for (std::uint32_t i = 0; i < signatures.size(); ++i) by_size[signatures[i].block_size].push_back(i);
  const auto later = [&](std::uint64_t size, std::uint32_t after) -> std::pair<const std::uint32_t*, const std::uint32_t*> {
    const auto it = by_size.find(size);
    if (it == by_size.end()) return {nullptr, nullptr};
    const auto& list = it->second;
    const auto first = std::upper_bound(list.begin(), list.end(), after);
    return {list.data() + (first - list.begin()), list.data() + list.size()};
  };

  tbb::enumerable_thread_specific<std::vector<Match>> found;
  tbb::parallel_for(std::size_t{0}, signatures.size(), [&](std::size_t i) {
    const ctph::Prepared& x = signatures[i];
    auto& out = found.local();
    const auto index = static_cast<std::uint32_t>(i);
    const std::uint64_t sizes[3] = {x.block_size, x.block_size * 2, x.block_size % 2 == 0 ? x.block_size / 2 : 0};
    for (int s = 0; s < 3; ++s) {
      if (sizes[s] == 0 || (s == 1 && x.block_size > UINT64_MAX / 2)) continue;
      const auto [begin, end] = later(sizes[s], index);
      for (const std::uint32_t* j = begin; j != end; ++j) {
        const int score = ctph::compare(x, signatures[*j]);
        if (score >= threshold) out.push_back(Match{index, *j, score});
      }
    }
  });
  std::vector<Match> all;
  for (auto& part : found) all.insert(all.end(), part.begin(), part.end());
  std::sort(all.begin(), all.end(), [](const Match& p, const Match& q) { return p.a != q.a ? p.a < q.a : p.b < q.b; });
  return all;
}

}  // namespace simkit::dedup
