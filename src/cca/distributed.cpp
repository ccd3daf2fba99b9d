// The stream pairs of many-stream CCA over several workers (simkit/cca.hpp): each worker
// tracks the same tuples and solves its share of the pairs; the shares' reports are put
// back together in pair order, on rank 0 under mpirun (simkit/cluster.hpp).
#include <algorithm>
#include <cstdint>
#include <iterator>

#include <fmt/format.h>

#include "core/packing.hpp"
#include "simkit/cca.hpp"
#include "simkit/cluster.hpp"

namespace simkit::cca {

namespace {

void pack(detail::Packer& out, const Report& report) {
  out.value(report.t);
  out.value(static_cast<std::uint8_t>(report.recomputed));
  out.value(static_cast<std::uint64_t>(report.pairs.size()));
  for (const PairResult& p : report.pairs) {
    out.value(static_cast<std::uint64_t>(p.a));
    out.value(static_cast<std::uint64_t>(p.b));
    out.value(static_cast<std::uint64_t>(p.a_kept));
    out.value(static_cast<std::uint64_t>(p.b_kept));
    out.vector(p.rho);
    out.vector(p.a_vectors);
    out.vector(p.b_vectors);
    out.vector(p.exact_rho);
  }
}

Report unpack_report(detail::Unpacker& in) {
  Report report;
  report.t = in.value<std::uint64_t>();
  report.recomputed = in.value<std::uint8_t>() != 0;
  report.pairs.resize(in.value<std::uint64_t>());
  for (PairResult& p : report.pairs) {
    p.a = in.value<std::uint64_t>();
    p.b = in.value<std::uint64_t>();
    p.a_kept = in.value<std::uint64_t>();
    p.b_kept = in.value<std::uint64_t>();
    p.rho = in.vector<double>();
    p.a_vectors = in.vector<double>();
    p.b_vectors = in.vector<double>();
    p.exact_rho = in.vector<double>();
  }
  return report;
}

std::string pack(const Reports& mine) {
  detail::Packer out;
  out.value(static_cast<std::uint64_t>(mine.reports.size()));
  for (const Report& report : mine.reports) pack(out, report);
  out.value(static_cast<std::uint8_t>(mine.singular.has_value()));
  if (mine.singular) {
    out.value(mine.singular->step());
    out.value(static_cast<std::uint64_t>(mine.singular->pair()));
    out.string(mine.singular->reason());
  }
  return std::move(out.bytes());
}

std::optional<SingularWindow> unpack_singular(detail::Unpacker& in) {
  if (in.value<std::uint8_t>() == 0) return std::nullopt;
  const auto step = in.value<std::uint64_t>();
  const auto pair = in.value<std::uint64_t>();
  return SingularWindow(step, pair, in.string());
}

Reports unpack(std::string_view bytes) {
  detail::Unpacker in(bytes);
  Reports out;
  out.reports.resize(in.value<std::uint64_t>());
  for (Report& report : out.reports) report = unpack_report(in);
  out.singular = unpack_singular(in);
  return out;
}

}  // namespace

PairRange share_pairs(const Layout& layout, std::size_t part, std::size_t parts) {
  parts = std::max<std::size_t>(parts, 1);
  part = std::min(part, parts - 1);
  // cost_before[i]: the solving cost of pairs [0, i).
  std::vector<double> cost_before{0};
  for (std::size_t a = 0; a < layout.dims.size(); ++a)
    for (std::size_t b = a + 1; b < layout.dims.size(); ++b) {
      const double width = static_cast<double>(layout.dims[a] + layout.dims[b]);
      cost_before.push_back(cost_before.back() + width * width * width);
    }
  const std::size_t pairs = cost_before.size() - 1;
  const auto bound = [&](std::size_t p) -> std::size_t {
    if (p == 0) return 0;
    if (p == parts) return pairs;
    const double target = cost_before.back() * static_cast<double>(p) / static_cast<double>(parts);
    return static_cast<std::size_t>(std::lower_bound(cost_before.begin(), cost_before.end(), target) -
                                    cost_before.begin());
  };
  return {bound(part), bound(part + 1)};
}

Reports merge_reports(std::vector<Reports> shares) {
  if (shares.size() == 1) return std::move(shares[0]);
  Reports out;
  // The singular window one tracker meets first: the earliest step, then the lowest pair.
  for (Reports& share : shares)
    if (share.singular && (!out.singular || std::make_pair(share.singular->step(), share.singular->pair()) <
                                                std::make_pair(out.singular->step(), out.singular->pair())))
      out.singular = share.singular;
  // Every share reported the steps before the window that stopped it, and no more: the
  // steps all of them reached are those before the first such window.
  std::size_t steps = SIZE_MAX;
  for (const Reports& share : shares) steps = std::min(steps, share.reports.size());
  for (std::size_t j = 0; j < steps; ++j) {
    Report report = std::move(shares[0].reports[j]);
    for (std::size_t s = 1; s < shares.size(); ++s) {
      Report& more = shares[s].reports[j];
      if (more.t != report.t || more.recomputed != report.recomputed)
        throw Failure(fmt::format("CCA workers out of step: step {} beside step {}", more.t, report.t));
      std::move(more.pairs.begin(), more.pairs.end(), std::back_inserter(report.pairs));
    }
    out.reports.push_back(std::move(report));
  }
  return out;
}

Reports gather_reports(Reports mine) {
  if (cluster::size() == 1) return mine;
  const std::vector<std::string> parts = cluster::gather(pack(mine));
  Reports out;
  if (cluster::root()) {
    std::vector<Reports> shares;
    for (const std::string& part : parts) shares.push_back(unpack(part));
    out = merge_reports(std::move(shares));
  }
  // Whether (and where) to stop, from rank 0 to every rank.
  std::string verdict;
  if (cluster::root()) verdict = pack(Reports{{}, out.singular});
  out.singular = unpack(cluster::broadcast(std::move(verdict))).singular;
  return out;
}

}  // namespace simkit::cca
