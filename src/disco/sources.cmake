list(APPEND SIMKIT_CPU_SOURCES
  disco/stopwords.cpp
  disco/build.cpp
  disco/similarity.cpp
  disco/model_io.cpp
  disco/evaluate.cpp
)
