// An inverted index from a text collection: documents tokenized in parallel, each
// block of documents collected into its own word -> ids map, the maps merged in order.
#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include "text/lines.hpp"
#include "text/utf8.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/postings.hpp"
#include "simkit/progress.hpp"
#include "simkit/tokenize.hpp"

namespace simkit::postings {

namespace {

struct Document {
  std::string_view text;
  std::size_t file = 0;
  std::uint64_t line = 0;  // 1-based; 0 for a whole file
};

using Postings = std::unordered_map<std::string, std::vector<DocId>>;

// The index of `documents` (ids in their order); files[doc.file] names a document's
// source in messages.
Index index_of(const std::vector<Document>& documents, const std::vector<std::string>& files,
               const BuildOptions& options, Progress* progress) {
  if (documents.size() > (std::uint64_t{1} << 32) - 1)
    throw InputError(Location::at_line(files[documents.back().file], documents.back().line),
                     "more than 4,294,967,295 documents: document ids are 32-bit");

  // Blocks of documents, each its own map; block order keeps every list sorted.
  constexpr std::size_t kBlock = 4096;
  const std::size_t blocks = (documents.size() + kBlock - 1) / kBlock;
  std::vector<Postings> partial(blocks);
  tbb::enumerable_thread_specific<Tokenizer> tokenizers([&] { return Tokenizer(!options.keep_case); });
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    Tokenizer& tokenizer = tokenizers.local();
    std::vector<std::string> words;
    std::uint64_t bytes = 0;
    for (std::size_t d = b * kBlock; d < std::min(documents.size(), (b + 1) * kBlock); ++d) {
      const Document& doc = documents[d];
      if (const std::size_t bad = first_invalid_utf8(doc.text); bad != std::string_view::npos) {
        const std::string& name = files[doc.file];
        throw InputError(doc.line == 0 ? Location::at_offset(name, bad) : Location::at_line(name, doc.line, bad + 1),
                         "not valid UTF-8 text");
      }
      tokenizer.split(doc.text, words);
      for (std::string& w : words) {
        std::vector<DocId>& ids = partial[b][std::move(w)];
        if (ids.empty() || ids.back() != d) ids.push_back(static_cast<DocId>(d));
      }
      bytes += doc.text.size() + 1;
    }
    if (progress) progress->advance(bytes);
  });

  Postings all;
  for (Postings& block : partial) {
    for (auto& [word, ids] : block) {
      std::vector<DocId>& into = all[word];
      into.insert(into.end(), ids.begin(), ids.end());
    }
    block = Postings();
  }
  Index index;
  index.documents = documents.size();
  for (const auto& [word, ids] : all)
    if (ids.size() >= options.min_count) index.vocabulary.push_back(word);
  std::sort(index.vocabulary.begin(), index.vocabulary.end());
  for (const std::string& word : index.vocabulary) {
    const std::vector<DocId>& ids = all.at(word);
    index.ids.insert(index.ids.end(), ids.begin(), ids.end());
    index.offsets.push_back(index.ids.size());
  }
  add_bitmaps(index);
  return index;
}

}  // namespace

Index build_index(const std::vector<std::string>& files, const BuildOptions& options, Progress* progress) {
  std::vector<MappedFile> mapped;
  std::vector<Document> documents;
  for (std::size_t f = 0; f < files.size(); ++f) {
    const MappedFile& file = mapped.emplace_back(open_text(files[f]));
    const std::string_view text = file.text();
    if (options.document_per_file) {
      documents.push_back({text, f, 0});
      continue;
    }
    for_each_line(text, [&](std::string_view line, std::uint64_t number) { documents.push_back({line, f, number}); });
  }
  return index_of(documents, files, options, progress);
}

Index index_texts(const std::vector<std::string>& texts, const BuildOptions& options) {
  std::vector<Document> documents;
  documents.reserve(texts.size());
  for (std::size_t d = 0; d < texts.size(); ++d) documents.push_back({texts[d], 0, d + 1});
  return index_of(documents, {"documents"}, options, nullptr);
}

}  // namespace simkit::postings
