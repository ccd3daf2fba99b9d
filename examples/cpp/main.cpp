// A small program on simkit's C++ library: fuzzy hashes, top k of vectors, nearest words,
// and an AND query over posting lists. Its output is checked by simkit's tests.
#include <cstdio>
#include <string>
#include <vector>

#include <simkit/ctph.hpp>
#include <simkit/dense_topk.hpp>
#include <simkit/error.hpp>
#include <simkit/neighbors.hpp>
#include <simkit/postings.hpp>

namespace {

std::span<const unsigned char> bytes(const std::string& text) {
  return {reinterpret_cast<const unsigned char*>(text.data()), text.size()};
}

}  // namespace

int main() {
  try {
    std::string text;
    for (int i = 0; i < 200; ++i) text += "The quick brown fox jumps over the lazy dog " + std::to_string(i % 7) + ". ";
    std::string edited = text;
    edited.replace(1000, 20, "a slow green turtle");
    const std::string a = simkit::ctph::hash(bytes(text)), b = simkit::ctph::hash(bytes(edited));
    std::printf("hash %s\nhash %s\nscore %d\n", a.c_str(), b.c_str(), simkit::ctph::compare(a, b));

    // Each of three points finds its nearest of five (squared distances).
    const std::vector<float> points{0, 0, 5, 5, 9, 1}, centres{1, 1, 10, 0, 4, 6, 0, 9, -3, -3};
    simkit::DenseTopKOptions options;
    options.k = 2;
    options.metric = simkit::Metric::l2;
    const simkit::TopKLists near = simkit::dense_top_k(points.data(), 3, centres.data(), 5, 2, options);
    for (std::size_t r = 0; r < near.rows; ++r)
      std::printf("point %zu: centre %u (%.1f), then %u (%.1f)\n", r, near.row_indices(r)[0], near.row_scores(r)[0],
                  near.row_indices(r)[1], near.row_scores(r)[1]);

    const simkit::neighbors::Model model = simkit::neighbors::make_model(
        {"cat", "dog", "car", "truck"}, {1, 0.9f, 0.1f, 0.95f, 1, 0.05f, 0, 0.1f, 1, 0.05f, 0.2f, 0.9f}, 3);
    simkit::neighbors::SearchOptions search;
    search.k = 1;
    simkit::neighbors::Searcher searcher(model, search);
    for (const char* word : {"cat", "car"}) {
      const simkit::neighbors::Query query = simkit::neighbors::parse_query(word, model, "example");
      const auto answer = searcher.search(std::span(&query, 1));
      std::printf("nearest to %s: %s\n", word, std::string(model.word(answer[0][0].row)).c_str());
    }

    const simkit::postings::Index index =
        simkit::postings::index_texts({"the cat sat", "a dog ran", "the dog sat", "the cat ran"}, {});
    const simkit::postings::Queries queries =
        simkit::postings::parse_queries("the sat\ndog\n", "queries", index, true);
    const simkit::postings::Results results =
        simkit::postings::intersect_cpu(index, queries, simkit::postings::Algorithm::automatic);
    for (std::size_t q = 0; q < queries.size(); ++q) {
      std::printf("query %zu:", q + 1);
      for (const simkit::postings::DocId id : results.answer(q)) std::printf(" %u", id);
      std::printf("\n");
    }
    return 0;
  } catch (const simkit::Error& e) {
    std::fprintf(stderr, "simkit_example: %s\n", e.what());
    return 2;
  }
}
