// NCCL communicators over the GPU workers of a run (core/cuda/nccl.hpp).
#include "core/cuda/nccl.hpp"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "core/cuda/check.hpp"
#include "core/cuda/memory.hpp"
#include "simkit/error.hpp"

#ifdef SIMKIT_HAVE_NCCL
#include <nccl.h>
#endif

namespace simkit::cuda {

bool nccl_built() noexcept {
#ifdef SIMKIT_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

#ifdef SIMKIT_HAVE_NCCL

namespace {

// Refuses two workers on one GPU (NCCL hangs or fails on it): every worker's host and
// PCI address, compared on rank 0, the verdict on every rank.
void refuse_shared_gpus(const std::vector<int>& devices) {
  std::string mine;
  for (const int device : devices) {
    char bus[64] = {};
    SIMKIT_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus - 1, device));
    mine += cluster::host_name() + " " + bus + "\n";
  }
  const std::vector<std::string> all = cluster::gather(mine);
  std::string problem;
  std::map<std::string, int> taken;  // "host bus" -> the rank that drives it
  for (std::size_t rank = 0; rank < all.size() && problem.empty(); ++rank) {
    std::istringstream lines(all[rank]);
    for (std::string gpu; problem.empty() && std::getline(lines, gpu);) {
      const auto [at, fresh] = taken.try_emplace(gpu, static_cast<int>(rank));
      if (!fresh)
        problem = fmt::format(
            "GPU {} on {} would be driven twice ({}), and NCCL needs a GPU for each worker: give each rank GPUs of "
            "its own (--device cuda takes local rank mod GPUs) or drive every GPU from one process (--device "
            "cuda:all)",
            gpu.substr(gpu.find(' ') + 1), gpu.substr(0, gpu.find(' ')),
            at->second == static_cast<int>(rank) ? fmt::format("by rank {}", rank)
                                                 : fmt::format("by rank {} and rank {}", at->second, rank));
    }
  }
  problem = cluster::broadcast(problem);
  if (!problem.empty()) throw UsageError(problem);
}

void check(ncclResult_t status, const char* what) {
  if (status != ncclSuccess)
    throw Failure(fmt::format("NCCL {}: {} ({})", what, ncclGetErrorString(status), ncclGetLastError(nullptr)));
}

}  // namespace

struct Communicator::Impl {
  std::vector<int> devices;
  cluster::Parts parts;
  std::vector<ncclComm_t> comms;
  int exceptions = std::uncaught_exceptions();

  ~Impl() {
    // Unwinding after an error: operations in flight may wait for a worker that is gone.
    if (std::uncaught_exceptions() > exceptions) {
      for (ncclComm_t c : comms)
        if (c != nullptr) ncclCommAbort(c);
      return;
    }
    // Several communicators of one thread are finalised together.
    ncclGroupStart();
    for (ncclComm_t c : comms)
      if (c != nullptr) ncclCommFinalize(c);
    ncclGroupEnd();
    for (ncclComm_t c : comms)
      if (c != nullptr) ncclCommDestroy(c);
  }

  void sum(std::size_t gpu, void* data, std::size_t count, ncclDataType_t type, cudaStream_t stream) {
    if (count > 0) check(ncclAllReduce(data, data, count, type, ncclSum, comms.at(gpu), stream), "all-reduce");
  }
};

Communicator::Communicator(std::vector<int> devices) : impl_(std::make_unique<Impl>()) {
  if (devices.empty()) throw Failure("a GPU communicator needs at least one GPU");
  impl_->devices = std::move(devices);
  impl_->parts = cluster::parts(impl_->devices.size());
  refuse_shared_gpus(impl_->devices);
  // NVLink multicast off (the GPU machines share hosts), unless the user chose otherwise.
  ::setenv("NCCL_NVLS_ENABLE", "0", 0);
  ncclUniqueId id{};
  std::string bytes;
  if (cluster::root()) {
    check(ncclGetUniqueId(&id), "unique id");
    bytes.assign(reinterpret_cast<const char*>(&id), sizeof id);
  }
  bytes = cluster::broadcast(std::move(bytes));  // checks in first: a rank that failed stops us here
  std::memcpy(&id, bytes.data(), sizeof id);
  impl_->comms.assign(impl_->devices.size(), nullptr);
  const DeviceGuard guard(impl_->devices.front());
  ncclResult_t status = ncclGroupStart();
  for (std::size_t g = 0; g < impl_->devices.size() && status == ncclSuccess; ++g) {
    SIMKIT_CUDA_CHECK(cudaSetDevice(impl_->devices[g]));
    status = ncclCommInitRank(&impl_->comms[g], static_cast<int>(impl_->parts.total), id,
                              static_cast<int>(impl_->parts.first + g));
  }
  const ncclResult_t ended = ncclGroupEnd();
  check(status != ncclSuccess ? status : ended, "communicator set-up");
}

void Communicator::begin() {
  cluster::check_in();
  check(ncclGroupStart(), "group start");
}

void Communicator::sum(std::size_t gpu, float* data, std::size_t count, cudaStream_t stream) {
  impl_->sum(gpu, data, count, ncclFloat32, stream);
}
void Communicator::sum(std::size_t gpu, std::uint32_t* data, std::size_t count, cudaStream_t stream) {
  impl_->sum(gpu, data, count, ncclUint32, stream);
}
void Communicator::sum(std::size_t gpu, std::uint8_t* data, std::size_t count, cudaStream_t stream) {
  impl_->sum(gpu, data, count, ncclUint8, stream);
}

void Communicator::end() { check(ncclGroupEnd(), "group"); }

#else  // without NCCL: refuses to be built

struct Communicator::Impl {
  cluster::Parts parts;
};

Communicator::Communicator(std::vector<int> devices) : impl_(std::make_unique<Impl>()) {
  (void)devices;
  throw Failure("training on several GPUs needs NCCL, and this simkit was built without it (rebuild with the CUDA "
                "toolkit's NCCL, or train on one GPU a run)");
}
void Communicator::begin() {}
void Communicator::sum(std::size_t, float*, std::size_t, cudaStream_t) {}
void Communicator::sum(std::size_t, std::uint32_t*, std::size_t, cudaStream_t) {}
void Communicator::sum(std::size_t, std::uint8_t*, std::size_t, cudaStream_t) {}
void Communicator::end() {}

#endif

Communicator::~Communicator() = default;

const cluster::Parts& Communicator::parts() const noexcept { return impl_->parts; }

}  // namespace simkit::cuda
