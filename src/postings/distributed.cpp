// Posting lists over several workers (simkit/postings.hpp): the documents shared out,
// each worker intersecting its shard of every list, the answers put back together in
// document order; queries from rank 0, answers to rank 0 (simkit/cluster.hpp).
#include <algorithm>

#include "core/packing.hpp"
#include "simkit/cluster.hpp"
#include "simkit/pairwise.hpp"
#include "simkit/postings.hpp"
#include "simkit/threads.hpp"

namespace simkit::postings {

namespace {

// Where the ids >= x begin in a list (x may pass the largest id).
std::size_t first_at_least(std::span<const DocId> list, std::uint64_t x) {
  return static_cast<std::size_t>(
      std::lower_bound(list.begin(), list.end(), x, [](DocId id, std::uint64_t v) { return id < v; }) - list.begin());
}

std::string pack(const Results& results) {
  detail::Packer out;
  out.vector(results.counts);
  out.vector(results.ids);
  return std::move(out.bytes());
}

Results unpack(std::string_view bytes, bool count_only) {
  detail::Unpacker in(bytes);
  Results results;
  results.counts = in.vector<std::uint64_t>();
  results.ids = in.vector<DocId, IdVector::allocator_type>();
  for (const std::uint64_t count : results.counts)
    results.offsets.push_back(results.offsets.back() + (count_only ? 0 : count));
  return results;
}

// Every rank's answers of the same queries, concatenated in rank order on rank 0 (ranks
// hold ascending document ranges); elsewhere empty.
Results gather(Results mine, std::size_t queries, bool count_only) {
  if (cluster::size() == 1) return mine;
  const std::vector<std::string> parts = cluster::gather(pack(mine));
  if (!cluster::root()) return {};
  std::vector<Results> shards;
  for (const std::string& part : parts) shards.push_back(unpack(part, count_only));
  return concatenate(shards, queries, count_only);
}

}  // namespace

Index documents_between(const Index& index, DocRange range) {
  Index shard;
  shard.first_document = std::clamp(range.begin, index.first_document, index.documents);
  shard.documents = std::clamp(range.end, shard.first_document, index.documents);
  const std::size_t terms = index.terms();
  std::vector<std::size_t> from(terms), to(terms);
  std::size_t total = 0;
  for (std::size_t t = 0; t < terms; ++t) {
    const std::span<const DocId> list = index.list(t);
    from[t] = first_at_least(list, shard.first_document);
    to[t] = from[t] + first_at_least(list.subspan(from[t]), shard.documents);
    total += to[t] - from[t];
  }
  shard.ids.reserve(total);
  shard.offsets.reserve(terms + 1);
  for (std::size_t t = 0; t < terms; ++t) {
    const DocId* list = index.ids.data() + index.offsets[t];
    shard.ids.insert(shard.ids.end(), list + from[t], list + to[t]);
    shard.offsets.push_back(shard.ids.size());
  }
  add_bitmaps(shard);
  return shard;
}

Results concatenate(const std::vector<Results>& shards, std::size_t queries, bool count_only) {
  Results out;
  out.counts.assign(queries, 0);
  for (const Results& shard : shards)
    for (std::size_t q = 0; q < queries; ++q) out.counts[q] += shard.counts[q];
  for (std::size_t q = 0; q < queries; ++q)
    out.offsets.push_back(out.offsets.back() + (count_only ? 0 : out.counts[q]));
  if (!count_only) {
    out.ids.reserve(out.offsets.back());
    for (std::size_t q = 0; q < queries; ++q)
      for (const Results& shard : shards) {
        const std::span<const DocId> answer = shard.answer(q);
        out.ids.insert(out.ids.end(), answer.begin(), answer.end());
      }
  }
  return out;
}

Queries broadcast_queries(Queries queries) {
  if (cluster::size() == 1) return queries;
  detail::Packer out;
  if (cluster::root()) {
    out.vector(queries.terms);
    out.vector(queries.offsets);
  }
  const std::string bytes = cluster::broadcast(std::move(out.bytes()));
  detail::Unpacker in(bytes);
  queries.terms = in.vector<std::uint32_t>();
  queries.offsets = in.vector<std::uint64_t>();
  return queries;
}

struct DistributedIndex::Impl {
  // One worker's documents: the whole index when the run has a single worker.
  struct Part {
    DocRange documents;
    Index shard;
    std::unique_ptr<GpuIndex> gpu;
  };
  DistributedOptions options;
  std::vector<std::unique_ptr<Part>> parts;  // stable addresses: a GpuIndex keeps its index
  std::size_t workers = 1;
};

DistributedIndex::DistributedIndex(Index index, const DistributedOptions& options)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  const std::size_t local = std::max<std::size_t>(options.gpus.size(), 1);
  const cluster::Parts run = cluster::parts(local);
  impl_->workers = run.total;
  for (std::size_t w = 0; w < local; ++w) {
    auto part = std::make_unique<Impl::Part>();
    if (run.total == 1) {
      part->documents = {index.first_document, index.documents};
      part->shard = std::move(index);
    } else {
      const RowRange rows = share_rows(index.documents, false, run.first + w, run.total);
      part->documents = {rows.begin, rows.end};
      part->shard = documents_between(index, part->documents);
    }
    impl_->parts.push_back(std::move(part));
  }
  if (!options.gpus.empty())
    run_parts(local, [&](std::size_t w) {  // the shards go to their GPUs at once
      GpuOptions gpu = options.gpu;
      gpu.device = options.gpus[w];
      impl_->parts[w]->gpu = std::make_unique<GpuIndex>(impl_->parts[w]->shard, gpu);
    });
}

DistributedIndex::~DistributedIndex() = default;

Results DistributedIndex::intersect(const Queries& queries, bool count_only, Progress* progress, double* device_ms) {
  const std::size_t n = impl_->parts.size();
  std::vector<Results> found(n);
  std::vector<double> ms(n, 0);
  run_parts(n, [&](std::size_t w) {
    Impl::Part& part = *impl_->parts[w];
    found[w] = part.gpu ? part.gpu->intersect(queries, count_only, &ms[w])
                        : intersect_cpu(part.shard, queries, impl_->options.algorithm, count_only, progress);
  });
  if (device_ms != nullptr && !impl_->options.gpus.empty()) *device_ms = *std::max_element(ms.begin(), ms.end());
  Results local = n == 1 ? std::move(found[0]) : concatenate(found, queries.size(), count_only);
  return impl_->workers == 1 ? local : gather(std::move(local), queries.size(), count_only);
}

std::vector<DocRange> DistributedIndex::local_documents() const {
  std::vector<DocRange> out;
  for (const auto& part : impl_->parts) out.push_back(part->documents);
  return out;
}

std::size_t DistributedIndex::workers() const noexcept { return impl_->workers; }

}  // namespace simkit::postings
