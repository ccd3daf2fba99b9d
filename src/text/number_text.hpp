// Reading and writing float32 values as text: strict (the whole field, finite values
// only) and exact (the shortest form that reads back to the same bits).
#pragma once

#include <string>
#include <string_view>

namespace simkit::detail {

enum class NumberParse { Ok, NotANumber, NotFinite, OutOfRange };

NumberParse parse_float(std::string_view field, float& value);
NumberParse parse_double(std::string_view field, double& value);
// "expected a number, found 'x'" and the like, for error messages.
std::string describe(NumberParse result, std::string_view field);
void append_shortest(std::string& out, float value);

}  // namespace simkit::detail
