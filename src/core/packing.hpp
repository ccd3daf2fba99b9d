// Internal: plain values and vectors packed into the bytes that the collectives of
// simkit/cluster.hpp carry between the ranks of one run (the same build on every rank:
// native byte order, no versions). An unpacker that runs short throws Failure.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "simkit/error.hpp"

namespace simkit::detail {

class Packer {
 public:
  template <typename T>
  void value(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <typename T, typename Allocator>
  void vector(const std::vector<T, Allocator>& v) {
    value(static_cast<std::uint64_t>(v.size()));
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  void string(std::string_view s) {
    value(static_cast<std::uint64_t>(s.size()));
    bytes_.append(s);
  }
  std::string& bytes() noexcept { return bytes_; }

 private:
  std::string bytes_;
};

class Unpacker {
 public:
  explicit Unpacker(std::string_view bytes) : in_(bytes) {}
  template <typename T>
  T value() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  template <typename T, typename Allocator = std::allocator<T>>
  std::vector<T, Allocator> vector() {
    const auto n = value<std::uint64_t>();
    if (n > in_.size() / sizeof(T)) short_message();
    std::vector<T, Allocator> v(n);
    if (n > 0) std::memcpy(v.data(), take(n * sizeof(T)), n * sizeof(T));
    return v;
  }
  std::string string() {
    const auto n = value<std::uint64_t>();
    if (n > in_.size()) short_message();
    return std::string(take(n), n);
  }
  bool done() const noexcept { return in_.empty(); }

 private:
  const char* take(std::size_t n) {
    if (n > in_.size()) short_message();
    const char* at = in_.data();
    in_.remove_prefix(n);
    return at;
  }
  [[noreturn]] static void short_message() { throw Failure("a message between ranks was cut short"); }
  std::string_view in_;
};

}  // namespace simkit::detail
