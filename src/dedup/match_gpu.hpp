// The two GPU matchers behind match_all_gpu (simkit/dedup.hpp), apart so that tests can
// drive each: the 7-gram index (the default) and every compatible pair scored.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "simkit/ctph.hpp"
#include "simkit/dedup.hpp"

namespace simkit::dedup {

// The CPU's rule on the device: candidates are the pairs that share a key (a part's
// 7-character substring at its block size, or the whole signature), found by sorting the
// keys; a signature whose key lists hold more than its compatible later signatures meets
// those instead. The candidates are made, sorted, made unique and scored `pair_budget`
// at a time (0: as many as half the device's free memory holds). Empty when the index
// cannot be built here (keys past the device's memory or 2^31, more than 2^21 block
// sizes, a part outside base64): the caller falls back.
// `steps`, when given, receives each step's wall seconds (the benchmark's breakdown).
using StepTimes = std::vector<std::pair<std::string, double>>;
std::optional<std::vector<Match>> match_indexed_gpu(const std::vector<ctph::Prepared>& signatures, int threshold,
                                                    int device, double* device_ms, Share share,
                                                    std::size_t pair_budget = 0, StepTimes* steps = nullptr);

// Every pair of compatible block sizes scored (no index): the fallback.
std::vector<Match> match_every_pair_gpu(const std::vector<ctph::Prepared>& signatures, int threshold, int device,
                                        double* device_ms, Share share);

}  // namespace simkit::dedup
