// Query expressions and the gensim direction of a query.
#include <gtest/gtest.h>

#include <cmath>

#include "simkit/error.hpp"
#include "simkit/neighbors.hpp"

namespace simkit::neighbors {
namespace {

Model tiny_model() {
  return make_model({"king", "man", "woman", "queen", "e-mail", "c++", "zero", "King2"},
                    {1, 0, 0, /**/ 0, 2, 0, /**/ 0, 0, 3, /**/ 1, 1, 1, /**/ 1, 2, 3, /**/ 3, 2, 1, /**/ 0, 0, 0,
                     /**/ 1, 1, 0},
                    3);
}

std::string message_of(const std::string& line, const Model& model) {
  try {
    parse_query(line, model, "query 1");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Query, Expression) {
  const Model m = tiny_model();
  const Query q = parse_query("  king  -   man +woman ", m, "q");
  EXPECT_EQ(q.text, "king - man +woman");
  ASSERT_EQ(q.terms.size(), 3u);
  EXPECT_EQ(q.terms[0].row, 0u);
  EXPECT_EQ(q.terms[0].weight, 1.0f);
  EXPECT_EQ(q.terms[1].row, 1u);
  EXPECT_EQ(q.terms[1].weight, -1.0f);
  EXPECT_EQ(q.terms[2].row, 2u);
  EXPECT_EQ(q.terms[2].weight, 1.0f);
}

TEST(Query, WordsWithOperatorCharactersAndJuxtaposition) {
  const Model m = tiny_model();
  const Query q = parse_query("e-mail c++ -man", m, "q");
  ASSERT_EQ(q.terms.size(), 3u);
  EXPECT_EQ(q.terms[0].row, 4u);
  EXPECT_EQ(q.terms[1].row, 5u);
  EXPECT_EQ(q.terms[1].weight, 1.0f) << "words side by side are added";
  EXPECT_EQ(q.terms[2].row, 1u);
  EXPECT_EQ(q.terms[2].weight, -1.0f) << "'-man' is an operator glued to a word";
  EXPECT_NE(message_of("king - -man", m), "") << "an operator, then a glued one";
}

TEST(Query, Errors) {
  const Model m = tiny_model();
  EXPECT_NE(message_of("", m).find("empty query"), std::string::npos);
  EXPECT_NE(message_of("king -", m).find("ends with an operator"), std::string::npos);
  EXPECT_NE(message_of("king + - man", m).find("two operators in a row"), std::string::npos);
  const std::string unknown = message_of("king - prince", m);
  EXPECT_NE(unknown.find("query 1: unknown word 'prince' in 'king - prince'"), std::string::npos) << unknown;
  EXPECT_NE(message_of("KING", m).find("the model has 'king'"), std::string::npos);
}

TEST(Query, DirectionIsNormalisedMeanOfUnitVectors) {
  const Model m = tiny_model();
  const std::vector<float> v = query_vector(m, parse_query("king - man + woman", m, "q"), "q");
  // unit(king) - unit(man) + unit(woman) = (1, -1, 1), normalised.
  const float s = 1.0f / std::sqrt(3.0f);
  EXPECT_FLOAT_EQ(v[0], s);
  EXPECT_FLOAT_EQ(v[1], -s);
  EXPECT_FLOAT_EQ(v[2], s);
  EXPECT_THROW(query_vector(m, parse_query("king - king", m, "q"), "q"), InputError);
  EXPECT_THROW(query_vector(m, parse_query("zero", m, "q"), "q"), InputError);
}

}  // namespace
}  // namespace simkit::neighbors
