// Word-similarity gold standards (WordSim-353, SimLex-999, RG-65, MC-30: pairs of words
// with human ratings) and Spearman's rank correlation of a model's similarities against
// them. Shared by `simkit disco evaluate` and `simkit neighbors evaluate`, so that every
// model is scored by the same rules and printed in the same form.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simkit::wordsim {

// One line of a gold standard: word1<TAB>word2<TAB>score.
struct GoldPair {
  std::string a, b;
  double score = 0;
};
// Reads a gold standard; refuses bad lines with InputError (file, line, column).
std::vector<GoldPair> read_gold(const std::string& path);

// Spearman's rank correlation (ties get their mean rank); 0 for fewer than 2 values.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

struct Evaluation {
  std::size_t pairs = 0, covered = 0;  // the gold standard's pairs; those whose both words the model has
  double rho = 0;                      // over the covered pairs
};
// Spearman's rho of `similarity(row_a, row_b)` against the gold scores, over the pairs
// whose both words `row_of` finds (the others are counted as not covered, never an error).
Evaluation evaluate(const std::vector<GoldPair>& gold,
                    const std::function<std::optional<std::size_t>(std::string_view word)>& row_of,
                    const std::function<double(std::size_t a, std::size_t b)>& similarity);

// The line both evaluate commands print: FILE<TAB>spearman<TAB>rho<TAB>covered<TAB>n<TAB>of<TAB>m.
std::string evaluation_line(const std::string& gold_file, const Evaluation& evaluation);

}  // namespace simkit::wordsim
