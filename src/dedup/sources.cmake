list(APPEND SIMKIT_CPU_SOURCES
  dedup/ctph_hash.cpp
  dedup/ctph_compare.cpp
  dedup/files.cpp
  dedup/match.cpp
)
