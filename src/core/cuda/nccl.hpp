// GPU collectives over every GPU worker of a run, through NCCL: the GPUs this process
// drives and, under mpirun, every other rank's, numbered as cluster::parts numbers them
// (rank 0's first GPU is worker 0). The communicator is bootstrapped through the cluster
// layer (rank 0's ncclGetUniqueId broadcast to every rank), one NCCL rank a GPU, the GPUs
// of one process initialised in one group. NVLink multicast (NVLS) stays off: NCCL starts
// with NCCL_NVLS_ENABLE=0 unless the environment already sets it, and no multicast object
// is ever created.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "simkit/cluster.hpp"

namespace simkit::cuda {

// True when this build has NCCL (SIMKIT_HAVE_NCCL).
bool nccl_built() noexcept;

class Communicator {
 public:
  // A collective: every rank builds it, with the GPUs it drives. Refuses (UsageError) a
  // GPU that two workers would share, which NCCL cannot do; throws Failure in a build
  // without NCCL.
  explicit Communicator(std::vector<int> devices);
  // Destroys the communicators; when an exception unwinds past it (a rank or a GPU failed),
  // aborts them instead, so that no NCCL kernel waits forever for a worker that is gone.
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  const cluster::Parts& parts() const noexcept;

  // Element-wise sums in place over every worker, queued on the GPUs' streams: begin(),
  // then sum() for each buffer of each of this process's GPUs (`gpu` indexes `devices`;
  // every worker makes the same calls in the same order), then end(), which launches them
  // together. begin() first checks in with every rank (cluster::check_in), so that a rank
  // that failed stops the others there instead of leaving them waiting inside NCCL.
  void begin();
  void sum(std::size_t gpu, float* data, std::size_t count, cudaStream_t stream);
  void sum(std::size_t gpu, std::uint32_t* data, std::size_t count, cudaStream_t stream);
  void sum(std::size_t gpu, std::uint8_t* data, std::size_t count, cudaStream_t stream);
  void end();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace simkit::cuda
