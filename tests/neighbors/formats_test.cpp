// Model formats: every writer round-trips bit-exactly through its reader, detection
// picks the right reader, and malformed files are refused with file, position, reason.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>


#include "sealed_file.hpp"
#include "neighbors/skv_layout.hpp"
#include "simkit/error.hpp"
#include "simkit/io.hpp"
#include "simkit/neighbors.hpp"
#include "test_support.hpp"

namespace simkit::neighbors {
namespace {

Model random_model(test::Random& random, std::size_t rows, std::size_t dim) {
  std::vector<std::string> words;
  const char* extras[] = {"caf\xc3\xa9", "na\xc3\xafve", "e-mail", "c++", "\xe6\x97\xa5\xe6\x9c\xac"};
  for (std::size_t i = 0; i < rows; ++i)
    words.push_back(i < 5 ? extras[i] : "w" + std::to_string(i * 7919 % 100000));
  std::vector<float> values = random.floats(rows * dim, -3, 3);
  values[0] = 1e-40f;  // subnormal
  values[1] = -0.0f;
  values[2] = 3.4028235e38f;
  return make_model(std::move(words), std::move(values), dim);
}

void expect_same_model(const Model& got, const Model& want) {
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.dim, want.dim);
  for (std::size_t r = 0; r < want.rows; ++r) {
    ASSERT_EQ(got.word(r), want.word(r)) << "row " << r;
    ASSERT_EQ(std::memcmp(got.vectors + r * want.dim, want.vectors + r * want.dim, want.dim * 4), 0) << "row " << r;
    ASSERT_EQ(got.norms[r], want.norms[r]) << "row " << r;
  }
  for (std::size_t r = 0; r < want.rows; ++r) ASSERT_EQ(got.find(want.word(r)), r);
  EXPECT_FALSE(got.find("no-such-word"));
}

class RoundTrip : public ::testing::TestWithParam<Format> {};

TEST_P(RoundTrip, BitExact) {
  test::Random random;
  const Model model = random_model(random, 300, 17);
  test::TempDir dir;
  const std::string path = (dir / "model").string();
  save_model(model, path, GetParam());
  const std::string bytes = test::read_file(path);
  EXPECT_EQ(detect_format(bytes.substr(0, 4096), path), GetParam());
  const Model loaded = load_model(path);
  EXPECT_EQ(loaded.format, GetParam());
  expect_same_model(loaded, model);
  // Writing what was read gives the same file again.
  save_model(loaded, path + ".again", GetParam());
  EXPECT_EQ(test::read_file(path + ".again"), bytes);
}

INSTANTIATE_TEST_SUITE_P(Formats, RoundTrip,
                         ::testing::Values(Format::Glove, Format::Word2VecText, Format::Word2VecBinary, Format::Skv),
                         [](const auto& param_info) {
                           std::string name(format_name(param_info.param));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(Formats, SampleVectorsConvertToSkvAndBackByteForByte) {
  const std::string sample = (test::source_dir() / "data/samples/vectors.vec").string();
  const Model model = load_model(sample);
  EXPECT_EQ(model.format, Format::Word2VecText);
  EXPECT_EQ(model.rows, 4000u);
  EXPECT_EQ(model.dim, 100u);
  test::TempDir dir;
  save_model(model, (dir / "m.skv").string(), Format::Skv);
  const Model skv = load_model((dir / "m.skv").string());
  expect_same_model(skv, model);
  save_model(skv, (dir / "back.vec").string(), Format::Word2VecText);
  EXPECT_EQ(test::read_file(dir / "back.vec"), test::read_file(sample));
}

TEST(Formats, GloveWordsMayContainSpacesAndLinesMayEndInCrLf) {
  test::TempDir dir;
  // The first line sets the dimension; later words may contain spaces.
  test::write_file(dir / "g.txt", "x 1e-3 +4\nnew york 0.5 1\r\n. . . 2 -3 \n\n");
  const Model m = load_model((dir / "g.txt").string());
  ASSERT_EQ(m.rows, 3u);
  EXPECT_EQ(m.word(1), "new york");
  EXPECT_EQ(m.word(2), ". . .");
  EXPECT_EQ(m.vector(0)[1], 4.0f);
  EXPECT_FLOAT_EQ(m.norms[1], std::sqrt(1.25f));
}

TEST(Formats, NpyWithWordList) {
  test::TempDir dir;
  // A float32 (2, 3) array as numpy.save writes it (version 1.0, 128-byte header).
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  header.resize(128 - 10 - 1, ' ');
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xFF);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  const float values[6] = {1, 2, 3, -4, 5, 0.25f};
  bytes.append(reinterpret_cast<const char*>(values), sizeof values);
  test::write_file(dir / "m.npy", bytes);
  test::write_file(dir / "words.txt", "alpha\nbeta\n");
  const Model m = load_model((dir / "m.npy").string(), {.words_path = (dir / "words.txt").string()});
  ASSERT_EQ(m.rows, 2u);
  EXPECT_EQ(m.format, Format::Npy);
  EXPECT_EQ(m.word(1), "beta");
  EXPECT_EQ(m.vector(1)[2], 0.25f);
  EXPECT_THROW(load_model((dir / "m.npy").string()), UsageError) << "--words is required";
}

struct BadCase {
  const char* name;
  std::string content;
  const char* expected;  // part of the one-line message
  const char* position;  // ":LINE" or ": byte N" part, "" when only the file is known
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, RefusedWithPositionAndReason) {
  const BadCase c = GetParam();
  test::TempDir dir;
  const std::string path = (dir / c.name).string();
  test::write_file(path, c.content);
  test::write_file(dir / "words.txt", "a\nb\n");
  try {
    load_model(path, {.words_path = (dir / "words.txt").string()});
    FAIL() << "accepted " << c.name;
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(c.expected), std::string::npos) << what;
    EXPECT_NE(what.find(path + c.position), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

std::string w2v_binary(std::size_t rows_claimed, const std::vector<std::pair<std::string, std::vector<float>>>& rows) {
  std::string s = std::to_string(rows_claimed) + " " + std::to_string(rows.empty() ? 3 : rows[0].second.size()) + "\n";
  for (const auto& [w, v] : rows) {
    s += w + " ";
    s.append(reinterpret_cast<const char*>(v.data()), v.size() * 4);
    s += "\n";
  }
  return s;
}

std::string npy(const std::string& dict, std::size_t data_bytes) {
  std::string header = dict;
  header.resize(118 - 1, ' ');
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size());
  bytes += '\0';
  return bytes + header + std::string(data_bytes, '\0');
}

const float kNan = std::numeric_limits<float>::quiet_NaN();

std::string case_name(const ::testing::TestParamInfo<BadCase>& info) {
  std::string name = info.param.name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadInput,
    ::testing::Values(
        BadCase{"empty.txt", "", "empty file", ""},
        BadCase{"short_row.txt", "a 1 2\nb 1\n", "expected a word and 2 values, found 2 fields", ":2"},
        BadCase{"not_number.txt", "a 1 2\nb 1 x2\n", "expected a number, found 'x2'", ":2:5"},
        BadCase{"nan.txt", "a 1 nan\n", "NaN or infinite", ":1:5"},
        BadCase{"inf.txt", "a 1 2\nb -inf 2\n", "NaN or infinite", ":2:3"},
        BadCase{"huge.txt", "a 1 1e39\n", "out of the float32 range", ":1:5"},
        BadCase{"duplicate.txt", "a 1\nb 2\na 3\n", "duplicate word 'a' (first at line 1)", ":3"},
        BadCase{"blank_line.txt", "a 1\n\nb 2\n", "empty line", ":2"},
        BadCase{"bad_utf8.txt", "a 1\ncaf\xe9 2\n", "not valid UTF-8", ":2"},
        BadCase{"control.txt", "a 1\nb\x01x 2\n", "control character", ":2"},
        BadCase{"one_field.txt", "lonely\n", "expected a word followed by its values", ":1"},
        BadCase{"w2v_count.vec", "3 2\na 1 2\nb 1 2\n", "header says 3 rows but the file has 2", ":1"},
        BadCase{"w2v_absurd.vec", "999999999999 300\na 1 2\n", "999999999999 rows", ":1"},
        BadCase{"w2v_dim0.vec", "2 0\na\nb\n", "dimension 0", ":1"},
        BadCase{"w2v_rows0.vec", "0 5\n", "no rows", ":1"},
        BadCase{"w2v_dim_huge.vec", "1 99999999\na 1\n", "absurd", ":1"},
        BadCase{"w2v_wrong_dim.vec", "2 3\na 1 2 3\nb 1 2\n", "expected a word and 3 values", ":3"},
        BadCase{"bin_truncated.bin", w2v_binary(2, {{"a", {1, 2, 3}}}).substr(0, 14) + "b \x01\x02", "truncated",
                ":1"},
        BadCase{"bin_nan.bin", w2v_binary(2, {{"a", {1, 2, 3}}, {"b", {1, kNan, 3}}}), "NaN or infinite",
                ": byte 25"},
        BadCase{"bin_extra.bin", w2v_binary(1, {{"a", {1, 2, 3}}, {"b", {1, 2, 3}}}), "unexpected data after the 1 rows",
                ": byte"},
        BadCase{"bin_absurd.bin", "5000000000 300\nxx", "5000000000 rows", ":1"},
        BadCase{"bin_duplicate.bin", w2v_binary(2, {{"a", {1, 2, 3}}, {"a", {1, 2, 3}}}), "duplicate word 'a'",
                ": byte 19"},
        BadCase{"npy_dtype.npy", npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", 24),
                "dtype '<i4' is not supported", ": byte 8"},
        BadCase{"npy_fortran.npy", npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24),
                "Fortran-order", ": byte 8"},
        BadCase{"npy_1d.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", 24),
                "expected a 2-D matrix", ": byte 8"},
        BadCase{"npy_short.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20),
                "does not match", ": byte 128"},
        BadCase{"npy_syntax.npy", npy("{'descr': '<f4', 'fortran_order': Nope, 'shape': (2, 3), }", 24),
                "expected True or False", ": byte"},
        BadCase{"npy_words.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", 24),
                "2 words for the 3 rows", ""},
        BadCase{"bin_cut.bin", w2v_binary(2, {{"a", {1, 2, 3}}, {"b", {1, 2, 3}}}).substr(0, 32), "truncated: row 2",
                ": byte 21"},
        BadCase{"npy_version.npy", std::string("\x93NUMPY\x09\x00", 8) + "xx", "version 9", ": byte 6"},
        BadCase{"skv_short.skv", "SIMKITWV\x01\x00\x00\x00", "truncated", ": byte"}),
    case_name);

std::string valid_skv(test::TempDir& dir) {
  test::Random random(7);
  save_model(random_model(random, 20, 4), (dir / "ok.skv").string(), Format::Skv);
  return test::read_file(dir / "ok.skv");
}

void expect_refused(const std::string& path, const std::string& expected, const std::string& position) {
  try {
    load_model(path);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path + position), std::string::npos) << e.what();
  }
}

TEST(SkvFile, DamageIsRefused) {
  test::TempDir dir;
  const std::string good = valid_skv(dir);
  const std::string path = (dir / "bad.skv").string();

  std::string flipped = good;
  flipped[detail::kSkvHeaderBytes + 5] ^= 0x40;  // a vector byte
  test::write_file(path, flipped);
  expect_refused(path, "checksum mismatch", ": byte");

  test::write_file(path, good.substr(0, good.size() - 9));
  expect_refused(path, "truncated: the header says", ": byte");

  test::write_file(path, good + "x");
  expect_refused(path, "trailing bytes", ": byte");

  std::string version = good;
  version[8] = 7;
  test::write_file(path, version);
  expect_refused(path, ".skv version 7 is not supported", ": byte 8");

  std::string rows = good;
  rows[16 + 5] = 0x7f;  // rows = huge
  test::write_file(path, rows);
  expect_refused(path, "rows is more than simkit indexes", ": byte 16");
}

// A damaged vector byte in the background: the structure passes, wait_checked() refuses.
TEST(SkvFile, ChecksumInTheBackgroundRefusesAtTheWait) {
  test::TempDir dir;
  std::string bytes = valid_skv(dir);
  const std::string path = (dir / "bad.skv").string();
  bytes[detail::kSkvHeaderBytes + 5] ^= 0x40;
  test::write_file(path, bytes);
  LoadOptions options;
  options.check_in_background = true;
  const Model model = load_model(path, options);
  try {
    model.wait_checked();
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
  }
  const Model good = load_model((dir / "ok.skv").string(), options);
  EXPECT_NO_THROW(good.wait_checked());
}

// A damaged word (a control character) under the old checksum: reported as damage, the
// checksum's error, whether the checksum runs in the background or not.
TEST(SkvFile, DamagedStructureIsReportedAsAChecksumMismatch) {
  test::TempDir dir;
  std::string bytes = valid_skv(dir);
  std::uint64_t words_at = 0;
  std::memcpy(&words_at, bytes.data() + 64, 8);  // the header's words offset
  bytes[words_at] = '\x01';
  const std::string path = (dir / "bad.skv").string();
  test::write_file(path, bytes);
  for (const bool background : {false, true}) {
    LoadOptions options;
    options.check_in_background = background;
    try {
      load_model(path, options).wait_checked();
      FAIL() << "accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
    }
  }
}

// Structure checked on all cores still names the first bad row, as a loop in order did:
// two words damaged (a control character) under a valid checksum, the lower one reported.
TEST(SkvFile, TheFirstOfTwoBadWordsIsReported) {
  test::TempDir dir;
  test::Random random(11);
  const std::size_t rows = 50000, dim = 2;
  save_model(random_model(random, rows, dim), (dir / "big.skv").string(), Format::Skv);
  std::string bytes = test::read_file(dir / "big.skv");
  const auto header_field = [&](std::size_t at) {
    std::uint64_t value = 0;
    std::memcpy(&value, bytes.data() + at, 8);
    return value;
  };
  const std::uint64_t offsets_at = header_field(56), words_at = header_field(64);
  for (const std::size_t row : {std::size_t{41234}, std::size_t{30001}})
    bytes[words_at + header_field(offsets_at + 8 * row)] = '\x01';
  const std::string path = (dir / "bad.skv").string();
  test::write_file(path, test::sealed(bytes, true));
  expect_refused(path, "control character", ": byte " + std::to_string(offsets_at + 8 * 30001));
}

// Files of version 1 (one XXH3-64 of every byte, before the checksum in pieces) are still
// read, and checked by their own rule: the same bytes with a version 2 sum are refused.
TEST(SkvFile, VersionOneFilesAreStillRead) {
  test::TempDir dir;
  const std::string bytes = valid_skv(dir);
  ASSERT_EQ(bytes[8], 2);
  const std::string path = (dir / "v1.skv").string();
  test::write_file(path, test::with_version(bytes, 1, false));
  for (const bool background : {false, true}) {
    LoadOptions options;
    options.check_in_background = background;
    const Model v1 = load_model(path, options);
    EXPECT_NO_THROW(v1.wait_checked());
    expect_same_model(v1, load_model((dir / "ok.skv").string()));
  }
  test::write_file(path, test::with_version(bytes, 1, true));
  expect_refused(path, "checksum mismatch", ": byte");
}

}  // namespace
}  // namespace simkit::neighbors
