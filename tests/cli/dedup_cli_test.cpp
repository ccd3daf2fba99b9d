// simkit dedup through the real program: in ssdeep mode the same pairs and scores as
// `ssdeep -x` on the bundled Boost headers (from the folder itself, from ssdeep's list and
// from ours), TSV, JSON and clusters that agree, edit-rate mode on planted near-duplicates,
// and bad input refused with one line and no output file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../dedup/dedup_fixture.hpp"
#include "simkit/ctph.hpp"
#include "simkit/dedup.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

namespace fs = std::filesystem;
using Pairs = std::map<std::pair<std::string, std::string>, std::string>;  // {a, b} (a < b) -> score or rate

std::pair<std::string, std::string> ordered(std::string a, std::string b) {
  return a < b ? std::pair{a, b} : std::pair{b, a};
}

// simkit's TSV: each pair once.
Pairs read_tsv(const std::string& text) {
  Pairs pairs;
  for (const std::string& line : test::lines_of(text)) {
    const auto t1 = line.find('\t'), t2 = line.rfind('\t');
    EXPECT_NE(t1, t2) << line;
    const bool fresh = pairs.emplace(ordered(line.substr(0, t1), line.substr(t1 + 1, t2 - t1 - 1)), line.substr(t2 + 1)).second;
    EXPECT_TRUE(fresh) << "listed twice: " << line;
  }
  return pairs;
}

// ssdeep -s -x: "LIST:a matches LIST:b (score)", each pair in both directions.
Pairs read_ssdeep_x(const std::string& text, const std::string& list) {
  Pairs pairs;
  const auto name = [&](const std::string& s) { return s.substr(s.rfind(list + ":", 0) == 0 ? list.size() + 1 : 0); };
  for (const std::string& line : test::lines_of(text)) {
    if (line.empty()) continue;
    const auto matches = line.find(" matches "), open = line.rfind(" (");
    EXPECT_TRUE(matches != std::string::npos && open != std::string::npos && open > matches && line.back() == ')') << line;
    if (matches == std::string::npos || open == std::string::npos || open < matches) continue;
    pairs[ordered(name(line.substr(0, matches)), name(line.substr(matches + 9, open - matches - 9)))] =
        line.substr(open + 2, line.size() - open - 3);
  }
  return pairs;
}

std::string boost_dir() { return (test::source_dir() / "data/samples/boost").string(); }

test::RunResult dedup(std::vector<std::string> args) {
  args.insert(args.begin(), "dedup");
  return test::run_simkit(args);
}

TEST(DedupCli, SsdeepModeEqualsSsdeep) {
  ASSERT_EQ(std::system("command -v ssdeep > /dev/null"), 0) << "ssdeep is missing: run scripts/setup.sh";
  const test::TempDir dir;
  const std::string theirs_list = (dir / "theirs.txt").string(), ours_list = (dir / "ours.txt").string();
  test::write_file(theirs_list, test::run_shell("ssdeep -r '" + boost_dir() + "' 2>/dev/null"));
  const Pairs want = read_ssdeep_x(test::run_shell("ssdeep -s -x '" + theirs_list + "'"), theirs_list);
  ASSERT_GE(want.size(), 1000u);

  const test::RunResult hashed = test::run_simkit({"hash", "-r", "-o", ours_list, boost_dir()});
  ASSERT_EQ(hashed.exit_code, 0) << hashed.err;
  std::vector<std::vector<std::string>> runs = {
      {"--device", "cpu", theirs_list}, {"--device", "cpu", ours_list}, {"--device", "cpu", boost_dir()}};
  if (test::gpu_available()) runs.push_back({"--device", "cuda", theirs_list});
  for (const std::vector<std::string>& args : runs) {
    const std::string what = args.front() + " " + args.back();
    const test::RunResult r = dedup(args);
    ASSERT_EQ(r.exit_code, 0) << what << ": " << r.err;
    EXPECT_EQ(read_tsv(r.out), want) << what;
  }

  // A threshold keeps the pairs scoring at least it.
  Pairs strong;
  for (const auto& [pair, score] : want)
    if (std::stoi(score) >= 60) strong.emplace(pair, score);
  const test::RunResult r = dedup({"--device", "cpu", "-t", "60", theirs_list});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_tsv(r.out), strong);
  EXPECT_FALSE(strong.empty());
  EXPECT_LT(strong.size(), want.size());
}

// JSON pairs equal the TSV's; clusters are the connected components of those pairs.
TEST(DedupCli, JsonAndClusters) {
  const test::RunResult tsv = dedup({"--device", "cpu", "-t", "40", boost_dir()});
  ASSERT_EQ(tsv.exit_code, 0) << tsv.err;
  const Pairs pairs = read_tsv(tsv.out);

  const test::RunResult json = dedup({"--device", "cpu", "-t", "40", "--format", "json", boost_dir()});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["mode"], "ssdeep");
  Pairs from_json;
  for (const auto& p : doc["pairs"]) from_json[ordered(p["a"], p["b"])] = std::to_string(p["score"].get<int>());
  EXPECT_EQ(from_json, pairs);

  // Components by repeated merging of the pairs' name sets.
  std::vector<std::set<std::string>> want;
  for (const auto& [pair, score] : pairs) {
    std::set<std::string> merged = {pair.first, pair.second};
    std::vector<std::set<std::string>> rest;
    for (auto& c : want) {
      if (c.count(pair.first) || c.count(pair.second)) merged.insert(c.begin(), c.end());
      else rest.push_back(std::move(c));
    }
    rest.push_back(std::move(merged));
    want = std::move(rest);
  }
  const test::RunResult clusters = dedup({"--device", "cpu", "-t", "40", "--clusters", boost_dir()});
  ASSERT_EQ(clusters.exit_code, 0) << clusters.err;
  std::vector<std::set<std::string>> got;
  for (const std::string& line : test::lines_of(clusters.out)) {
    std::set<std::string> members;
    for (std::size_t at = 0, tab; at <= line.size(); at = tab + 1) {
      tab = line.find('\t', at);
      if (tab == std::string::npos) tab = line.size();
      members.insert(line.substr(at, tab - at));
    }
    got.push_back(members);
  }
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
  EXPECT_GE(got.size(), 2u);
}

// The report that showed the recall bug, as a user ran it: Boost's preprocessed
// function_operator_10.hpp and a copy with one byte changed (a space at offset 3872 made
// '#'), one edit apart, were not printed at --rate 0.05.
TEST(DedupCli, EditRateFindsOneEditInARepetitiveHeader) {
  const test::TempDir dir;
  std::string text = test::read_file(test::source_dir() /
                                     "data/samples/boost/phoenix/function/detail/cpp03/preprocessed/function_operator_10.hpp");
  ASSERT_EQ(text.size(), 7983u);
  test::write_file(dir / "a.hpp", text);
  text[3872] = '#';
  test::write_file(dir / "b.hpp", text);
  std::vector<std::vector<std::string>> runs = {{"--device", "cpu"}};
  if (test::gpu_available()) runs.push_back({"--device", "cuda"});
  for (std::vector<std::string> args : runs) {
    args.insert(args.end(), {"--mode", "edit-rate", "--rate", "0.05", (dir / "a.hpp").string(), (dir / "b.hpp").string()});
    const test::RunResult r = dedup(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, (dir / "a.hpp").string() + "\t" + (dir / "b.hpp").string() + "\t0.000063\n");
  }
}

// Edit-rate mode on planted copies: the pairs the library finds (itself tested against
// the brute force), printed with their rates, on the CPU and on a GPU.
TEST(DedupCli, EditRateFindsPlantedCopies) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const test::TempDir dir;
  const auto files = test::plant_near_duplicates(dir.path(), 40, random);
  dedup::RateOptions options;
  options.rate = 0.05;
  const auto matches = dedup::match_rates(files, options);
  test::expect_planted_found(files, matches, options.rate);
  Pairs want;
  for (const auto& m : matches) want[ordered(files[m.a], files[m.b])] = fmt::format("{:.6f}", m.rate);
  std::vector<std::vector<std::string>> runs = {{"--device", "cpu"}};
  if (test::gpu_available()) runs.push_back({"--device", "cuda", "--kernel", "shared"});
  for (std::vector<std::string> args : runs) {
    args.insert(args.end(), {"--mode", "edit-rate", "--rate", "0.05", dir.path().string()});
    const test::RunResult r = dedup(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(read_tsv(r.out), want);
  }
}

TEST(DedupCli, BadInputGetsOneLineAndNoOutput) {
  const test::TempDir dir;
  fs::create_directories(dir / "empty_dir");
  test::write_file(dir / "f", "some text");
  fs::create_symlink(dir / "nowhere", dir / "dangling");
  test::write_file(dir / "list.txt", "ssdeep,1.1--blocksize:hash:hash,filename\n3:abc:def,\"a\"\n3:abc;def,\"b\"\n");
  const std::string out = (dir / "out.tsv").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{(dir / "missing").string()}, "no such file"},
      {{(dir / "empty_dir").string()}, "holds no file"},
      {{(dir / "f").string(), (dir / "dangling").string()}, "dangling"},
      {{(dir / "list.txt").string()}, "list.txt:3:6:"},
      {{"--mode", "edit-rate", (dir / "list.txt").string()}, "list.txt:3:6:"},
      {{"--mode", "edit-rate", (dir / "f").string(), "--rate", "-1"}, "edit rate"},
      {{"--mode", "edit-rate", (dir / "f").string(), "--sig-length", "400"}, "signature length"},
      {{"--mode", "fast", (dir / "f").string()}, "--mode"},
      {{"-t", "0", (dir / "f").string()}, "--threshold"},
      {{"--format", "xml", (dir / "f").string()}, "--format"},
  };
  for (const auto& [paths, words] : cases) {
    std::vector<std::string> args = {"dedup", "--device", "cpu", "-o", out};
    args.insert(args.end(), paths.begin(), paths.end());
    test::expect_refused(args, words, out);
  }
}

// --device auto takes the GPU only for jobs it finishes sooner (docs/gpu.md): a small
// edit-rate job and any ssdeep list stay on the CPU, 5,000 documents go to the GPU, and the
// pairs are the same either way. (Without a GPU, auto is the CPU for all.)
TEST(DedupCli, AutoDeviceKeepsSmallJobsOnTheCpu) {
  SIMKIT_REQUIRE_GPU();
  test::TempDir dir;
  test::Random random;
  SCOPED_TRACE(random.seed());
  fs::create_directories(dir / "many");
  std::string text;  // random words; every 100th document a copy of the one before with one letter changed
  for (int d = 0; d < 5000; ++d) {
    if (d % 100 != 1) {
      text.clear();
      while (text.size() < 300) text += test::random_base64(random, random.integer(2, 9), 52) + ' ';
    } else {
      text[static_cast<std::size_t>(random.integer(0, 299))] = '#';
    }
    test::write_file(dir / "many" / fmt::format("{}.txt", d), text);
  }
  const auto device_of = [](const test::RunResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.err.find(" on cpu") != std::string::npos ? "cpu" : "gpu";
  };
  const std::string small = (dir / "small").string();
  fs::create_directories(small);
  for (int d = 0; d < 50; ++d) fs::copy_file(dir / "many" / fmt::format("{}.txt", d), fs::path(small) / fmt::format("{}.txt", d));
  EXPECT_STREQ(device_of(test::run_simkit({"dedup", "--mode", "edit-rate", "--timings", "-q", small})), "cpu");
  const auto many_auto = test::run_simkit({"dedup", "--mode", "edit-rate", "--timings", "-q", (dir / "many").string()});
  EXPECT_STREQ(device_of(many_auto), "gpu");
  const auto many_cpu =
      test::run_simkit({"dedup", "--mode", "edit-rate", "--device", "cpu", "-q", (dir / "many").string()});
  EXPECT_EQ(read_tsv(many_auto.out), read_tsv(many_cpu.out));
  EXPECT_STREQ(device_of(test::run_simkit({"dedup", "--timings", "-q", boost_dir()})), "cpu");
}

// ssdeep mode: a list of 160,000 signatures (families of near copies) takes the GPU under
// --device auto, read for it (the parts' texts alone), and gives the CPU's pairs. Without
// a GPU, auto falls back to the CPU after that reading, whose substrings are added then;
// so does auto where the GPU's index has no room.
TEST(DedupCli, LargeListsGiveTheCpusPairsUnderAutoDevice) {
  test::TempDir dir;
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::string list = std::string(dedup::kSsdeepHeader) + "\n", base;
  std::vector<std::string> signatures;
  for (int i = 0; i < 160000; ++i) {
    if (i % 8 == 0) base = test::random_base64(random, 40, 64);
    std::string first = base;
    first[static_cast<std::size_t>(random.integer(0, 39))] = 'Z';
    signatures.push_back(fmt::format("{}:{}:{}", 3 << (i % 3), first, base.substr(0, 20)));
    list += dedup::list_line(signatures.back(), fmt::format("f{}", i));
  }
  test::write_file(dir / "list.ssd", list);
  const auto list_auto = test::run_simkit({"dedup", "--timings", "-q", (dir / "list.ssd").string()});
  ASSERT_EQ(list_auto.exit_code, 0) << list_auto.err;
  // The lines (written in slices on every core) in pair order, each with its pair's score.
  std::pair<int, int> last{-1, -1};
  for (const std::string& line : test::lines_of(list_auto.out)) {
    const auto t1 = line.find('\t'), t2 = line.rfind('\t');
    ASSERT_TRUE(t1 != t2 && line[0] == 'f' && line[t1 + 1] == 'f') << line;
    const std::pair<int, int> pair{std::stoi(line.substr(1, t1 - 1)), std::stoi(line.substr(t1 + 2, t2 - t1 - 2))};
    ASSERT_LT(last, pair) << line;
    ASSERT_LT(pair.first, pair.second) << line;
    ASSERT_EQ(line.substr(t2 + 1), std::to_string(ctph::compare(signatures[pair.first], signatures[pair.second])));
    last = pair;
  }
  const bool on_cpu = list_auto.err.find(" on cpu") != std::string::npos;
  EXPECT_EQ(on_cpu, !test::gpu_available()) << list_auto.err;
  const auto list_cpu = test::run_simkit({"dedup", "--device", "cpu", "-q", (dir / "list.ssd").string()});
  EXPECT_EQ(list_auto.out, list_cpu.out);
  EXPECT_GT(std::count(list_cpu.out.begin(), list_cpu.out.end(), '\n'), 160000);
  if (!test::gpu_available()) return;
  // The GPU's index given no room (--memory-budget): auto matches through the CPU's index,
  // an explicit cuda scores every compatible pair on the GPU; each says so, in one line.
  const auto no_room = [&](const char* device) {
    const auto r = test::run_simkit({"dedup", "--device", device, "--memory-budget", "1M", "--timings", "-q",
                                     (dir / "list.ssd").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, list_cpu.out) << device;
    return r.err;
  };
  const std::string auto_err = no_room("auto");
  EXPECT_NE(auto_err.find("the GPU's 7-gram index of 160000 signatures takes"), std::string::npos) << auto_err;
  EXPECT_NE(auto_err.find("(--memory-budget): matching through the CPU's index instead"), std::string::npos) << auto_err;
  EXPECT_NE(auto_err.find(" on cpu"), std::string::npos) << auto_err;
  const std::string cuda_err = no_room("cuda");
  EXPECT_NE(cuda_err.find("the GPU scores every compatible pair instead"), std::string::npos) << cuda_err;
  EXPECT_EQ(cuda_err.find(" on cpu"), std::string::npos) << cuda_err;
}

}  // namespace
}  // namespace simkit
