// The randomized truncated SVD's checks and its choice of device.
#include <cmath>

#include <fmt/format.h>

#include "embed/svd.hpp"
#include "simkit/error.hpp"

namespace simkit::embed {

std::size_t sketch_width(const CsrView& a, const SvdOptions& options) {
  if (options.rank == 0) throw UsageError("--dim must be at least 1");
  if (options.power_iterations < 0 || options.power_iterations > 16)
    throw UsageError("--power-iterations must be 0..16");
  const std::size_t l = options.rank + options.oversampling;
  const std::size_t side = std::min(a.rows, a.cols);
  if (l > side)
    throw UsageError(fmt::format("a truncated SVD of rank {} (+ {} oversampling) needs a matrix of at least {} x {}; "
                                 "this one is {} x {}: use a larger corpus or a smaller --dim",
                                 options.rank, options.oversampling, l, l, a.rows, a.cols));
  if (l > 0x7fffffffull / 8 || a.rows > 0x7fffffffull || a.cols > 0x7fffffffull)
    throw UsageError("the matrix or the rank is too large for 32-bit LAPACK sizes");
  return l;
}

namespace detail {

std::vector<float> eigen_weights(const std::vector<float>& s, double eig) {
  std::vector<float> weights(s.size());
  for (std::size_t i = 0; i < s.size(); ++i)
    weights[i] = eig == 0 ? 1.0f : static_cast<float>(std::pow(static_cast<double>(s[i]), eig));
  return weights;
}

}  // namespace detail

Svd truncated_svd(const CsrView& a, const SvdOptions& options) {
  const std::size_t l = sketch_width(a, options);
  return options.device >= 0 ? detail::truncated_svd_gpu(a, options, l) : detail::truncated_svd_cpu(a, options, l);
}

}  // namespace simkit::embed
