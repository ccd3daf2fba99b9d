// Lin similarity over the sparse MI matrix: two sorted feature lists merged.
#include <algorithm>

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

double similarity(const Model& m, std::size_t a, std::size_t b) {
  const double denominator = m.mi_sums[a] + m.mi_sums[b];
  if (!(denominator > 0)) return 0;
  std::size_t i = m.offsets[a], j = m.offsets[b];
  const std::size_t i_end = m.offsets[a + 1], j_end = m.offsets[b + 1];
  double shared = 0;
  while (i < i_end && j < j_end) {
    if (m.features[i] < m.features[j]) ++i;
    else if (m.features[j] < m.features[i]) ++j;
    else shared += static_cast<double>(m.mi[i++]) + static_cast<double>(m.mi[j++]);
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
