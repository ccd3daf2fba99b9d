// Word segmentation with ICU's BreakIterator (the rules of UAX #29 plus its CJK
// dictionaries): well-kept Unicode rules rather than hand-written ones.
#include "simkit/tokenize.hpp"

#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/unistr.h>

#include "simkit/error.hpp"

namespace simkit {

struct Tokenizer::Impl {
  std::unique_ptr<icu::BreakIterator> words;
  icu::UnicodeString text;
  bool lowercase = true;
};

Tokenizer::Tokenizer(bool lowercase) : impl_(std::make_unique<Impl>()) {
  UErrorCode status = U_ZERO_ERROR;
  impl_->words.reset(icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), status));
  if (U_FAILURE(status) || !impl_->words)
    throw Failure(std::string("cannot start ICU's word segmentation: ") + u_errorName(status));
  impl_->lowercase = lowercase;
}

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

namespace {

bool ascii_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// Text of ASCII letters, digits, spaces and tabs alone (as prepared corpora are): there
// UAX #29 makes each maximal run of letters and digits one word (WB5, WB8-WB10) and the
// blanks no word, so the runs are taken directly, ICU's round trip through UTF-16 saved
// (tests/core compare both on such text). False, leaving `words` empty, for other text.
bool split_plain_ascii(std::string_view text, bool lowercase, std::vector<std::string>& words) {
  for (const char c : text)
    if (!ascii_alnum(c) && c != ' ' && c != '\t') return false;
  for (std::size_t i = 0; i < text.size();) {
    if (!ascii_alnum(text[i])) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < text.size() && ascii_alnum(text[i])) ++i;
    std::string& word = words.emplace_back(text.substr(start, i - start));
    if (lowercase)
      for (char& c : word)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return true;
}

}  // namespace

void Tokenizer::split(std::string_view text, std::vector<std::string>& words) {
  words.clear();
  Impl& s = *impl_;
  if (split_plain_ascii(text, s.lowercase, words)) return;
  s.text = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<std::int32_t>(text.size())));
  s.words->setText(s.text);
  std::int32_t start = s.words->first();
  for (std::int32_t end = s.words->next(); end != icu::BreakIterator::DONE; start = end, end = s.words->next()) {
    // Rule status below UBRK_WORD_NONE_LIMIT: spaces, punctuation, symbols.
    if (s.words->getRuleStatus() < UBRK_WORD_NONE_LIMIT) continue;
    icu::UnicodeString word(s.text, start, end - start);
    if (s.lowercase) word.toLower(icu::Locale::getRoot());
    std::string& out = words.emplace_back();
    word.toUTF8String(out);
  }
}

std::string to_lower(std::string_view text) {
  icu::UnicodeString u = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<std::int32_t>(text.size())));
  u.toLower(icu::Locale::getRoot());
  std::string out;
  u.toUTF8String(out);
  return out;
}

}  // namespace simkit
