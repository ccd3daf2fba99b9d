// Similarity over the sparse matrix: two sorted feature lists merged (Lin's sums, or the
// dot product of PPMI rows over their norms); the gold-standard evaluation built on it.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <tbb/parallel_for.h>

#include <fmt/format.h>

#include "text/utf8.hpp"
#include "simkit/disco.hpp"
#include "simkit/error.hpp"
#include "simkit/tokenize.hpp"

namespace simkit::disco {

std::string model_form(const Model& model, std::string_view word) {
  return model.keep_case ? std::string(word) : to_lower(word);
}

std::size_t lookup(const Model& model, std::string_view word, const std::string& what) {
  if (first_invalid_utf8(word) != std::string_view::npos)
    throw InputError(Location{what}, fmt::format("the word {} is not valid UTF-8", quote(word)));
  const std::string key = model_form(model, word);
  if (const auto row = model.find(key)) return *row;
  throw InputError(Location{what}, fmt::format("{} is not in the model's vocabulary ({} words)", quote(key), model.size()));
}

void compute_sums(Model& m) {
  m.mi_sums.assign(m.size(), 0);
  m.norms.assign(m.size(), 0);
  for (std::size_t w = 0; w < m.size(); ++w) {
    double sum = 0, squares = 0;
    for (std::uint64_t f = m.offsets[w]; f < m.offsets[w + 1]; ++f) {
      sum += m.mi[f];
      squares += static_cast<double>(m.mi[f]) * m.mi[f];
    }
    m.mi_sums[w] = sum;
    m.norms[w] = std::sqrt(squares);
  }
}

double similarity(const Model& m, std::size_t a, std::size_t b) {
  const bool cosine = m.measure == Measure::ppmi;
  const double denominator = cosine ? m.norms[a] * m.norms[b] : m.mi_sums[a] + m.mi_sums[b];
  if (!(denominator > 0)) return 0;
  std::size_t i = m.offsets[a], j = m.offsets[b];
  const std::size_t i_end = m.offsets[a + 1], j_end = m.offsets[b + 1];
  double shared = 0;
  while (i < i_end && j < j_end) {
    if (m.features[i] < m.features[j]) {
      ++i;
    } else if (m.features[j] < m.features[i]) {
      ++j;
    } else {
      const double x = m.mi[i++], y = m.mi[j++];
      shared += cosine ? x * y : x + y;
    }
  }
  return shared / denominator;
}

std::vector<Neighbour> most_similar(const Model& model, std::size_t word, std::size_t k) {
  std::vector<double> scores(model.size(), 0);
  tbb::parallel_for(std::size_t{0}, model.size(), [&](std::size_t other) {
    if (other != word) scores[other] = similarity(model, word, other);
  });
  std::vector<Neighbour> all;
  for (std::size_t other = 0; other < model.size(); ++other)
    if (other != word) all.push_back({other, scores[other]});
  const auto better = [](const Neighbour& x, const Neighbour& y) {
    return x.score != y.score ? x.score > y.score : x.word < y.word;
  };
  k = std::min(k, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(), better);
  all.resize(k);
  return all;
}

}  // namespace simkit::disco

namespace simkit::disco {

wordsim::Evaluation evaluate(const Model& model, const std::vector<wordsim::GoldPair>& gold) {
  // Rows by word, once (Model::find scans the vocabulary).
  std::unordered_map<std::string_view, std::size_t> row;
  row.reserve(model.size());
  for (std::size_t w = 0; w < model.size(); ++w) row.emplace(model.words[w], w);
  return wordsim::evaluate(
      gold,
      [&](std::string_view word) -> std::optional<std::size_t> {
        const auto it = row.find(model_form(model, word));
        if (it == row.end()) return std::nullopt;
        return it->second;
      },
      [&](std::size_t a, std::size_t b) { return similarity(model, a, b); });
}

}  // namespace simkit::disco
