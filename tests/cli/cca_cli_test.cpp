// simkit cca through the program: the interface on the real digit stream (the
// left and right halves of each image), one file with column ranges, standard input,
// .sks conversion, many streams, vectors and the skip note.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../cca/cca_fixture.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (true) {
    const std::size_t tab = line.find('\t', at);
    out.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
    if (tab == std::string::npos) return out;
    at = tab + 1;
  }
}

struct DigitFiles {
  test::TempDir dir;
  std::string x, y, xy, xy_text;
  std::vector<double> stream;
  std::size_t count = 0;
  DigitFiles() {
    stream = test::digit_halves(count);
    std::string xs, ys;
    for (std::size_t t = 0; t < count; ++t) {
      for (std::size_t c = 0; c < 64; ++c) {
        std::string& side = c < 32 ? xs : ys;
        side += fmt::format("{}{:g}", c % 32 == 0 ? "" : ",", stream[t * 64 + c]);
        xy_text += fmt::format("{}{:g}", c == 0 ? "" : "\t", stream[t * 64 + c]);
      }
      xs += '\n';
      ys += '\n';
      xy_text += '\n';
    }
    x = (dir / "x.csv").string();
    y = (dir / "y.csv").string();
    xy = (dir / "xy.tsv").string();
    test::write_file(x, xs);
    test::write_file(y, ys);
    test::write_file(xy, xy_text);
  }
};

TEST(CcaCli, TwoFilesGiveARowPerStepEqualToTheBatchCca) {
  DigitFiles f;
  const auto r = test::run_simkit({"cca", "--x-file", f.x, "--y-file", f.y, "--window", "200", "--k", "3", "--ridge",
                                   "0.01", "--device", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = test::lines_of(r.out);
  ASSERT_EQ(lines.size(), f.count - 200 + 1);
  for (std::size_t i = 0; i < lines.size(); i += 50) {
    const auto fields = fields_of(lines[i]);
    ASSERT_EQ(fields.size(), 4u) << lines[i];
    const std::size_t t = std::stoul(fields[0]);
    EXPECT_EQ(t, 200 + i);
    const auto expected = test::batch_cca(f.stream, 64, t - 200, 200, 32, 32, 0.01, 3);
    for (std::size_t j = 0; j < 3; ++j) EXPECT_NEAR(std::stod(fields[j + 1]), expected[j], 1e-7) << lines[i];
  }
  // One step at a time prints the same rows (8 decimals), on the GPU too where one is.
  for (const char* device : {"cpu", "auto"}) {
    const auto one = test::run_simkit({"cca", "--x-file", f.x, "--y-file", f.y, "--window", "200", "--k", "3",
                                       "--ridge", "0.01", "--device", device, "--solve-batch", "1"});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    const auto one_lines = test::lines_of(one.out);
    ASSERT_EQ(one_lines.size(), lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const auto a = fields_of(lines[i]), b = fields_of(one_lines[i]);
      ASSERT_EQ(a[0], b[0]);
      for (std::size_t j = 1; j < a.size(); ++j) ASSERT_NEAR(std::stod(a[j]), std::stod(b[j]), 2e-8) << lines[i];
    }
  }
}

TEST(CcaCli, OneFileWithRangesStandardInputAndSksAgree) {
  DigitFiles f;
  const std::vector<std::string> common{"--x", "0-31", "--y", "32-63", "--window", "300", "--every", "100", "--ridge",
                                        "0.01", "--device", "cpu"};
  auto args = std::vector<std::string>{"cca", "--input", f.xy};
  args.insert(args.end(), common.begin(), common.end());
  const auto file = test::run_simkit(args);
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(test::lines_of(file.out).size(), (f.count - 300) / 100 + 1);

  args[2] = "-";
  const auto piped = test::run_simkit(args, f.xy_text);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.out, file.out);

  // The X and Y files as one .sks stream (X then Y): the same answers.
  const std::string sks = (f.dir / "xy.sks").string();
  const auto converted = test::run_simkit({"cca", "--x-file", f.x, "--y-file", f.y, "--convert", sks});
  ASSERT_EQ(converted.exit_code, 0) << converted.err;
  args[2] = sks;
  const auto binary = test::run_simkit(args);
  ASSERT_EQ(binary.exit_code, 0) << binary.err;
  EXPECT_EQ(binary.out, file.out);

  // JSON lines carry the same numbers.
  args.insert(args.end(), {"--format", "json"});
  const auto json = test::run_simkit(args);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto first = nlohmann::json::parse(test::lines_of(json.out)[0]);
  EXPECT_EQ(first["t"], 300);
  EXPECT_NEAR(first["rho"][0].get<double>(), std::stod(fields_of(test::lines_of(file.out)[0])[1]), 1e-8);
}

TEST(CcaCli, StreamsVectorsAndSkip) {
  DigitFiles f;
  // Three streams: the X half, and the Y half split in two.
  std::string a, b;
  for (std::size_t t = 0; t < f.count; ++t) {
    for (std::size_t c = 0; c < 32; ++c) {
      std::string& side = c < 16 ? a : b;
      side += fmt::format("{}{:g}", c % 16 == 0 ? "" : " ", f.stream[t * 64 + 32 + c]);
    }
    a += '\n';
    b += '\n';
  }
  test::write_file(f.dir / "a.txt", a);
  test::write_file(f.dir / "b.txt", b);
  const auto streams = test::run_simkit({"cca", "--streams", f.x, (f.dir / "a.txt").string(),
                                         (f.dir / "b.txt").string(), "--window", "400", "--every", "400", "--k", "1",
                                         "--ridge", "0.01", "--device", "cpu"});
  ASSERT_EQ(streams.exit_code, 0) << streams.err;
  const auto lines = test::lines_of(streams.out);
  ASSERT_EQ(lines.size(), 3u * ((f.count - 400) / 400 + 1));
  EXPECT_EQ(fields_of(lines[0]), (std::vector<std::string>{"400", "1", "2", fields_of(lines[0])[3]}));
  EXPECT_EQ(fields_of(lines[2])[1] + fields_of(lines[2])[2], "23");

  const auto vectors = test::run_simkit({"cca", "--x-file", f.x, "--y-file", f.y, "--window", "1000", "--k", "2",
                                         "--ridge", "0.01", "--vectors", "--every", "1000", "--device", "cpu"});
  ASSERT_EQ(vectors.exit_code, 0) << vectors.err;
  const auto vlines = test::lines_of(vectors.out);
  ASSERT_EQ(vlines.size(), 5u);  // the correlations, then x 1, x 2, y 1, y 2
  EXPECT_EQ(fields_of(vlines[1]).size(), 3u + 32u);
  EXPECT_EQ(fields_of(vlines[3])[1], "y");

  const auto skip = test::run_simkit({"cca", "--x-file", f.x, "--y-file", f.y, "--window", "300", "--ridge", "0.01",
                                      "--skip", "0.2", "--device", "cpu"});
  ASSERT_EQ(skip.exit_code, 0) << skip.err;
  EXPECT_EQ(test::lines_of(skip.out).size(), f.count - 300 + 1);
  EXPECT_NE(skip.err.find("skipped (--skip 0.2)"), std::string::npos) << skip.err;
}

// --device auto takes the GPU only where its start is repaid (docs/gpu.md): the digit
// halves (32 + 32 columns, (64)^3 x ~1,500 reports) stay on the CPU, 160 + 160 columns
// with enough reports go to the GPU, and the answers agree. (Without a GPU, auto is the
// CPU for all.)
TEST(CcaCli, AutoDeviceKeepsSmallJobsOnTheCpu) {
  SIMKIT_REQUIRE_GPU();
  const auto device_of = [](const test::RunResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.err.find(" on cpu") != std::string::npos ? "cpu" : "gpu";
  };
  DigitFiles f;
  const std::vector<std::string> small{"cca", "--input", f.xy, "--x", "0-31", "--y", "32-63", "--window", "300",
                                       "--ridge", "0.01", "--timings", "--device", "auto"};
  EXPECT_STREQ(device_of(test::run_simkit(small)), "cpu");

  // 160 + 160 columns of noise with 4 shared factors, window 400: 320^3 x 917 reports
  // just past the rule's 3e10.
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::string text;
  const std::size_t tuples = 400 + 917 - 1;
  for (std::size_t t = 0; t < tuples; ++t) {
    float shared[4];
    for (float& z : shared) z = random.uniform();
    for (int c = 0; c < 320; ++c)
      text += fmt::format("{}{:.5f}", c == 0 ? "" : "\t", shared[c % 4] + 0.5f * random.uniform());
    text += '\n';
  }
  const std::string large_file = (f.dir / "large.tsv").string();
  test::write_file(large_file, text);
  std::vector<std::string> large{"cca", "--input", large_file, "--x", "0-159", "--y", "160-319", "--window", "400",
                                 "--every", "100", "-k", "2", "--timings", "--device", "auto"};
  EXPECT_STREQ(device_of(test::run_simkit(large)), "cpu") << "every 100th tuple: 10 reports";
  large[10] = "1";
  const auto on_gpu = test::run_simkit(large);
  EXPECT_STREQ(device_of(on_gpu), "gpu");
  large.back() = "cpu";
  const auto on_cpu = test::run_simkit(large);
  ASSERT_EQ(on_cpu.exit_code, 0) << on_cpu.err;
  const auto gpu_lines = test::lines_of(on_gpu.out), cpu_lines = test::lines_of(on_cpu.out);
  ASSERT_EQ(gpu_lines.size(), 917u);
  ASSERT_EQ(cpu_lines.size(), gpu_lines.size());
  for (const std::size_t i : {std::size_t{0}, std::size_t{458}, std::size_t{916}})
    for (std::size_t k = 1; k <= 2; ++k)
      EXPECT_NEAR(std::stod(fields_of(gpu_lines[i])[k]), std::stod(fields_of(cpu_lines[i])[k]), 1e-6) << "report " << i;
}

TEST(CcaCli, UsageErrors) {
  DigitFiles f;
  test::expect_refused({"cca", "--x-file", f.x, "--window", "10", "-o", (f.dir / "o").string()}, "--y-file",
                       f.dir / "o");
  test::expect_refused({"cca", "--input", f.xy, "--x", "0-3", "--window", "10", "-o", (f.dir / "o").string()},
                       "--input needs --x and --y", f.dir / "o");
  test::expect_refused({"cca", "--x-file", f.x, "--y-file", f.y, "-o", (f.dir / "o").string()}, "--window",
                       f.dir / "o");
  test::expect_refused({"cca", "--input", f.xy, "--x", "0-3", "--y", "4-99", "--window", "10", "-o",
                        (f.dir / "o").string()},
                       "column 64 was asked for", f.dir / "o");
}

}  // namespace
}  // namespace simkit
