// The GPU matchers of a CPU-only build: they say so.
#include "dedup/match_gpu.hpp"
#include "simkit/dedup.hpp"
#include "simkit/error.hpp"

namespace simkit::dedup {

MatchList match_all_gpu(const std::vector<ctph::Prepared>&, int, int, double*, Share) {
  throw Failure("this simkit was built without CUDA");
}

std::optional<MatchList> match_indexed_gpu(const std::vector<ctph::Prepared>&, int, int, double*, Share,
                                           std::size_t, StepTimes*) {
  throw Failure("this simkit was built without CUDA");
}

MatchList match_every_pair_gpu(const std::vector<ctph::Prepared>&, int, int, double*, Share, std::size_t) {
  throw Failure("this simkit was built without CUDA");
}

bool index_fits_gpu(const std::vector<ctph::Prepared>&, int) {
  throw Failure("this simkit was built without CUDA");
}

struct IndexPlan {};

void lock_codes(const IndexPlan&, int) {}

bool index_fits_gpu(const IndexPlan&, int, std::size_t) { throw Failure("this simkit was built without CUDA"); }

std::pair<std::size_t, std::size_t> index_room(const IndexPlan&, int, std::size_t) {
  throw Failure("this simkit was built without CUDA");
}

std::size_t pair_budget_within(const IndexPlan&, std::size_t) { throw Failure("this simkit was built without CUDA"); }

std::shared_ptr<const IndexPlan> plan_index(const std::vector<ctph::Prepared>&) {
  throw Failure("this simkit was built without CUDA");
}

MatchList match_indexed_gpu(const IndexPlan&, int, int, double*, Share, std::size_t, StepTimes*) {
  throw Failure("this simkit was built without CUDA");
}

MatchList match_indexed_dealt(const IndexPlan&, int, const std::vector<int>&, Share, std::vector<double>&,
                              std::size_t) {
  throw Failure("this simkit was built without CUDA");
}

std::vector<MatchList> match_indexed_runs(const IndexPlan&, int, int, double*, Share, RowDealer*, std::size_t,
                                          StepTimes*) {
  throw Failure("this simkit was built without CUDA");
}


void prepare_gpu(int) {}

}  // namespace simkit::dedup
