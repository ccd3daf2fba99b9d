// simkit_bench_postings: batched AND queries, each CPU algorithm and the GPU in one run.
//  --synthetic      the seed's data shape (its GOV2 subset: lists of 19,899 ids on
//                   average, ids up to 25,205,174; 1,000 queries of at most 5 terms),
//                   made up: list lengths log-uniform over --min-length..--max-length,
//                   ids uniform, queries of 2..5 random terms
//  --index I / --exp-index I with --queries Q: a real index and query file
// Every algorithm's answers are checked equal to svs's. The peer: CRoaring's AND over
// bitmaps built beforehand (Lemire et al.'s library; the build timed apart). CPU: the batch on all cores
// (median of --reps), and svs one query at a time on one core (the serial baseline).
// GPU (a CUDA build with a GPU): the resident index, each kernel, explicit and managed
// memory (CUDA events, medians after a warm-up), and the seed's way, one query at a time
// with its lists copied for it. Each side keeps its output storage between repetitions
// (simkit's Results, the peer's answer vectors), as a server answering batch after batch
// would. --algorithms narrows the CPU algorithms. JSON to --json.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <roaring/roaring.h>
#include <tbb/parallel_for.h>

#include "simkit/device.hpp"
#include "simkit/postings.hpp"
#include "simkit/threads.hpp"
#include "timing.hpp"

namespace {

using namespace simkit;
using bench::median;
using bench::now_s;
using bench::wall_median;

struct Synthetic {
  std::size_t terms = 5000;
  std::size_t queries = 1000;
  std::uint32_t documents = 25'205'175;
  double min_length = 100, max_length = 145000;  // log-uniform: mean about 19,900 ids
  std::uint64_t seed = 2026;
};

// Sorted distinct ids by random gaps: `count` of them below `documents`, uniform.
std::vector<postings::DocId> uniform_list(std::mt19937_64& rng, std::size_t count, std::uint32_t documents) {
  std::vector<postings::DocId> ids;
  ids.reserve(count);
  const double p = static_cast<double>(count) / documents;
  std::geometric_distribution<std::uint32_t> gap(std::min(1.0, p));
  std::uint64_t at = gap(rng);
  while (at < documents && ids.size() < count) {
    ids.push_back(static_cast<postings::DocId>(at));
    at += 1 + gap(rng);
  }
  return ids;
}

void make_synthetic(const Synthetic& s, postings::Index& index, postings::Queries& queries) {
  std::mt19937_64 rng(s.seed);
  std::uniform_real_distribution<double> log_length(std::log(s.min_length), std::log(s.max_length));
  index.documents = s.documents;
  for (std::size_t t = 0; t < s.terms; ++t) {
    const auto list = uniform_list(rng, static_cast<std::size_t>(std::exp(log_length(rng))), s.documents);
    index.ids.insert(index.ids.end(), list.begin(), list.end());
    index.offsets.push_back(index.ids.size());
  }
  postings::add_bitmaps(index);  // (the seed's shape has no dense list, but as simkit builds indexes)
  std::uniform_int_distribution<std::uint32_t> term(0, static_cast<std::uint32_t>(s.terms - 1));
  std::uniform_int_distribution<int> k(2, 5);
  for (std::size_t q = 0; q < s.queries; ++q) {
    for (int i = k(rng); i > 0; --i) queries.terms.push_back(term(rng));
    queries.offsets.push_back(queries.terms.size());
  }
}

bool same(const postings::Results& a, const postings::Results& b) { return a.ids == b.ids && a.counts == b.counts; }

nlohmann::json shape_of(const postings::Index& index, const postings::Queries& queries) {
  std::uint64_t listed = 0, shortest = 0;
  for (std::size_t q = 0; q < queries.size(); ++q) {
    std::size_t least = ~std::size_t{0};
    for (const auto t : queries.query(q)) {
      const std::size_t n = t < index.terms() ? index.list(t).size() : 0;
      listed += n;
      least = std::min(least, n);
    }
    shortest += least;
  }
  return {{"terms", index.terms()},
          {"postings", index.ids.size()},
          {"documents", index.documents},
          {"mean_list", index.terms() ? static_cast<double>(index.ids.size()) / index.terms() : 0.0},
          {"queries", queries.size()},
          {"query_terms", queries.terms.size()},
          {"ids_in_query_lists", listed},
          {"candidates", shortest}};
}

nlohmann::json run_cpu(const postings::Index& index, const postings::Queries& queries, int reps,
                       const postings::Results& want, const std::vector<postings::Algorithm>& algorithms) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto a : algorithms) {
    postings::Results got;
    const double s = wall_median(reps, true, [&] { postings::intersect_cpu(index, queries, a, got); });
    const bool equal = same(got, want);
    out[postings::algorithm_name(a)] = {{"s", s}, {"queries_per_s", queries.size() / s}, {"equal", equal}};
    fmt::print(stderr, "bench: CPU {:9s} {:8.2f} ms  {:10.0f} queries/s  equal {}\n", postings::algorithm_name(a),
               s * 1e3, queries.size() / s, equal);
  }
  // The serial baseline: svs, one query after another on one core.
  if (std::find(algorithms.begin(), algorithms.end(), postings::Algorithm::svs) != algorithms.end()) {
    const ThreadLimit one(1);
    postings::Results got;
    const double s = wall_median(std::max(1, reps / 2), false,
                                 [&] { got = postings::intersect_cpu(index, queries, postings::Algorithm::svs); });
    out["svs_one_core"] = {{"s", s}, {"queries_per_s", queries.size() / s}, {"equal", same(got, want)}};
    fmt::print(stderr, "bench: CPU svs on one core {:8.2f} ms\n", s * 1e3);
  }
  return out;
}

// The peer: CRoaring's own AND over bitmaps built beforehand (their build timed apart),
// queries in parallel, each query's bitmaps ANDed smallest first and turned into ids.
nlohmann::json run_roaring_peer(const postings::Index& index, const postings::Queries& queries, int reps,
                                const postings::Results& want) {
  std::vector<roaring_bitmap_t*> bitmaps(index.terms(), nullptr);
  std::vector<char> used(index.terms(), 0);
  for (const auto t : queries.terms)
    if (t < index.terms()) used[t] = 1;
  const double build_start = now_s();
  tbb::parallel_for(std::size_t{0}, index.terms(), [&](std::size_t t) {
    if (!used[t]) return;
    bitmaps[t] = roaring_bitmap_of_ptr(index.list(t).size(), index.list(t).data());
    roaring_bitmap_run_optimize(bitmaps[t]);
  });
  const double build_s = now_s() - build_start;
  std::vector<std::vector<postings::DocId>> answers(queries.size());
  const double s = wall_median(reps, true, [&] {
    tbb::parallel_for(std::size_t{0}, queries.size(), [&](std::size_t q) {
      std::vector<std::uint32_t> terms(queries.query(q).begin(), queries.query(q).end());
      answers[q].clear();
      for (const auto t : terms)
        if (t >= index.terms()) return;  // a word the index lacks
      std::sort(terms.begin(), terms.end(), [&](auto a, auto b) { return index.list(a).size() < index.list(b).size(); });
      roaring_bitmap_t* r = roaring_bitmap_copy(bitmaps[terms[0]]);
      for (std::size_t i = 1; i < terms.size(); ++i) roaring_bitmap_and_inplace(r, bitmaps[terms[i]]);
      answers[q].resize(roaring_bitmap_get_cardinality(r));
      roaring_bitmap_to_uint32_array(r, answers[q].data());
      roaring_bitmap_free(r);
    });
  });
  postings::Results got;
  for (const auto& a : answers) {
    got.ids.insert(got.ids.end(), a.begin(), a.end());
    got.counts.push_back(a.size());
  }
  for (auto* b : bitmaps)
    if (b != nullptr) roaring_bitmap_free(b);  // (this CRoaring does not take nullptr)
  const bool equal = same(got, want);
  fmt::print(stderr, "bench: peer CRoaring AND {:8.2f} ms  {:10.0f} queries/s (bitmaps built apart in {:.1f} ms)  equal {}\n",
             s * 1e3, queries.size() / s, build_s * 1e3, equal);
  return {{"s", s}, {"queries_per_s", queries.size() / s}, {"bitmap_build_s", build_s}, {"equal", equal}};
}

nlohmann::json run_gpu(const postings::Index& index, const postings::Queries& queries, int reps,
                       const postings::Results& want) {
  nlohmann::json out = nlohmann::json::object();
  for (const bool managed : {false, true})
    for (const auto kernel : {postings::GpuKernel::sliced, postings::GpuKernel::flat}) {
      postings::GpuOptions options;
      options.kernel = kernel;
      options.managed_memory = managed;
      const double load_start = now_s();
      postings::GpuIndex gpu(index, options);
      const double load_s = now_s() - load_start;
      double first_ms = 0;
      postings::Results got = gpu.intersect(queries, false, &first_ms);  // also the warm-up
      bool equal = same(got, want);
      std::vector<double> ms, wall;
      for (int r = 0; r < reps; ++r) {
        double m = 0;
        const double start = now_s();
        gpu.intersect(queries, got, false, &m);
        wall.push_back(now_s() - start);
        ms.push_back(m);
        equal = equal && same(got, want);
      }
      const std::string name = fmt::format("{}_{}", kernel == postings::GpuKernel::sliced ? "sliced" : "flat",
                                           managed ? "managed" : "explicit");
      out[name] = {{"device_ms", median(ms)},   {"wall_s", median(wall)},        {"first_batch_ms", first_ms},
                   {"load_s", load_s},          {"resident", gpu.resident()},    {"equal", equal},
                   {"queries_per_s", queries.size() / median(wall)}};
      fmt::print(stderr, "bench: GPU {:16s} {:8.3f} ms on the device ({:.3f} ms wall), first batch {:.3f} ms, "
                 "index load {:.3f} s, equal {}\n", name, median(ms), median(wall) * 1e3, first_ms, load_s, equal);
    }
  // The seed's way: each query alone, its lists allocated and copied for it.
  {
    postings::GpuOptions options;
    options.resident = false;  // every query copies its own lists
    bool equal = true;
    const double s = wall_median(1, true, [&] {
      postings::Results all;
      for (std::size_t q = 0; q < queries.size(); ++q) {
        postings::Queries one;
        one.terms.assign(queries.query(q).begin(), queries.query(q).end());
        one.offsets.push_back(one.terms.size());
        const postings::Results r = postings::intersect_gpu(index, one, options);
        all.ids.insert(all.ids.end(), r.ids.begin(), r.ids.end());
        all.counts.push_back(r.counts[0]);
      }
      equal = same(all, want);
    });
    out["per_query_loop"] = {{"s", s}, {"queries_per_s", queries.size() / s}, {"equal", equal}};
    fmt::print(stderr, "bench: GPU one query at a time, its lists copied for it: {:.1f} ms, equal {}\n", s * 1e3, equal);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"simkit_bench_postings: batched AND queries on the CPU and the GPU"};
  bool synthetic = false;
  Synthetic shape;
  std::string index_path, exp_index_path, queries_path, json_path, device = "auto";
  int reps = 5;
  app.add_flag("--synthetic", synthetic, "the seed's data shape, made up");
  app.add_option("--terms", shape.terms, "synthetic: lists")->capture_default_str();
  app.add_option("--queries-count", shape.queries, "synthetic: queries")->capture_default_str();
  app.add_option("--index", index_path, "a simkit .skp index");
  app.add_option("--exp-index", exp_index_path, "an ExpIndex");
  app.add_option("--queries", queries_path, "queries for --index / --exp-index (words for an .skp)");
  app.add_option("--device", device, "auto, cpu or cuda")->capture_default_str();
  app.add_option("--reps", reps, "timed runs (medians)")->capture_default_str();
  app.add_option("--json", json_path, "write the results here");
  std::vector<std::string> algorithm_names = {"svs", "adaptive", "hash", "galloping", "simd", "bitmap", "auto"};
  app.add_option("--algorithms", algorithm_names, "the CPU algorithms to time")->delimiter(',')->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  postings::Index index;
  postings::Queries queries;
  const double load_start = now_s();
  if (synthetic) {
    make_synthetic(shape, index, queries);
  } else if (!index_path.empty() || !exp_index_path.empty()) {
    index = index_path.empty() ? postings::read_exp_index(exp_index_path) : postings::read_index(index_path);
    queries = postings::read_queries(queries_path, index, !index.vocabulary.empty());
  } else {
    fmt::print(stderr, "give --synthetic or --index/--exp-index with --queries\n");
    return 2;
  }
  nlohmann::json report;
  report["data"] = synthetic ? "synthetic" : (index_path.empty() ? exp_index_path : index_path);
  report["shape"] = shape_of(index, queries);
  report["load_s"] = now_s() - load_start;
  report["threads"] = max_threads();
  fmt::print(stderr, "bench: {} lists ({} ids), {} queries, {} candidates\n", index.terms(), index.ids.size(),
             queries.size(), report["shape"]["candidates"].get<std::uint64_t>());
  const postings::Results want = postings::intersect_cpu(index, queries, postings::Algorithm::svs);
  std::uint64_t found = 0;
  for (const auto c : want.counts) found += c;
  report["found"] = found;
  std::vector<postings::Algorithm> algorithms;
  for (const std::string& name : algorithm_names) algorithms.push_back(postings::parse_algorithm(name));
  report["cpu"] = run_cpu(index, queries, reps, want, algorithms);
  report["peer_croaring"] = run_roaring_peer(index, queries, reps, want);
  const Device d = resolve_device(parse_device(device));
  if (d.cuda) {
    report["device"] = d.name;
    report["gpu"] = run_gpu(index, queries, reps, want);
  }
  if (!json_path.empty()) std::ofstream(json_path) << report.dump(2) << "\n";
  return 0;
}
