// The bundled English stop words: articles, pronouns, auxiliaries, prepositions,
// conjunctions and a few frequent adverbs (function words that say little of meaning).
#include <array>

#include "simkit/disco.hpp"

namespace simkit::disco {

namespace {

constexpr std::array<std::string_view, 128> kEnglish = {
    "a",       "about",  "above", "after",   "again",   "against", "all",     "am",     "an",    "and",
    "any",     "are",    "as",    "at",      "be",      "because", "been",    "before", "being", "below",
    "between", "both",   "but",   "by",      "can",     "could",   "did",     "do",     "does",  "doing",
    "down",    "during", "each",  "few",     "for",     "from",    "further", "had",    "has",   "have",
    "having",  "he",     "her",   "here",    "hers",    "herself", "him",     "himself", "his",  "how",
    "i",       "if",     "in",    "into",    "is",      "it",      "its",     "itself", "just",  "me",
    "might",   "more",   "most",  "must",    "my",      "myself",  "no",      "nor",    "not",   "now",
    "of",      "off",    "on",    "once",    "only",    "or",      "other",   "our",    "ours",  "ourselves",
    "out",     "over",   "own",   "same",    "shall",   "she",     "should",  "so",     "some",  "such",
    "than",    "that",   "the",   "their",   "theirs",  "them",    "themselves", "then", "there", "these",
    "they",    "this",   "those", "through", "to",      "too",     "under",   "until",  "up",    "upon",
    "very",    "was",    "we",    "were",    "what",    "when",    "where",   "which",  "while", "who",
    "whom",    "why",    "will",  "with",    "would",   "you",     "your",    "yours"};

}  // namespace

std::span<const std::string_view> english_stopwords() { return kEnglish; }

}  // namespace simkit::disco
