// Text inputs read in pieces of whole lines, in bounded memory: plain or compressed
// text files (byte_stream.hpp), and Wikipedia XML dumps (pages-articles), whose
// articles' text comes out a paragraph a line (wikitext.hpp says what is kept).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "simkit/io.hpp"

namespace simkit {

class LineSource {
 public:
  virtual ~LineSource() = default;
  // The next piece: whole lines (each ending in '\n', the last line of the input too),
  // `want` bytes or more unless the input ends first (text; a dump's pages come whole),
  // into `out` (replaced). False at the end of the input.
  // Throws InputError naming the file (and line, or byte) for bad input.
  virtual bool next(std::string& out, std::size_t want) = 0;
  // The number of the last piece's first line among the lines this source gave (1-based).
  std::uint64_t first_line() const noexcept { return first_line_; }
  // Bytes of the file read so far (compressed ones for compressed files).
  virtual std::uint64_t consumed() const = 0;
  const std::string& path() const noexcept { return path_; }

 protected:
  explicit LineSource(std::string path) : path_(std::move(path)) {}
  // Counts the lines handed out, for first_line().
  void handed_out(const std::string& piece);
  std::string path_;
  std::uint64_t first_line_ = 1, next_line_ = 1;
};

// Opens `path` ("-" = standard input; .gz, .bz2 and .zst decompressed as read). With
// TextFormat::automatic a file whose text starts with "<mediawiki" is read as a
// Wikipedia dump, anything else as text.
std::unique_ptr<LineSource> open_lines(const std::string& path, TextFormat format = TextFormat::automatic);

}  // namespace simkit
