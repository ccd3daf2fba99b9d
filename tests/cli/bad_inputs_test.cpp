// Every file under tests/bad-inputs/ through the real program (see command_for): exit 2, exactly one error line naming the file and
// what is wrong, and no output file.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.hpp"

namespace simkit {
namespace {

namespace fs = std::filesystem;

struct BadFile {
  fs::path path;
  std::vector<std::string> expected;
  std::vector<std::string> args;
};

std::vector<BadFile> corpus() {
  std::vector<BadFile> files;
  const fs::path root = test::source_dir() / "tests/bad-inputs";
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const fs::path p = entry.path();
    const std::string name = p.filename().string();
    if (!entry.is_regular_file() || name[0] == '_' || p.extension() == ".expect" || p.extension() == ".args" ||
        p.extension() == ".py" || p.extension() == ".md")
      continue;
    BadFile f{p, test::lines_of(test::read_file(p.string() + ".expect")), {}};
    for (std::string arg : test::lines_of(test::read_file(p.string() + ".args"))) {
      if (const auto at = arg.find("@DIR@"); at != std::string::npos) arg.replace(at, 5, p.parent_path().string());
      f.args.push_back(arg);
    }
    files.push_back(f);
  }
  std::sort(files.begin(), files.end(), [](const BadFile& a, const BadFile& b) { return a.path < b.path; });
  return files;
}

// ssdeep hash lists go to simkit dedup; posting-list files to simkit postings (an index
// with the folder's good queries, queries against the folder's good index, documents to
// build); DISCO models, gold standards and corpora to simkit disco; LVQ training data to
// simkit lvq train and LVQ models to simkit lvq predict; CCA tuples to simkit cca; every other format
// to simkit neighbors as a model.
std::vector<std::string> command_for(const BadFile& f, const fs::path& out) {
  std::vector<std::string> args;
  const std::string folder = f.path.parent_path().filename().string();
  const std::string dir = f.path.parent_path().string();
  if (folder == "exp-index" || folder == "skp") {
    args = {"postings", "query", folder == "skp" ? "--index" : "--exp-index", f.path.string(),
            "--queries", dir + "/_queries.txt", "--device", "cpu", "-o", out.string()};
  } else if (folder == "exp-query") {
    args = {"postings", "query", "--exp-index", dir + "/_index.bin", "--queries", f.path.string(),
            "--device", "cpu", "-o", out.string()};
  } else if (folder == "postings-docs") {
    args = {"postings", "build", f.path.string(), "-o", out.string()};
  } else if (folder == "skd") {
    args = {"disco", "similar", "--model", f.path.string(), "apple", "-o", out.string()};
  } else if (folder == "gold") {
    args = {"disco", "evaluate", "--model", dir + "/_model.skd", f.path.string(), "-o", out.string()};
  } else if (folder == "disco-corpus") {
    args = {"disco", "build", f.path.string(), "-o", out.string()};
  } else if (folder == "lvq-data") {
    args = {"lvq", "train", "--train", f.path.string(), "--device", "cpu", "-o", out.string()};
  } else if (folder == "skq") {
    args = {"lvq", "predict", "--model", f.path.string(), "--data", dir + "/_data.csv", "-o", out.string()};
  } else if (folder == "cca-tuples") {
    args = {"cca", "--input", f.path.string(), "--x", "0", "--y", "1-2", "--window", "2", "--device", "cpu",
            "-o", out.string()};
  } else if (folder == "ssdeep") {
    args = {"dedup", f.path.string(), "--device", "cpu", "-o", out.string()};
  } else {
    args = {"neighbors", "--model", f.path.string(), "--device", "cpu", "-o", out.string()};
    args.insert(args.end(), f.args.begin(), f.args.end());
    args.push_back("alpha");
    return args;
  }
  args.insert(args.end(), f.args.begin(), f.args.end());
  return args;
}

TEST(BadInputs, CorpusIsThere) { EXPECT_GE(corpus().size(), 80u); }

TEST(BadInputs, EachIsRefusedWithOneLine) {
  for (const BadFile& f : corpus()) {
    SCOPED_TRACE(f.path.string());
    ASSERT_TRUE(fs::exists(f.path.string() + ".expect"));
    test::TempDir dir;
    const fs::path out = dir / "out.tsv";
    std::vector<std::string> args = command_for(f, out);
    const auto r = test::run_simkit(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    const auto lines = test::lines_of(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_EQ(lines[0].rfind("simkit: error: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(f.path.string()), std::string::npos) << "the file is not named";
    for (const std::string& phrase : f.expected)
      if (!phrase.empty()) {
        EXPECT_NE(lines[0].find(phrase), std::string::npos) << "missing '" << phrase << "'";
      }
    EXPECT_FALSE(fs::exists(out)) << "an output file was created";
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 0) << "leftovers";
  }
}

}  // namespace
}  // namespace simkit
