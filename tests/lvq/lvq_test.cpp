// GLVQ on the CPU: one batch against the float64 reference, initialisation, training on
// the real digits sample, prediction, the data readers and the two file formats.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "lvq/trainer.hpp"
#include "lvq_fixture.hpp"
#include "simkit/error.hpp"
#include "simkit/lvq.hpp"
#include "test_support.hpp"

namespace simkit {
namespace {

// Runs one batch of `order` through `trainer` and returns its losses.
std::vector<float> one_batch(lvq::detail::Trainer& trainer, const std::vector<std::uint32_t>& order, std::size_t batch,
                             float eta) {
  std::vector<float> losses(order.size());
  std::vector<std::uint8_t> errors(order.size());
  const std::size_t batches = (order.size() + batch - 1) / batch;
  const std::vector<float> etas(batches, eta);
  trainer.epoch(order, batch, etas, losses.data(), errors.data());
  return losses;
}

TEST(Lvq, OneBatchEqualsTheFloat64Reference) {
  test::Random random;
  SCOPED_TRACE(random.seed());
  int moved = 0;
  for (const std::size_t per_class : {1, 3}) {
    for (const std::size_t batch : {1, 7, 40}) {
      const lvq::Dataset data = test::blobs(random, 40, 5, 4);
      lvq::TrainOptions options;
      options.per_class = per_class;
      options.xi = 2.5;
      const lvq::Model model = lvq::initial_model(data, options);
      std::vector<std::uint32_t> order(data.rows);
      std::iota(order.begin(), order.end(), 0u);
      std::shuffle(order.begin(), order.end(), random.engine());
      order.resize(batch);
      const float eta = 0.7f;
      auto trainer = lvq::detail::cpu_trainer(data, model, options);
      const std::vector<float> losses = one_batch(*trainer, order, batch, eta);
      std::vector<double> expected(model.prototypes.begin(), model.prototypes.end());
      const std::vector<double> expected_losses = test::reference_batch(data, per_class, order, eta, options.xi, expected);
      std::vector<float> got(model.prototypes.size());
      trainer->read_prototypes(got.data());
      for (std::size_t i = 0; i < got.size(); ++i)
        EXPECT_NEAR(got[i], expected[i], 1e-4 * (1 + std::fabs(expected[i]))) << "P " << per_class << " mb " << batch << " at " << i;
      for (std::size_t i = 0; i < batch; ++i) EXPECT_NEAR(losses[i], expected_losses[i], 1e-5);
      // (A sample on its genuine prototype moves nothing: d_c = 0.)
      moved += std::vector<double>(model.prototypes.begin(), model.prototypes.end()) != expected;
    }
  }
  EXPECT_GE(moved, 4) << "the reference should not be trivially the start";
}

TEST(Lvq, InitialPrototypesAreClassMeansOrInsideTheirClass) {
  test::Random random;
  const lvq::Dataset data = test::blobs(random, 90, 3, 3);
  lvq::TrainOptions options;
  const lvq::Model means = lvq::initial_model(data, options);
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t t = 0; t < 3; ++t) {
      double sum = 0;
      for (std::size_t r = c; r < 90; r += 3) sum += data.features[r * 3 + t];
      EXPECT_NEAR(means.prototypes[c * 3 + t], sum / 30, 1e-4);
    }
  options.per_class = 4;
  const lvq::Model k = lvq::initial_model(data, options);
  ASSERT_EQ(k.count(), 12u);
  const lvq::Model again = lvq::initial_model(data, options);
  EXPECT_EQ(k.prototypes, again.prototypes);  // seeded: the same starts
  for (std::size_t j = 0; j < 12; ++j)  // distinct centres
    for (std::size_t i = 0; i < j; ++i)
      if (i / 4 == j / 4) {
        EXPECT_FALSE(std::equal(&k.prototypes[i * 3], &k.prototypes[i * 3 + 3], &k.prototypes[j * 3])) << i << " " << j;
      }
}

TEST(Lvq, BeatsNearestCentroidOnRawDigits) {
  const lvq::Dataset train = test::digits("train");
  const lvq::Dataset test_set = test::digits("test");
  ASSERT_EQ(train.rows, 1257u);
  ASSERT_EQ(train.dims, 64u);
  ASSERT_EQ(train.classes.size(), 10u);
  lvq::TrainOptions options;
  const lvq::Model centroids = lvq::initial_model(train, options);
  const auto nearest = lvq::predict(centroids, test_set);
  const double centroid_accuracy = lvq::score(centroids, test_set, nearest, 1).accuracy;
  EXPECT_NEAR(centroid_accuracy, 0.90, 0.02);  // scikit-learn's NearestCentroid: 0.9037
  options.per_class = 2;
  std::vector<lvq::EpochStats> curve;
  const lvq::Model model = lvq::train(train, &test_set, options, [&](const lvq::EpochStats& e) { curve.push_back(e); });
  ASSERT_EQ(curve.size(), 30u);
  EXPECT_LT(curve.back().loss, curve.front().loss);
  const double accuracy = lvq::score(model, test_set, lvq::predict(model, test_set), 1).accuracy;
  EXPECT_GT(accuracy, centroid_accuracy + 0.04);
  EXPECT_NEAR(1 - accuracy, curve.back().test_error, 1e-12);
  // Standardised features and plain SGD learn too.
  options.standardize = true;
  options.batch = 1;
  options.epochs = 10;
  const lvq::Model sgd = lvq::train(train, &test_set, options);
  EXPECT_EQ(sgd.mean.size(), 64u);
  EXPECT_GT(lvq::score(sgd, test_set, lvq::predict(sgd, test_set), 1).accuracy, centroid_accuracy);
}

TEST(Lvq, PatienceKeepsTheBestModelAndHoldOutSplits) {
  lvq::Dataset train = test::digits("train");
  const lvq::Dataset held = lvq::hold_out(train, 0.2, 7);
  EXPECT_EQ(held.rows, 251u);  // 0.2 x 1257, rounded
  EXPECT_EQ(train.rows, 1006u);
  EXPECT_EQ(held.classes, train.classes);
  lvq::TrainOptions options;
  options.per_class = 2;
  options.patience = 2;
  options.learning_rate = 0.2;  // a large step: the test error wanders, so patience has work
  std::vector<lvq::EpochStats> curve;
  const lvq::Model model = lvq::train(train, &held, options, [&](const lvq::EpochStats& e) { curve.push_back(e); });
  double best = 1;
  for (const auto& e : curve) best = std::min(best, e.test_error);
  const double error = 1 - lvq::score(model, held, lvq::predict(model, held), 1).accuracy;
  EXPECT_NEAR(error, best, 1e-12);
  if (curve.size() < options.epochs) {  // stopped early: the last `patience` epochs were no better
    for (std::size_t e = curve.size() - options.patience; e < curve.size(); ++e) EXPECT_GE(curve[e].test_error, best);
  }
}

TEST(Lvq, PredictTopClassesMatchBruteForce) {
  test::Random random;
  const lvq::Dataset data = test::blobs(random, 200, 6, 7);
  lvq::TrainOptions options;
  options.per_class = 3;
  options.epochs = 3;
  const lvq::Model model = lvq::train(data, nullptr, options);
  const std::size_t top = 4;
  const auto got = lvq::predict(model, data, top);
  for (std::size_t r = 0; r < data.rows; ++r) {
    std::vector<double> best(7, 1e300);
    for (std::size_t j = 0; j < model.count(); ++j) {
      double d = 0;
      for (std::size_t t = 0; t < 6; ++t) {
        const double diff = double(data.features[r * 6 + t]) - model.prototypes[j * 6 + t];
        d += diff * diff;
      }
      best[j / 3] = std::min(best[j / 3], d);
    }
    std::vector<std::uint32_t> ids(7);
    std::iota(ids.begin(), ids.end(), 0u);
    std::stable_sort(ids.begin(), ids.end(), [&](auto a, auto b) { return best[a] < best[b]; });
    for (std::size_t k = 0; k < top; ++k) {
      if (k > 0 && std::fabs(best[ids[k]] - best[ids[k - 1]]) < 1e-3) continue;  // near-ties may swap
      EXPECT_EQ(got[r * top + k], ids[k]) << "row " << r << " rank " << k;
    }
  }
}

TEST(Lvq, ReadsCsvTsvNpyIdxAndSkl) {
  test::TempDir dir;
  test::write_file(dir / "a.csv", "label,x,y\ncat,1,2\ndog,3.5,-4\n\ncat,0,1e3\n");
  const lvq::Dataset csv = lvq::read_dataset((dir / "a.csv").string());
  EXPECT_EQ(csv.rows, 3u);
  EXPECT_EQ(csv.dims, 2u);
  EXPECT_EQ(csv.classes, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(csv.labels, (std::vector<std::uint32_t>{0, 1, 0}));
  EXPECT_EQ(csv.features, (std::vector<float>{1, 2, 3.5f, -4, 0, 1000}));
  test::write_file(dir / "b.tsv", "1\t2\t10\r\n3\t4\t9\r\n5\t6\t10\r\n");
  lvq::ReadOptions last;
  last.label_column = lvq::LabelColumn::last;
  const lvq::Dataset tsv = lvq::read_dataset((dir / "b.tsv").string(), last);
  EXPECT_EQ(tsv.classes, (std::vector<std::string>{"9", "10"}));  // numbers by value
  EXPECT_EQ(tsv.labels, (std::vector<std::uint32_t>{1, 0, 1}));
  EXPECT_EQ(tsv.features, (std::vector<float>{1, 2, 3, 4, 5, 6}));

  // .npy float64 with a labels file; idx ubyte images with idx1 labels found beside them.
  std::string npy = "\x93NUMPY\x01";
  npy += '\0';
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
  header.resize(118 - 10 - 1, ' ');
  header += '\n';
  npy += static_cast<char>(header.size());
  npy += '\0';
  npy += header;
  for (const double v : {1.0, 2.0, 3.0, -1.0, 0.5, 0.25}) npy.append(reinterpret_cast<const char*>(&v), 8);
  test::write_file(dir / "x.npy", npy);
  test::write_file(dir / "y.txt", "b\na\n");
  lvq::ReadOptions with_labels;
  with_labels.labels_path = (dir / "y.txt").string();
  const lvq::Dataset from_npy = lvq::read_dataset((dir / "x.npy").string(), with_labels);
  EXPECT_EQ(from_npy.features, (std::vector<float>{1, 2, 3, -1, 0.5f, 0.25f}));
  EXPECT_EQ(from_npy.labels, (std::vector<std::uint32_t>{1, 0}));
  const std::string images = std::string("\0\0\x08\x03\0\0\0\x02\0\0\0\x02\0\0\0\x02", 16) +
                             std::string("\x01\x02\x03\xff\x00\x10\x20\x30", 8);
  test::write_file(dir / "t-images-idx3-ubyte", images);
  test::write_file(dir / "t-labels-idx1-ubyte", std::string("\0\0\x08\x01\0\0\0\x02\x07\x03", 10));
  const lvq::Dataset idx = lvq::read_dataset((dir / "t-images-idx3-ubyte").string());
  EXPECT_EQ(idx.dims, 4u);
  EXPECT_EQ(idx.features, (std::vector<float>{1, 2, 3, 255, 0, 16, 32, 48}));
  EXPECT_EQ(idx.classes, (std::vector<std::string>{"3", "7"}));
  EXPECT_EQ(idx.labels, (std::vector<std::uint32_t>{1, 0}));

  // .skl round trip, labelled and not.
  lvq::write_dataset(csv, (dir / "a.skl").string());
  const lvq::Dataset back = lvq::read_dataset((dir / "a.skl").string());
  EXPECT_EQ(back.features, csv.features);
  EXPECT_EQ(back.labels, csv.labels);
  EXPECT_EQ(back.classes, csv.classes);
  lvq::Dataset plain = csv;
  plain.labels.clear();
  lvq::write_dataset(plain, (dir / "p.skl").string());
  EXPECT_FALSE(lvq::read_dataset((dir / "p.skl").string()).labelled());

  // A model's classes and dims decide: rows without a label, unknown labels refused.
  lvq::ReadOptions model_view;
  model_view.dims = 2;
  const std::vector<std::string> classes{"cat", "dog", "eel"};
  model_view.classes = &classes;
  test::write_file(dir / "u.csv", "1,2\n3,4\n");
  EXPECT_FALSE(lvq::read_dataset((dir / "u.csv").string(), model_view).labelled());
  EXPECT_EQ(lvq::read_dataset((dir / "a.csv").string(), model_view).labels, (std::vector<std::uint32_t>{0, 1, 0}));
  test::write_file(dir / "v.csv", "cat,1,2\nfox,3,4\n");
  EXPECT_NE(test::input_error_of([&] { lvq::read_dataset((dir / "v.csv").string(), model_view); }).find("v.csv:2"),
            std::string::npos);
}

TEST(Lvq, BadInputIsRefusedWithItsPlace) {
  test::TempDir dir;
  const auto error_of = [&](const std::string& name, const std::string& text) {
    test::write_file(dir / name, text);
    return test::input_error_of([&] { lvq::read_dataset((dir / name).string()); });
  };
  EXPECT_NE(error_of("ragged.csv", "a,1,2\nb,3\n").find("ragged.csv:2"), std::string::npos);
  EXPECT_NE(error_of("ragged.csv", "a,1,2\nb,3\n").find("ragged"), std::string::npos);
  EXPECT_NE(error_of("nan.csv", "a,1,2\nb,nan,3\n").find("nan.csv:2:2"), std::string::npos);
  EXPECT_NE(error_of("word.csv", "a,1,2\nb,x,3\n").find("expected a number"), std::string::npos);
  EXPECT_NE(error_of("nolabel.csv", "a,1,2\n,3,4\n").find("missing label"), std::string::npos);
  EXPECT_NE(error_of("empty.csv", "").find("no data rows"), std::string::npos);
  EXPECT_NE(error_of("header-only.csv", "label,x\n").find("no data rows"), std::string::npos);
  EXPECT_NE(error_of("short-idx-images-idx3-ubyte", std::string("\0\0\x08\x03\0\0\0\x09\0\0\0\x02\0\0\0\x02\x01", 17))
                .find("idx sizes"),
            std::string::npos);
  // Training needs two classes, each with enough samples for its prototypes.
  test::write_file(dir / "one.csv", "a,1\na,2\n");
  const lvq::Dataset one = lvq::read_dataset((dir / "one.csv").string());
  EXPECT_NE(test::input_error_of([&] { lvq::initial_model(one, {}); }).find("at least 2 classes"), std::string::npos);
  test::write_file(dir / "few.csv", "a,1\na,2\nb,3\n");
  lvq::TrainOptions two;
  two.per_class = 2;
  const lvq::Dataset few = lvq::read_dataset((dir / "few.csv").string());
  EXPECT_NE(test::input_error_of([&] { lvq::initial_model(few, two); }).find("has 1 sample, fewer than the 2"),
            std::string::npos);
}

TEST(Lvq, ModelRoundTripAndDamage) {
  test::TempDir dir;
  test::Random random;
  const lvq::Dataset data = test::blobs(random, 60, 4, 3);
  lvq::TrainOptions options;
  options.per_class = 2;
  options.standardize = true;
  options.epochs = 2;
  const lvq::Model model = lvq::train(data, nullptr, options);
  const std::string path = (dir / "m.skq").string();
  lvq::write_model(model, path);
  const lvq::Model back = lvq::read_model(path);
  EXPECT_EQ(back.prototypes, model.prototypes);
  EXPECT_EQ(back.mean, model.mean);
  EXPECT_EQ(back.scale, model.scale);
  EXPECT_EQ(back.classes, model.classes);
  EXPECT_EQ(back.per_class, 2u);
  const std::string bytes = test::read_file(path);
  EXPECT_NE(test::input_error_of([&] { lvq::parse_model(bytes.substr(0, bytes.size() - 9), "cut"); }).find("cut"),
            std::string::npos);
  std::string flipped = bytes;
  flipped[flipped.size() - 20] ^= 1;
  EXPECT_NE(test::input_error_of([&] { lvq::parse_model(flipped, "f"); }).find("checksum"), std::string::npos);
  EXPECT_NE(test::input_error_of([&] { lvq::parse_skl(bytes, "m"); }).find("wrong magic"), std::string::npos);
}

}  // namespace
}  // namespace simkit
