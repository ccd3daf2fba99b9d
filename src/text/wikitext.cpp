// Running text out of MediaWiki markup (wikitext.hpp gives the rules): one pass drops
// the structures that are not prose (with their nesting), a second works a line at a
// time on what is left.
#include "text/wikitext.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>

namespace simkit {

namespace {

bool starts_with_nocase(std::string_view text, std::size_t at, std::string_view prefix) {
  if (text.size() - at < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[at + i])) != prefix[i]) return false;
  return true;
}

// The end of a nested structure opened at `at` by `open` and closed by `close` (just
// past the closing mark), or the text's end when it never closes.
std::size_t skip_nested(std::string_view text, std::size_t at, std::string_view open, std::string_view close) {
  int depth = 0;
  std::size_t i = at;
  while (i < text.size()) {
    if (text.compare(i, open.size(), open) == 0) {
      ++depth;
      i += open.size();
    } else if (text.compare(i, close.size(), close) == 0) {
      i += close.size();
      if (--depth == 0) return i;
    } else {
      ++i;
    }
  }
  return text.size();
}

// Elements whose content is not prose.
constexpr std::array<std::string_view, 15> kDropped{"ref",   "math",     "code",        "pre",      "source",
                                                    "syntaxhighlight", "gallery", "timeline", "score", "chem",
                                                    "hiero", "graph",    "mapframe",    "imagemap", "templatedata"};

// Namespaces whose links are not prose.
constexpr std::array<std::string_view, 4> kDroppedLinks{"file:", "image:", "media:", "category:"};

std::size_t tag_name_end(std::string_view text, std::size_t at) {
  while (at < text.size() && (std::isalnum(static_cast<unsigned char>(text[at])) != 0)) ++at;
  return at;
}

// Drops comments, templates, tables, non-prose elements and tags, and reduces links to
// their labels, appending what is left to `out`.
void strip_structures(std::string_view text, std::string& out) {
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '<' && text.compare(i, 4, "<!--") == 0) {
      const std::size_t end = text.find("-->", i + 4);
      i = end == std::string_view::npos ? text.size() : end + 3;
    } else if (c == '{' && text.compare(i, 2, "{{") == 0) {
      i = skip_nested(text, i, "{{", "}}");
    } else if (c == '{' && text.compare(i, 2, "{|") == 0 && (i == 0 || text[i - 1] == '\n')) {
      i = skip_nested(text, i, "{|", "|}");
    } else if (c == '<' && i + 1 < text.size() &&
               (std::isalpha(static_cast<unsigned char>(text[i + 1])) != 0 || text[i + 1] == '/')) {
      const std::size_t close = text.find('>', i);
      if (close == std::string_view::npos) {  // a lone '<': text
        out += c;
        ++i;
        continue;
      }
      const bool closing = text[i + 1] == '/';
      const std::size_t name_at = i + (closing ? 2 : 1);
      std::string name(text.substr(name_at, tag_name_end(text, name_at) - name_at));
      for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      const bool self_closing = close > i && text[close - 1] == '/';
      i = close + 1;
      if (!closing && !self_closing && std::find(kDropped.begin(), kDropped.end(), name) != kDropped.end()) {
        // Skip to the matching end tag.
        const std::string end_tag = "</" + name;
        std::size_t at = i;
        while (at < text.size() && !starts_with_nocase(text, at, end_tag)) ++at;
        const std::size_t end = at < text.size() ? text.find('>', at) : std::string_view::npos;
        i = end == std::string_view::npos ? text.size() : end + 1;
      }
    } else if (c == '[' && text.compare(i, 2, "[[") == 0) {
      const std::size_t end = skip_nested(text, i, "[[", "]]");
      const bool closed = end >= i + 4 && text.compare(end - 2, 2, "]]") == 0;
      const std::string_view inner = text.substr(i + 2, (closed ? end - 2 : text.size()) - (i + 2));
      i = end;
      bool dropped = false;
      for (std::string_view ns : kDroppedLinks) dropped = dropped || starts_with_nocase(inner, 0, ns);
      if (dropped) continue;
      // The label: what follows the last '|' outside nested links (else the target).
      std::size_t bar = std::string_view::npos;
      int depth = 0;
      for (std::size_t j = 0; j < inner.size(); ++j) {
        if (inner.compare(j, 2, "[[") == 0) ++depth;
        if (inner.compare(j, 2, "]]") == 0) --depth;
        if (inner[j] == '|' && depth == 0) bar = j;
      }
      strip_structures(bar == std::string_view::npos ? inner : inner.substr(bar + 1), out);
    } else if (c == '[' && (starts_with_nocase(text, i + 1, "http://") || starts_with_nocase(text, i + 1, "https://") ||
                            starts_with_nocase(text, i + 1, "//") || starts_with_nocase(text, i + 1, "ftp://") ||
                            starts_with_nocase(text, i + 1, "mailto:"))) {
      const std::size_t end = text.find(']', i);
      const std::size_t stop = end == std::string_view::npos ? text.size() : end;
      const std::size_t space = text.find(' ', i);
      if (space != std::string_view::npos && space < stop) strip_structures(text.substr(space + 1, stop - space - 1), out);
      i = end == std::string_view::npos ? text.size() : end + 1;
    } else {
      out += c;
      ++i;
    }
  }
}

void append_utf8(std::uint32_t code, std::string& out) {
  if (code == 0 || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return;
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | code >> 6);
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | code >> 12);
    out += static_cast<char>(0x80 | (code >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | code >> 18);
    out += static_cast<char>(0x80 | (code >> 12 & 0x3F));
    out += static_cast<char>(0x80 | (code >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

struct Entity {
  std::string_view name;
  std::uint32_t code;
};
constexpr std::array<Entity, 12> kEntities{{{"nbsp", ' '},
                                            {"ndash", 0x2013},
                                            {"mdash", 0x2014},
                                            {"amp", '&'},
                                            {"lt", '<'},
                                            {"gt", '>'},
                                            {"quot", '"'},
                                            {"apos", '\''},
                                            {"hellip", 0x2026},
                                            {"minus", 0x2212},
                                            {"times", 0xD7},
                                            {"thinsp", ' '}}};

// One line of what strip_structures left: list markers, heading signs, quote runs,
// magic words and entities; appended to `out` with its line end when anything is left.
void finish_line(std::string_view line, std::string& out) {
  std::size_t from = 0;
  while (from < line.size() && (line[from] == '*' || line[from] == '#' || line[from] == ':' || line[from] == ';' ||
                                line[from] == ' ' || line[from] == '\t'))
    ++from;
  line.remove_prefix(from);
  if (!line.empty() && line.front() == '=') {
    while (!line.empty() && (line.front() == '=' || line.front() == ' ')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == '=' || line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
  }
  std::string text;
  for (std::size_t i = 0; i < line.size();) {
    const char c = line[i];
    if (c == '\'' && i + 1 < line.size() && line[i + 1] == '\'') {
      while (i < line.size() && line[i] == '\'') ++i;
    } else if (c == '_' && line.compare(i, 2, "__") == 0) {
      std::size_t j = i + 2;
      while (j < line.size() && std::isupper(static_cast<unsigned char>(line[j])) != 0) ++j;
      if (j > i + 2 && line.compare(j, 2, "__") == 0) {
        i = j + 2;
      } else {
        text += c;
        ++i;
      }
    } else if (c == '&') {
      const std::size_t semi = line.find(';', i);
      bool decoded = false;
      if (semi != std::string_view::npos && semi - i <= 10) {
        const std::string_view name = line.substr(i + 1, semi - i - 1);
        if (!name.empty() && name[0] == '#') {
          std::uint32_t code = 0;
          const bool hex = name.size() > 1 && (name[1] == 'x' || name[1] == 'X');
          bool digits = name.size() > (hex ? 2u : 1u);
          for (std::size_t k = hex ? 2 : 1; k < name.size() && digits; ++k) {
            const int d = std::isdigit(static_cast<unsigned char>(name[k])) != 0 ? name[k] - '0'
                          : hex && std::isxdigit(static_cast<unsigned char>(name[k])) != 0
                              ? std::tolower(static_cast<unsigned char>(name[k])) - 'a' + 10
                              : -1;
            if (d < 0) digits = false;
            code = code * (hex ? 16 : 10) + static_cast<std::uint32_t>(d);
            if (code > 0x10FFFF) digits = false;
          }
          if (digits) {
            // Control characters (&#10; is a line break) are blanks inside a line.
            if (code < 0x20 || code == 0x7F)
              text += ' ';
            else
              append_utf8(code, text);
            decoded = true;
          }
        } else {
          for (const Entity& e : kEntities)
            if (e.name == name) {
              append_utf8(e.code, text);
              decoded = true;
            }
        }
      }
      if (decoded) {
        i = semi + 1;
      } else {
        text += c;
        ++i;
      }
    } else {
      text += c;
      ++i;
    }
  }
  // Blank runs (left where markup was) become one space; none at the ends.
  const std::size_t before = out.size();
  bool blank = true;
  for (const char ch : text) {
    if (ch == ' ' || ch == '\t' || ch == '\r') {
      blank = true;
    } else {
      if (blank && out.size() > before) out += ' ';
      blank = false;
      out += ch;
    }
  }
  if (out.size() > before) out += '\n';
}

}  // namespace

std::string wikitext_to_text(std::string_view wikitext) {
  std::string stripped;
  stripped.reserve(wikitext.size());
  strip_structures(wikitext, stripped);
  std::string out;
  std::size_t at = 0;
  while (at <= stripped.size()) {
    std::size_t end = stripped.find('\n', at);
    if (end == std::string::npos) end = stripped.size();
    finish_line(std::string_view(stripped).substr(at, end - at), out);
    at = end + 1;
  }
  return out;
}

}  // namespace simkit
