#include "text/number_text.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "simkit/error.hpp"

namespace simkit::detail {

NumberParse parse_float(std::string_view field, float& value) {
  const char* begin = field.data();
  const char* end = begin + field.size();
  if (begin != end && *begin == '+') ++begin;  // from_chars does not take a plus sign
  auto [stop, err] = std::from_chars(begin, end, value);
  if (stop != end || begin == end) return NumberParse::NotANumber;
  if (err == std::errc::result_out_of_range) {
    // Underflow to a subnormal or zero is a fine value; overflow is not.
    const std::string copy(begin, end);
    const double wide = std::strtod(copy.c_str(), nullptr);
    if (!std::isfinite(wide) || std::fabs(wide) > 3.4028234663852886e38) return NumberParse::OutOfRange;
    value = static_cast<float>(wide);
    return NumberParse::Ok;
  }
  if (err != std::errc()) return NumberParse::NotANumber;
  if (!std::isfinite(value)) return NumberParse::NotFinite;
  return NumberParse::Ok;
}

NumberParse parse_double(std::string_view field, double& value) {
  const char* begin = field.data();
  const char* end = begin + field.size();
  if (begin != end && *begin == '+') ++begin;
  auto [stop, err] = std::from_chars(begin, end, value);
  if (stop != end || begin == end) return NumberParse::NotANumber;
  if (err == std::errc::result_out_of_range) {
    // Underflow is a fine value (strtod gives the nearest); overflow reads as infinite.
    const std::string copy(begin, end);
    value = std::strtod(copy.c_str(), nullptr);
    return std::isfinite(value) ? NumberParse::Ok : NumberParse::NotFinite;
  }
  if (err != std::errc()) return NumberParse::NotANumber;
  if (!std::isfinite(value)) return NumberParse::NotFinite;
  return NumberParse::Ok;
}

std::string describe(NumberParse result, std::string_view field) {
  switch (result) {
    case NumberParse::Ok: return "ok";
    case NumberParse::NotANumber: return "expected a number, found " + quote(field);
    case NumberParse::NotFinite: return "NaN or infinite value " + quote(field) + " is not allowed";
    case NumberParse::OutOfRange: return "value " + quote(field) + " is out of the float32 range";
  }
  return "bad value";
}

void append_shortest(std::string& out, float value) {
  char buffer[32];
  auto [end, err] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, err == std::errc() ? end : buffer);
}

}  // namespace simkit::detail
