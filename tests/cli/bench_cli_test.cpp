// simkit bench gemm through the program: the study's table on a GPU (every tile checked
// against cuBLAS, the A.B^T rows against float64), the fused jobs beside cuBLAS + select,
// a clear refusal of bad options or no GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "simkit/gemm.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (std::size_t tab; (tab = line.find('\t', from)) != std::string::npos; from = tab + 1)
    out.push_back(line.substr(from, tab - from));
  out.push_back(line.substr(from));
  return out;
}

TEST(BenchCli, GemmStudyTable) {
  test::TempDir dir;
  const std::string out = (dir / "study.tsv").string();
  test::expect_refused({"bench", "gemm", "--device", "cpu", "-o", out}, "runs on a GPU", out);
  test::expect_refused({"bench", "gemm", "--sizes", "0", "-o", out}, "--sizes", out);
  if (!test::gpu_available()) GTEST_SKIP() << "no CUDA GPU here";
  test::expect_refused({"bench", "gemm", "--study", "magic", "-o", out}, "--study 'magic'", out);
  const auto r = test::run_simkit({"bench", "gemm", "--sizes", "30,64", "--reps", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = test::lines_of(r.out);
  // A comment and a header, then per size: cuBLAS fp32 and TF32, the tiles, and on Hopper
  // for sizes that are multiples of 8 (64, not 30) cuBLAS TF32, fp32 and fp16 on the
  // tensor tiles' layout, the tensor tiles (TF32 and fp16) and the 3xTF32 product.
  const std::size_t tensor = gemm::tensor_tiles().empty() ? 0 : 4 + gemm::tensor_tiles().size();
  ASSERT_EQ(lines.size(), 2 + 2 * (2 + gemm::tiles().size()) + tensor);
  for (std::size_t i = 2; i < lines.size(); ++i) {
    const auto f = fields_of(lines[i]);
    ASSERT_EQ(f.size(), 9u) << lines[i];
    // "wgmma tf32 ...", "cuBLAS tf32 ...", "wgmma fp16 ...", "cuBLAS fp16 ...": operands
    // with 10 fraction bits.
    const bool reduced = f[0].find("tf32") != std::string::npos || f[0].find("fp16") != std::string::npos;
    // fp32 tiles round as cuBLAS fp32 does; TF32 and fp16 keep 10 fraction bits of each operand.
    if (f[6] != "-") {
      EXPECT_LT(std::stod(f[6]), f[0].rfind("wgmma", 0) == 0 && reduced ? 1e-2 : 1e-5) << lines[i];
    }
    // Against float64: fp32 (cuBLAS, 3xTF32) near 2^-24 a term, TF32 and fp16 near 2^-11.
    if (f[7] != "-") {
      EXPECT_LT(std::stod(f[7]), reduced ? 1e-2 : 1e-5) << lines[i];
    }
    // fp16 rows (wgmma, cuBLAS) beside cuBLAS fp16, the others "-".
    EXPECT_EQ(f[8] == "-", f[0].find("fp16") == std::string::npos) << lines[i];
  }
}

TEST(BenchCli, GemmFusedJobs) {
  test::TempDir dir;
  const std::string out = (dir / "fused.tsv").string();
  if (!test::gpu_available()) GTEST_SKIP() << "no CUDA GPU here";
  test::expect_refused({"bench", "gemm", "--study", "fused", "--top", "0", "-o", out}, "--top 0", out);
  test::expect_refused({"bench", "gemm", "--study", "fused", "--dims", "30", "-o", out}, "--dims 30: expected a multiple of 4", out);
  if (gemm::tensor_tiles().empty()) GTEST_SKIP() << "no Hopper GPU or no sm_90a build";
  const auto r = test::run_simkit({"bench", "gemm", "--study", "fused", "--queries", "100", "--rows", "3000", "--dims",
                                   "64", "--lin-words", "500", "--lin-features", "64", "--reps", "1", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = test::lines_of(test::read_file(out));
  // A comment, the header, cosine, squared distance, Lin, and Lin's self-join in TF32 and fp16.
  ASSERT_EQ(lines.size(), 7u);
  for (std::size_t i = 2; i < lines.size(); ++i) {
    const auto f = fields_of(lines[i]);
    ASSERT_EQ(f.size(), 9u) << lines[i];
    // Both paths round each product to TF32 and sum in another order: near-ties may swap.
    EXPECT_GT(std::stod(f[7]), 0.9) << lines[i];
    EXPECT_LT(std::stod(f[8]), 1e-2) << lines[i];
  }
}

}  // namespace
}  // namespace simkit
