// The two GPU matchers behind match_all_gpu (simkit/dedup.hpp), apart so that tests can
// drive each: the 7-gram index (the default) and every compatible pair scored.
#pragma once

#include <cstddef>
#include <memory>
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
// at a time (0: as many as half this process's share of the device's free memory holds).
// With `share`, the rows (signatures in block-size order) holding the worker's share of
// the candidates. `steps`, when given, receives each step's wall seconds (the
// benchmark's breakdown).
using StepTimes = std::vector<std::pair<std::string, double>>;

// The host's part of the index, made once (on all cores) and shared by a process's GPU
// workers: the signatures in block-size order as 6-bit codes, their groups, where each
// one's keys go. Null where the index cannot be built for these signatures (2^31 keys or
// more, 2^21 block sizes or more, a part outside base64).
struct IndexPlan;
std::shared_ptr<const IndexPlan> plan_index(const std::vector<ctph::Prepared>& signatures);

std::vector<Match> match_indexed_gpu(const IndexPlan& plan, int threshold, int device, double* device_ms, Share share,
                                     std::size_t pair_budget = 0, StepTimes* steps = nullptr);
// The same, planned here: empty (no value) where the plan is null.
std::optional<std::vector<Match>> match_indexed_gpu(const std::vector<ctph::Prepared>& signatures, int threshold,
                                                    int device, double* device_ms, Share share,
                                                    std::size_t pair_budget = 0, StepTimes* steps = nullptr);

// Whether the index of these signatures fits half this process's share of device
// `device`'s free memory (the ranks of a host on one GPU share it): their keys counted,
// before any plan is made.
bool index_fits_gpu(const std::vector<ctph::Prepared>& signatures, int device);

// Every pair of compatible block sizes scored (no index): the fallback. With `share`, the
// worker's share of each block-size group's rows.
std::vector<Match> match_every_pair_gpu(const std::vector<ctph::Prepared>& signatures, int threshold, int device,
                                        double* device_ms, Share share);

}  // namespace simkit::dedup
