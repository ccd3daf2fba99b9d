// The CCA tracker on the CPU: exact mode against an independent float64 batch CCA of
// every window of a real stream and of synthetic ones, drift control over 10^5 steps,
// the skip threshold, approx mode's sampling and accuracy, canonical vectors, many
// streams, and the tuple readers' refusals.
#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include <fmt/format.h>

#include "cca_fixture.hpp"
#include "simkit/cca.hpp"
#include "simkit/error.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

TEST(Cca, ExactEqualsBatchCcaAtEveryStepOfTheDigitStream) {
  std::size_t count = 0;
  const std::vector<double> stream = test::digit_halves(count);
  ASSERT_EQ(count, 1257u);
  cca::Options options;
  options.window = 200;
  options.k = 5;
  options.ridge = 1e-2;
  const auto reports = test::track({{32, 32}}, options, stream);
  ASSERT_EQ(reports.size(), count - options.window + 1);
  EXPECT_EQ(reports.front().t, 200u);
  EXPECT_EQ(reports.back().t, count);
  test::expect_equal_to_batch(reports, stream, 32, 32, 200, 1e-2);
  // The digit halves are strongly related: the leading correlation is high.
  EXPECT_GT(reports.back().pairs[0].rho[0], 0.8);
}

TEST(Cca, ExactEqualsBatchCcaOnPlainLinearStreams) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  // p > q and p < q (the Gram matrix of either side), plain CCA, reports every 3.
  for (const auto& [p, q] : {std::pair<std::size_t, std::size_t>{7, 5}, {4, 9}}) {
    const std::vector<double> stream = test::linear_stream(random, 700, p, q, 3);
    cca::Options options;
    options.window = 60;
    options.every = 3;
    options.k = 4;
    const auto reports = test::track({{p, q}}, options, stream, 31);
    ASSERT_EQ(reports.size(), (700 - 60) / 3 + 1);
    EXPECT_EQ(reports[1].t, 63u);
    test::expect_equal_to_batch(reports, stream, p, q, 60, 0.0);
  }
}

TEST(Cca, BatchedStepsEqualOneAtATime) {
  // Report steps solved together on all threads (the default) against one at a time:
  // batches cut by their size, by the end of each push and by recomputation.
  test::Random random;
  SCOPED_TRACE(random.seed());
  struct Case {
    std::size_t p, q, window, every, batch, chunk, recenter;
    double ridge;
  };
  for (const Case& c : {Case{7, 12, 60, 1, 0, 97, 0, 0.0}, Case{12, 7, 60, 3, 3, 250, 0, 1e-3},
                        Case{5, 4, 30, 2, 2, 1, 45, 0.0}, Case{1, 1, 10, 1, 0, 13, 0, 0.0}}) {
    SCOPED_TRACE(testing::Message() << "p " << c.p << " q " << c.q << " batch " << c.batch);
    const std::vector<double> stream = test::linear_stream(random, 500, c.p, c.q, 3);
    cca::Options options;
    options.window = c.window;
    options.every = c.every;
    options.k = std::min(c.p, c.q);
    options.ridge = c.ridge;
    options.recenter = c.recenter;
    options.batch = 1;
    const auto one = test::track({{c.p, c.q}}, options, stream, c.chunk);
    options.batch = c.batch;
    const auto batched = test::track({{c.p, c.q}}, options, stream, c.chunk);
    ASSERT_EQ(one.size(), (500 - c.window) / c.every + 1);
    ASSERT_EQ(batched.size(), one.size());
    for (std::size_t i = 0; i < one.size(); ++i) {
      ASSERT_EQ(batched[i].t, one[i].t);
      ASSERT_TRUE(batched[i].recomputed);
      for (std::size_t j = 0; j < one[i].pairs[0].rho.size(); ++j)
        ASSERT_NEAR(batched[i].pairs[0].rho[j], one[i].pairs[0].rho[j], 1e-10) << "t " << one[i].t;
    }
    test::expect_equal_to_batch(batched, stream, c.p, c.q, c.window, c.ridge);
  }
}

TEST(Cca, BatchedStepsReportUpToASingularWindowThenRefuseIt) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const std::size_t p = 6, q = 8;
  const std::vector<double> stream = test::stream_turning_singular(random, p, q);
  for (const std::size_t batch : {std::size_t{1}, std::size_t{0}, std::size_t{7}}) {
    cca::Options options;
    options.k = 2;
    options.batch = batch;
    test::expect_refused_at_580({{p, q}}, options, stream);
  }
}

TEST(Cca, StaysExactOverLongDriftingStreams) {
  // 10^5 steps of a stream whose mean wanders far from where it started: the moments,
  // recomputed against the window's mean every 16 windows, stay exact.
  test::Random random;
  SCOPED_TRACE(random.seed());
  const std::size_t count = 100000, p = 3, q = 2;
  std::vector<double> stream = test::linear_stream(random, count, p, q, 2);
  std::normal_distribution<double> step(0.0, 5.0);
  double offset = 1e4;
  for (std::size_t t = 0; t < count; ++t) {
    offset += step(random.engine());
    for (std::size_t c = 0; c < p + q; ++c) stream[t * (p + q) + c] += offset * (c + 1);
  }
  cca::Options options;
  options.window = 100;
  options.every = 9973;
  options.k = 2;
  cca::Tracker tracker({{p, q}}, options);
  std::vector<cca::Report> reports;
  tracker.push(stream.data(), count, [&](const cca::Report& r) { reports.push_back(r); });
  EXPECT_EQ(tracker.stats().tuples, count);
  EXPECT_GE(tracker.stats().recenters, count / 1600 - 1);
  ASSERT_GE(reports.size(), 10u);
  test::expect_equal_to_batch(reports, stream, p, q, 100, 0.0);
}

TEST(Cca, SkipSolvesOnlyWhenTheChangePassesTheThreshold) {
  std::size_t count = 0;
  const std::vector<double> stream = test::digit_halves(count);
  cca::Options options;
  options.window = 300;
  options.k = 3;
  options.ridge = 1e-2;
  options.skip = 0;
  cca::Tracker all({{32, 32}}, options);
  std::vector<cca::Report> every;
  all.push(stream.data(), count, [&](const cca::Report& r) { every.push_back(r); });
  EXPECT_EQ(all.stats().solves, all.stats().reports);

  options.skip = 0.3;
  cca::Tracker some({{32, 32}}, options);
  std::vector<cca::Report> reports;
  some.push(stream.data(), count, [&](const cca::Report& r) { reports.push_back(r); });
  const cca::Stats& s = some.stats();
  EXPECT_EQ(s.reports, reports.size());
  EXPECT_EQ(s.solves + s.skipped, s.reports);
  EXPECT_GT(s.skipped, 0u);
  EXPECT_GT(s.solves, 1u);
  ASSERT_TRUE(reports.front().recomputed);
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (reports[i].recomputed) {
      for (std::size_t j = 0; j < 3; ++j) EXPECT_NEAR(reports[i].pairs[0].rho[j], every[i].pairs[0].rho[j], 1e-9);
    } else {
      EXPECT_EQ(reports[i].pairs[0].rho, reports[i - 1].pairs[0].rho) << "t " << reports[i].t;
    }
  }
}

TEST(Cca, ApproxKeepsEverythingAtTheSeedsShapeAndSamplesWhenTheBoundIsLoose) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const std::size_t p = 102, q = 102, n = 204;
  const std::vector<double> stream = test::linear_stream(random, 600, p, q, 4);
  cca::Options options;
  options.window = n;
  options.every = 50;
  options.k = 4;
  options.ridge = 1e-6;
  const auto exact = test::track({{p, q}}, options, stream);
  // epsilon 0.14: the Johnson-Lindenstrauss sample is larger than 102, every attribute stays.
  options.mode = cca::Mode::approx;
  options.epsilon = 0.14;
  options.compare_exact = true;
  const auto full = test::track({{p, q}}, options, stream);
  ASSERT_EQ(full.size(), exact.size());
  for (std::size_t i = 0; i < full.size(); ++i) {
    EXPECT_EQ(full[i].pairs[0].a_kept, p);
    for (std::size_t j = 0; j < 4; ++j) {
      EXPECT_NEAR(full[i].pairs[0].rho[j], exact[i].pairs[0].rho[j], 1e-9);
      EXPECT_NEAR(full[i].pairs[0].exact_rho[j], exact[i].pairs[0].rho[j], 1e-12);
    }
  }
  // epsilon 0.9 (alpha 0.5): a real sample; accuracy as the seed measures it, the mean
  // ratio of approximate to exact correlations, at least its 0.88.
  options.epsilon = 0.9;
  options.alpha = 0.5;
  const auto sampled = test::track({{p, q}}, options, stream);
  double ratio = 0;
  std::size_t terms = 0, kept = 0;
  for (const cca::Report& r : sampled) {
    const cca::PairResult& pair = r.pairs[0];
    kept += pair.a_kept + pair.b_kept;
    for (std::size_t j = 0; j < 4; ++j) {
      EXPECT_LE(pair.rho[j], pair.exact_rho[j] + 1e-9);  // a subset never correlates more
      ratio += pair.rho[j] / pair.exact_rho[j];
      ++terms;
    }
  }
  EXPECT_LT(kept, sampled.size() * (p + q) * 9 / 10);
  EXPECT_GE(ratio / terms, 0.88);
}

TEST(Cca, CanonicalVectorsWhitenAndCorrelateAsTheirRho) {
  std::size_t count = 0;
  const std::vector<double> stream = test::digit_halves(count);
  const std::size_t n = 400, p = 32, q = 32;
  const double ridge = 1e-2;
  cca::Options options;
  options.window = n;
  options.every = 400;
  options.k = 4;
  options.ridge = ridge;
  options.vectors = true;
  const auto reports = test::track({{p, q}}, options, stream);
  ASSERT_FALSE(reports.empty());
  for (const cca::Report& r : reports) {
    Eigen::MatrixXd x(n, p), y(n, q);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t c = 0; c < p; ++c) x(i, c) = stream[(r.t - n + i) * 64 + c];
      for (std::size_t c = 0; c < q; ++c) y(i, c) = stream[(r.t - n + i) * 64 + p + c];
    }
    x.rowwise() -= x.colwise().mean();
    y.rowwise() -= y.colwise().mean();
    Eigen::MatrixXd s11 = x.transpose() * x / double(n - 1), s22 = y.transpose() * y / double(n - 1);
    const Eigen::MatrixXd s12 = x.transpose() * y / double(n - 1);
    s11.diagonal().array() += ridge;
    s22.diagonal().array() += ridge;
    const cca::PairResult& pair = r.pairs[0];
    const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> a(
        pair.a_vectors.data(), 4, p),
        b(pair.b_vectors.data(), 4, q);
    const Eigen::MatrixXd aa = a * s11 * a.transpose(), bb = b * s22 * b.transpose(), ab = a * s12 * b.transpose();
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t j = 0; j < 4; ++j) {
        EXPECT_NEAR(aa(i, j), i == j ? 1.0 : 0.0, 1e-8);
        EXPECT_NEAR(bb(i, j), i == j ? 1.0 : 0.0, 1e-8);
        EXPECT_NEAR(ab(i, j), i == j ? pair.rho[i] : 0.0, 1e-8);
      }
  }
}

TEST(Cca, ManyStreamsGiveEveryPairsCorrelations) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  const std::vector<std::size_t> dims{4, 3, 5};
  const std::vector<double> stream = test::linear_stream(random, 400, 7, 5, 2);
  cca::Options options;
  options.window = 80;
  options.every = 40;
  options.k = 2;
  const auto reports = test::track({dims}, options, stream);
  ASSERT_EQ(reports.size(), 9u);
  const std::size_t offsets[] = {0, 4, 7};
  for (const cca::Report& r : reports) {
    ASSERT_EQ(r.pairs.size(), 3u);
    for (const cca::PairResult& pair : r.pairs) {
      const auto expected = test::batch_cca(stream, 12, r.t - 80, 80, dims[pair.a], dims[pair.b], 0.0, 2,
                                            offsets[pair.a], offsets[pair.b]);
      for (std::size_t j = 0; j < 2; ++j) EXPECT_NEAR(pair.rho[j], expected[j], 1e-6) << pair.a << "-" << pair.b;
    }
  }
}

TEST(Cca, SingularWindowsAskForARidge) {
  std::size_t count = 0;
  const std::vector<double> stream = test::digit_halves(count);
  cca::Options options;
  options.window = 200;
  const std::string message = test::input_error_of([&] { test::track({{32, 32}}, options, stream); });
  EXPECT_NE(message.find("tuple 200"), std::string::npos) << message;
  EXPECT_NE(message.find("singular covariance of X"), std::string::npos) << message;
  EXPECT_NE(message.find("--ridge"), std::string::npos) << message;
}

TEST(Cca, OptionsAreChecked) {
  cca::Options options;
  options.window = 1;
  EXPECT_THROW(cca::Tracker({{2, 2}}, options), UsageError);
  options.window = 10;
  options.k = 0;
  EXPECT_THROW(cca::Tracker({{2, 2}}, options), UsageError);
  options.k = 1;
  options.ridge = -1;
  EXPECT_THROW(cca::Tracker({{2, 2}}, options), UsageError);
  options.ridge = 0;
  EXPECT_THROW(cca::Tracker({{2}}, options), UsageError);
  options.mode = cca::Mode::approx;
  options.epsilon = 1.5;
  EXPECT_THROW(cca::Tracker({{2, 2}}, options), UsageError);
}

// --- readers ---

std::vector<double> read_all(cca::TupleReader& reader, std::size_t chunk = 3) {
  std::vector<double> all, part;
  while (reader.next(part, chunk) > 0) all.insert(all.end(), part.begin(), part.end());
  return all;
}

std::vector<double> read_text(const std::string& text, const std::string& name = "t.csv", std::size_t chunk = 3) {
  std::FILE* f = fmemopen(const_cast<char*>(text.data()), text.size(), "r");
  try {
    auto reader = cca::text_reader(f, name);
    std::vector<double> all = read_all(*reader, chunk);
    std::fclose(f);
    return all;
  } catch (...) {
    std::fclose(f);
    throw;
  }
}

TEST(CcaReaders, TextTakesCommasTabsSpacesAndMissingTuples) {
  EXPECT_EQ(read_text("1,2.5,-3\n4, 5 ,6e1\r\n"), (std::vector<double>{1, 2.5, -3, 4, 5, 60}));
  EXPECT_EQ(read_text("1\t2\n 3  4 \n\n5 6"), (std::vector<double>{1, 2, 3, 4, 0, 0, 5, 6}));
  EXPECT_EQ(read_text("\n1 2\n"), (std::vector<double>{0, 0, 1, 2}));
  EXPECT_TRUE(read_text("").empty());
}

TEST(CcaReaders, TextRefusesRaggedAndNonNumericLinesByNumber) {
  const auto refused = [](const std::string& text) { return test::input_error_of([&] { read_text(text); }); };
  std::string m = refused("1,2\n3,4\n5\n");
  EXPECT_NE(m.find("t.csv:3"), std::string::npos) << m;
  EXPECT_NE(m.find("expected 2 fields"), std::string::npos) << m;
  m = refused("1,2\n3,nan\n");
  EXPECT_NE(m.find("t.csv:2"), std::string::npos) << m;
  m = refused("1 2\nx 4\n");
  EXPECT_NE(m.find("t.csv:2"), std::string::npos) << m;
  EXPECT_NE(m.find("expected a number"), std::string::npos) << m;
  m = refused("1,2\n1e999,3\n");
  EXPECT_NE(m.find("t.csv:2"), std::string::npos) << m;
  m = refused(std::string("1,2\n3,\0", 7));
  EXPECT_NE(m.find("t.csv:2"), std::string::npos) << m;
}

TEST(CcaReaders, TextInLargeChunksParsesOnAllCoresAndRefusesTheFirstBadLine) {
  // 2,000 lines read 1,000 at a time (parsed in parallel): the values exact, and of
  // several bad lines the first is named, a line that cannot be read (NUL) included.
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::uniform_real_distribution<double> value(-1e3, 1e3);
  std::vector<double> expected;
  std::vector<std::string> lines;
  for (int i = 0; i < 2000; ++i) {
    std::string line;
    for (int c = 0; c < 3; ++c) {
      expected.push_back(i % 97 == 5 ? 0.0 : value(random.engine()));
      if (i % 97 != 5) line += fmt::format("{}{:.17g}", c == 0 ? "" : (i % 2 ? "," : "\t"), expected.back());
    }
    lines.push_back(line);  // every 97th line blank: a missing tuple
  }
  const auto join = [](const std::vector<std::string>& all) {
    std::string text;
    for (const std::string& line : all) text += line + "\n";
    return text;
  };
  EXPECT_EQ(read_text(join(lines), "t.csv", 1000), expected);
  const auto refused = [&](std::vector<std::string> damaged) {
    return test::input_error_of([&] { read_text(join(damaged), "t.csv", 1000); });
  };
  std::vector<std::string> bad = lines;
  bad[1499] = "1,2,x";
  bad[1799] = "1,2";
  std::string m = refused(bad);
  EXPECT_NE(m.find("t.csv:1500"), std::string::npos) << m;
  EXPECT_NE(m.find("field 3"), std::string::npos) << m;
  bad = lines;
  bad[1699] = std::string("1,2,\0", 5);
  m = refused(bad);
  EXPECT_NE(m.find("t.csv:1700"), std::string::npos) << m;
  EXPECT_NE(m.find("NUL"), std::string::npos) << m;
  bad[1199] = "1,2";
  m = refused(bad);
  EXPECT_NE(m.find("t.csv:1200"), std::string::npos) << m;
  EXPECT_NE(m.find("expected 3 fields"), std::string::npos) << m;
}

std::string binary_of(const std::vector<double>& rows, std::size_t columns) {
  char* data = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&data, &size);
  cca::BinaryWriter writer(f, columns);
  writer.add(rows.data(), rows.size() / columns);
  writer.finish();
  std::fclose(f);
  std::string out(data, size);
  std::free(data);
  return out;
}

std::vector<double> read_binary(const std::string& bytes) {
  std::FILE* f = fmemopen(const_cast<char*>(bytes.data()), bytes.size(), "r");
  try {
    auto reader = cca::binary_reader(f, "s.sks");
    std::vector<double> all = read_all(*reader);
    std::fclose(f);
    return all;
  } catch (...) {
    std::fclose(f);
    throw;
  }
}

TEST(CcaReaders, BinaryRoundTripsAndRefusesDamage) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  std::vector<double> rows;
  for (float v : random.floats(5000 * 3)) rows.push_back(v);  // float32 values: exact in .sks
  const std::string bytes = binary_of(rows, 3);
  EXPECT_EQ(read_binary(bytes), rows);
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t cut = static_cast<std::size_t>(random.integer(0, int(bytes.size()) - 1));
    const std::string m = test::input_error_of([&] { read_binary(bytes.substr(0, cut)); });
    EXPECT_NE(m.find("s.sks"), std::string::npos) << cut << ": " << m;
    std::string damaged = bytes;
    damaged[cut] = static_cast<char>(damaged[cut] ^ 0x10);
    const std::string d = test::input_error_of([&] { read_binary(damaged); });
    EXPECT_NE(d.find("s.sks"), std::string::npos) << cut << ": " << d;
  }
  EXPECT_NE(test::input_error_of([&] { read_binary(bytes + "x"); }).find("after the end"), std::string::npos);
}

TEST(CcaReaders, ZippedReadersMustEndTogether) {
  const std::string x = "1\n2\n3\n", y = "4 5\n6 7\n";
  std::FILE* fx = fmemopen(const_cast<char*>(x.data()), x.size(), "r");
  std::FILE* fy = fmemopen(const_cast<char*>(y.data()), y.size(), "r");
  std::vector<std::unique_ptr<cca::TupleReader>> readers;
  readers.push_back(cca::text_reader(fx, "x.csv"));
  readers.push_back(cca::text_reader(fy, "y.csv"));
  auto zipped = cca::zip_readers(std::move(readers), {"x.csv", "y.csv"});
  EXPECT_EQ(zipped->columns(), 3u);
  std::vector<double> part;
  ASSERT_EQ(zipped->next(part, 2), 2u);
  EXPECT_EQ(part, (std::vector<double>{1, 4, 5, 2, 6, 7}));
  const std::string m = test::input_error_of([&] { zipped->next(part, 2); });
  EXPECT_NE(m.find("y.csv"), std::string::npos) << m;
  EXPECT_NE(m.find("ends after 2 tuples"), std::string::npos) << m;
  zipped.reset();
  std::fclose(fx);
  std::fclose(fy);
}

TEST(CcaReaders, ColumnListsParse) {
  EXPECT_EQ(cca::parse_columns("0-3"), (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(cca::parse_columns("5,1-2,9"), (std::vector<std::size_t>{5, 1, 2, 9}));
  EXPECT_THROW(cca::parse_columns("3-1"), UsageError);
  EXPECT_THROW(cca::parse_columns("a"), UsageError);
  EXPECT_THROW(cca::parse_columns("1,,2"), UsageError);
  EXPECT_THROW(cca::parse_columns(""), UsageError);
}

}  // namespace
}  // namespace simkit
