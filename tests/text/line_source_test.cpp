// Text inputs in pieces of whole lines: text files (plain and compressed) cut only at
// line ends and numbered through; Wikipedia dumps reduced to their articles' running
// text by the documented wikitext rules; damaged dumps refused with their line.
#include <gtest/gtest.h>

#include <algorithm>

#include "text/line_source.hpp"
#include "text/lines.hpp"
#include "text/wikitext.hpp"
#include "simkit/error.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

using test::bzip2;

std::string all_of(LineSource& source, std::size_t want) {
  std::string out, piece;
  while (source.next(piece, want)) {
    EXPECT_FALSE(piece.empty());
    EXPECT_EQ(piece.back(), '\n');
    out += piece;
  }
  return out;
}

TEST(Wikitext, KeepsTheProseAndDropsTheRest) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"'''Paris''' is the [[capital city|capital]] of [[France]].", "Paris is the capital of France.\n"},
      {"A{{Infobox city|name=Paris|pop={{formatnum:2102650}}}} b", "A b\n"},
      {"x<!-- hidden\nnote --> y", "x y\n"},
      {"Fact.<ref name=\"a\">Smith, ''Book'', 2001.</ref> More.<ref name=\"a\" /> End.", "Fact. More. End.\n"},
      {"[[File:Paris.jpg|thumb|The [[Eiffel Tower]] at night]]\nText here.", "Text here.\n"},
      {"Words.\n[[Category:Capitals in Europe]]", "Words.\n"},
      {"== History ==\nThe city grew.\n=== Early ===\n", "History\nThe city grew.\nEarly\n"},
      {"* first item\n# second item\n: indented\n; term", "first item\nsecond item\nindented\nterm\n"},
      {"before\n{| class=\"wikitable\"\n|-\n| a || b\n{|\n| nested\n|}\n|}\nafter", "before\nafter\n"},
      {"See [https://example.org the site] and [http://x.org].", "See the site and .\n"},
      {"E = <math>mc^2</math> holds; <small>small</small> <b>bold</b>", "E = holds; small bold\n"},
      {"a&nbsp;b &ndash; c &amp; d &#233;t&#xE9; &unknown; __TOC__ e",
       "a b \u2013 c & d \u00e9t\u00e9 &unknown; e\n"},
      {"3 < 4 and [[unclosed", "3 < 4 and unclosed\n"},
      {"\n\n  \n{{only a template}}\n", ""},
      {"[[Dog]]s bark", "Dogs bark\n"},
      // Character references to control characters are blanks, never line breaks (fuzzing).
      {"one&#10;two&nbsp;&#10;", "one two\n"},
      {"a&#9;b&#x0D;&#0;c", "a b c\n"}};
  for (const auto& [wiki, text] : cases) EXPECT_EQ(wikitext_to_text(wiki), text) << wiki;
}

TEST(LineSources, TextComesInWholeLinesNumberedThrough) {
  test::TempDir dir;
  std::string text;
  for (int i = 0; i < 50000; ++i) text += "line " + std::to_string(i) + (i % 7 ? " words" : "") + "\n";
  text += "last line without a newline";
  test::write_file(dir / "t.txt", text);
  test::write_file(dir / "t.txt.bz2", bzip2(text));
  for (const char* name : {"t.txt", "t.txt.bz2"}) {
    const auto source = open_lines((dir / name).string());
    std::string back, piece;
    std::uint64_t expected_first = 1;
    std::size_t pieces = 0;
    while (source->next(piece, 64 << 10)) {
      ASSERT_EQ(piece.back(), '\n');
      EXPECT_GE(piece.size(), std::size_t{64} << 10 > text.size() - back.size() ? 1 : std::size_t{64} << 10);
      // Each piece's first line is the one after the previous piece's last.
      EXPECT_EQ(source->first_line(), expected_first) << name;
      expected_first += static_cast<std::uint64_t>(std::count(piece.begin(), piece.end(), '\n'));
      back += piece;
      ++pieces;
    }
    EXPECT_EQ(back, text + "\n") << name;
    EXPECT_GT(pieces, 3u);
  }
  test::write_file(dir / "empty.txt", "");
  EXPECT_EQ(all_of(*open_lines((dir / "empty.txt").string()), 100), "");
}

const char* const kDump = R"(<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
  <siteinfo><sitename>Wikipedia</sitename></siteinfo>
  <page>
    <title>Paris</title>
    <ns>0</ns>
    <id>1</id>
    <revision>
      <id>10</id>
      <text bytes="120" xml:space="preserve">'''Paris''' is the [[capital city|capital]] of [[France]].{{Infobox|x=1}}
&lt;ref&gt;A source.&lt;/ref&gt;
== History ==
The city &amp; its river.</text>
    </revision>
  </page>
  <page>
    <title>Talk:Paris</title>
    <ns>1</ns>
    <id>2</id>
    <revision><id>11</id><text xml:space="preserve">talk page words</text></revision>
  </page>
  <page>
    <title>City of Light</title>
    <ns>0</ns>
    <id>3</id>
    <redirect title="Paris" />
    <revision><id>12</id><text xml:space="preserve">#REDIRECT [[Paris]]</text></revision>
  </page>
  <page>
    <title>Seine</title>
    <ns>0</ns>
    <id>4</id>
    <revision><id>13</id><text xml:space="preserve">The '''Seine''' flows through Paris.</text></revision>
  </page>
</mediawiki>
)";

TEST(LineSources, WikipediaDumpsGiveTheirArticlesText) {
  test::TempDir dir;
  test::write_file(dir / "dump.xml", kDump);
  test::write_file(dir / "dump.xml.bz2", bzip2(kDump));
  const std::string expected =
      "Paris is the capital of France.\nHistory\nThe city & its river.\nThe Seine flows through Paris.\n";
  for (const char* name : {"dump.xml", "dump.xml.bz2"}) {
    EXPECT_EQ(all_of(*open_lines((dir / name).string()), 10), expected) << name;
    EXPECT_EQ(all_of(*open_lines((dir / name).string(), TextFormat::wikipedia), 1 << 20), expected) << name;
  }
  // Read as text on request.
  EXPECT_EQ(all_of(*open_lines((dir / "dump.xml").string(), TextFormat::text), 1 << 20), std::string(kDump));
}

TEST(LineSources, DamagedDumpsAreRefusedWithTheirLine) {
  test::TempDir dir;
  std::string broken = kDump;
  broken.replace(broken.find("</title>"), 8, "</titel>");  // line 4
  test::write_file(dir / "broken.xml", broken);
  const std::string error = test::input_error_of([&] { all_of(*open_lines((dir / "broken.xml").string()), 10); });
  EXPECT_NE(error.find("broken.xml:4:"), std::string::npos) << error;
  EXPECT_NE(error.find("not a Wikipedia XML dump"), std::string::npos) << error;
  std::string cut = kDump;
  cut.resize(cut.size() / 2);
  test::write_file(dir / "cut.xml", cut);
  EXPECT_NE(test::input_error_of([&] { all_of(*open_lines((dir / "cut.xml").string()), 10); }).find("not a Wikipedia XML dump"),
            std::string::npos);
  EXPECT_THROW(parse_text_format("html"), UsageError);
}

// Texts cut for parsing in parallel: the pieces tile the text, end at line ends, and number
// their lines as one pass over the whole text does (blank lines, no final newline,
// pieces smaller than a line).
TEST(LineChunks, PiecesNumberTheirLinesAsTheWholeTextDoes) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (int round = 0; round < 200; ++round) {
    std::string text;
    const int lines = random.integer(0, 40);
    for (int l = 0; l < lines; ++l) {
      text += std::string(static_cast<std::size_t>(random.integer(0, 2) == 0 ? 0 : random.integer(1, 30)), 'a' + l % 26);
      if (l + 1 < lines || random.integer(0, 1) == 0) text += '\n';
    }
    std::vector<std::pair<std::string_view, std::uint64_t>> want, got;
    for_each_line(text, [&](std::string_view line, std::uint64_t number) { want.emplace_back(line, number); });
    const std::size_t bytes = static_cast<std::size_t>(random.integer(1, 64));
    std::size_t next = 0;
    for (const LineChunk& chunk : line_chunks(text, bytes)) {
      EXPECT_EQ(chunk.begin, next);
      EXPECT_GT(chunk.end, chunk.begin);
      EXPECT_TRUE(chunk.end == text.size() || text[chunk.end - 1] == '\n');
      next = chunk.end;
      std::uint64_t counted = 0;
      for_each_line(chunk.of(text), [&](std::string_view line, std::uint64_t k) {
        got.emplace_back(line, chunk.first_line + k - 1);
        counted = k;
      });
      EXPECT_EQ(counted, chunk.lines);
    }
    EXPECT_EQ(next, text.size());
    EXPECT_EQ(got, want) << "piece size " << bytes;
  }
}

// The error of the earliest line wins, in whatever order parallel parsers offer theirs.
TEST(LineChunks, TheEarliestLinesErrorIsKept) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  for (int round = 0; round < 50; ++round) {
    std::vector<std::uint64_t> lines(static_cast<std::size_t>(random.integer(1, 20)));
    for (auto& line : lines) line = static_cast<std::uint64_t>(random.integer(1, 1000));
    FirstError first;
    for (const std::uint64_t line : lines) first.offer(InputError(Location::at_line("f", line), "bad"));
    ASSERT_TRUE(first.error.has_value());
    EXPECT_EQ(first.error->where().line, *std::min_element(lines.begin(), lines.end()));
    EXPECT_THROW(first.throw_if_any(), InputError);
  }
  EXPECT_NO_THROW(FirstError().throw_if_any());
}

}  // namespace
}  // namespace simkit
