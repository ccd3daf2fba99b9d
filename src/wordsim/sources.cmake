# Word-similarity gold standards and Spearman's rho (disco and neighbors evaluate).
list(APPEND SIMKIT_CPU_SOURCES wordsim/evaluate.cpp)
