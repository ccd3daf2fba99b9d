// Word vectors scored on word-similarity gold standards: the cosine of each pair.
#include "simkit/neighbors.hpp"
#include "simkit/tokenize.hpp"

namespace simkit::neighbors {

double cosine(const Model& model, std::uint32_t a, std::uint32_t b) {
  const float* x = model.vectors + std::size_t{a} * model.dim;
  const float* y = model.vectors + std::size_t{b} * model.dim;
  double dot = 0;
  for (std::size_t d = 0; d < model.dim; ++d) dot += static_cast<double>(x[d]) * y[d];
  const double norms = static_cast<double>(model.norms[a]) * model.norms[b];
  return norms > 0 ? dot / norms : 0;
}

wordsim::Evaluation evaluate(const Model& model, const std::vector<wordsim::GoldPair>& gold) {
  return wordsim::evaluate(
      gold,
      [&](std::string_view word) -> std::optional<std::size_t> {
        // As written, else lower-cased: gold standards capitalise names ('Israel'), models
        // made from lower-cased text (simkit embed, many GloVe files) hold 'israel'; lower-cased
        // as the tokenizer does.
        if (const auto row = model.find(word)) return *row;
        return model.find(to_lower(word));  // (read_gold has checked the UTF-8)
      },
      [&](std::size_t a, std::size_t b) {
        return cosine(model, static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b));
      });
}

}  // namespace simkit::neighbors
