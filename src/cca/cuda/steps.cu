// The GPU's batched CCA solver (steps.hpp says what it computes).
#include <algorithm>
#include <array>
#include <chrono>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cca/backend.hpp"
#include "cca/cuda/steps.hpp"
#include "core/cuda/check.hpp"
#include "simkit/error.hpp"

namespace simkit::cca::detail {

namespace {

constexpr int kPanel = 64;           // Cholesky panel width
constexpr int kPanelThreads = 128;   // panel rows solved at once, a row a thread
constexpr int kTridiagThreads = 256;
constexpr int kBisectWarps = 8;

unsigned blocks_for(std::size_t n, unsigned threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// SIMKIT_CCA_PHASES=1: device time of each phase of the batched solve, for each batch of
// 32 steps or more and summed over the run, printed to stderr (the benchmark's breakdown).
struct PhaseTimes {
  static constexpr std::array<const char*, 5> kNames{"build", "cholesky", "trsm", "tridiagonal", "bisection"};
  std::array<double, 5> ms{};
  std::size_t steps = 0;
  bool on = [] {
    const char* env = std::getenv("SIMKIT_CCA_PHASES");
    return env != nullptr && env[0] == '1';
  }();
  ~PhaseTimes() {
    if (!on || steps == 0) return;
    std::fprintf(stderr, "cca phases over %zu steps (us a step):", steps);
    for (std::size_t i = 0; i < ms.size(); ++i) std::fprintf(stderr, " %s %.2f", kNames[i], 1000 * ms[i] / steps);
    std::fprintf(stderr, "\n");
  }
};
PhaseTimes phase_times;

// The steps' column sums: out[j d + c] = sums[c] + the added minus the removed rows'
// values of column c up to step j.
__global__ void step_sums_kernel(const double* sums, const double* rows, const int* added_end, const int* removed_end,
                                 std::size_t removed_base, int steps, int d, double* out) {
  extern __shared__ int ends[];  // the steps' row ends, added then removed
  for (int j = threadIdx.x; j < steps; j += blockDim.x) {
    ends[j] = added_end[j];
    ends[steps + j] = removed_end[j];
  }
  __syncthreads();
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= d) return;
  double acc = sums[c];
  int a0 = 0, r0 = 0;
  for (int j = 0; j < steps; ++j) {
    for (int r = a0; r < ends[j]; ++r) acc += rows[std::size_t(r) * d + c];
    for (int r = r0; r < ends[steps + j]; ++r) acc -= rows[(removed_base + r) * d + c];
    a0 = ends[j];
    r0 = ends[steps + j];
    out[std::size_t(j) * d + c] = acc;
  }
}

// Entry (i, l), i >= l, of every step's joint matrix J (columns `order` of the tuple, the
// larger stream's first) and, for the smaller stream's block, of its copy C. The second
// moments move from M2 step by step through the steps' rows. (Upper triangles outside the
// smaller block are never read: the trailing products there compute what nothing uses.)
__global__ void build_kernel(const double* m2, int d, const double* rows, const int* added_end, const int* removed_end,
                             std::size_t removed_base, const double* step_sums, int steps, const int* order, int p,
                             int big, double n, double ridge, double* joint, double* small) {
  const int l = blockIdx.y;
  const int i = l + blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= p) return;
  const int oi = order[i], ol = order[l];
  const int m = p - big;
  double acc = m2[max(oi, ol) + std::size_t(min(oi, ol)) * d];
  int a0 = 0, r0 = 0;
  for (int j = 0; j < steps; ++j) {
    for (int r = a0; r < added_end[j]; ++r) {
      const double* row = rows + std::size_t(r) * d;
      acc += row[oi] * row[ol];
    }
    for (int r = r0; r < removed_end[j]; ++r) {
      const double* row = rows + (removed_base + r) * d;
      acc -= row[oi] * row[ol];
    }
    a0 = added_end[j];
    r0 = removed_end[j];
    const double* s = step_sums + std::size_t(j) * d;
    double v = (acc - s[oi] * s[ol] / n) / (n - 1);
    if (i == l) v += ridge;
    // J's lower triangle, and the smaller stream's block whole (the triangular solves read
    // all of it); C's lower triangle.
    double* jj = joint + std::size_t(j) * p * p;
    jj[i + std::size_t(l) * p] = v;
    if (l >= big) {
      jj[l + std::size_t(i) * p] = v;
      small[std::size_t(j) * m * m + (i - big) + std::size_t(l - big) * m] = v;
    }
  }
}

__global__ void pointers_kernel(double* base, std::size_t stride, int count, double** out) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < count) out[j] = base + stride * j;
}

template <typename Op>
__device__ double block_reduce(double v, Op op, double* scratch) {
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  __syncthreads();  // scratch free from any earlier use
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < warps; ++w) v = op(v, scratch[w]);
  return v;
}

struct Sum {
  __device__ double operator()(double a, double b) const { return a + b; }
};
struct Max {
  __device__ double operator()(double a, double b) const { return a > b ? a : b; }
};

// One panel of a blocked Cholesky (lower, column-major), a block a matrix: factors the
// w x w diagonal block at (k0, k0) and solves the rows below it (X L11^T = A21). The
// matrix's largest diagonal entry among the factored columns (taken at k0 = 0) is the
// scale of the singularity test; a pivot under it sets `flag` in flags[matrix] (the pivot
// is then taken as 1 so the rest stays finite).
__global__ void __launch_bounds__(kPanelThreads) cholesky_panel_kernel(double* mats, std::size_t stride, int ld, int n,
                                                                       int columns, int k0, int w, double* tops,
                                                                       int* flags, int flag) {
  __shared__ double lower[kPanel * kPanel];  // column-major
  __shared__ double inverse[kPanel];
  __shared__ double scratch[32];
  __shared__ int bad;
  double* a = mats + stride * blockIdx.x;
  const int t = threadIdx.x;
  double top;
  if (k0 == 0) {
    double most = 0;
    for (int i = t; i < columns; i += blockDim.x) most = fmax(most, a[i + std::size_t(i) * ld]);
    top = block_reduce(most, Max{}, scratch);
    if (t == 0) tops[blockIdx.x] = top;
  } else {
    top = tops[blockIdx.x];
  }
  if (t == 0) bad = 0;
  // Padded to kPanel x kPanel with an identity, so the substitution below runs unguarded.
  for (int idx = t; idx < kPanel * kPanel; idx += blockDim.x) {
    const int r = idx % kPanel, c = idx / kPanel;
    lower[idx] = r < w && c < w ? (r >= c ? a[(k0 + r) + std::size_t(k0 + c) * ld] : 0.0) : (r == c ? 1.0 : 0.0);
  }
  for (int c = w + t; c < kPanel; c += blockDim.x) inverse[c] = 1;
  __syncthreads();
  for (int c = 0; c < w; ++c) {
    if (t == 0) {
      double pivot = lower[c + c * kPanel];
      if (!(pivot > kSingularPivot * top)) {
        bad = 1;
        pivot = 1;
      }
      lower[c + c * kPanel] = sqrt(pivot);
      inverse[c] = 1 / lower[c + c * kPanel];
    }
    __syncthreads();
    for (int r = c + 1 + t; r < w; r += blockDim.x) lower[r + c * kPanel] *= inverse[c];
    __syncthreads();
    const int rest = w - c - 1;
    for (int idx = t; idx < rest * rest; idx += blockDim.x) {
      const int rr = idx % rest, cc = idx / rest;
      if (rr >= cc) lower[(c + 1 + rr) + (c + 1 + cc) * kPanel] -= lower[(c + 1 + rr) + c * kPanel] * lower[(c + 1 + cc) + c * kPanel];
    }
    __syncthreads();
  }
  if (t == 0 && bad) flags[blockIdx.x] |= flag;
  for (int idx = t; idx < w * w; idx += blockDim.x) {
    const int r = idx % w, c = idx / w;
    if (r >= c) a[(k0 + r) + std::size_t(k0 + c) * ld] = lower[r + c * kPanel];
  }
  // Rows below: forward substitution, a row a thread, the row in registers. (Read through
  // a volatile view: hoisted out of the row loop, L11 would not fit in registers.)
  const volatile double* factor = lower;
  const volatile double* reciprocal = inverse;
  for (int first = k0 + w; first < n; first += blockDim.x) {
    const int r = first + t;
    if (r >= n) break;
    double* const row = a + r + std::size_t(k0) * ld;
    double x[kPanel];
    const double* in = row;
#pragma unroll
    for (int c = 0; c < kPanel; ++c, in += ld) x[c] = c < w ? *in : 0.0;
#pragma unroll
    for (int c = 0; c < kPanel; ++c) {
      double v = x[c];
#pragma unroll
      for (int s = 0; s < c; ++s) v -= x[s] * factor[c + s * kPanel];
      x[c] = v * reciprocal[c];
    }
    double* out = row;
#pragma unroll
    for (int c = 0; c < kPanel; ++c, out += ld)
      if (c < w) *out = x[c];
  }
}

// Householder tridiagonalisation of a symmetric m x m matrix (both triangles stored,
// column-major, leading dimension ld), a block a matrix, keeping the diagonal d and the
// off-diagonal e. Step i reflects column i; the rank-2 update of the trailing block it
// makes is applied in the same pass over the block that forms the product with the next
// step's vector, so each step reads and writes the trailing block once.
__global__ void __launch_bounds__(kTridiagThreads) tridiagonal_kernel(double* mats, std::size_t stride, int ld, int m,
                                                                      double* d_out, double* e_out) {
  extern __shared__ double shared[];
  double* v = shared;            // this step's Householder vector (rows > i)
  double* y = shared + m;        // trailing block times v
  double* vp = shared + 2 * m;   // the pending rank-2 update A -= vp wp^T + wp vp^T
  double* wp = shared + 3 * m;
  __shared__ double scratch[32];
  double* a = mats + stride * blockIdx.x;
  double* dd = d_out + std::size_t(m) * blockIdx.x;
  double* ee = e_out + std::size_t(m) * blockIdx.x;
  const int t = threadIdx.x, lane = t % 32, warp = t / 32, warps = blockDim.x / 32;
  auto at = [&](int r, int c) -> double& { return a[r + std::size_t(c) * ld]; };
  for (int r = t; r < m; r += blockDim.x) vp[r] = wp[r] = 0.0;
  __syncthreads();
  if (m == 1) {
    if (t == 0) dd[0] = at(0, 0);
    return;
  }
  for (int i = 0; i + 2 < m; ++i) {
    // Column i is current. Reflect A(i+2.., i) onto A(i+1, i).
    double sq = 0;
    for (int r = i + 2 + t; r < m; r += blockDim.x) sq += at(r, i) * at(r, i);
    sq = block_reduce(sq, Sum{}, scratch);
    const double alpha = at(i + 1, i);
    double tau = 0, scale = 0;
    if (sq > 0) {
      const double beta = -copysign(sqrt(alpha * alpha + sq), alpha);
      tau = (beta - alpha) / beta;
      scale = 1 / (alpha - beta);
      if (t == 0) ee[i] = beta;
    } else if (t == 0) {
      ee[i] = alpha;
    }
    if (t == 0) dd[i] = at(i, i);
    for (int r = i + 1 + t; r < m; r += blockDim.x) {
      v[r] = tau == 0 ? 0.0 : (r == i + 1 ? 1.0 : at(r, i) * scale);
      y[r] = 0;
    }
    __syncthreads();
    // The trailing block (rows and columns > i): apply the pending update, form y = A v.
    const int first = i + 1, size = m - first;
    const int row_tiles = (size + 31) / 32;
    const int chunks = max(1, (2 * warps + row_tiles - 1) / row_tiles);
    const int width = (size + chunks - 1) / chunks;
    for (int item = warp; item < row_tiles * chunks; item += warps) {
      const int r = first + (item % row_tiles) * 32 + lane;
      const int c0 = first + (item / row_tiles) * width, c1 = min(m, c0 + width);
      if (r < m) {
        const double vr = vp[r], wr = wp[r];
        double acc = 0;
        int c = c0;
        for (; c + 4 <= c1; c += 4) {
          double x0 = at(r, c), x1 = at(r, c + 1), x2 = at(r, c + 2), x3 = at(r, c + 3);
          x0 -= vr * wp[c] + wr * vp[c];
          x1 -= vr * wp[c + 1] + wr * vp[c + 1];
          x2 -= vr * wp[c + 2] + wr * vp[c + 2];
          x3 -= vr * wp[c + 3] + wr * vp[c + 3];
          at(r, c) = x0;
          at(r, c + 1) = x1;
          at(r, c + 2) = x2;
          at(r, c + 3) = x3;
          acc += x0 * v[c] + x1 * v[c + 1] + x2 * v[c + 2] + x3 * v[c + 3];
        }
        for (; c < c1; ++c) {
          const double x = at(r, c) - (vr * wp[c] + wr * vp[c]);
          at(r, c) = x;
          acc += x * v[c];
        }
        atomicAdd(&y[r], acc);
      }
    }
    __syncthreads();
    // w = tau y - (tau^2 / 2) (y . v) v becomes the pending update.
    double dot = 0;
    for (int r = first + t; r < m; r += blockDim.x) dot += y[r] * v[r];
    dot = block_reduce(dot, Sum{}, scratch);
    const double half = 0.5 * tau * tau * dot;
    for (int r = first + t; r < m; r += blockDim.x) {
      vp[r] = v[r];
      wp[r] = tau * y[r] - half * v[r];
    }
    __syncthreads();
    // Column i+1 (rows > i) made current for the next step.
    for (int r = first + t; r < m; r += blockDim.x) at(r, first) -= vp[r] * wp[first] + wp[r] * vp[first];
    __syncthreads();
  }
  if (t == 0) {
    dd[m - 2] = at(m - 2, m - 2);
    ee[m - 2] = at(m - 1, m - 2);
    dd[m - 1] = at(m - 1, m - 1) - 2 * vp[m - 1] * wp[m - 1];
  }
}

// The k smallest eigenvalues of each symmetric tridiagonal matrix (d, e), by bisection
// on Sturm counts: a warp an eigenvalue, its 32 lanes counting at 32 points of the
// bracket at once, so each round shrinks it 33-fold.
__global__ void smallest_eigenvalues_kernel(const double* d_all, const double* e_all, int m, int k, double* out) {
  extern __shared__ double shared[];
  double* d = shared;
  double* e2 = shared + m;  // e2[i] = e_i^2 couples i and i+1
  const double* ds = d_all + std::size_t(m) * blockIdx.x;
  const double* es = e_all + std::size_t(m) * blockIdx.x;
  for (int i = threadIdx.x; i < m; i += blockDim.x) {
    d[i] = ds[i];
    e2[i] = i + 1 < m ? es[i] * es[i] : 0.0;
  }
  __syncthreads();
  const int lane = threadIdx.x % 32;
  const int j = blockIdx.y * kBisectWarps + threadIdx.x / 32;
  if (j >= k) return;
  // Gershgorin bracket.
  double lo = DBL_MAX, hi = -DBL_MAX, big = 0;
  for (int i = lane; i < m; i += 32) {
    const double left = i > 0 ? sqrt(e2[i - 1]) : 0.0, right = i + 1 < m ? sqrt(e2[i]) : 0.0;
    lo = fmin(lo, d[i] - left - right);
    hi = fmax(hi, d[i] + left + right);
    big = fmax(big, e2[i]);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    lo = fmin(lo, __shfl_xor_sync(0xffffffffu, lo, offset));
    hi = fmax(hi, __shfl_xor_sync(0xffffffffu, hi, offset));
    big = fmax(big, __shfl_xor_sync(0xffffffffu, big, offset));
  }
  const double pivmin = DBL_MIN * fmax(1.0, big);
  const double slack = 2 * DBL_EPSILON * fmax(fabs(lo), fabs(hi)) + pivmin;
  lo -= slack;
  hi += slack;
  for (int round = 0; round < 16; ++round) {
    const double x = lo + (hi - lo) * (lane + 1) / 33.0;
    int count = 0;
    double q = d[0] - x;
    if (fabs(q) < pivmin) q = -pivmin;
    count += q < 0;
    for (int i = 1; i < m; ++i) {
      q = d[i] - x - e2[i - 1] / q;
      if (fabs(q) < pivmin) q = -pivmin;
      count += q < 0;
    }
    const unsigned above = __ballot_sync(0xffffffffu, count >= j + 1);
    if (above == 0) {
      lo = __shfl_sync(0xffffffffu, x, 31);
    } else {
      const int first = __ffs(above) - 1;
      const double new_hi = __shfl_sync(0xffffffffu, x, first);
      const double below = __shfl_sync(0xffffffffu, x, first > 0 ? first - 1 : 0);
      if (first > 0) lo = below;
      hi = new_hi;
    }
    if (hi - lo <= 2 * DBL_EPSILON * fmax(fabs(lo), fabs(hi)) + pivmin) break;
  }
  if (lane == 0) out[std::size_t(k) * blockIdx.x + j] = 0.5 * (lo + hi);
}

template <typename T>
void grow(cuda::DeviceBuffer<T>& buffer, std::size_t count) {
  if (buffer.size() < count) buffer = cuda::DeviceBuffer<T>(std::max<std::size_t>(count, 1));
}

// Grown buffers start zeroed: parts of the matrices are never written, only read by the
// trailing products whose results there nothing uses.
void grow_zeroed(cuda::DeviceBuffer<double>& buffer, std::size_t count, cudaStream_t stream) {
  if (buffer.size() >= count) return;
  buffer = cuda::DeviceBuffer<double>(std::max<std::size_t>(count, 1));
  SIMKIT_CUDA_CHECK(cudaMemsetAsync(buffer.get(), 0, buffer.size() * sizeof(double), stream));
}

}  // namespace

bool phase_timing() { return phase_times.on; }

std::size_t StepSolver::bytes_per_step(std::size_t pair_dims, std::size_t small_dims) {
  return (pair_dims * pair_dims + small_dims * small_dims + 3 * small_dims + 4) * sizeof(double) + 4 * sizeof(int);
}

void StepSolver::begin(const double* added, const std::vector<std::size_t>& added_end, const double* removed,
                       const std::vector<std::size_t>& removed_end, std::size_t window_rows, std::size_t d,
                       const double* sums) {
  steps_ = added_end.size();
  d_ = d;
  window_ = window_rows;
  const std::size_t n_added = added_end.empty() ? 0 : added_end.back();
  const std::size_t n_removed = removed_end.empty() ? 0 : removed_end.back();
  removed_base_ = n_added;
  if (steps_ == 0) return;
  const double begun = phase_times.on ? seconds_now() : 0;
  const std::size_t values = (n_added + n_removed) * d;
  grow(rows_, values);
  if (staging_.size() < values) staging_ = cuda::PinnedBuffer<double>(std::max(values, 2 * staging_.size()));
  std::copy(added, added + n_added * d, staging_.get());
  std::copy(removed, removed + n_removed * d, staging_.get() + n_added * d);
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(rows_.get(), staging_.get(), values * sizeof(double), cudaMemcpyHostToDevice, stream_));
  host_ints_.resize(2 * steps_);
  for (std::size_t j = 0; j < steps_; ++j) {
    host_ints_[j] = static_cast<int>(added_end[j]);
    host_ints_[steps_ + j] = static_cast<int>(removed_end[j]);
  }
  grow(ends_, 2 * steps_);
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(ends_.get(), host_ints_.data(), 2 * steps_ * sizeof(int), cudaMemcpyHostToDevice,
                                    stream_));
  grow(step_sums_, steps_ * d);
  step_sums_kernel<<<blocks_for(d, 128), 128, 2 * steps_ * sizeof(int), stream_>>>(sums, rows_.get(), ends_.get(), ends_.get() + steps_,
                                                            removed_base_, static_cast<int>(steps_),
                                                            static_cast<int>(d), step_sums_.get());
  SIMKIT_CUDA_CHECK_LAUNCH();
  // The host buffers may change once this returns.
  SIMKIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (phase_times.on && steps_ >= 32) std::fprintf(stderr, "cca begin: %zu steps %.3f ms\n", steps_, 1000 * (seconds_now() - begun));
}

void StepSolver::cholesky(double* mats, std::size_t stride, int ld, int n, int columns, int flag) {
  const int batch = static_cast<int>(steps_);
  const double minus_one = -1, one = 1;
  for (int k0 = 0; k0 < columns; k0 += kPanel) {
    const int w = std::min(kPanel, columns - k0);
    cholesky_panel_kernel<<<batch, kPanelThreads, 0, stream_>>>(mats, stride, ld, n, columns, k0, w, tops_.get(),
                                                                flags_.get(), flag);
    SIMKIT_CUDA_CHECK_LAUNCH();
    const int rest = n - k0 - w;
    if (rest <= 0) continue;
    double* panel = mats + (k0 + w) + std::size_t(k0) * ld;
    double* trailing = mats + (k0 + w) + std::size_t(k0 + w) * ld;
    SIMKIT_CUBLAS_CHECK(cublasDgemmStridedBatched(blas_, CUBLAS_OP_N, CUBLAS_OP_T, rest, rest, w, &minus_one, panel, ld,
                                                  static_cast<long long>(stride), panel, ld,
                                                  static_cast<long long>(stride), &one, trailing, ld,
                                                  static_cast<long long>(stride), batch));
  }
}

std::vector<double> StepSolver::solve(const double* m2, const std::vector<std::size_t>& a,
                                      const std::vector<std::size_t>& b, std::size_t k, double ridge,
                                      std::vector<int>& singular) {
  singular.assign(steps_, 0);
  if (steps_ == 0) return {};
  const bool a_small = a.size() <= b.size();
  const std::vector<std::size_t>& small_cols = a_small ? a : b;
  const std::vector<std::size_t>& big_cols = a_small ? b : a;
  const int m = static_cast<int>(small_cols.size()), big = static_cast<int>(big_cols.size()), p = m + big;
  const int batch = static_cast<int>(steps_);
  constexpr int kSmallFlag = 1, kBigFlag = 2;

  std::vector<int> order;
  order.reserve(p);
  for (std::size_t c : big_cols) order.push_back(static_cast<int>(c));
  for (std::size_t c : small_cols) order.push_back(static_cast<int>(c));
  grow(order_, p);
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(order_.get(), order.data(), p * sizeof(int), cudaMemcpyHostToDevice, stream_));
  const std::size_t joint_stride = std::size_t(p) * p, small_stride = std::size_t(m) * m;
  grow_zeroed(joint_, steps_ * joint_stride, stream_);
  grow_zeroed(small_, steps_ * small_stride, stream_);
  grow(tops_, steps_);
  grow(flags_, steps_);
  grow(diag_, steps_ * m);
  grow(off_, steps_ * m);
  grow(lambda_, steps_ * k);
  grow(pointers_, 2 * steps_);
  SIMKIT_CUDA_CHECK(cudaMemsetAsync(flags_.get(), 0, steps_ * sizeof(int), stream_));

  std::array<cuda::Event, 6> marks{cuda::Event(cudaEventDefault), cuda::Event(cudaEventDefault),
                                   cuda::Event(cudaEventDefault), cuda::Event(cudaEventDefault),
                                   cuda::Event(cudaEventDefault), cuda::Event(cudaEventDefault)};
  const auto mark = [&](int i) {
    if (phase_times.on) marks[i].record(stream_);
  };
  mark(0);
  build_kernel<<<dim3(blocks_for(p, 128), static_cast<unsigned>(p)), 128, 0, stream_>>>(
      m2, static_cast<int>(d_), rows_.get(), ends_.get(), ends_.get() + steps_, removed_base_, step_sums_.get(), batch,
      order_.get(), p, big, static_cast<double>(window_), ridge, joint_.get(), small_.get());
  SIMKIT_CUDA_CHECK_LAUNCH();

  mark(1);
  // The larger stream's columns of J: Chol(S_bb + rI), and the Schur complement behind it.
  cholesky(joint_.get(), joint_stride, p, p, big, kBigFlag);
  cholesky(small_.get(), small_stride, m, m, m, kSmallFlag);
  mark(2);

  // M = L^-1 S L^-T, in place of S.
  double* schur = joint_.get() + big + std::size_t(big) * p;
  double** l_ptrs = pointers_.get();
  double** s_ptrs = pointers_.get() + steps_;
  pointers_kernel<<<blocks_for(steps_, 128), 128, 0, stream_>>>(small_.get(), small_stride, batch, l_ptrs);
  pointers_kernel<<<blocks_for(steps_, 128), 128, 0, stream_>>>(schur, joint_stride, batch, s_ptrs);
  SIMKIT_CUDA_CHECK_LAUNCH();
  const double one = 1;
  SIMKIT_CUBLAS_CHECK(cublasDtrsmBatched(blas_, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                         CUBLAS_DIAG_NON_UNIT, m, m, &one, l_ptrs, m, s_ptrs, p, batch));
  SIMKIT_CUBLAS_CHECK(cublasDtrsmBatched(blas_, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                                         CUBLAS_DIAG_NON_UNIT, m, m, &one, l_ptrs, m, s_ptrs, p, batch));

  mark(3);
  const std::size_t tridiag_shared = 4 * std::size_t(m) * sizeof(double);
  cuda::allow_dynamic_shared<tridiagonal_kernel>(4 * kMaxSmall * sizeof(double));
  tridiagonal_kernel<<<batch, kTridiagThreads, tridiag_shared, stream_>>>(schur, joint_stride, p, m, diag_.get(),
                                                                         off_.get());
  SIMKIT_CUDA_CHECK_LAUNCH();
  mark(4);
  const std::size_t bisect_shared = 2 * std::size_t(m) * sizeof(double);
  cuda::allow_dynamic_shared<smallest_eigenvalues_kernel>(2 * kMaxSmall * sizeof(double));
  smallest_eigenvalues_kernel<<<dim3(batch, blocks_for(k, kBisectWarps)), 32 * kBisectWarps, bisect_shared, stream_>>>(
      diag_.get(), off_.get(), m, static_cast<int>(k), lambda_.get());
  SIMKIT_CUDA_CHECK_LAUNCH();
  mark(5);

  const double solving = phase_times.on ? seconds_now() : 0;
  std::vector<double> lambda(steps_ * k);
  std::vector<int> flags(steps_);
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(lambda.data(), lambda_.get(), lambda.size() * sizeof(double),
                                    cudaMemcpyDeviceToHost, stream_));
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(flags.data(), flags_.get(), flags.size() * sizeof(int), cudaMemcpyDeviceToHost,
                                    stream_));
  SIMKIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (phase_times.on) {
    std::array<double, 5> ms{};
    for (int i = 0; i < 5; ++i) {
      ms[i] = cuda::elapsed_ms(marks[i], marks[i + 1]);
      phase_times.ms[i] += ms[i];
    }
    phase_times.steps += steps_;
    if (steps_ >= 32)
      std::fprintf(stderr, "cca solve: %zu steps p %d m %d, us a step: build %.2f cholesky %.2f trsm %.2f tridiagonal %.2f "
                   "bisection %.2f; waited %.3f ms for the device\n", steps_, p, m, 1000 * ms[0] / steps_,
                   1000 * ms[1] / steps_, 1000 * ms[2] / steps_, 1000 * ms[3] / steps_, 1000 * ms[4] / steps_,
                   1000 * (seconds_now() - solving));
  }
  const int a_flag = a_small ? kSmallFlag : kBigFlag, b_flag = a_small ? kBigFlag : kSmallFlag;
  for (std::size_t j = 0; j < steps_; ++j) singular[j] = (flags[j] & a_flag) ? 1 : (flags[j] & b_flag) ? 2 : 0;
  // rho_j^2 = 1 - lambda_j, lambda ascending: rho descending.
  for (double& x : lambda) x = std::sqrt(std::clamp(1 - x, 0.0, 1.0));
  return lambda;
}

}  // namespace simkit::cca::detail
