// simkit_bench_dedup: near-duplicate detection, CPU against GPU in the same run.
//  --list L       ssdeep mode on an ssdeep hash list (the Boost headers'): all pairs on every
//                 core (dedup::match_all) and on the GPU (match_all_gpu), checked equal.
//  --synthetic N  ssdeep mode on N signatures with the list's block sizes and lengths (one
//                 in ten a lightly edited copy of a list signature, the rest random); the
//                 GPU result checked against the CPU on the first --check signatures.
//  --docs D       the edit-rate pipeline (dedup::match_rates) end to end on the first n
//                 files of D (in a fixed random order; edited copies of them when D has
//                 fewer) for each n of --sizes, GPU against CPU, checked equal; and the
//                 pairs per second of each signature kernel on the files' rate signatures.
//  --long-pair N  the verification of one long pair: a random text of N bytes (64 letters,
//                 seed 29) and a copy with --long-pair-edits random edits, at the limit
//                 --rate gives: one core (edit_distance_within) against the GPU
//                 (distances_within_gpu: one warp), distances checked equal.
//  --recall D     the promise of docs/dedup.md, measured: up to --recall-files files of each
//                 D (random, seed 11), each beside a copy with 1 to 3 random byte edits
//                 (substitutions, insertions, deletions of any byte value), through the
//                 pipeline at --rate on the CPU and the GPU: planted pairs missed (must be 0),
//                 planted pairs' distances checked against the textbook DP, GPU = CPU.
// GPU kernel times come from CUDA events (medians after a warm-up); wall times include
// the host's part. A JSON report goes to --json.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <oneapi/tbb/parallel_for.h>

#include "dedup/edit_distance.hpp"
#include "dedup/match_gpu.hpp"
#include "dedup/sorted_runs.hpp"
#include "simkit/ctph.hpp"
#include "simkit/dedup.hpp"
#include "simkit/device.hpp"
#include "simkit/io.hpp"
#include "random_edits.hpp"
#include "timing.hpp"

namespace {

using namespace simkit;

using bench::median;
using bench::now_s;
using bench::wall_median;

std::vector<ctph::Prepared> prepare_all(const std::vector<std::string>& signatures) {
  std::vector<ctph::Prepared> out(signatures.size());
  for (std::size_t i = 0; i < signatures.size(); ++i)
    if (!ctph::prepare(signatures[i], out[i])) throw std::runtime_error("malformed signature " + signatures[i]);
  return out;
}

std::uint64_t compatible_pairs(const std::vector<ctph::Prepared>& sigs) {
  std::map<std::uint64_t, std::uint64_t> count;
  for (const auto& s : sigs) ++count[s.block_size];
  std::uint64_t pairs = 0;
  for (const auto& [size, n] : count) {
    pairs += n * (n - 1) / 2;
    if (const auto it = count.find(size * 2); it != count.end()) pairs += n * it->second;
  }
  return pairs;
}

constexpr const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// A copy of a signature's part with a few random edits, within 64 base64 characters.
std::string mutate_part(std::string s, std::mt19937_64& rng) {
  const int edits = std::uniform_int_distribution<int>(0, 6)(rng);
  for (int e = 0; e < edits; ++e) {
    const char c = alphabet[rng() % 64];
    const int op = s.empty() ? 1 : static_cast<int>(rng() % 3);
    const std::size_t at = s.empty() ? 0 : rng() % (s.size() + (op == 1 ? 1 : 0));
    if (op == 0) s[at] = c;
    else if (op == 1 && s.size() < ctph::kSignatureLength) s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), c);
    else if (op == 2) s.erase(at, 1);
  }
  return s;
}

// N signatures with the list's block sizes and part lengths: one in ten a copy of a list
// signature with a few random edits (near-duplicates of real files), the rest random
// base64 text (unrelated files, which is what most pairs of a large collection are).
std::vector<std::string> synthetic_signatures(const std::vector<std::string>& base, std::size_t n, std::uint64_t seed) {
  std::vector<std::string> out(n);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 4096), [&](const auto& range) {
    std::mt19937_64 rng(seed ^ (range.begin() * 0x9E3779B97F4A7C15ull));
    for (std::size_t i = range.begin(); i != range.end(); ++i) {
      const std::string& b = base[rng() % base.size()];
      const std::size_t c1 = b.find(':'), c2 = b.find(':', c1 + 1);
      std::string first = b.substr(c1 + 1, c2 - c1 - 1), second = b.substr(c2 + 1);
      if (rng() % 10 == 0) {
        first = mutate_part(first, rng);
        second = mutate_part(second, rng);
      } else {
        for (char& c : first) c = alphabet[rng() % 64];
        for (char& c : second) c = alphabet[rng() % 64];
      }
      out[i] = b.substr(0, c1 + 1) + first + ":" + second;
    }
  });
  return out;
}

nlohmann::json bench_list(const std::vector<std::string>& signatures, const Device& device, int threshold, int reps) {
  const auto prepared = prepare_all(signatures);
  dedup::MatchList cpu;
  const double cpu_s = wall_median(reps, false, [&] { cpu = dedup::match_all(prepared, threshold); });
  nlohmann::json r = {{"signatures", signatures.size()}, {"compatible_pairs", compatible_pairs(prepared)},
                      {"threshold", threshold}, {"pairs_found", cpu.size()}, {"cpu_s", cpu_s}};
  fmt::print(stderr, "bench: list of {} signatures: CPU {:.3f} s, {} pairs\n", signatures.size(), cpu_s, cpu.size());
  if (device.cuda) {
    std::vector<double> device_ms;
    dedup::MatchList gpu;
    const double gpu_s = wall_median(reps, true, [&] {
      double ms = 0;
      gpu = dedup::match_all_gpu(prepared, threshold, device.index, &ms);
      device_ms.push_back(ms);
    });
    device_ms.erase(device_ms.begin());  // the warm-up
    r["gpu_wall_s"] = gpu_s;
    r["gpu_kernel_ms"] = median(device_ms);
    r["gpu_equals_cpu"] = gpu == cpu;
    r["speedup_wall"] = cpu_s / gpu_s;
    double every_ms = 0;
    const double every_s = wall_median(reps, false, [&] {
      gpu = dedup::match_every_pair_gpu(prepared, threshold, device.index, &every_ms, {});
    });
    r["every_pair_gpu_wall_s"] = every_s;
    r["every_pair_equals_cpu"] = gpu == cpu;
    fmt::print(stderr, "bench: every pair scored on the GPU (the path before the index): {:.3f} s, equal {}\n", every_s,
               gpu == cpu);
    fmt::print(stderr, "bench: GPU {:.3f} s wall ({:.1f} ms kernels), equal to CPU: {}\n", gpu_s, median(device_ms),
               gpu == cpu);
  }
  return r;
}

nlohmann::json bench_synthetic(const std::vector<std::string>& base, std::size_t n, std::size_t check,
                               const Device& device, int threshold) {
  const auto signatures = synthetic_signatures(base, n, 20261123);
  const auto prepared = prepare_all(signatures);
  nlohmann::json r = {{"signatures", n}, {"compatible_pairs", compatible_pairs(prepared)}, {"threshold", threshold}};
  // The check: GPU and CPU on the first `check` signatures (the CPU's time is the baseline).
  const std::vector<ctph::Prepared> head(prepared.begin(), prepared.begin() + static_cast<std::ptrdiff_t>(std::min(check, n)));
  dedup::MatchList cpu;
  const double cpu_s = wall_median(1, false, [&] { cpu = dedup::match_all(head, threshold); });
  r["check"] = {{"signatures", head.size()}, {"compatible_pairs", compatible_pairs(head)}, {"cpu_s", cpu_s},
                {"pairs_found", cpu.size()}};
  fmt::print(stderr, "bench: synthetic check on {}: CPU {:.3f} s, {} pairs\n", head.size(), cpu_s, cpu.size());
  if (!device.cuda) return r;
  double ms = 0;
  const bool equal = dedup::match_all_gpu(head, threshold, device.index, &ms) == cpu;
  r["check"]["gpu_equals_cpu"] = equal;
  r["check"]["gpu_kernel_ms"] = ms;
  // The path before the index, every compatible pair scored, on the same rows (the baseline).
  const double every_start = now_s();
  const bool every_equal = dedup::match_every_pair_gpu(head, threshold, device.index, &ms, {}) == cpu;
  r["check"]["every_pair_gpu_s"] = now_s() - every_start;
  r["check"]["every_pair_gpu_kernel_ms"] = ms;
  r["check"]["every_pair_equals_cpu"] = every_equal;
  fmt::print(stderr, "bench: synthetic check: GPU equal to CPU: {}; every pair scored: {:.3f} s, equal {}\n", equal,
             r["check"]["every_pair_gpu_s"].get<double>(), every_equal);
  // The whole set: the first run (a fresh matcher's start) and the median of three more.
  dedup::MatchList all;
  std::vector<double> walls, kernel_ms;
  for (int run = 0; run < 4; ++run) {
    const double start = now_s();
    all = dedup::match_all_gpu(prepared, threshold, device.index, &ms);
    walls.push_back(now_s() - start);
    kernel_ms.push_back(ms);
  }
  r["gpu_first_wall_s"] = walls.front();
  dedup::StepTimes steps;  // one more run, its steps timed
  dedup::match_indexed_gpu(prepared, threshold, device.index, &ms, {}, 0, &steps);
  for (const auto& [name, seconds] : steps) {
    r["gpu_steps_s"][name] = seconds;
    fmt::print(stderr, "bench: synthetic {} on the GPU, step {}: {:.3f} s\n", n, name, seconds);
  }
  walls.erase(walls.begin());
  kernel_ms.erase(kernel_ms.begin());
  const double wall = median(walls);
  r["gpu_wall_s"] = wall;
  r["gpu_kernel_ms"] = median(kernel_ms);
  r["pairs_found"] = all.size();
  fmt::print(stderr, "bench: synthetic {} on the GPU: {:.3f} s wall (first {:.3f} s; {:.0f} ms on the device), {} pairs; check equal: {}\n",
             n, wall, r["gpu_first_wall_s"].get<double>(), median(kernel_ms), all.size(), equal);
  // The CPU on the whole set too: its 7-gram index gains most where few pairs share one.
  const double cpu_start = now_s();
  const bool cpu_equal = dedup::match_all(prepared, threshold) == all;
  r["cpu_s"] = now_s() - cpu_start;
  r["cpu_equals_gpu"] = cpu_equal;
  fmt::print(stderr, "bench: synthetic {} on the CPU: {:.2f} s, equal to the GPU: {}\n", n, r["cpu_s"].get<double>(), cpu_equal);
  return r;
}

// Every compatible pair scored (the path a list takes where the GPU's index has no room),
// whole and then in `parts` shares one after another on this one GPU: each share's time is
// what one of `parts` GPUs would spend (bench/results/distributed.md's balance check); the
// shares' matches together must be the whole's.
nlohmann::json bench_every_pair_shares(const std::vector<std::string>& base, std::size_t n, std::size_t parts,
                                       const Device& device, int threshold) {
  const auto prepared = prepare_all(synthetic_signatures(base, n, 20261123));
  nlohmann::json r = {{"signatures", n}, {"parts", parts}, {"threshold", threshold}};
  if (!device.cuda) return r;
  double ms = 0;
  double start = now_s();
  const dedup::MatchList whole = dedup::match_every_pair_gpu(prepared, threshold, device.index, &ms, {});
  r["whole"] = {{"wall_s", now_s() - start}, {"device_ms", ms}, {"pairs", whole.size()}};
  fmt::print(stderr, "bench: every pair of {} signatures, whole: {:.3f} s ({:.1f} ms on the device), {} pairs\n", n,
             r["whole"]["wall_s"].get<double>(), ms, whole.size());
  dedup::MatchList together;
  double slowest = 0;
  for (std::size_t part = 0; part < parts; ++part) {
    start = now_s();
    const dedup::MatchList mine = dedup::match_every_pair_gpu(prepared, threshold, device.index, &ms, Share{part, parts});
    const double wall = now_s() - start;
    slowest = std::max(slowest, wall);
    r["shares"].push_back({{"wall_s", wall}, {"device_ms", ms}, {"pairs", mine.size()}});
    fmt::print(stderr, "bench: share {} of {}: {:.3f} s ({:.1f} ms on the device), {} pairs\n", part, parts, wall, ms,
               mine.size());
    together.insert(together.end(), mine.begin(), mine.end());
  }
  std::sort(together.begin(), together.end(), dedup::by_pair);
  r["shares_equal_whole"] = together == whole;
  r["bound_speedup"] = r["whole"]["wall_s"].get<double>() / slowest;
  fmt::print(stderr, "bench: the shares together equal the whole: {}; the slowest share bounds {} GPUs at {:.3f}x\n",
             together == whole, parts, r["bound_speedup"].get<double>());
  return r;
}

// The files of `dir` in a fixed random order; when fewer than `at_least`, edited copies of
// random ones (1 to 20 random character edits: planted near-duplicates) written to
// `scratch` make up the rest.
std::vector<std::string> shuffled_files(const std::string& dir, std::size_t at_least, const std::string& scratch) {
  auto files = dedup::list_files({dir}, true);
  std::mt19937_64 rng(7);
  std::shuffle(files.begin(), files.end(), rng);
  if (files.size() >= at_least) return files;
  std::filesystem::create_directories(scratch);
  const std::size_t originals = files.size();
  for (std::size_t i = originals; i < at_least; ++i) {
    const MappedFile source = MappedFile::open(files[rng() % originals]);
    std::string text(source.text());
    test::apply_random_edits(text, static_cast<int>(1 + rng() % 20), rng, test::printable);
    const std::string path = fmt::format("{}/copy{}.txt", scratch, i);
    std::ofstream(path, std::ios::binary) << text;
    files.push_back(path);
  }
  std::shuffle(files.begin(), files.end(), rng);
  return files;
}

nlohmann::json bench_pipeline(const std::vector<std::string>& files, const std::vector<std::size_t>& sizes,
                               const Device& device, dedup::RateOptions options, int reps, bool cpu_baseline) {
  nlohmann::json runs = nlohmann::json::array();
  for (std::size_t n : sizes) {
    if (n > files.size()) break;
    const std::vector<std::string> part(files.begin(), files.begin() + static_cast<std::ptrdiff_t>(n));
    nlohmann::json r = {{"documents", n}, {"rate", options.rate}, {"signature_length", options.signature_length},
                        {"guaranteed_edits", options.guaranteed_edits}};
    std::vector<dedup::RateMatch> cpu, gpu;
    dedup::RateStats stats;
    if (cpu_baseline) {
      options.device = -1;
      r["cpu_s"] = wall_median(1, false, [&] { cpu = dedup::match_rates(part, options, &stats); });
      r["cpu_stages_s"] = {stats.signature_seconds, stats.candidate_seconds, stats.verify_seconds};
      r["candidates"] = stats.candidates;
      r["unsigned_documents"] = stats.unsigned_documents;
      r["pairs_found"] = cpu.size();
    }
    if (device.cuda) {
      options.device = device.index;
      r["gpu_wall_s"] = wall_median(reps, true, [&] { gpu = dedup::match_rates(part, options, &stats); });
      r["gpu_stages_s"] = {stats.signature_seconds, stats.candidate_seconds, stats.verify_seconds};
      r["gpu_kernel_ms"] = stats.device_ms;
      r["gpu_verify_detail"] = {{"pack_s", stats.pack_seconds}, {"gpu_s", stats.gpu_verify_seconds},
                                {"gpu_ms", stats.gpu_verify_ms}, {"cores_s", stats.cores_verify_seconds}};
      r["candidates"] = stats.candidates;
      r["pairs_found"] = gpu.size();
      if (cpu_baseline) r["gpu_equals_cpu"] = gpu == cpu;
    }
    fmt::print(stderr, "bench: edit rate, {} documents: {}\n", n, r.dump());
    runs.push_back(r);
  }
  return runs;
}

nlohmann::json bench_kernels(const std::vector<std::string>& files, std::size_t strings, std::size_t cpu_strings,
                             const Device& device, const dedup::RateOptions& options, int reps) {
  dedup::StringSet set;
  for (std::size_t i = 0; i < files.size() && set.size() < strings; ++i) {
    const MappedFile f = MappedFile::open(files[i]);
    const std::string_view text = f.text();
    const std::string sig = ctph::rate_signature({reinterpret_cast<const unsigned char*>(text.data()), text.size()},
                                                 options.signature_length)
                                .text;
    if (sig.size() <= dedup::kMaxPairString) set.add(sig);  // the kernels' strings (longer ones meet every document)
  }
  const dedup::PairRule rule{options.rate * options.candidate_factor};
  const double rate = rule.rate;
  const double pairs = static_cast<double>(set.size()) * static_cast<double>(set.size() - 1) / 2;
  dedup::StringSet head;
  for (std::size_t i = 0; i < std::min(cpu_strings, set.size()); ++i) head.add(set[i]);
  std::vector<dedup::EditPair> cpu_head;
  const double cpu_s = wall_median(1, false, [&] { cpu_head = dedup::edit_pairs_cpu(head, head, true, rule); });
  const double head_pairs = static_cast<double>(head.size()) * static_cast<double>(head.size() - 1) / 2;
  nlohmann::json r = {{"strings", set.size()}, {"pairs", pairs}, {"rate", rate},
                      {"cpu", {{"strings", head.size()}, {"seconds", cpu_s}, {"pairs_per_s", head_pairs / cpu_s}}}};
  fmt::print(stderr, "bench: signature pairs on the CPU: {:.3g} pairs/s\n", head_pairs / cpu_s);
  if (!device.cuda) return r;
  std::vector<dedup::EditPair> first;
  for (const auto kernel : {dedup::EditKernel::bit_parallel, dedup::EditKernel::shared_rows, dedup::EditKernel::global_rows}) {
    std::vector<double> ms;
    std::vector<dedup::EditPair> got;
    for (int rep = 0; rep <= reps; ++rep) {
      double t = 0;
      got = dedup::edit_pairs_gpu(set, set, true, rule, kernel, device.index, &t);
      if (rep > 0) ms.push_back(t);
    }
    const bool head_equal = dedup::edit_pairs_gpu(head, head, true, rule, kernel, device.index) == cpu_head;
    if (first.empty()) first = got;
    const double m = median(ms);
    r[dedup::kernel_name(kernel)] = {{"kernel_ms", m}, {"pairs_per_s", pairs / (m / 1e3)},
                                     {"found", got.size()}, {"equals_cpu_on_head", head_equal},
                                     {"equals_bit_parallel", got == first}};
    fmt::print(stderr, "bench: kernel {}: {:.1f} ms, {:.3g} pairs/s ({:.0f}x the CPU), equal: {} {}\n",
               dedup::kernel_name(kernel), m, pairs / (m / 1e3), (pairs / (m / 1e3)) / (head_pairs / cpu_s), head_equal,
               got == first);
  }
  return r;
}

std::vector<std::string> list_signatures(const std::string& list) {
  const MappedFile file = MappedFile::open(list);
  std::vector<std::string> signatures;
  for (auto& e : dedup::read_hash_list(file.text(), list)) signatures.push_back(std::move(e.signature));
  return signatures;
}

nlohmann::json bench_recall(const std::vector<std::string>& dirs, std::size_t per_dir, const std::string& scratch,
                            const Device& device, dedup::RateOptions options) {
  std::mt19937_64 rng(11);
  std::vector<std::string> files;
  std::vector<std::uint32_t> distances;
  std::filesystem::create_directories(scratch);
  for (const std::string& dir : dirs) {
    auto all = dedup::list_files({dir}, true);
    std::erase_if(all, [](const std::string& f) { return std::filesystem::file_size(f) < 64; });
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(std::min(per_dir, all.size()));
    for (const std::string& f : all) {
      const MappedFile source = MappedFile::open(f);
      std::string text(source.text());
      const std::string original = text;
      test::apply_random_edits(text, static_cast<int>(1 + rng() % 3), rng,
                               [](std::mt19937_64& r) { return static_cast<char>(r() % 256); });
      const std::string path = fmt::format("{}/recall{}", scratch, files.size() / 2);
      std::ofstream(path, std::ios::binary) << text;
      files.push_back(f);
      files.push_back(path);
      distances.push_back(*dedup::edit_distance_within(original, text, 3));  // at most 3 edits apart
    }
  }
  nlohmann::json r = {{"documents", files.size()}, {"planted", distances.size()}, {"rate", options.rate}};
  std::vector<dedup::RateMatch> cpu;
  for (const bool gpu : {false, true}) {
    if (gpu && !device.cuda) break;
    options.device = gpu ? device.index : -1;
    dedup::RateStats stats;
    const double start = now_s();
    const auto got = dedup::match_rates(files, options, &stats);
    const double seconds = now_s() - start;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> found;
    for (const auto& m : got) found[{m.a, m.b}] = m.distance;
    std::size_t below = 0, missed = 0, wrong = 0;
    for (std::uint32_t i = 0; i < distances.size(); ++i) {
      const std::uint64_t la = std::filesystem::file_size(files[2 * i]), lb = std::filesystem::file_size(files[2 * i + 1]);
      if (!dedup::below_rate(distances[i], la, lb, options.rate)) continue;
      ++below;
      const auto it = found.find({2 * i, 2 * i + 1});
      if (it == found.end()) {
        ++missed;
        fmt::print(stderr, "bench: MISSED {} ({} edits)\n", files[2 * i], distances[i]);
      } else if (it->second != distances[i]) {
        ++wrong;
      }
    }
    const char* side = gpu ? "gpu" : "cpu";
    r[side] = {{"seconds", seconds}, {"pairs_found", got.size()}, {"planted_below_rate", below},
               {"missed", missed}, {"wrong_distance", wrong}, {"candidates", stats.candidates},
               {"unsigned_documents", stats.unsigned_documents}};
    if (gpu) r["gpu_equals_cpu"] = got == cpu;
    else cpu = got;
    fmt::print(stderr, "bench: recall on the {}: {} planted pairs below the rate, {} missed, {} wrong distances, "
                       "{} pairs in {:.2f} s\n", side, below, missed, wrong, got.size(), seconds);
  }
  return r;
}

nlohmann::json bench_long_pair(std::size_t bytes, int edits, double rate, const Device& device, int reps) {
  std::mt19937_64 rng(29);
  std::string a(bytes, ' ');
  for (char& c : a) c = static_cast<char>('0' + rng() % 64);
  std::string b = a;
  test::apply_random_edits(b, edits, rng, [](std::mt19937_64& r) { return static_cast<char>('0' + r() % 64); });
  const auto limit = static_cast<std::uint32_t>(rate * static_cast<double>(a.size() + b.size()));
  std::optional<std::uint32_t> cpu;
  const double cpu_s = wall_median(reps, false, [&] { cpu = dedup::edit_distance_within(a, b, limit); });
  nlohmann::json r = {{"bytes", {a.size(), b.size()}}, {"edits", edits}, {"limit", limit},
                      {"distance", cpu ? static_cast<std::int64_t>(*cpu) : -1}, {"cpu_one_core_s", cpu_s}};
  if (device.cuda) {
    const std::string chars = a + b;
    const std::vector<std::uint64_t> offsets = {0, a.size(), chars.size()};
    std::vector<double> device_ms;
    std::vector<std::uint32_t> gpu;
    const double gpu_s = wall_median(reps, true, [&] {
      double ms = 0;
      gpu = dedup::distances_within_gpu(chars.data(), offsets, {dedup::TextPair{0, 1, limit}}, device.index, &ms);
      device_ms.push_back(ms);
    });
    device_ms.erase(device_ms.begin());  // the warm-up
    r["gpu_wall_s"] = gpu_s;
    r["gpu_kernel_ms"] = median(device_ms);
    r["gpu_equals_cpu"] = gpu[0] == (cpu ? *cpu : dedup::kBeyond);
  }
  fmt::print(stderr, "bench: long pair: {}\n", r.dump());
  return r;
}

std::vector<std::size_t> parse_sizes(const std::string& text) {
  std::vector<std::size_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoul(item));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"near-duplicate detection benchmark (ssdeep mode and edit-rate mode), CPU against GPU"};
  std::string device_name = "auto", list, docs, sizes_text = "1000,2000,5000,10000,20000", json_path,
              scratch = "/tmp/simkit-dedup-bench";
  std::size_t synthetic = 0, check = 30000, kernel_strings = 10000, cpu_strings = 4000, recall_files = 300;
  std::vector<std::string> recall_dirs;
  int threshold = 1, reps = 3;
  bool no_cpu_pipeline = false;
  dedup::RateOptions options;
  app.add_option("--device", device_name);
  app.add_option("--list", list, "ssdeep hash list (ssdeep mode)");
  app.add_option("--threshold", threshold);
  app.add_option("--synthetic", synthetic, "signatures made from the list's (0: none)");
  app.add_option("--check", check, "synthetic signatures checked against the CPU");
  app.add_option("--docs", docs, "directory of documents (edit-rate mode)");
  app.add_option("--sizes", sizes_text, "document counts, comma-separated (edited copies make up a shortfall)");
  app.add_option("--scratch", scratch, "folder for the edited copies");
  app.add_option("--recall", recall_dirs, "folders for the recall check (edit-rate mode)");
  std::string write_list;
  app.add_option("--write-list", write_list, "write --synthetic N signatures made from --list as an ssdeep list, then stop");
  app.add_option("--recall-files", recall_files, "files drawn from each --recall folder");
  app.add_option("--rate", options.rate);
  app.add_option("--sig-length", options.signature_length);
  app.add_option("--guaranteed-edits", options.guaranteed_edits, "0: the thesis's filter alone");
  app.add_option("--kernel-strings", kernel_strings);
  app.add_option("--cpu-strings", cpu_strings);
  app.add_flag("--no-cpu-pipeline", no_cpu_pipeline, "edit-rate mode on the GPU only");
  bool score_every_pair = false;
  app.add_flag("--score-every-pair", score_every_pair,
               "edit-rate mode: score every signature pair of compatible block sizes (no pruning by length)");
  std::size_t long_pair = 0;
  int long_pair_edits = 1000;
  app.add_option("--long-pair", long_pair, "bytes of one long pair to verify (one core against one warp)");
  app.add_option("--long-pair-edits", long_pair_edits, "random edits of the long pair's copy");
  std::size_t every_pair_shares = 0;
  app.add_option("--every-pair-shares", every_pair_shares,
                 "with --list and --synthetic: every pair scored whole and in this many shares, one after another "
                 "(instead of the synthetic run)");
  app.add_option("--reps", reps);
  app.add_option("--json", json_path);
  CLI11_PARSE(app, argc, argv);
  options.prune_by_length = !score_every_pair;

  try {
    if (!write_list.empty()) {  // the data of the whole-command runs (bench/distributed.sh)
      std::string text = std::string(dedup::kSsdeepHeader) + "\n";
      const auto signatures = synthetic_signatures(list_signatures(list), synthetic, 20261123);
      for (std::size_t i = 0; i < signatures.size(); ++i) text += dedup::list_line(signatures[i], fmt::format("s{}", i));
      write_file_atomically(write_list, text);
      return 0;
    }
    const Device device = resolve_device(parse_device(device_name));
    nlohmann::json report = {{"device", device.name}};
    if (!list.empty()) {
      report["list"] = bench_list(list_signatures(list), device, threshold, reps);
    }
    if (!docs.empty()) {
      const auto sizes = parse_sizes(sizes_text);
      const auto files = shuffled_files(docs, *std::max_element(sizes.begin(), sizes.end()), scratch);
      report["edit_rate"] = bench_pipeline(files, sizes, device, options, reps, !no_cpu_pipeline);
      report["kernels"] = bench_kernels(files, kernel_strings, cpu_strings, device, options, reps);
    }
    if (long_pair > 0) report["long_pair"] = bench_long_pair(long_pair, long_pair_edits, options.rate, device, reps);
    if (!recall_dirs.empty()) {
      report["recall"] = bench_recall(recall_dirs, recall_files, scratch + "/recall", device, options);
    }
    if (!list.empty() && synthetic > 0 && every_pair_shares > 0) {
      report["every_pair_shares"] = bench_every_pair_shares(list_signatures(list), synthetic, every_pair_shares, device, threshold);
    } else if (!list.empty() && synthetic > 0) {  // last: the longest
      report["synthetic"] = bench_synthetic(list_signatures(list), synthetic, check, device, threshold);
    }
    if (!json_path.empty()) {
      std::ofstream(json_path) << report.dump(2) << "\n";
    }
    std::printf("%s\n", report.dump(2).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "simkit_bench_dedup: %s\n", e.what());
    return 1;
  }
  return 0;
}
