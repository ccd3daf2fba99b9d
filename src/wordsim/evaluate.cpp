// Gold standards read line by line, and Spearman's rho of any similarity against them.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "text/lines.hpp"
#include "text/utf8.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/wordsim.hpp"

namespace simkit::wordsim {

namespace {

// Ranks 1..n, tied values sharing the mean of their ranks.
std::vector<double> ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> r(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && values[order[j]] == values[order[i]]) ++j;
    for (std::size_t k = i; k < j; ++k) r[order[k]] = (i + j + 1) / 2.0;  // mean of ranks i+1..j
    i = j;
  }
  return r;
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n, my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0;
}

}  // namespace

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return 0;
  return pearson(ranks(x), ranks(y));
}

std::vector<GoldPair> read_gold(const std::string& path) {
  const MappedFile file = MappedFile::open(path);
  const std::string_view text = file.text();
  std::vector<GoldPair> pairs;
  for_each_line(text, [&](std::string_view line, std::uint64_t number) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty()) return;
    if (const std::size_t bad = first_invalid_utf8(line); bad != std::string_view::npos)
      throw InputError(Location::at_line(path, number, bad + 1), "not valid UTF-8");
    const std::size_t t1 = line.find('\t'), t2 = t1 == std::string_view::npos ? t1 : line.find('\t', t1 + 1);
    if (t2 == std::string_view::npos || t1 == 0 || t2 == t1 + 1)
      throw InputError(Location::at_line(path, number), "expected 'word1<TAB>word2<TAB>score'");
    GoldPair p{std::string(line.substr(0, t1)), std::string(line.substr(t1 + 1, t2 - t1 - 1)), 0};
    const std::string_view score = line.substr(t2 + 1);
    const auto [stop, error] = std::from_chars(score.data(), score.data() + score.size(), p.score);
    if (error != std::errc{} || stop != score.data() + score.size() || !std::isfinite(p.score))
      throw InputError(Location::at_line(path, number, t2 + 2), fmt::format("expected a score, found {}", quote(score)));
    pairs.push_back(std::move(p));
  });
  if (pairs.empty()) throw InputError(Location{path}, "no word pairs (expected 'word1<TAB>word2<TAB>score' lines)");
  return pairs;
}

Evaluation evaluate(const std::vector<GoldPair>& gold,
                    const std::function<std::optional<std::size_t>(std::string_view)>& row_of,
                    const std::function<double(std::size_t, std::size_t)>& similarity) {
  Evaluation e;
  e.pairs = gold.size();
  std::vector<double> human, ours;
  for (const GoldPair& p : gold) {
    const auto a = row_of(p.a), b = row_of(p.b);
    if (!a || !b) continue;
    human.push_back(p.score);
    ours.push_back(similarity(*a, *b));
  }
  e.covered = human.size();
  e.rho = spearman(human, ours);
  return e;
}

std::string evaluation_line(const std::string& gold_file, const Evaluation& e) {
  return fmt::format("{}\tspearman\t{:.4f}\tcovered\t{}\tof\t{}\n", gold_file, e.rho, e.covered, e.pairs);
}

}  // namespace simkit::wordsim
