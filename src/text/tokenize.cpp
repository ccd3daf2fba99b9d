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

void Tokenizer::split(std::string_view text, std::vector<std::string>& words) {
  words.clear();
  Impl& s = *impl_;
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
