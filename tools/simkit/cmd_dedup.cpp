// simkit dedup: near-duplicate pairs (or clusters) among files and ssdeep hash lists, by
// ssdeep's match score or by the thesis's edit-rate pipeline.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <future>
#include <iterator>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <oneapi/tbb/parallel_for.h>

#include "cli.hpp"
#include "core/prefault.hpp"
#include "simkit/cluster.hpp"
#include "simkit/dedup.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/progress.hpp"
#include "simkit/uninitialized_allocator.hpp"

namespace simkit::cli {

namespace {

struct DedupOptions {
  CommonOptions common;
  std::vector<std::string> paths;
  std::string mode = "ssdeep";
  int threshold = 1;
  dedup::RateOptions rate;
  std::string kernel = "bits";
  std::string format = "tsv";
  bool clusters = false;
  std::string output = "-";
};

using dedup::Inputs;

// The inputs as rank 0 reads them, on every rank (each then reads its share of the files).
Inputs gather(const std::vector<std::string>& paths) {
  if (cluster::size() == 1) return dedup::gather_inputs(paths);
  Inputs in;
  if (cluster::root()) in = dedup::gather_inputs(paths);
  std::vector<std::string> at;
  for (const std::size_t k : in.document_at) at.push_back(std::to_string(k));
  in.names = cluster::broadcast_strings(std::move(in.names));
  in.documents = cluster::broadcast_strings(std::move(in.documents));
  in.signatures = cluster::broadcast_strings(std::move(in.signatures));
  at = cluster::broadcast_strings(std::move(at));
  in.document_at.clear();
  for (const std::string& k : at) in.document_at.push_back(std::stoull(k));
  return in;
}

// A name made safe for one TSV field.
std::string tsv_field(const std::string& name) {
  std::string out;
  for (const char c : name) {
    if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\\') out += "\\\\";
    else out += c;
  }
  return out;
}

// Connected components of the pairs' graph with two or more members, each sorted, in
// the order of their first members.
std::vector<std::vector<std::uint32_t>> components(std::size_t n, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges) {
  std::vector<std::uint32_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0u);
  const auto root = [&](std::uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const auto& [a, b] : edges) {
    const std::uint32_t ra = root(a), rb = root(b);
    if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
  }
  std::vector<std::vector<std::uint32_t>> by_root(n);
  for (std::uint32_t i = 0; i < n; ++i) by_root[root(i)].push_back(i);
  std::vector<std::vector<std::uint32_t>> out;
  for (auto& members : by_root)
    if (members.size() > 1) out.push_back(std::move(members));
  return out;
}

// One found pair: its files and its score (ssdeep mode) or rate (edit-rate mode).
struct Found {
  std::uint32_t a, b;
  double value;
};
// (Left unset by resize: a million hashes' 18 million pairs are written in parallel.)
using FoundList = std::vector<Found, UninitializedAllocator<Found>>;

// The pairs as TSV lines, formatted in parallel a slice at a time and written in order.
void write_pairs_tsv(OutputFile& out, const Inputs& in, const FoundList& found, bool rate) {
  std::vector<std::string> fields(in.names.size());
  tbb::parallel_for(std::size_t{0}, fields.size(), [&](std::size_t i) { fields[i] = tsv_field(in.names[i]); });
  // Copied into a slice sized first: formatting each line through fmt, or appending its
  // pieces one by one, took most of the writing of a million hashes' 18 million pairs.
  write_in_slices(out, found.size(), std::size_t{1} << 16, [&](std::size_t begin, std::size_t end, std::string& s) {
    if (rate) {
      for (std::size_t i = begin; i < end; ++i)
        fmt::format_to(std::back_inserter(s), "{}\t{}\t{:.6f}\n", fields[found[i].a], fields[found[i].b], found[i].value);
      return;
    }
    const auto digits = [](int score) -> std::size_t { return score >= 100 ? 3 : score >= 10 ? 2 : 1; };
    std::size_t bytes = 0;
    for (std::size_t i = begin; i < end; ++i)
      bytes += fields[found[i].a].size() + fields[found[i].b].size() + 3 + digits(static_cast<int>(found[i].value));
    s.resize(bytes);
    char* at = s.data();
    const auto put = [&](const std::string& field) { at = std::copy(field.begin(), field.end(), at); };
    for (std::size_t i = begin; i < end; ++i) {
      const int score = static_cast<int>(found[i].value);  // 1..100
      put(fields[found[i].a]);
      *at++ = '\t';
      put(fields[found[i].b]);
      *at++ = '\t';
      at = std::to_chars(at, at + digits(score), score).ptr;
      *at++ = '\n';
    }
  });
}

void write_found(OutputFile& out, const DedupOptions& options, const Inputs& in, const FoundList& found) {
  const bool json = options.format == "json", rate = options.mode != "ssdeep";
  const auto dump = [](const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  };
  if (options.clusters) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
    for (const Found& f : found) edges.emplace_back(f.a, f.b);
    const auto clusters = components(in.names.size(), edges);
    if (json) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& members : clusters) {
        nlohmann::json names = nlohmann::json::array();
        for (const std::uint32_t m : members) names.push_back(in.names[m]);
        list.push_back(names);
      }
      out.write(dump(nlohmann::json{{"mode", options.mode}, {"clusters", list}}));
      return;
    }
    std::string text;
    for (const auto& members : clusters) {
      for (std::size_t k = 0; k < members.size(); ++k) text += (k ? "\t" : "") + tsv_field(in.names[members[k]]);
      text += '\n';
    }
    out.write(text);
    return;
  }
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    const char* key = rate ? "rate" : "score";
    for (const Found& f : found)
      list.push_back({{"a", in.names[f.a]}, {"b", in.names[f.b]},
                      {key, rate ? nlohmann::json(f.value) : nlohmann::json(static_cast<int>(f.value))}});
    out.write(dump(nlohmann::json{{"mode", options.mode}, {"pairs", list}}));
    return;
  }
  write_pairs_tsv(out, in, found, rate);
}

FoundList run_ssdeep(const DedupOptions& options, const Context& context, const std::vector<ctph::Prepared>& prepared,
                     std::shared_ptr<const dedup::GpuPlan> plan) {
  auto start = std::chrono::steady_clock::now();
  dedup::MatchList matches;
  double device_ms = 0;
  {
    Progress progress("matching", context.device.cuda ? 0 : prepared.size(), "signatures");
    matches = dedup::match_shared(prepared, options.threshold, context.device.cuda ? context.device.indices : std::vector<int>{},
                                  &progress, &device_ms, std::move(plan));
  }
  if (context.timings)
    note(fmt::format("timing: matched {} signatures on {} in {:.3f} s{}: {} pairs", prepared.size(), context.device.name,
                     seconds_since(start), context.device.cuda ? fmt::format(" ({:.1f} ms on the device)", device_ms) : "",
                     matches.size()));
  FoundList found;
  found.reserve(matches.size());
  advise_huge_pages(found.data(), matches.size() * sizeof(Found));  // (before its pages are written)
  found.resize(matches.size());
  tbb::parallel_for(std::size_t{0}, matches.size(), [&](std::size_t i) {
    found[i] = Found{matches[i].a, matches[i].b, static_cast<double>(matches[i].score)};
  });
  return found;
}

// The device is taken once the documents are signed (device_when_signed waits for it to
// start, which overlaps the signatures) and set in `context`.
FoundList run_edit_rate(DedupOptions& options, Context& context, const Inputs& in,
                        const std::function<Device()>& device_when_signed) {
  if (in.documents.size() != in.names.size())
    throw UsageError("--mode edit-rate compares documents themselves, not ssdeep hash lists");
  if (options.kernel == "shared") options.rate.kernel = dedup::EditKernel::shared_rows;
  else if (options.kernel == "global") options.rate.kernel = dedup::EditKernel::global_rows;
  else if (options.kernel == "bits") options.rate.kernel = dedup::EditKernel::bit_parallel;
  else throw UsageError(fmt::format("--kernel {}: expected shared, global or bits", quote(options.kernel)));
  options.rate.devices_when_signed = [&] {
    context.device = device_when_signed();
    if (!context.device.cuda) return std::vector<int>{};
    return context.device.indices.empty() ? std::vector<int>{context.device.index} : context.device.indices;
  };
  options.rate.memory_budget = context.memory_budget;
  dedup::RateStats stats;
  std::vector<dedup::RateMatch> matches;
  {
    Progress progress("signatures", in.documents.size(), "files");
    matches = dedup::match_rates(in.documents, options.rate, &stats, &progress);
  }
  if (context.timings)
    note(fmt::format("timing: signatures {:.3f} s, then waited {:.3f} s for the device; candidate pairs {:.3f} s on {}{} "
                     "({} candidates, {} documents too repetitive to sign), verification {:.3f} s{}: {} pairs",
                     stats.signature_seconds, stats.device_wait_seconds, stats.candidate_seconds, context.device.name,
                     context.device.cuda ? fmt::format(" ({:.1f} ms on the device)", stats.device_ms - stats.gpu_verify_ms) : "",
                     stats.candidates, stats.unsigned_documents, stats.verify_seconds,
                     context.device.cuda ? fmt::format(" (documents ready for the GPU {:.3f} s, then the GPU {:.3f} s with {:.1f} ms "
                                                       "on the device, the cores {:.3f} s)",
                                                       stats.pack_seconds, stats.gpu_verify_seconds, stats.gpu_verify_ms,
                                                       stats.cores_verify_seconds)
                                         : "",
                     matches.size()));
  FoundList found;
  found.reserve(matches.size());
  for (const dedup::RateMatch& m : matches) found.push_back(Found{m.a, m.b, m.rate});
  return found;
}

// --device auto's rule (docs/gpu.md, bench/results/auto_device.md, measured on an H100
// and an H200 with 16 cores): jobs smaller than these are done on the CPU before the GPU's
// driver has started and loaded its kernels. ssdeep lists that seem to hold enough
// signatures start the GPU while they are read (the count decides once they are).
constexpr std::size_t kEditRateGpuDocuments = 5000;
constexpr std::size_t kSsdeepGpuSignatures = 150000;

// About how many signatures the ssdeep lists among the paths hold (dedup::estimated_entries).
// Files that are not lists, and folders, count none.
std::uint64_t listed_signatures_estimate(const std::vector<std::string>& paths) {
  std::uint64_t estimate = 0;
  for (const std::string& path : paths) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) continue;
    try {
      estimate += dedup::estimated_entries(MappedFile::open(path).text());
    } catch (const Error&) {  // unreadable: reported when the inputs are read
    }
  }
  return estimate;
}

// Whether the GPU's 7-gram index of the planned signatures (null: none asked for) has room
// on every rank's GPU (its memory, or --memory-budget); every rank asks. Where it has not,
// the GPU would score every compatible pair, work that grows as the square of the list:
// --device auto then takes the CPU's index, in host memory (false), and an explicit
// --device cuda is obeyed and told so.
bool gpu_index_has_room(const dedup::GpuPlan* plan, int gpu, std::size_t signatures, DeviceSpec::Kind kind,
                        bool budget_given) {
  const dedup::GpuIndexRoom room = plan != nullptr ? dedup::gpu_index_room(*plan, gpu) : dedup::GpuIndexRoom{1, 1};
  if (cluster::min(room.fits() ? 1 : 0) == 1) return true;
  const auto size = [](std::size_t bytes) {  // (binary units, as --memory-budget reads them)
    return bytes >= (std::size_t{1} << 30) ? fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1 << 30))
                                           : fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  };
  const std::string why =
      room.bytes == 0 ? fmt::format("no 7-gram index can be built for these {} signatures", signatures)
      : room.fits()   ? fmt::format("the GPU's 7-gram index of {} signatures does not fit another rank's GPU", signatures)
                      : fmt::format("the GPU's 7-gram index of {} signatures takes {}, more than its room of {} ({})",
                                    signatures, size(room.bytes), size(room.room),
                                    budget_given ? "--memory-budget" : "half the GPU's free memory");
  if (kind == DeviceSpec::Kind::Auto) {
    note(why + ": matching through the CPU's index instead (--device cuda would score every compatible pair on the GPU)");
    return false;
  }
  note(why + ": the GPU scores every compatible pair instead, work that grows as the square of the list "
             "(--device cpu matches through the CPU's index)");
  return true;
}

int run_dedup(DedupOptions& options) {
  if (options.mode != "ssdeep" && options.mode != "edit-rate")
    throw UsageError(fmt::format("--mode {}: expected ssdeep or edit-rate", quote(options.mode)));
  if (options.format != "tsv" && options.format != "json")
    throw UsageError(fmt::format("--format {}: expected tsv or json", quote(options.format)));
  if (options.threshold < 1 || options.threshold > 100) throw UsageError("--threshold must be 1..100");
  Context context = make_context(options.common, false);
  const auto start = std::chrono::steady_clock::now();
  const bool ssdeep = options.mode == "ssdeep";
  // A GPU named outright, or under --device auto a large ssdeep list, starts while the
  // inputs are read; --device auto decides from the job's size once they are. Every rank
  // holds the same inputs, so every rank decides alike.
  const DeviceSpec::Kind kind = parse_device(options.common.device).kind;
  // Each GPU readied (its context made, the job's kernels loaded).
  const std::function<void(int)> prepare = [ssdeep](int index) {
    if (ssdeep)
      dedup::prepare_gpu(index);
    else
      dedup::prepare_rate_gpu(index);
  };
  DeviceStart device;
  if (kind == DeviceSpec::Kind::Cuda ||
      (kind == DeviceSpec::Kind::Auto && ssdeep && listed_signatures_estimate(options.paths) >= kSsdeepGpuSignatures))
    device.begin(options.common, true, prepare);
  Inputs in = gather(options.paths);  // rank 0 reads the lists and walks the folders
  if (context.timings)
    note(fmt::format("timing: found {} inputs in {:.3f} s", in.names.size(), seconds_since(start)));
  const bool gpu_pays_off =
      ssdeep ? in.names.size() >= kSsdeepGpuSignatures : in.documents.size() >= kEditRateGpuDocuments;
  if (!device.started()) device.begin(options.common, gpu_pays_off, prepare);
  const auto device_for_this_job = [&] {
    if (kind == DeviceSpec::Kind::Auto && !gpu_pays_off) return device_for_job(options.common, false);  // the CPU
    return device.device.get();
  };
  FoundList found;
  std::optional<std::jthread> freeing;
  if (ssdeep) {
    {
      Progress progress("hashing", in.documents.size(), "files");
      dedup::hash_documents(in, &progress);
    }
    if (context.timings)
      note(fmt::format("timing: read and hashed {} inputs in {:.3f} s", in.names.size(), seconds_since(start)));
    const auto prepare_start = std::chrono::steady_clock::now();
    // The GPU's matchers read the parts' texts alone; the CPU's gets their substrings
    // too, added once it is known to be the device.
    const bool gpu_likely =
        cuda_built() && (kind == DeviceSpec::Kind::Cuda || (kind == DeviceSpec::Kind::Auto && gpu_pays_off));
    std::vector<ctph::Prepared> prepared =
        dedup::prepare_signatures(in, gpu_likely ? ctph::Substrings::left_out : ctph::Substrings::made);
    const double prepare_s = seconds_since(prepare_start);
    // The GPU's host work made while its driver starts.
    std::shared_ptr<const dedup::GpuPlan> plan =
        gpu_likely ? dedup::plan_gpu_match(prepared, context.memory_budget) : nullptr;
    const double plan_s = seconds_since(prepare_start) - prepare_s;
    // Its codes, which every GPU uploads, page-locked meanwhile through the first GPU's
    // context (else the job locks them first, on its own time).
    if (plan) device.with_chosen_gpu([&](int gpu) { dedup::page_lock_plan(*plan, gpu); });
    const double lock_s = seconds_since(prepare_start) - prepare_s - plan_s;
    context.device = device_for_this_job();
    const double wait_s = seconds_since(prepare_start) - prepare_s - plan_s - lock_s;
    if (!gpu_index_has_room(context.device.cuda ? plan.get() : nullptr, context.device.index, prepared.size(), kind,
                            context.memory_budget != 0))
      context.device = device_for_job(options.common, false);  // the CPU
    if (gpu_likely && !context.device.cuda) {
      plan = nullptr;
      dedup::add_substrings(prepared);
    }
    if (context.timings)
      note(fmt::format("timing: prepared the signatures in {:.3f} s{}, then waited {:.3f} s for the device", prepare_s,
                       gpu_likely ? fmt::format(" and planned the GPU's index in {:.3f} s (its codes page-locked "
                                                "{:.3f} s later)", plan_s, lock_s)
                                  : "",
                       wait_s));
    found = run_ssdeep(options, context, prepared, std::move(plan));
    // (A million signatures are four million strings.)
    freeing = free_beside(std::move(prepared), std::move(in.signatures));
  } else {
    found = run_edit_rate(options, context, in, device_for_this_job);
  }
  // Written only once everything is found: a failure leaves no partial output file
  // (standard output receives the pairs a slice at a time).
  const auto write_start = std::chrono::steady_clock::now();
  OutputFile out(options.output, cluster::root());
  write_found(out, options, in, found);
  out.commit();
  if (context.timings)
    note(fmt::format("timing: wrote {} pairs in {:.3f} s; {:.3f} s in all", found.size(), seconds_since(write_start),
                     seconds_since(start)));
  return kExitOk;
}

}  // namespace

Runner add_dedup_command(CLI::App& app) {
  auto options = std::make_shared<DedupOptions>();
  CLI::App* command = app.add_subcommand(
      "dedup",
      "Finds near-duplicate files. PATHs are files, directories (every file below them) or ssdeep\n"
      "hash lists (as 'simkit hash' or 'ssdeep' write them, recognised by their header line).\n"
      "--mode ssdeep (default): every pair whose ssdeep match score is at least --threshold,\n"
      "the scores libfuzzy's fuzzy_compare gives. --mode edit-rate: every pair of documents\n"
      "whose Levenshtein distance / (sum of lengths) is below --rate, found through short CTPH\n"
      "signatures and verified exactly. Output: 'file_a<TAB>file_b<TAB>score or rate' a pair,\n"
      "each pair once, or --clusters (connected components, one cluster a line).");
  command->add_option("paths", options->paths, "files, directories or ssdeep hash lists")->required();
  command->add_option("--mode", options->mode, "ssdeep or edit-rate")->capture_default_str();
  command->add_option("-t,--threshold", options->threshold,
                      "ssdeep mode: the least score reported, 1..100 (1 = every match, as ssdeep -x prints)")
      ->capture_default_str();
  command->add_option("--rate", options->rate.rate, "edit-rate mode: report pairs whose edit rate is below this")
      ->capture_default_str();
  command->add_option("--sig-length", options->rate.signature_length,
                      "edit-rate mode: the longest signature (block size doubled until it fits), 1..320; the "
                      "guarantee's signatures aim at this length too")
      ->capture_default_str();
  command->add_option("--candidate-factor", options->rate.candidate_factor,
                      "edit-rate mode: signature pairs below rate x this are verified")
      ->capture_default_str();
  command->add_option("--guaranteed-edits", options->rate.guaranteed_edits,
                      "edit-rate mode: every pair within this many edits (and below the rate) is found, "
                      "whatever its length and content, 0..16 (0: the thesis's filter alone)")
      ->capture_default_str();
  command->add_option("--kernel", options->kernel,
                      "edit-rate mode on a GPU: the signature kernel, bits (bit-parallel), shared or global (DP rows)")
      ->capture_default_str();
  command->add_option("--format", options->format, "tsv or json")->capture_default_str();
  command->add_flag("--clusters", options->clusters, "print clusters of near-duplicates instead of pairs");
  command->add_option("-o,--output", options->output, "output file (default: standard output)");
  add_common_options(*command, options->common);
  return [options]() { return run_dedup(*options); };
}

}  // namespace simkit::cli
