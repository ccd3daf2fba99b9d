// Text inputs in pieces of whole lines (line_source.hpp): text files as they are, and
// Wikipedia dumps through expat (a streaming XML parser), the text of each article
// page turned into plain lines by wikitext_to_text.
#include "text/line_source.hpp"

#include <expat.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "text/byte_stream.hpp"
#include "text/wikitext.hpp"
#include "simkit/error.hpp"

namespace simkit {

namespace {

constexpr std::size_t kRead = 1 << 20;     // bytes read at a time (at most, for text)
constexpr std::size_t kMinRead = 1 << 16;

class TextLines final : public LineSource {
 public:
  TextLines(std::unique_ptr<ByteStream> stream, std::string head)
      : LineSource(stream->path()), stream_(std::move(stream)), pending_(std::move(head)) {}

  bool next(std::string& out, std::size_t want) override {
    // Read until a line end at or past `want` bytes is in hand, or the input ends.
    const std::size_t least = std::max<std::size_t>(want, 1) - 1;
    while (!ended_ && (pending_.size() <= least || pending_.find('\n', least) == std::string::npos)) {
      const std::size_t at = pending_.size();
      pending_.resize(at + std::clamp(want / 4, kMinRead, kRead));
      const std::size_t n = stream_->read(pending_.data() + at, pending_.size() - at);
      pending_.resize(at + n);
      ended_ = n == 0;
    }
    if (pending_.empty()) return false;
    std::size_t cut = ended_ ? pending_.size() : pending_.rfind('\n') + 1;
    out.assign(pending_, 0, cut);
    pending_.erase(0, cut);
    if (out.back() != '\n') out += '\n';
    handed_out(out);
    return true;
  }
  std::uint64_t consumed() const override { return stream_->consumed(); }

 private:
  std::unique_ptr<ByteStream> stream_;
  std::string pending_;
  bool ended_ = false;
};

class WikiLines final : public LineSource {
 public:
  WikiLines(std::unique_ptr<ByteStream> stream, std::string head)
      : LineSource(stream->path()), stream_(std::move(stream)), head_(std::move(head)) {
    parser_ = XML_ParserCreate("UTF-8");
    if (parser_ == nullptr) throw Failure("expat: cannot create a parser");
    XML_SetUserData(parser_, this);
    XML_SetElementHandler(parser_, &WikiLines::on_start, &WikiLines::on_end);
    XML_SetCharacterDataHandler(parser_, &WikiLines::on_text);
  }
  ~WikiLines() override { XML_ParserFree(parser_); }
  WikiLines(const WikiLines&) = delete;
  WikiLines& operator=(const WikiLines&) = delete;

  bool next(std::string& out, std::size_t want) override {
    while (ready_.size() < want && !ended_) feed();
    if (ready_.empty()) return false;
    out.swap(ready_);
    ready_.clear();
    handed_out(out);
    return true;
  }
  std::uint64_t consumed() const override { return stream_->consumed(); }

 private:
  void feed() {
    std::string bytes = std::move(head_);
    head_.clear();
    if (bytes.empty()) {
      bytes.resize(kRead);
      bytes.resize(stream_->read(bytes.data(), bytes.size()));
    }
    ended_ = bytes.empty();
    if (XML_Parse(parser_, bytes.data(), static_cast<int>(bytes.size()), ended_ ? XML_TRUE : XML_FALSE) ==
        XML_STATUS_ERROR)
      throw InputError(Location::at_line(path_, XML_GetCurrentLineNumber(parser_),
                                         XML_GetCurrentColumnNumber(parser_) + 1),
                       fmt::format("not a Wikipedia XML dump: {}", XML_ErrorString(XML_GetErrorCode(parser_))));
  }

  static void on_start(void* self_ptr, const XML_Char* name, const XML_Char** /*attributes*/) {
    auto& self = *static_cast<WikiLines*>(self_ptr);
    if (std::strcmp(name, "page") == 0) {
      self.in_page_ = true;
      self.redirect_ = false;
      self.ns_.clear();
      self.wiki_.clear();
    } else if (self.in_page_ && std::strcmp(name, "ns") == 0) {
      self.capture_ = &self.ns_;
    } else if (self.in_page_ && std::strcmp(name, "redirect") == 0) {
      self.redirect_ = true;
    } else if (self.in_page_ && std::strcmp(name, "text") == 0) {
      self.wiki_.clear();  // the last revision's text, where a page has several
      self.capture_ = &self.wiki_;
    }
  }
  static void on_end(void* self_ptr, const XML_Char* name) {
    auto& self = *static_cast<WikiLines*>(self_ptr);
    self.capture_ = nullptr;
    if (std::strcmp(name, "page") == 0 && self.in_page_) {
      // Articles only (namespace 0; old dumps without <ns> count as such), no redirects.
      if ((self.ns_.empty() || self.ns_ == "0") && !self.redirect_) self.ready_ += wikitext_to_text(self.wiki_);
      self.in_page_ = false;
    }
  }
  static void on_text(void* self_ptr, const XML_Char* text, int length) {
    auto& self = *static_cast<WikiLines*>(self_ptr);
    if (self.capture_ != nullptr) self.capture_->append(text, static_cast<std::size_t>(length));
  }

  std::unique_ptr<ByteStream> stream_;
  std::string head_;
  XML_Parser parser_ = nullptr;
  bool ended_ = false, in_page_ = false, redirect_ = false;
  std::string ns_, wiki_, ready_;
  std::string* capture_ = nullptr;
};

// Whether text starting with `head` is a MediaWiki dump: its first element, after an
// optional byte-order mark, XML declaration and blank space, is <mediawiki.
bool looks_like_dump(std::string_view head) {
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
  const auto skip_blank = [&] {
    while (!head.empty() && (head.front() == ' ' || head.front() == '\n' || head.front() == '\r' || head.front() == '\t'))
      head.remove_prefix(1);
  };
  skip_blank();
  if (head.substr(0, 5) == "<?xml") {
    const std::size_t end = head.find("?>");
    if (end == std::string_view::npos) return false;
    head.remove_prefix(end + 2);
    skip_blank();
  }
  return head.substr(0, 10) == "<mediawiki";
}

}  // namespace

TextFormat parse_text_format(const std::string& name) {
  if (name == "auto") return TextFormat::automatic;
  if (name == "text") return TextFormat::text;
  if (name == "wikipedia") return TextFormat::wikipedia;
  throw UsageError(fmt::format("--input-format {}: expected auto, text or wikipedia", name));
}

void LineSource::handed_out(const std::string& piece) {
  first_line_ = next_line_;
  next_line_ += static_cast<std::uint64_t>(std::count(piece.begin(), piece.end(), '\n'));
}

std::unique_ptr<LineSource> open_lines(const std::string& path, TextFormat format) {
  std::unique_ptr<ByteStream> stream = open_byte_stream(path);
  std::string head;
  if (format == TextFormat::automatic) {
    // Enough of the start to see the first element.
    head.resize(4096);
    std::size_t filled = 0;
    while (filled < head.size()) {
      const std::size_t n = stream->read(head.data() + filled, head.size() - filled);
      if (n == 0) break;
      filled += n;
    }
    head.resize(filled);
    format = looks_like_dump(head) ? TextFormat::wikipedia : TextFormat::text;
  }
  if (format == TextFormat::wikipedia) return std::make_unique<WikiLines>(std::move(stream), std::move(head));
  return std::make_unique<TextLines>(std::move(stream), std::move(head));
}

}  // namespace simkit
