// Running text out of MediaWiki markup, for corpora made of Wikipedia dumps. The rules
// (docs/formats.md) keep the prose and drop the rest:
//   dropped whole  comments <!-- -->, templates {{ }} (nested), tables {| |}, references
//                  <ref>...</ref> and <ref/>, the content of math, code, pre, source,
//                  syntaxhighlight, gallery, timeline, score, chem, hiero, graph,
//                  mapframe, imagemap and templatedata elements, links into the File,
//                  Image, Media and Category namespaces (captions too), magic words
//                  such as __TOC__
//   kept as text   a link's label ([[target|label]] -> label, [[target]] -> target,
//                  [http://... label] -> label), the content of other tags (the tags
//                  dropped), headings without their = signs, list items without their
//                  markers, bold and italic text without the quote runs
//   decoded        the HTML entities &nbsp; &ndash; &mdash; &amp; &lt; &gt; &quot;
//                  &apos; &hellip; &minus; &times; and numeric ones
// A paragraph (a line of the markup) is a line of the result, blank runs made one space;
// empty lines are left out.
#pragma once

#include <string>
#include <string_view>

namespace simkit {

std::string wikitext_to_text(std::string_view wikitext);

}  // namespace simkit
