# Input text: UTF-8 checks, word segmentation, numbers as text, compressed streams, lines
# in bounded memory, Wikipedia markup.
list(APPEND SIMKIT_CPU_SOURCES
  text/utf8.cpp
  text/tokenize.cpp
  text/number_text.cpp
  text/compressed.cpp
  text/line_source.cpp
  text/lines.cpp
  text/wikitext.cpp)
