// Words of running text at Unicode word boundaries (UAX #29, through ICU).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace simkit {

// A segment is a word when ICU's word rules tag it as letters, a number, kana or
// ideographs (so "naïve", "3.14", "日本" and "don't" are words; spaces, punctuation and
// symbols are not). Chinese and Japanese runs are split by ICU's dictionaries.
// Not thread-safe: one Tokenizer a thread.
class Tokenizer {
 public:
  // `lowercase`: full Unicode lower-casing (root locale), so "Éclair" -> "éclair".
  explicit Tokenizer(bool lowercase = true);
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  // Replaces `words` with the words of `text`, which must be valid UTF-8 (callers check
  // with first_invalid_utf8 and report the position).
  void split(std::string_view text, std::vector<std::string>& words);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Full Unicode lower-casing (root locale) of valid UTF-8, as Tokenizer(true) does to words.
std::string to_lower(std::string_view text);

}  // namespace simkit
