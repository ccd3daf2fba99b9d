// The GPU's batched CCA solver (steps.hpp says what it computes).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>

#include "cca/backend.hpp"
#include "cca/cuda/steps.hpp"
#include "core/cuda/check.hpp"
#include "simkit/error.hpp"

namespace simkit::cca::detail {

namespace {

// Cholesky panel width: 64 keeps a diagonal block's shared memory small enough for several
// blocks a multiprocessor (measured on the H100: the 128-wide diagonal kernel, one block a
// multiprocessor, cost 20 us a step of the 29 of the factorisations).
constexpr int kPanel = 64;
constexpr int kOuter = 256;  // columns whose trailing update is one product
constexpr int kPanelThreads = 256;
// (128, 192, 384 and 512 measured slower on the H100: 30.0, 24.2, 22.0, 29.6 us a step.)
constexpr int kTridiagThreads = 256;
constexpr int kBisectWarps = 8;

unsigned blocks_for(std::size_t n, unsigned threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

// SIMKIT_CCA_PHASES=1: the device time of each phase of a batched solve of 32 steps or
// more, a line on stderr (the benchmark's breakdown in bench/results/cca.md).
const bool phase_timing = [] {
  const char* env = std::getenv("SIMKIT_CCA_PHASES");
  return env != nullptr && env[0] == '1';
}();

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
// moments move from M2 step by step through the steps' rows.
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
    // The lower triangles of J and of C.
    joint[std::size_t(j) * p * p + i + std::size_t(l) * p] = v;
    if (l >= big) small[std::size_t(j) * m * m + (i - big) + std::size_t(l - big) * m] = v;
  }
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

// The diagonal block of one panel of a blocked Cholesky (lower, column-major), a block a
// matrix: factors the w x w block at (k0, k0) in shared memory and writes the inverse of
// the factor (w x w, zero above the diagonal, leading dimension kPanel) to `inverse`;
// with `store` the factor itself replaces the block. The matrix's largest diagonal entry
// among the factored columns (taken at k0 = 0) is the scale of the singularity test; a
// pivot under it sets `flag` in flags[matrix] (the pivot is then taken as 1 so the rest
// stays finite).
__global__ void __launch_bounds__(kPanelThreads) cholesky_diagonal_kernel(double* mats, std::size_t stride, int ld,
                                                                          int columns, int k0, int w, bool store,
                                                                          double* inverse, double* tops, int* flags,
                                                                          int flag) {
  extern __shared__ double lower[];  // kPanel x kPanel, column-major; then a column
  double* column = lower + kPanel * kPanel;
  __shared__ double scratch[32];
  __shared__ int bad;
  double* a = mats + stride * blockIdx.x;
  const int t = threadIdx.x;
  auto at = [&](int r, int c) -> double& { return lower[r + c * kPanel]; };
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
  for (int idx = t; idx < w * w; idx += blockDim.x) {
    const int r = idx % w, c = idx / w;
    at(r, c) = r >= c ? a[(k0 + r) + std::size_t(k0 + c) * ld] : 0.0;
  }
  __syncthreads();
  // Factor: right-looking, a column at a time; the trailing update a column a warp, a row
  // a lane.
  const int lane = t % 32, warp = t / 32, warps = blockDim.x / 32;
  for (int c = 0; c < w; ++c) {
    if (t == 0) {
      double pivot = at(c, c);
      if (!(pivot > kSingularPivot * top)) {
        bad = 1;
        pivot = 1;
      }
      at(c, c) = sqrt(pivot);
    }
    __syncthreads();
    const double scale = 1 / at(c, c);
    for (int r = c + 1 + t; r < w; r += blockDim.x) at(r, c) *= scale;
    __syncthreads();
    for (int cc = c + 1 + warp; cc < w; cc += warps) {
      const double lc = at(cc, c);
      for (int r = cc + lane; r < w; r += 32) at(r, cc) -= at(r, c) * lc;
    }
    __syncthreads();
  }
  if (t == 0 && bad) flags[blockIdx.x] |= flag;
  if (store)
    for (int idx = t; idx < w * w; idx += blockDim.x) {
      const int r = idx % w, c = idx / w;
      if (r >= c) a[(k0 + r) + std::size_t(k0 + c) * ld] = at(r, c);
    }
  // Invert in place (LAPACK's dtrti2, lower): column j from the inverted block behind it.
  for (int j = w - 1; j >= 0; --j) {
    for (int r = j + 1 + t; r < w; r += blockDim.x) column[r] = at(r, j);
    __syncthreads();
    const double ajj = 1 / at(j, j);
    for (int r = j + 1 + t; r < w; r += blockDim.x) {
      // Four running sums, so the products do not wait on one another.
      double sum[4] = {0, 0, 0, 0};
      int s = j + 1;
      for (; s + 3 <= r; s += 4) {
        sum[0] += at(r, s) * column[s];
        sum[1] += at(r, s + 1) * column[s + 1];
        sum[2] += at(r, s + 2) * column[s + 2];
        sum[3] += at(r, s + 3) * column[s + 3];
      }
      for (; s <= r; ++s) sum[0] += at(r, s) * column[s];
      at(r, j) = -ajj * ((sum[0] + sum[1]) + (sum[2] + sum[3]));
    }
    __syncthreads();
    if (t == 0) at(j, j) = ajj;
    __syncthreads();
  }
  double* out = inverse + std::size_t(kPanel) * kPanel * blockIdx.x;
  for (int idx = t; idx < kPanel * kPanel; idx += blockDim.x) {
    const int r = idx % kPanel, c = idx / kPanel;
    out[idx] = r < w && c < w && r >= c ? at(r, c) : 0.0;
  }
}

// Copies each matrix's rows x cols block at `from` (leading dimension from_ld) to `to`.
__global__ void copy_block_kernel(const double* from, std::size_t from_stride, int from_ld, double* to,
                                  std::size_t to_stride, int to_ld, int rows, int cols) {
  const double* src = from + from_stride * blockIdx.y;
  double* dst = to + to_stride * blockIdx.y;
  for (std::size_t idx = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; idx < std::size_t(rows) * cols;
       idx += std::size_t{gridDim.x} * blockDim.x) {
    const int r = static_cast<int>(idx % rows), c = static_cast<int>(idx / rows);
    dst[r + std::size_t(c) * to_ld] = src[r + std::size_t(c) * from_ld];
  }
}

// Each m x m matrix's upper triangle from its lower.
__global__ void symmetrize_kernel(double* mats, std::size_t stride, int ld, int m) {
  double* a = mats + stride * blockIdx.y;
  for (std::size_t idx = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; idx < std::size_t(m) * m;
       idx += std::size_t{gridDim.x} * blockDim.x) {
    const int r = static_cast<int>(idx % m), c = static_cast<int>(idx / m);
    if (r < c) a[r + std::size_t(c) * ld] = a[c + std::size_t(r) * ld];
  }
}

// One halving step of transpose_reduce: lanes trade half of their values with the lane
// `Offset` away and keep the sums of the other half.
template <int Offset>
__device__ __forceinline__ void trade_halves(double (&vals)[32], int lane) {
  const bool upper = (lane & Offset) != 0;
#pragma unroll
  for (int j = 0; j < Offset; ++j) {
    const double low = vals[j], high = vals[j + Offset];
    const double got = __shfl_xor_sync(0xffffffffu, upper ? low : high, Offset);
    vals[j] = (upper ? high : low) + got;
  }
}

// Across a warp: lane l ends with the sum over all lanes of their vals[l], in vals[0]
// (31 shuffles).
__device__ __forceinline__ void transpose_reduce(double (&vals)[32], int lane) {
  trade_halves<16>(vals, lane);
  trade_halves<8>(vals, lane);
  trade_halves<4>(vals, lane);
  trade_halves<2>(vals, lane);
  trade_halves<1>(vals, lane);
}

// Householder tridiagonalisation of symmetric m x m matrices (lower triangles read and
// written, column-major, leading dimension ld), keeping each one's diagonal d and
// off-diagonal e. A persistent grid: a block takes one matrix at a time, so the matrices
// in work at once stay in the L2 cache, and once the trailing triangle fits in the
// block's shared memory (held_rows tile rows) it moves there for the remaining steps.
// Step i reflects column i; the rank-2 update of the trailing block it makes is applied in
// the same pass over the block's lower 32 x 32 tiles (a warp a tile) that forms the
// product with the next step's vector, so each step reads and writes the trailing
// triangle once. Each warp sums its tiles' shares of that product apart, so the result
// does not depend on the warps' order.
__global__ void __launch_bounds__(kTridiagThreads) tridiagonal_kernel(double* mats, std::size_t stride, int ld, int m,
                                                                      int batch, int held_rows, double* d_out,
                                                                      double* e_out) {
  extern __shared__ double shared[];
  double* v = shared;            // this step's Householder vector (rows > i)
  double* y = shared + m;        // trailing block times v
  double* vp = shared + 2 * m;   // the pending rank-2 update A -= vp wp^T + wp vp^T
  double* wp = shared + 3 * m;
  double* part = shared + 4 * m;  // each warp's share of y (no atomics: shared double atomics spin)
  double* held = shared + (4 + kTridiagThreads / 32) * m;  // the trailing triangle's last tile rows, once held
  __shared__ double scratch[32];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32, warps = blockDim.x / 32;
  const int tiles = (m + 31) / 32;
  for (int b = blockIdx.x; b < batch; b += gridDim.x) {
    double* a = mats + stride * b;
    double* dd = d_out + std::size_t(m) * b;
    double* ee = e_out + std::size_t(m) * b;
    // Entries (r >= c) live in the matrix until the trailing triangle fits in shared memory
    // (from tile row `base` on, lower tiles in row order, each 32 x 32 column-major).
    int base = -1;
    auto at = [&](int r, int c) -> double& {
      if (base < 0) return a[r + std::size_t(c) * ld];
      const int row_tile = r / 32 - base, col_tile = c / 32 - base;
      return held[(row_tile * (row_tile + 1) / 2 + col_tile) * 1024 + r % 32 + (c % 32) * 32];
    };
    const auto hold = [&](int from_tile) {
      const int side = tiles - from_tile, count = side * (side + 1) / 2;
      for (int idx = t; idx < count * 1024; idx += blockDim.x) {
        const int tile = idx / 1024, within = idx % 1024;
        int row_tile = static_cast<int>((sqrt(8.0 * tile + 1) - 1) / 2);
        while (row_tile * (row_tile + 1) / 2 > tile) --row_tile;
        while ((row_tile + 1) * (row_tile + 2) / 2 <= tile) ++row_tile;
        const int col_tile = tile - row_tile * (row_tile + 1) / 2;
        const int r = 32 * (from_tile + row_tile) + within % 32, c = 32 * (from_tile + col_tile) + within / 32;
        held[idx] = r < m && c <= r ? a[r + std::size_t(c) * ld] : 0.0;
      }
      __syncthreads();
      base = from_tile;
    };
    for (int r = t; r < m; r += blockDim.x) vp[r] = wp[r] = 0.0;
    __syncthreads();
    if (tiles <= held_rows) hold(0);
    if (m == 1) {
      if (t == 0) dd[0] = at(0, 0);
      continue;
    }
    // The squared length of column 0 below its first sub-diagonal entry.
    double sq = 0;
    for (int r = 2 + t; r < m; r += blockDim.x) sq += at(r, 0) * at(r, 0);
    sq = block_reduce(sq, Sum{}, scratch);
    for (int i = 0; i + 2 < m; ++i) {
      if (base < 0 && tiles - i / 32 <= held_rows) hold(i / 32);
      // Column i is current (sq its squared length below A(i+1, i)). Reflect it onto A(i+1, i).
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
      const int first = i + 1;
      for (int r = first + t; r < m; r += blockDim.x) v[r] = tau == 0 ? 0.0 : (r == first ? 1.0 : at(r, i) * scale);
      for (int idx = t; idx < warps * (m - first); idx += blockDim.x)
        part[(idx / (m - first)) * m + first + idx % (m - first)] = 0;
      __syncthreads();
      // The trailing triangle (rows >= columns > i), a 32 x 32 tile a warp: apply the
      // pending update and form y = A v from each entry's row and column.
      const int t0 = first / 32, side = tiles - t0;
      const int items = side * (side + 1) / 2;
      for (int item = warp; item < items; item += warps) {
        int rr = static_cast<int>((sqrt(8.0 * item + 1) - 1) / 2);
        while (rr * (rr + 1) / 2 > item) --rr;
        while ((rr + 1) * (rr + 2) / 2 <= item) ++rr;
        const int row_tile = t0 + rr, col_tile = t0 + item - rr * (rr + 1) / 2;
        const int r = 32 * row_tile + lane, c0 = 32 * col_tile;
        const bool row_ok = r < m && r >= first;
        const double vr = row_ok ? v[r] : 0.0, vpr = row_ok ? vp[r] : 0.0, wpr = row_ok ? wp[r] : 0.0;
        // Entry (r, c0 + j) at entry[j * step], in the matrix or in a held tile.
        double* entry;
        std::size_t step;
        if (base < 0) {
          entry = a + r + std::size_t(c0) * ld;
          step = ld;
        } else {
          const int hr = row_tile - base, hc = col_tile - base;
          entry = held + (hr * (hr + 1) / 2 + hc) * 1024 + lane;
          step = 32;
        }
        double x[32];
#pragma unroll
        for (int j = 0; j < 32; ++j) {
          const int c = c0 + j;
          x[j] = row_ok && c >= first && c <= r ? entry[j * step] : 0.0;
        }
        double row_sum = 0;
#pragma unroll
        for (int j = 0; j < 32; ++j) {
          const int c = c0 + j;
          if (row_ok && c >= first && c <= r) {
            const double nx = x[j] - (vpr * wp[c] + wpr * vp[c]);
            entry[j * step] = nx;
            row_sum += nx * v[c];
            x[j] = c < r ? nx * vr : 0.0;
          } else {
            x[j] = 0.0;
          }
        }
        transpose_reduce(x, lane);
        double* mine = part + warp * m;  // a lane's two updates never meet another lane's
        if (row_ok) mine[r] += row_sum;
        if (c0 + lane >= first && c0 + lane < m) mine[c0 + lane] += x[0];
      }
      __syncthreads();
      // w = tau y - (tau^2 / 2) (y . v) v becomes the pending update.
      double dot = 0;
      for (int r = first + t; r < m; r += blockDim.x) {
        double yr = 0;
        for (int w = 0; w < warps; ++w) yr += part[w * m + r];
        y[r] = yr;
        dot += yr * v[r];
      }
      dot = block_reduce(dot, Sum{}, scratch);
      const double half = 0.5 * tau * tau * dot;
      // The pending update, and column i+1 (rows > i) made current for the next step with
      // its squared length (w at row i+1 made by every thread from what all can read).
      const double v_first = v[first], w_first = tau * y[first] - half * v_first;
      sq = 0;
      for (int r = first + t; r < m; r += blockDim.x) {
        const double vr = v[r], wr = tau * y[r] - half * vr;
        vp[r] = vr;
        wp[r] = wr;
        const double x = at(r, first) - (vr * w_first + wr * v_first);
        at(r, first) = x;
        if (r > first + 1) sq += x * x;
      }
      sq = block_reduce(sq, Sum{}, scratch);
    }
    if (t == 0) {
      dd[m - 2] = at(m - 2, m - 2);
      ee[m - 2] = at(m - 1, m - 2);
      dd[m - 1] = at(m - 1, m - 1) - 2 * vp[m - 1] * wp[m - 1];
    }
    __syncthreads();
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

StepSolver::~StepSolver() { cudaStreamSynchronize(stream_); }

std::size_t StepSolver::bytes_per_step(std::size_t pair_dims, std::size_t small_dims) {
  // J, C (and L^-1, and a product of C's size), an outer panel, every panel's diagonal inverse.
  const std::size_t panels = (pair_dims + kPanel - 1) / kPanel;
  return (pair_dims * pair_dims + 3 * small_dims * small_dims + pair_dims * kOuter + panels * kPanel * kPanel +
          3 * small_dims + 4) * sizeof(double) + 4 * sizeof(int);
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
  removed_rows_ = n_removed;
  if (steps_ == 0) return;
  const std::size_t values = (n_added + n_removed) * d;
  // (The batch before may still be on the device: growing a buffer here and in solve()
  // relies on cudaFree waiting for the device, as it does.)
  grow(rows_, values);
  grow(ends_, 2 * steps_);
  // The staging set filled two batches ago: its copy has run before this one's may start.
  Staging& staging = staging_[next_staging_];
  next_staging_ = 1 - next_staging_;
  SIMKIT_CUDA_CHECK(cudaEventSynchronize(staging.copied.get()));
  if (staging.rows.size() < values) staging.rows = cuda::PinnedBuffer<double>(std::max(values, 2 * staging.rows.size()));
  if (staging.ends.size() < 2 * steps_) staging.ends = cuda::PinnedBuffer<int>(2 * steps_);
  std::copy(added, added + n_added * d, staging.rows.get());
  std::copy(removed, removed + n_removed * d, staging.rows.get() + n_added * d);
  for (std::size_t j = 0; j < steps_; ++j) {
    staging.ends.get()[j] = static_cast<int>(added_end[j]);
    staging.ends.get()[steps_ + j] = static_cast<int>(removed_end[j]);
  }
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(rows_.get(), staging.rows.get(), values * sizeof(double), cudaMemcpyHostToDevice,
                                    stream_));
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(ends_.get(), staging.ends.get(), 2 * steps_ * sizeof(int), cudaMemcpyHostToDevice,
                                    stream_));
  staging.copied.record(stream_);
  grow(step_sums_, steps_ * d);
  step_sums_kernel<<<blocks_for(d, 128), 128, 2 * steps_ * sizeof(int), stream_>>>(
      sums, rows_.get(), ends_.get(), ends_.get() + steps_, removed_base_, static_cast<int>(steps_), static_cast<int>(d),
      step_sums_.get());
  SIMKIT_CUDA_CHECK_LAUNCH();
}

void StepSolver::cholesky(double* mats, std::size_t stride, int ld, int n, int columns, bool store, int flag) {
  // Outer panels of kOuter columns, right-looking: the trailing matrix is updated once an
  // outer panel, by products of depth kOuter. Inside an outer panel, kPanel-wide panels,
  // left-looking: each first takes the updates of the panels before it in the outer panel,
  // then its diagonal block is factored and inverted (one kernel) and the rows below it
  // solved by a product with that inverse into P (the outer panel's L21, rows counted
  // from the outer panel's first column).
  const int batch = static_cast<int>(steps_);
  const std::size_t inverse_stride = std::size_t(kPanel) * kPanel, panel_stride = std::size_t(n) * kOuter;
  const int panels = (columns + kPanel - 1) / kPanel;
  grow(inverse_, panels * steps_ * inverse_stride);
  grow(panel_, steps_ * panel_stride);
  const long long ms = static_cast<long long>(stride), ps = static_cast<long long>(panel_stride),
                  is = static_cast<long long>(inverse_stride);
  const std::size_t shared = (kPanel * kPanel + kPanel) * sizeof(double);
  cuda::allow_dynamic_shared<cholesky_diagonal_kernel>(shared);
  const double minus_one = -1, one = 1, zero = 0;
  for (int k0 = 0; k0 < columns; k0 += kOuter) {
    const int outer = std::min(kOuter, columns - k0), pld = n - k0;
    double* p = panel_.get();
    for (int c = k0; c < k0 + outer; c += kPanel) {
      const int w = std::min(kPanel, k0 + outer - c), before = c - k0;
      if (before > 0) {  // the updates of this outer panel's earlier panels
        SIMKIT_CUBLAS_CHECK(cublasDgemmStridedBatched(blas_, CUBLAS_OP_N, CUBLAS_OP_T, n - c, w, before, &minus_one,
                                                      p + (c - k0), pld, ps, p + (c - k0), pld, ps, &one,
                                                      mats + c + std::size_t(c) * ld, ld, ms, batch));
      }
      double* inverse = inverse_.get() + (c / kPanel) * steps_ * inverse_stride;  // this panel's, every matrix
      cholesky_diagonal_kernel<<<batch, kPanelThreads, shared, stream_>>>(mats, stride, ld, columns, c, w, store,
                                                                          inverse, tops_.get(), flags_.get(), flag);
      SIMKIT_CUDA_CHECK_LAUNCH();
      const int rows = n - c - w;
      if (rows <= 0) continue;
      double* below = mats + (c + w) + std::size_t(c) * ld;
      double* into = p + (c + w - k0) + std::size_t(before) * pld;
      SIMKIT_CUBLAS_CHECK(cublasDgemmStridedBatched(blas_, CUBLAS_OP_N, CUBLAS_OP_T, rows, w, w, &one, below, ld, ms,
                                                    inverse, kPanel, is, &zero, into, pld, ps, batch));
      if (store) {
        copy_block_kernel<<<dim3(blocks_for(std::size_t(rows) * w, 256 * 8), batch), 256, 0, stream_>>>(
            into, panel_stride, pld, below, stride, ld, rows, w);
        SIMKIT_CUDA_CHECK_LAUNCH();
      }
    }
    // The trailing lower triangle, a column block at a time: A22 -= P P^T.
    for (int c0 = k0 + outer; c0 < n; c0 += 2 * kPanel) {
      const int width = std::min(2 * kPanel, n - c0);
      SIMKIT_CUBLAS_CHECK(cublasDgemmStridedBatched(blas_, CUBLAS_OP_N, CUBLAS_OP_T, n - c0, width, outer, &minus_one,
                                                    p + (c0 - k0), pld, ps, p + (c0 - k0), pld, ps, &one,
                                                    mats + c0 + std::size_t(c0) * ld, ld, ms, batch));
    }
  }
}

void StepSolver::whiten(double* schur, std::size_t schur_stride, int ld, int m) {
  // W = L^-1 from the diagonal blocks' inverses (left by cholesky() in inverse_, a panel
  // at a time), block row by block row of distance from the diagonal:
  // W_ij = -W_ii sum_{j <= k < i} L_ik W_kj.
  const int batch = static_cast<int>(steps_), blocks = (m + kPanel - 1) / kPanel;
  const std::size_t stride = std::size_t(m) * m, inverse_stride = std::size_t(kPanel) * kPanel;
  const long long s = static_cast<long long>(stride), t_stride = static_cast<long long>(inverse_stride);
  grow(whitener_, steps_ * stride);
  grow(product_, steps_ * stride);
  SIMKIT_CUDA_CHECK(cudaMemsetAsync(whitener_.get(), 0, steps_ * stride * sizeof(double), stream_));
  const double one = 1, minus_one = -1, zero = 0;
  double* w = whitener_.get();
  const double* l = small_.get();
  for (int i = 0; i < blocks; ++i) {
    const int size = std::min(kPanel, m - i * kPanel);
    copy_block_kernel<<<dim3(blocks_for(std::size_t(size) * size, 256 * 8), batch), 256, 0, stream_>>>(
        inverse_.get() + i * steps_ * inverse_stride, inverse_stride, kPanel, w + i * kPanel + std::size_t(i) * kPanel * m,
        stride, m, size, size);
    SIMKIT_CUDA_CHECK_LAUNCH();
  }
  double* scratch = product_.get();  // T_ij, kPanel x kPanel a matrix
  for (int distance = 1; distance < blocks; ++distance)
    for (int i = distance; i < blocks; ++i) {
      const int j = i - distance, rows = std::min(kPanel, m - i * kPanel);
      const std::size_t at_ij = i * kPanel + std::size_t(j) * kPanel * m;
      SIMKIT_CUBLAS_CHECK(cublasDgemmStridedBatched(blas_, CUBLAS_OP_N, CUBLAS_OP_N, rows, kPanel, distance * kPanel,
                                                    &one, l + at_ij, m, s, w + std::size_t(j) * kPanel * (m + 1), m, s,
                                                    &zero, scratch, kPanel, t_stride, batch));
      SIMKIT_CUBLAS_CHECK(cublasDgemmStridedBatched(blas_, CUBLAS_OP_N, CUBLAS_OP_N, rows, kPanel, rows, &minus_one,
                                                    w + std::size_t(i) * kPanel * (m + 1), m, s, scratch, kPanel,
                                                    t_stride, &zero, w + at_ij, m, s, batch));
    }
  // M = W S W^T: X = W S into the scratch, then X W^T over S.
  SIMKIT_CUBLAS_CHECK(cublasDgemmStridedBatched(blas_, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, w, m, s, schur, ld,
                                                static_cast<long long>(schur_stride), &zero, scratch, m, s, batch));
  SIMKIT_CUBLAS_CHECK(cublasDgemmStridedBatched(blas_, CUBLAS_OP_N, CUBLAS_OP_T, m, m, m, &one, scratch, m, s, w, m, s,
                                                &zero, schur, ld, static_cast<long long>(schur_stride), batch));
}

void StepSolver::end(double* m2, double* sums) {
  if (steps_ == 0) return;
  // Row-major rows x d rows are a column-major d x rows matrix R: M2 += R R^T, then the
  // removed rows' the same way with -1; the sums are the last step's.
  const double one = 1, minus_one = -1;
  const int d = static_cast<int>(d_);
  if (removed_base_ > 0)
    SIMKIT_CUBLAS_CHECK(cublasDsyrk(blas_, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, d, static_cast<int>(removed_base_), &one,
                                   rows_.get(), d, &one, m2, d));
  if (removed_rows_ > 0)
    SIMKIT_CUBLAS_CHECK(cublasDsyrk(blas_, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, d, static_cast<int>(removed_rows_),
                                   &minus_one, rows_.get() + removed_base_ * d_, d, &one, m2, d));
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(sums, step_sums_.get() + (steps_ - 1) * d_, d_ * sizeof(double),
                                    cudaMemcpyDeviceToDevice, stream_));
  steps_ = 0;
}

void StepSolver::solve(const double* m2, const std::vector<std::size_t>& a, const std::vector<std::size_t>& b,
                       std::size_t k, double ridge) {
  if (steps_ == 0) {
    started_.emplace_back();  // nothing to solve: collect() answers with no steps
    return;
  }
  const bool a_small = a.size() <= b.size();
  const std::vector<std::size_t>& small_cols = a_small ? a : b;
  const std::vector<std::size_t>& big_cols = a_small ? b : a;
  const int m = static_cast<int>(small_cols.size()), big = static_cast<int>(big_cols.size()), p = m + big;
  const int batch = static_cast<int>(steps_);
  constexpr int kSmallFlag = 1, kBigFlag = 2;

  Answers answers;
  if (!spare_.empty()) {
    answers = std::move(spare_.back());
    spare_.pop_back();
  }
  if (answers.copied == nullptr) answers.copied = std::make_unique<cuda::Event>();
  if (answers.order.size() < std::size_t(p)) answers.order = cuda::PinnedBuffer<int>(p);
  if (answers.lambda.size() < steps_ * k) answers.lambda = cuda::PinnedBuffer<double>(steps_ * k);
  if (answers.flags.size() < steps_) answers.flags = cuda::PinnedBuffer<int>(steps_);
  answers.steps = steps_;
  answers.k = k;
  answers.a_flag = a_small ? kSmallFlag : kBigFlag;
  answers.b_flag = a_small ? kBigFlag : kSmallFlag;
  int* order = answers.order.get();
  for (int i = 0; i < big; ++i) order[i] = static_cast<int>(big_cols[i]);
  for (int i = 0; i < m; ++i) order[big + i] = static_cast<int>(small_cols[i]);
  grow(order_, p);
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(order_.get(), order, p * sizeof(int), cudaMemcpyHostToDevice, stream_));
  const std::size_t joint_stride = std::size_t(p) * p, small_stride = std::size_t(m) * m;
  grow_zeroed(joint_, steps_ * joint_stride, stream_);
  grow_zeroed(small_, steps_ * small_stride, stream_);
  grow(tops_, steps_);
  grow(flags_, steps_);
  grow(diag_, steps_ * m);
  grow(off_, steps_ * m);
  grow(lambda_, steps_ * k);
  SIMKIT_CUDA_CHECK(cudaMemsetAsync(flags_.get(), 0, steps_ * sizeof(int), stream_));

  const bool timed = phase_timing && steps_ >= 32;
  std::deque<cuda::Event> marks;  // (events do not move)
  if (timed)
    for (int i = 0; i < 6; ++i) marks.emplace_back(cudaEventDefault);
  const auto mark = [&](int i) {
    if (timed) marks[i].record(stream_);
  };
  mark(0);
  build_kernel<<<dim3(blocks_for(p, 128), static_cast<unsigned>(p)), 128, 0, stream_>>>(
      m2, static_cast<int>(d_), rows_.get(), ends_.get(), ends_.get() + steps_, removed_base_, step_sums_.get(), batch,
      order_.get(), p, big, static_cast<double>(window_), ridge, joint_.get(), small_.get());
  SIMKIT_CUDA_CHECK_LAUNCH();

  mark(1);
  // The larger stream's columns of J: Chol(S_bb + rI), and the Schur complement behind it
  // (its lower triangle, made whole for the triangular solves); L L^T = S_ss + rI kept.
  cholesky(joint_.get(), joint_stride, p, p, big, false, kBigFlag);
  cholesky(small_.get(), small_stride, m, m, m, true, kSmallFlag);
  double* schur = joint_.get() + big + std::size_t(big) * p;
  symmetrize_kernel<<<dim3(blocks_for(small_stride, 256 * 8), batch), 256, 0, stream_>>>(schur, joint_stride, p, m);
  SIMKIT_CUDA_CHECK_LAUNCH();
  mark(2);

  // M = L^-1 S L^-T, in place of S.
  whiten(schur, joint_stride, p, m);
  mark(3);
  // Shared memory: four vectors and as many tile rows of the trailing triangle as fit.
  constexpr std::size_t kSharedLimit = 200 * 1024, kTile = 32 * 32 * sizeof(double);
  const std::size_t vectors = (4 + kTridiagThreads / 32) * std::size_t(m) * sizeof(double);
  int held_rows = 0;
  while (vectors + std::size_t(held_rows + 1) * (held_rows + 2) / 2 * kTile <= kSharedLimit) ++held_rows;
  const std::size_t tridiag_shared = vectors + std::size_t(held_rows) * (held_rows + 1) / 2 * kTile;
  cuda::allow_dynamic_shared<tridiagonal_kernel>(kSharedLimit);
  tridiagonal_kernel<<<std::min(batch, cuda::sm_count()), kTridiagThreads, tridiag_shared, stream_>>>(
      schur, joint_stride, p, m, batch, held_rows, diag_.get(), off_.get());
  SIMKIT_CUDA_CHECK_LAUNCH();
  mark(4);
  const std::size_t bisect_shared = 2 * std::size_t(m) * sizeof(double);
  cuda::allow_dynamic_shared<smallest_eigenvalues_kernel>(2 * kMaxSmall * sizeof(double));
  smallest_eigenvalues_kernel<<<dim3(batch, blocks_for(k, kBisectWarps)), 32 * kBisectWarps, bisect_shared, stream_>>>(
      diag_.get(), off_.get(), m, static_cast<int>(k), lambda_.get());
  SIMKIT_CUDA_CHECK_LAUNCH();
  mark(5);

  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(answers.lambda.get(), lambda_.get(), steps_ * k * sizeof(double),
                                    cudaMemcpyDeviceToHost, stream_));
  SIMKIT_CUDA_CHECK(cudaMemcpyAsync(answers.flags.get(), flags_.get(), steps_ * sizeof(int), cudaMemcpyDeviceToHost,
                                    stream_));
  answers.copied->record(stream_);
  started_.push_back(std::move(answers));
  if (timed) {
    SIMKIT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const auto us = [&](int i) { return 1000 * cuda::elapsed_ms(marks[i], marks[i + 1]) / steps_; };
    std::fprintf(stderr,
                 "cca solve: %zu steps p %d m %d, us a step: build %.2f cholesky %.2f whiten %.2f tridiagonal %.2f "
                 "bisection %.2f\n",
                 steps_, p, m, us(0), us(1), us(2), us(3), us(4));
  }
}

std::vector<double> StepSolver::collect(std::vector<int>& singular) {
  Answers answers = std::move(started_.front());
  started_.pop_front();
  singular.assign(answers.steps, 0);
  std::vector<double> rho(answers.steps * answers.k);
  if (answers.steps > 0) {
    SIMKIT_CUDA_CHECK(cudaEventSynchronize(answers.copied->get()));
    const int* flags = answers.flags.get();
    for (std::size_t j = 0; j < answers.steps; ++j)
      singular[j] = (flags[j] & answers.a_flag) ? 1 : (flags[j] & answers.b_flag) ? 2 : 0;
    // rho_j^2 = 1 - lambda_j, lambda ascending: rho descending.
    for (std::size_t i = 0; i < rho.size(); ++i) rho[i] = std::sqrt(std::clamp(1 - answers.lambda.get()[i], 0.0, 1.0));
  }
  spare_.push_back(std::move(answers));
  return rho;
}

}  // namespace simkit::cca::detail
