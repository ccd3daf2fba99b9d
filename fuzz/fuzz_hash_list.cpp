// libFuzzer target: ssdeep hash lists, as `simkit dedup` reads them. Bad text must end in
// InputError; an accepted list must write back (list_line) to text that reads as the same
// entries, and matching its signatures all against all must list exactly the pairs that
// compare() scores above 0, one by one. A short list's estimated entries are its lines; a
// signature read without its substrings and completed equals one read whole.
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "simkit/ctph.hpp"
#include "simkit/dedup.hpp"
#include "text/lines.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return simkit::fuzz::guarded([&] {
    const std::string_view text = simkit::fuzz::as_text(data, size);
    // The entries' estimate is exact for a list of under 64 KiB: its lines after the header.
    if (size < (64u << 10) && simkit::dedup::is_hash_list(text)) {
      std::uint64_t lines = 0;
      simkit::for_each_line(text, [&](std::string_view, std::uint64_t) { ++lines; });
      if (simkit::dedup::estimated_entries(text) != lines - 1) std::abort();
    }
    const auto entries = simkit::dedup::read_hash_list(text, "fuzz");
    std::string again = std::string(simkit::dedup::kSsdeepHeader) + "\n";
    for (const auto& e : entries) again += e.file.empty() ? e.signature + "\n" : simkit::dedup::list_line(e.signature, e.file);
    const auto reread = simkit::dedup::read_hash_list(again, "again");
    if (reread.size() != entries.size()) std::abort();
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (reread[i].signature != entries[i].signature || reread[i].file != entries[i].file) std::abort();

    std::vector<simkit::ctph::Prepared> prepared;
    for (std::size_t i = 0; i < entries.size() && i < 64; ++i) {
      simkit::ctph::Prepared p, texts;
      if (!simkit::ctph::prepare(entries[i].signature, p)) return;  // block size out of range: dedup refuses it
      // Read for the GPU alone, then completed: the same signature.
      if (!simkit::ctph::prepare(entries[i].signature, texts, simkit::ctph::Substrings::left_out)) std::abort();
      simkit::ctph::add_substrings(texts);
      if (texts.first.runs != p.first.runs || texts.second.runs != p.second.runs ||
          texts.first.summary != p.first.summary || texts.second.summary != p.second.summary)
        std::abort();
      prepared.push_back(p);
    }
    simkit::dedup::MatchList want;  // every pair, scored one by one
    for (std::uint32_t i = 0; i < prepared.size(); ++i)
      for (std::uint32_t j = i + 1; j < prepared.size(); ++j)
        if (const int score = simkit::ctph::compare(prepared[i], prepared[j]); score >= 1) want.push_back({i, j, score});
    if (simkit::dedup::match_all(prepared, 1) != want) std::abort();
  });
}
