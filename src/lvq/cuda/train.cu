// The GPU path of GLVQ training, the seed's three steps per mini-batch, all on the device:
//   distances   `gemm`: cuBLAS x.m (fp32, or TF32 tensor cores) for batches of many rows;
//               `reduction`: a kernel that sums (x - m)^2 itself, the samples held in
//               shared memory, for small batches (the seed's choice for small mb)
//   search      genuine (its class's prototypes) and rival (every other) minima, then
//               the loss and the two coefficients: `reduction`, one block a sample (the
//               seed's choice), or `compare`, one thread a sample (compare-exchange)
//   update      the batch's 2 mb (prototype, sample) entries sorted stably by prototype
//               (in one block for mb <= 512, else CUB's radix sort), then one block
//               per touched prototype applying its samples' updates in batch order,
//               as the CPU does, and refreshing the prototype's norm
// Prediction on the device (predict_gpu): cuBLAS distances of row chunks, then one block a
// row finding each class's nearest prototype and the nearest classes.
// The training set stays on the device when it fits the budget (a gather kernel builds
// each batch); otherwise each batch is gathered on the host and copied.
// Several GPUs (--device cuda:all, or a GPU a rank under mpirun): a worker a GPU, each
// scoring its share of every batch (distances and search); the outcomes are summed over
// the workers by NCCL (core/cuda/nccl.hpp), then every worker sorts and applies the whole
// batch's updates, so every GPU keeps the same prototypes (lvq/trainer.hpp).
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/cublas_handle.hpp"
#include "core/cuda/memory.hpp"
#include "core/cuda/nccl.hpp"
#include "lvq/trainer.hpp"
#include "simkit/cluster.hpp"
#include "simkit/device.hpp"

namespace simkit::lvq::detail {

namespace {

constexpr int kMaxReductionRows = 16;  // the reduction kernel's register tile

__device__ float squared_norm_warp(const float* x, std::size_t dims) {
  double s = 0;
  for (std::size_t t = threadIdx.x % 32; t < dims; t += 32) s += static_cast<double>(x[t]) * x[t];
  for (int offset = 16; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffffu, s, offset);
  return static_cast<float>(__shfl_sync(0xffffffffu, s, 0));
}

// One warp a row: the batch's rows copied from the resident set, their labels and norms.
__global__ void gather_rows(const float* data, const std::uint32_t* labels, const std::uint32_t* order,
                            std::size_t n, std::size_t dims, float* x, std::uint32_t* y, float* norms) {
  const std::size_t warp = (blockIdx.x * std::size_t{blockDim.x} + threadIdx.x) / 32;
  if (warp >= n) return;
  const float* src = data + std::size_t{order[warp]} * dims;
  float* dst = x + warp * dims;
  for (std::size_t t = threadIdx.x % 32; t < dims; t += 32) dst[t] = src[t];
  const float norm = squared_norm_warp(src, dims);
  if (threadIdx.x % 32 == 0) {
    y[warp] = labels[order[warp]];
    norms[warp] = norm;
  }
}

__global__ void row_norms(const float* x, std::size_t n, std::size_t dims, float* norms) {
  const std::size_t warp = (blockIdx.x * std::size_t{blockDim.x} + threadIdx.x) / 32;
  if (warp >= n) return;
  const float norm = squared_norm_warp(x + warp * dims, dims);
  if (threadIdx.x % 32 == 0) norms[warp] = norm;
}

// Distances of `rows` (<= kMaxReductionRows) samples to every prototype, summed
// directly: the samples sit in shared memory, each warp takes prototypes in turn and
// each lane a stride of the features.
__global__ void reduction_distances(const float* x, int rows, const float* prototypes, std::size_t count,
                                    std::size_t dims, float* out) {
  extern __shared__ float shared_x[];
  for (std::size_t i = threadIdx.x; i < rows * dims; i += blockDim.x) shared_x[i] = x[i];
  __syncthreads();
  const std::size_t warps = gridDim.x * std::size_t{blockDim.x / 32};
  for (std::size_t j = blockIdx.x * std::size_t{blockDim.x / 32} + threadIdx.x / 32; j < count; j += warps) {
    float acc[kMaxReductionRows] = {};
    const float* m = prototypes + j * dims;
    for (std::size_t t = threadIdx.x % 32; t < dims; t += 32) {
      const float mt = m[t];
#pragma unroll
      for (int s = 0; s < kMaxReductionRows; ++s)
        if (s < rows) {
          const float diff = shared_x[s * dims + t] - mt;
          acc[s] = fmaf(diff, diff, acc[s]);
        }
    }
#pragma unroll
    for (int s = 0; s < kMaxReductionRows; ++s) {
      if (s >= rows) break;
      float v = acc[s];
      for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
      if (threadIdx.x % 32 == 0) out[s * count + j] = v;
    }
  }
}

struct Best {
  float d;
  std::uint32_t j;
};
__device__ bool better(const Best& a, const Best& b) { return a.d < b.d || (a.d == b.d && a.j < b.j); }

// What both search kernels read and write. `dots`: the tile holds x.m (distances =
// |x|^2 + |m|^2 - 2 x.m), else the distances.
struct SearchArgs {
  const float* tile;
  std::size_t rows, count, per_class;
  bool dots;
  const float *sample_norms, *prototype_norms;
  const std::uint32_t* labels;
  std::size_t first_row;
  double xi;
  float eta;
  float* losses;
  std::uint8_t* errors;
  std::uint32_t* keys;
  float* coefficients;
};

// Scans prototypes j = first, first + step, ... of sample i into its genuine and rival minima.
__device__ void scan(const SearchArgs& a, std::size_t i, std::size_t first, std::size_t step, Best& g, Best& r) {
  const float* s = a.tile + i * a.count;
  const float xn = a.sample_norms[i];
  const std::size_t lo = a.labels[i] * a.per_class, hi = lo + a.per_class;
  for (std::size_t j = first; j < a.count; j += step) {
    const float d = a.dots ? fmaxf(0.0f, xn + a.prototype_norms[j] - 2.0f * s[j]) : s[j];
    const Best candidate{d, static_cast<std::uint32_t>(j)};
    if (j >= lo && j < hi) {
      if (better(candidate, g)) g = candidate;
    } else if (better(candidate, r)) {
      r = candidate;
    }
  }
}

// Sample i's outcome and its two update entries.
__device__ void finish(const SearchArgs& a, std::size_t i, const Best& g, const Best& r) {
  const Outcome o = glvq_outcome(g.d, r.d, r.j < g.j, a.xi, a.eta);
  const std::size_t at = a.first_row + i;
  a.losses[at] = o.loss;
  a.errors[at] = o.error;
  a.keys[2 * at] = g.j;
  a.keys[2 * at + 1] = r.j;
  a.coefficients[2 * at] = o.towards;
  a.coefficients[2 * at + 1] = o.away;
}

constexpr int kSearchThreads = 256;

// The seed's parallel reduction: one block a sample, both minima reduced in shared memory.
__global__ void search_reduction(SearchArgs a) {
  __shared__ Best genuine_of[kSearchThreads], rival_of[kSearchThreads];
  const std::size_t i = blockIdx.x;
  if (i >= a.rows) return;
  const float inf = __int_as_float(0x7f800000);
  Best g{inf, 0}, r{inf, 0};
  scan(a, i, threadIdx.x, kSearchThreads, g, r);
  genuine_of[threadIdx.x] = g;
  rival_of[threadIdx.x] = r;
  __syncthreads();
  for (int half = kSearchThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      if (better(genuine_of[threadIdx.x + half], genuine_of[threadIdx.x])) genuine_of[threadIdx.x] = genuine_of[threadIdx.x + half];
      if (better(rival_of[threadIdx.x + half], rival_of[threadIdx.x])) rival_of[threadIdx.x] = rival_of[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) finish(a, i, genuine_of[0], rival_of[0]);
}

// The seed's compare-exchange: one thread a sample scanning every prototype.
__global__ void search_compare(SearchArgs a) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= a.rows) return;
  const float inf = __int_as_float(0x7f800000);
  Best g{inf, 0}, r{inf, 0};
  scan(a, i, 0, 1, g, r);
  finish(a, i, g, r);
}

// The stable sort of a small batch's entries in one block: each entry's rank counts the
// entries with a lower key, or the same key and a lower position (as CUB's stable sort).
constexpr int kSmallSort = 1024;
__global__ void sort_small(const std::uint32_t* keys, int n, std::uint32_t* sorted_keys, std::uint32_t* sorted_entries) {
  __shared__ std::uint32_t shared_keys[kSmallSort];
  for (int e = threadIdx.x; e < n; e += blockDim.x) shared_keys[e] = keys[e];
  __syncthreads();
  for (int e = threadIdx.x; e < n; e += blockDim.x) {
    const std::uint32_t key = shared_keys[e];
    int rank = 0;
    for (int f = 0; f < n; ++f) rank += shared_keys[f] < key || (shared_keys[f] == key && f < e);
    sorted_keys[rank] = key;
    sorted_entries[rank] = static_cast<std::uint32_t>(e);
  }
}

// Block e handles the run of sorted entries that starts at e (other blocks return): its
// prototype takes the entries' updates in order, each thread a stride of the features.
__global__ void update(const std::uint32_t* keys, const std::uint32_t* entries, std::size_t n_entries,
                       const float* coefficients, const float* x, std::size_t dims, float* prototypes,
                       float* prototype_norms) {
  const std::size_t e = blockIdx.x;
  if (e >= n_entries || (e > 0 && keys[e] == keys[e - 1])) return;
  const std::uint32_t j = keys[e];
  float* m = prototypes + std::size_t{j} * dims;
  double norm = 0;
  for (std::size_t t = threadIdx.x; t < dims; t += blockDim.x) {
    float v = m[t];
    for (std::size_t k = e; k < n_entries && keys[k] == j; ++k) {
      const std::uint32_t entry = entries[k];
      v = fmaf(coefficients[entry], x[std::size_t{entry / 2} * dims + t] - v, v);
    }
    m[t] = v;
    norm += static_cast<double>(v) * v;
  }
  __shared__ double partial[32];
  for (int offset = 16; offset > 0; offset /= 2) norm += __shfl_down_sync(0xffffffffu, norm, offset);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = norm;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) total += partial[w];
    prototype_norms[j] = static_cast<float>(total);
  }
}

__global__ void iota(std::uint32_t* out, std::size_t n) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < n) out[i] = static_cast<std::uint32_t>(i);
}

unsigned blocks_for(std::size_t threads, unsigned per_block) {
  return static_cast<unsigned>((threads + per_block - 1) / per_block);
}

// One GPU's part of the training: its copy of the prototypes, the training set (resident)
// or each batch (staged by the trainer), and the buffers of the epoch's outcomes. It
// scores its share of each batch and applies every update of the batch.
class Worker {
 public:
  // Built with `device` current.
  Worker(int device, const Dataset& data, const Model& model, const TrainOptions& options, std::size_t share)
      : device_(device), model_(model), options_(options) {
    const std::size_t count = model.count(), dims = model.dims, batch = std::min(options.batch, data.rows);
    SIMKIT_CUBLAS_CHECK(cublasSetStream(cublas_.get(), stream_.get()));
    SIMKIT_CUBLAS_CHECK(cublasSetMathMode(
        cublas_.get(), options.precision == Precision::tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    prototypes_ = cuda::DeviceBuffer<float>(count * dims);
    norms_ = cuda::DeviceBuffer<float>(count);
    SIMKIT_CUDA_CHECK(cudaMemcpy(prototypes_.get(), model.prototypes.data(), count * dims * 4, cudaMemcpyHostToDevice));
    row_norms<<<blocks_for(count * 32, 256), 256, 0, stream_.get()>>>(prototypes_.get(), count, dims, norms_.get());
    SIMKIT_CUDA_CHECK_LAUNCH();

    const std::size_t budget = options.memory_budget != 0 ? options.memory_budget : gpu_memory(device).free / 10 * 8;
    // The distance tile: rows of the batch at a time (of this worker's share of it), at
    // most a quarter of the budget. SIMKIT_LVQ_TILE_MB caps it further (a benchmark knob: a
    // tile that fits the L2 cache is read back by the search without a trip to memory).
    std::size_t tile_bytes = budget / 4;
    if (const char* mb = std::getenv("SIMKIT_LVQ_TILE_MB"); mb != nullptr && std::atoi(mb) > 0)
      tile_bytes = std::min(tile_bytes, static_cast<std::size_t>(std::atoi(mb)) << 20);
    tile_rows_ = std::clamp<std::size_t>(tile_bytes / (count * 4), 1, std::max<std::size_t>(share, 1));
    kernel_ = options.kernel;
    // Measured on an H100 at the seed's shape (bench/results/lvq.md): the reduction kernel
    // wins only for SGD over few prototypes (3755 x 160: 24.7 against 25.7 us a sample);
    // from mb = 16, or with 8 prototypes a class, cuBLAS does.
    if (kernel_ == Kernel::automatic)
      kernel_ = batch <= 2 && count * dims <= (std::size_t{1} << 20) ? Kernel::reduction : Kernel::gemm;
    if (kernel_ == Kernel::reduction) tile_rows_ = std::min<std::size_t>(tile_rows_, kMaxReductionRows);
    if (kernel_ == Kernel::reduction && tile_rows_ * dims * 4 > 48 * 1024) kernel_ = Kernel::gemm;
    tile_ = cuda::DeviceBuffer<float>(tile_rows_ * count);
    x_ = cuda::DeviceBuffer<float>(batch * dims);
    y_ = cuda::DeviceBuffer<std::uint32_t>(batch);
    x_norms_ = cuda::DeviceBuffer<float>(batch);
    sorted_keys_ = cuda::DeviceBuffer<std::uint32_t>(2 * batch);
    entries_ = cuda::DeviceBuffer<std::uint32_t>(2 * batch);
    sorted_entries_ = cuda::DeviceBuffer<std::uint32_t>(2 * batch);
    // 16 bytes past each end: NCCL reads the buffers it sums in 16-byte units, a batch's
    // last unit reaching past its end (compute-sanitizer reports a read past the
    // allocation otherwise).
    coefficients_ = cuda::DeviceBuffer<float>(2 * data.rows + 4);
    keys_ = cuda::DeviceBuffer<std::uint32_t>(2 * data.rows + 4);
    losses_ = cuda::DeviceBuffer<float>(data.rows + 4);
    errors_ = cuda::DeviceBuffer<std::uint8_t>(data.rows + 16);
    iota<<<blocks_for(2 * batch, 256), 256, 0, stream_.get()>>>(entries_.get(), 2 * batch);
    SIMKIT_CUDA_CHECK_LAUNCH();
    key_bits_ = 1;
    while ((std::size_t{1} << key_bits_) < count) ++key_bits_;
    std::size_t sort_bytes = 0;
    SIMKIT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys_.get(), sorted_keys_.get(),
                                                      entries_.get(), sorted_entries_.get(), static_cast<int>(2 * batch),
                                                      0, key_bits_, stream_.get()));
    sort_temp_ = cuda::DeviceBuffer<unsigned char>(sort_bytes);

    const std::size_t data_bytes = data.rows * (dims * 4 + 4) + data.rows * 4;
    if (data_bytes <= budget / 2) {  // the training set resident
      resident_ = cuda::DeviceBuffer<float>(data.rows * dims);
      labels_ = cuda::DeviceBuffer<std::uint32_t>(data.rows);
      order_ = cuda::DeviceBuffer<std::uint32_t>(data.rows);
      SIMKIT_CUDA_CHECK(cudaMemcpy(resident_.get(), data.features.data(), data.rows * dims * 4, cudaMemcpyHostToDevice));
      SIMKIT_CUDA_CHECK(cudaMemcpy(labels_.get(), data.labels.data(), data.rows * 4, cudaMemcpyHostToDevice));
    }
    stream_.sync();
  }
  ~Worker() { cudaSetDevice(device_); }  // the members are freed on their own device
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  int device() const noexcept { return device_; }
  bool resident() const noexcept { return resident_.size() > 0; }

  // The epoch's start: its sample order on the device; with other workers, every outcome
  // slot zero (each worker fills its share's, the sum fills the rest).
  void start_epoch(std::span<const std::uint32_t> order, bool shared) {
    const std::size_t n = order.size();
    if (resident())
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(order_.get(), order.data(), n * 4, cudaMemcpyHostToDevice, stream_.get()));
    if (shared) {
      SIMKIT_CUDA_CHECK(cudaMemsetAsync(keys_.get(), 0, 2 * n * 4, stream_.get()));
      SIMKIT_CUDA_CHECK(cudaMemsetAsync(coefficients_.get(), 0, 2 * n * 4, stream_.get()));
      SIMKIT_CUDA_CHECK(cudaMemsetAsync(losses_.get(), 0, n * 4, stream_.get()));
      SIMKIT_CUDA_CHECK(cudaMemsetAsync(errors_.get(), 0, n, stream_.get()));
    }
  }

  // The batch at epoch positions [first, first + rows): from the resident set, or copied
  // from the trainer's staging buffers (pinned, filled by the host).
  void load_batch(std::size_t first, std::size_t rows, const float* staged_x, const std::uint32_t* staged_y) {
    const std::size_t dims = model_.dims;
    if (resident()) {
      gather_rows<<<blocks_for(rows * 32, 256), 256, 0, stream_.get()>>>(resident_.get(), labels_.get(), order_.get() + first,
                                                                        rows, dims, x_.get(), y_.get(), x_norms_.get());
    } else {
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(x_.get(), staged_x, rows * dims * 4, cudaMemcpyHostToDevice, stream_.get()));
      SIMKIT_CUDA_CHECK(cudaMemcpyAsync(y_.get(), staged_y, rows * 4, cudaMemcpyHostToDevice, stream_.get()));
      row_norms<<<blocks_for(rows * 32, 256), 256, 0, stream_.get()>>>(x_.get(), rows, dims, x_norms_.get());
    }
    SIMKIT_CUDA_CHECK_LAUNCH();
  }

  // Distances, search and outcomes of the batch's rows `share` (batch positions).
  void score(std::size_t first, RowRange share, float eta) {
    const std::size_t count = model_.count(), dims = model_.dims;
    const cudaStream_t stream = stream_.get();
    for (std::size_t r0 = share.begin; r0 < share.end; r0 += tile_rows_) {
      const std::size_t r = std::min(tile_rows_, share.end - r0);
      const bool dots = kernel_ == Kernel::gemm;
      if (dots) {
        const float one = 1, zero = 0;
        SIMKIT_CUBLAS_CHECK(cublasSgemm(cublas_.get(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(count), static_cast<int>(r),
                                        static_cast<int>(dims), &one, prototypes_.get(), static_cast<int>(dims),
                                        x_.get() + r0 * dims, static_cast<int>(dims), &zero, tile_.get(),
                                        static_cast<int>(count)));
      } else {
        const std::size_t shared = r * dims * 4;
        const unsigned blocks = std::min<unsigned>(blocks_for(count, 8), 4096);
        reduction_distances<<<blocks, 256, shared, stream>>>(x_.get() + r0 * dims, static_cast<int>(r), prototypes_.get(),
                                                             count, dims, tile_.get());
        SIMKIT_CUDA_CHECK_LAUNCH();
      }
      const SearchArgs args{tile_.get(), r, count, model_.per_class, dots, x_norms_.get() + r0, norms_.get(),
                            y_.get() + r0, first + r0, options_.xi, eta, losses_.get(), errors_.get(), keys_.get(),
                            coefficients_.get()};
      if (options_.search == Search::compare)
        search_compare<<<blocks_for(r, 128), 128, 0, stream>>>(args);
      else
        search_reduction<<<static_cast<unsigned>(r), kSearchThreads, 0, stream>>>(args);
      SIMKIT_CUDA_CHECK_LAUNCH();
    }
  }

  // The batch's outcomes summed over every worker (between comm.begin() and comm.end()).
  void sum_outcomes(cuda::Communicator& comm, std::size_t gpu, std::size_t first, std::size_t rows) {
    comm.sum(gpu, keys_.get() + 2 * first, 2 * rows, stream_.get());
    comm.sum(gpu, coefficients_.get() + 2 * first, 2 * rows, stream_.get());
    comm.sum(gpu, losses_.get() + first, rows, stream_.get());
    comm.sum(gpu, errors_.get() + first, rows, stream_.get());
  }

  // Every update of the batch, each prototype taking its samples' in batch order.
  void update_prototypes(std::size_t first, std::size_t rows) {
    const std::size_t dims = model_.dims;
    const cudaStream_t stream = stream_.get();
    // Entries of this batch: keys_/coefficients_ at [2 first, 2 (first + rows)).
    const int n_entries = static_cast<int>(2 * rows);
    if (n_entries <= kSmallSort) {  // one launch where CUB's radix sort takes several
      sort_small<<<1, kSmallSort, 0, stream>>>(keys_.get() + 2 * first, n_entries, sorted_keys_.get(),
                                               sorted_entries_.get());
      SIMKIT_CUDA_CHECK_LAUNCH();
    } else {
      std::size_t sort_bytes = sort_temp_.size();
      SIMKIT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp_.get(), sort_bytes, keys_.get() + 2 * first,
                                                        sorted_keys_.get(), entries_.get(), sorted_entries_.get(),
                                                        n_entries, 0, key_bits_, stream));
    }
    const unsigned threads = static_cast<unsigned>(std::min<std::size_t>(256, (dims + 31) / 32 * 32));
    update<<<static_cast<unsigned>(n_entries), threads, 0, stream>>>(sorted_keys_.get(), sorted_entries_.get(),
                                                                   n_entries, coefficients_.get() + 2 * first, x_.get(),
                                                                   dims, prototypes_.get(), norms_.get());
    SIMKIT_CUDA_CHECK_LAUNCH();
  }

  // The epoch's per-sample outcomes, queued (the caller synchronises).
  void copy_outcomes(std::size_t n, float* losses, std::uint8_t* errors) {
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(losses, losses_.get(), n * 4, cudaMemcpyDeviceToHost, stream_.get()));
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(errors, errors_.get(), n, cudaMemcpyDeviceToHost, stream_.get()));
  }

  void copy_prototypes(float* out) {
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(out, prototypes_.get(), model_.count() * model_.dims * 4, cudaMemcpyDeviceToHost,
                                      stream_.get()));
  }

  void sync() { stream_.sync(); }

 private:
  int device_;
  const Model& model_;
  TrainOptions options_;
  cuda::Stream stream_;
  cuda::CublasHandle cublas_ = cuda::make_cublas();
  Kernel kernel_ = Kernel::gemm;
  std::size_t tile_rows_ = 1;
  int key_bits_ = 1;
  cuda::DeviceBuffer<float> prototypes_, norms_, tile_, x_, x_norms_, coefficients_, losses_, resident_;
  cuda::DeviceBuffer<std::uint32_t> y_, keys_, sorted_keys_, entries_, sorted_entries_, labels_, order_;
  cuda::DeviceBuffer<std::uint8_t> errors_;
  cuda::DeviceBuffer<unsigned char> sort_temp_;
};

// The GPUs of this process as workers of the run. Alone (one GPU, one process) a worker
// scores the whole batch and nothing is exchanged; otherwise each scores its share and
// NCCL sums the outcomes before every worker updates.
class GpuTrainer final : public Trainer {
 public:
  GpuTrainer(const Dataset& data, const Model& model, const TrainOptions& options)
      : caller_(gpus(options).front()), host_(data), model_(model), options_(options) {
    const std::vector<int> devices = gpus(options);
    parts_ = cluster::parts(devices.size());
    const std::size_t batch = std::min(options.batch, data.rows);
    for (const int device : devices) {
      const cuda::DeviceGuard guard(device);
      workers_.push_back(std::make_unique<Worker>(device, data, model, options,
                                                  (batch + parts_.total - 1) / parts_.total));
      if (!workers_.back()->resident() && staged_x_.size() == 0) {
        staged_x_ = cuda::PinnedBuffer<float>(batch * model.dims);
        staged_y_ = cuda::PinnedBuffer<std::uint32_t>(batch);
      }
    }
    // Every rank has its workers (a rank that ran out of memory stops the others here).
    if (parts_.total > 1) comm_ = std::make_unique<cuda::Communicator>(devices);
  }

  void epoch(std::span<const std::uint32_t> order, std::size_t batch, std::span<const float> etas, float* losses,
             std::uint8_t* errors) override {
    const std::size_t n = order.size(), dims = model_.dims;
    const bool shared = comm_ != nullptr;
    for (const auto& w : workers_) {
      const cuda::DeviceGuard guard(w->device());
      w->start_epoch(order, shared);
    }
    for (std::size_t b = 0, first = 0; first < n; ++b, first += batch) {
      const std::size_t rows = std::min(batch, n - first);
      if (staged_x_.size() > 0) {  // a training set too large for some GPU: the batch from the host
        for (const auto& w : workers_) w->sync();  // the staging buffers are free again
        for (std::size_t i = 0; i < rows; ++i) {
          std::copy_n(&host_.features[std::size_t{order[first + i]} * dims], dims, staged_x_.get() + i * dims);
          staged_y_.get()[i] = host_.labels[order[first + i]];
        }
      }
      for (std::size_t g = 0; g < workers_.size(); ++g) {
        Worker& w = *workers_[g];
        const cuda::DeviceGuard guard(w.device());
        w.load_batch(first, rows, staged_x_.get(), staged_y_.get());
        w.score(first, share_rows(rows, false, parts_.first + g, parts_.total), etas[b]);
      }
      if (shared) {
        comm_->begin();
        for (std::size_t g = 0; g < workers_.size(); ++g) workers_[g]->sum_outcomes(*comm_, g, first, rows);
        comm_->end();
      }
      for (const auto& w : workers_) {
        const cuda::DeviceGuard guard(w->device());
        w->update_prototypes(first, rows);
      }
    }
    if (shared) cluster::check_in();  // before waiting on NCCL's last sums
    workers_.front()->copy_outcomes(n, losses, errors);
    for (const auto& w : workers_) w->sync();
  }

  // Every worker holds the same prototypes.
  void read_prototypes(float* out) override {
    workers_.front()->copy_prototypes(out);
    workers_.front()->sync();
  }

 private:
  cuda::DeviceGuard caller_;  // first: the caller's device again once every worker is gone
  const Dataset& host_;
  const Model& model_;
  TrainOptions options_;
  cluster::Parts parts_;
  cuda::PinnedBuffer<float> staged_x_;
  cuda::PinnedBuffer<std::uint32_t> staged_y_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<cuda::Communicator> comm_;  // last: aborted first when unwinding, before the buffers go
};

// Prediction, one block a row of the distance tile: each class's nearest prototype,
// then the `top` nearest classes (ties by the lower class index), as the CPU ranks them.
__global__ void nearest_classes(const float* tile, std::size_t rows, std::size_t count, std::size_t per_class,
                                const float* sample_norms, const float* prototype_norms, std::size_t top,
                                std::uint32_t* out) {
  extern __shared__ float class_min[];  // classes floats, then classes "taken" flags
  const std::size_t classes = count / per_class;
  auto* taken = reinterpret_cast<std::uint8_t*>(class_min + classes);
  const std::size_t i = blockIdx.x;
  if (i >= rows) return;
  const float* s = tile + i * count;
  for (std::size_t c = threadIdx.x; c < classes; c += blockDim.x) {
    float best = __int_as_float(0x7f800000);
    for (std::size_t j = c * per_class; j < (c + 1) * per_class; ++j)
      best = fminf(best, fmaxf(0.0f, sample_norms[i] + prototype_norms[j] - 2.0f * s[j]));
    class_min[c] = best;
    taken[c] = 0;
  }
  __syncthreads();
  __shared__ Best best_of[kSearchThreads];
  for (std::size_t k = 0; k < top; ++k) {
    Best b{__int_as_float(0x7f800000), 0xffffffffu};
    for (std::size_t c = threadIdx.x; c < classes; c += blockDim.x) {
      const Best candidate{class_min[c], static_cast<std::uint32_t>(c)};
      if (!taken[c] && (b.j == 0xffffffffu || better(candidate, b))) b = candidate;
    }
    best_of[threadIdx.x] = b;
    __syncthreads();
    for (int half = kSearchThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        const Best& other = best_of[threadIdx.x + half];
        if (other.j != 0xffffffffu && (best_of[threadIdx.x].j == 0xffffffffu || better(other, best_of[threadIdx.x])))
          best_of[threadIdx.x] = other;
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      out[i * top + k] = best_of[0].j;
      taken[best_of[0].j] = 1;
    }
    __syncthreads();
  }
}

}  // namespace

std::unique_ptr<Trainer> gpu_trainer(const Dataset& data, const Model& model, const TrainOptions& options) {
  return std::make_unique<GpuTrainer>(data, model, options);
}

bool gpu_predicts(const Model& model) { return model.classes.size() * 5 <= 48 * 1024; }

std::vector<std::uint32_t> predict_gpu(const Model& model, const Dataset& data, RowRange rows, std::size_t top,
                                       int device) {
  const cuda::DeviceGuard guard(device);
  const cuda::Stream stream;
  const cuda::CublasHandle blas = cuda::make_cublas();
  cublasHandle_t cublas = blas.get();
  SIMKIT_CUBLAS_CHECK(cublasSetStream(cublas, stream.get()));
  const std::size_t count = model.count(), dims = model.dims;
  cuda::DeviceBuffer<float> prototypes(count * dims), norms(count);
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(prototypes.get(), model.prototypes.data(), count * dims * 4, cudaMemcpyHostToDevice,
                                    stream.get()));
  row_norms<<<blocks_for(count * 32, 256), 256, 0, stream.get()>>>(prototypes.get(), count, dims, norms.get());
  SIMKIT_CUDA_CHECK_LAUNCH();
  // Rows a chunk: the distance tile near 256 MB.
  const std::size_t chunk = std::clamp<std::size_t>((std::size_t{256} << 20) / (count * 4), 1, std::max<std::size_t>(rows.size(), 1));
  cuda::DeviceBuffer<float> x(chunk * dims), x_norms(chunk), tile(chunk * count);
  cuda::DeviceBuffer<std::uint32_t> out(chunk * top);
  std::vector<std::uint32_t> result(rows.size() * top);
  const std::size_t shared = model.classes.size() * 5;
  for (std::size_t first = 0; first < rows.size(); first += chunk) {
    const std::size_t n = std::min(chunk, rows.size() - first);
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(x.get(), data.features.data() + (rows.begin + first) * dims, n * dims * 4,
                                      cudaMemcpyHostToDevice, stream.get()));
    row_norms<<<blocks_for(n * 32, 256), 256, 0, stream.get()>>>(x.get(), n, dims, x_norms.get());
    SIMKIT_CUDA_CHECK_LAUNCH();
    const float one = 1, zero = 0;
    SIMKIT_CUBLAS_CHECK(cublasSgemm(cublas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(count), static_cast<int>(n),
                                    static_cast<int>(dims), &one, prototypes.get(), static_cast<int>(dims), x.get(),
                                    static_cast<int>(dims), &zero, tile.get(), static_cast<int>(count)));
    nearest_classes<<<static_cast<unsigned>(n), kSearchThreads, shared, stream.get()>>>(
        tile.get(), n, count, model.per_class, x_norms.get(), norms.get(), top, out.get());
    SIMKIT_CUDA_CHECK_LAUNCH();
    SIMKIT_CUDA_CHECK(cudaMemcpyAsync(result.data() + first * top, out.get(), n * top * 4, cudaMemcpyDeviceToHost,
                                      stream.get()));
    stream.sync();
  }
  return result;
}

}  // namespace simkit::lvq::detail
