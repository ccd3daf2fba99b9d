// simkit bench gemm through the program: the study's table on a GPU (every tile checked
// against cuBLAS), a clear refusal without one.
#include <gtest/gtest.h>

#include "simkit/gemm.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

TEST(BenchCli, GemmStudyTable) {
  test::TempDir dir;
  const std::string out = (dir / "study.tsv").string();
  test::expect_refused({"bench", "gemm", "--device", "cpu", "-o", out}, "runs on a GPU", out);
  test::expect_refused({"bench", "gemm", "--sizes", "0", "-o", out}, "--sizes", out);
  if (!test::gpu_available()) GTEST_SKIP() << "no CUDA GPU here";
  const auto r = test::run_simkit({"bench", "gemm", "--sizes", "30,64", "--reps", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = test::lines_of(r.out);
  // A comment and a header, then per size: cuBLAS fp32 and TF32, the tiles, and on Hopper
  // for sizes that are multiples of 4 (64, not 30) cuBLAS TF32 on the tensor tiles' layout
  // and the tensor tiles.
  const std::size_t tensor = gemm::tensor_tiles().empty() ? 0 : 1 + gemm::tensor_tiles().size();
  ASSERT_EQ(lines.size(), 2 + 2 * (2 + gemm::tiles().size()) + tensor);
  for (std::size_t i = 2; i < lines.size(); ++i) {
    if (lines[i].rfind("cuBLAS", 0) == 0) continue;
    const std::string error = lines[i].substr(lines[i].rfind('\t') + 1);
    // fp32 tiles round as cuBLAS fp32 does; TF32 keeps 10 fraction bits of each operand.
    EXPECT_LT(std::stod(error), lines[i].rfind("wgmma tf32", 0) == 0 ? 1e-2 : 1e-5) << lines[i];
  }
}

}  // namespace
}  // namespace simkit
