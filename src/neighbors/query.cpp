// Query expressions: words joined by + and -, as in the seed's `king - man + woman`.
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "simkit/error.hpp"
#include "simkit/neighbors.hpp"

namespace simkit::neighbors {

namespace {

std::vector<std::string_view> split_tokens(std::string_view line) {
  std::vector<std::string_view> tokens;
  std::size_t i = 0;
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (i < line.size()) {
    while (i < line.size() && blank(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !blank(line[i])) ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

std::string unknown_word_message(std::string_view word, const Model& model) {
  std::string lower(word);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower != word && model.find(lower))
    return fmt::format("unknown word {} (the model has {})", quote(word), quote(lower));
  return fmt::format("unknown word {}", quote(word));
}

}  // namespace

Query parse_query(std::string_view line, const Model& model, const std::string& where) {
  const std::vector<std::string_view> tokens = split_tokens(line);
  Query query;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (i > 0) query.text += ' ';
    query.text += tokens[i];
  }
  const Location at{.file = where};
  if (tokens.empty()) throw InputError(at, "empty query, expected a word or an expression");

  float sign = +1;
  bool have_operator = false;  // an operator waits for its word
  for (std::string_view token : tokens) {
    if (token == "+" || token == "-") {
      if (have_operator)
        throw InputError(at, fmt::format("two operators in a row in {}", quote(query.text)));
      sign = token == "-" ? -1.0f : +1.0f;
      have_operator = true;
      continue;
    }
    std::optional<std::uint32_t> row = model.find(token);
    float term_sign = sign;
    if (!row && token.size() > 1 && (token[0] == '+' || token[0] == '-') && !have_operator) {
      // "-man" written without a space: an operator glued to a word.
      row = model.find(token.substr(1));
      if (row) term_sign = token[0] == '-' ? -1.0f : +1.0f;
      else token = token.substr(1);
    }
    if (!row) throw InputError(at, fmt::format("{} in {}", unknown_word_message(token, model), quote(query.text)));
    query.terms.push_back(QueryTerm{*row, term_sign});
    sign = +1;
    have_operator = false;
  }
  if (have_operator)
    throw InputError(at, fmt::format("{} ends with an operator, expected a word after it",
                                     quote(query.text)));
  return query;
}

std::vector<float> query_vector(const Model& model, const Query& query, const std::string& where) {
  std::vector<double> sum(model.dim, 0.0);
  for (const QueryTerm& term : query.terms) {
    const float norm = model.norms[term.row];
    if (norm == 0) continue;  // a zero vector has no direction to add
    const std::span<const float> v = model.vector(term.row);
    for (std::size_t d = 0; d < model.dim; ++d) sum[d] += term.weight * (static_cast<double>(v[d]) / norm);
  }
  double length = 0;
  for (double x : sum) length += x * x;
  length = std::sqrt(length);
  if (!(length > 1e-12))
    throw InputError(Location{.file = where},
                     fmt::format("{} has no direction: its words cancel out or have zero vectors",
                                 quote(query.text)));
  std::vector<float> direction(model.dim);
  for (std::size_t d = 0; d < model.dim; ++d) direction[d] = static_cast<float>(sum[d] / length);
  return direction;
}

}  // namespace simkit::neighbors
