// cuBLAS, cuSOLVER and cuSPARSE, loaded when simkit first calls them rather than when a
// program starts: linked as usual, loading them (libcublasLt above all) took 70 ms of
// every simkit command's start, whether it used a GPU or not (bench/results/whole_commands.md).
// Each function simkit calls is defined here, with the library's own declaration (the
// compiler checks every signature against the headers), and calls the library's, found
// once. Hidden: a program that loads libsimkit.so and its own cuBLAS keeps its own.
#include <dlfcn.h>

#include <mutex>
#include <string>

#pragma GCC visibility push(hidden)
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include "simkit/error.hpp"

namespace simkit::cuda {
namespace {

enum class Library { cublas, cusolver, cusparse };

// The library's handle, opened on first use: by its soname (SIMKIT_*_SONAME, those of the
// toolkit simkit was built with) where the loader looks, else in that toolkit's folder.
void* library(Library which) {
  struct Opened {
    std::once_flag once;
    void* handle = nullptr;
    std::string error;  // the loader's, kept for every later call
  };
  static Opened opened[3];
  static constexpr const char* names[3] = {SIMKIT_CUBLAS_SONAME, SIMKIT_CUSOLVER_SONAME, SIMKIT_CUSPARSE_SONAME};
  Opened& o = opened[static_cast<int>(which)];
  const char* name = names[static_cast<int>(which)];
  std::call_once(o.once, [&] {
    o.handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (o.handle == nullptr)
      o.handle = dlopen((std::string(SIMKIT_CUDA_LIBRARY_DIR "/") + name).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (o.handle == nullptr) {
      const char* why = dlerror();
      o.error = why != nullptr ? why : "not found";
    }
  });
  if (o.handle == nullptr)
    throw Failure(std::string("cannot load ") + name + ", which simkit's GPU code needs (" + o.error +
                  "): install the CUDA toolkit's libraries or name their folder in LD_LIBRARY_PATH");
  return o.handle;
}

// Function `name` of the library, of type F (as its header declares it).
template <typename F>
F* lookup(Library which, const char* name) {
  void* found = dlsym(library(which), name);
  if (found == nullptr) throw Failure(std::string("the CUDA library loaded for simkit lacks ") + name);
  return reinterpret_cast<F*>(found);
}

}  // namespace
}  // namespace simkit::cuda

#define SIMKIT_FORWARD(lib, result, name, params, args)                                              \
  result name params {                                                                              \
    static auto* const function = simkit::cuda::lookup<result params>(simkit::cuda::Library::lib, #name); \
    return function args;                                                                           \
  }

SIMKIT_FORWARD(cublas, cublasStatus_t, cublasCreate_v2, (cublasHandle_t* handle), (handle))
SIMKIT_FORWARD(cublas, cublasStatus_t, cublasDcopy_v2,
               (cublasHandle_t handle, int n, const double* x, int incx, double* y, int incy),
               (handle, n, x, incx, y, incy))
SIMKIT_FORWARD(cublas, cublasStatus_t, cublasDestroy_v2, (cublasHandle_t handle), (handle))
SIMKIT_FORWARD(cublas, cublasStatus_t, cublasDgemmStridedBatched,
               (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                const double* alpha, const double* A, int lda, long long int strideA, const double* B, int ldb,
                long long int strideB, const double* beta, double* C, int ldc, long long int strideC, int batchCount),
               (handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC,
                batchCount))
SIMKIT_FORWARD(cublas, cublasStatus_t, cublasDgemm_v2,
               (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                const double* alpha, const double* A, int lda, const double* B, int ldb, const double* beta,
                double* C, int ldc),
               (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
SIMKIT_FORWARD(cublas, cublasStatus_t, cublasDgemv_v2,
               (cublasHandle_t handle, cublasOperation_t trans, int m, int n, const double* alpha, const double* A,
                int lda, const double* x, int incx, const double* beta, double* y, int incy),
               (handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy))
SIMKIT_FORWARD(cublas, cublasStatus_t, cublasDnrm2_v2,
               (cublasHandle_t handle, int n, const double* x, int incx, double* result),
               (handle, n, x, incx, result))
SIMKIT_FORWARD(cublas, cublasStatus_t, cublasDsyrk_v2,
               (cublasHandle_t handle, cublasFillMode_t uplo, cublasOperation_t trans, int n, int k,
                const double* alpha, const double* A, int lda, const double* beta, double* C, int ldc),
               (handle, uplo, trans, n, k, alpha, A, lda, beta, C, ldc))
SIMKIT_FORWARD(cublas, cublasStatus_t, cublasDtrsm_v2,
               (cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t trans,
                cublasDiagType_t diag, int m, int n, const double* alpha, const double* A, int lda, double* B,
                int ldb),
               (handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb))
SIMKIT_FORWARD(cublas, cublasStatus_t, cublasGemmEx,
               (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B, cudaDataType Btype,
                int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                cublasGemmAlgo_t algo),
               (handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                computeType, algo))
SIMKIT_FORWARD(cublas, const char*, cublasGetStatusName, (cublasStatus_t status), (status))
SIMKIT_FORWARD(cublas, const char*, cublasGetStatusString, (cublasStatus_t status), (status))
SIMKIT_FORWARD(cublas, cublasStatus_t, cublasSetMathMode, (cublasHandle_t handle, cublasMath_t mode), (handle, mode))
SIMKIT_FORWARD(cublas, cublasStatus_t, cublasSetStream_v2,
               (cublasHandle_t handle, cudaStream_t streamId),
               (handle, streamId))
SIMKIT_FORWARD(cublas, cublasStatus_t, cublasSgemm_v2,
               (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta, float* C,
                int ldc),
               (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnCreate, (cusolverDnHandle_t* handle), (handle))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnCreateParams, (cusolverDnParams_t* params), (params))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnCreateSyevjInfo, (syevjInfo_t* info), (info))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnDestroy, (cusolverDnHandle_t handle), (handle))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnDestroyParams, (cusolverDnParams_t params), (params))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnDestroySyevjInfo, (syevjInfo_t info), (info))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnDpotrf,
               (cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double* A, int lda, double* Workspace,
                int Lwork, int* devInfo),
               (handle, uplo, n, A, lda, Workspace, Lwork, devInfo))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnDpotrf_bufferSize,
               (cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double* A, int lda, int* Lwork),
               (handle, uplo, n, A, lda, Lwork))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnDsyevd,
               (cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, double* A, int lda,
                double* W, double* work, int lwork, int* info),
               (handle, jobz, uplo, n, A, lda, W, work, lwork, info))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnDsyevd_bufferSize,
               (cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, const double* A,
                int lda, const double* W, int* lwork),
               (handle, jobz, uplo, n, A, lda, W, lwork))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnDsyevj,
               (cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, double* A, int lda,
                double* W, double* work, int lwork, int* info, syevjInfo_t params),
               (handle, jobz, uplo, n, A, lda, W, work, lwork, info, params))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnDsyevj_bufferSize,
               (cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, const double* A,
                int lda, const double* W, int* lwork, syevjInfo_t params),
               (handle, jobz, uplo, n, A, lda, W, lwork, params))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnSetStream,
               (cusolverDnHandle_t handle, cudaStream_t streamId),
               (handle, streamId))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnSgeqrf,
               (cusolverDnHandle_t handle, int m, int n, float* A, int lda, float* TAU, float* Workspace, int Lwork,
                int* devInfo),
               (handle, m, n, A, lda, TAU, Workspace, Lwork, devInfo))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnSgeqrf_bufferSize,
               (cusolverDnHandle_t handle, int m, int n, float* A, int lda, int* lwork),
               (handle, m, n, A, lda, lwork))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnSorgqr,
               (cusolverDnHandle_t handle, int m, int n, int k, float* A, int lda, const float* tau, float* work,
                int lwork, int* info),
               (handle, m, n, k, A, lda, tau, work, lwork, info))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnSorgqr_bufferSize,
               (cusolverDnHandle_t handle, int m, int n, int k, const float* A, int lda, const float* tau, int* lwork),
               (handle, m, n, k, A, lda, tau, lwork))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnXsyevBatched,
               (cusolverDnHandle_t handle, cusolverDnParams_t params, cusolverEigMode_t jobz, cublasFillMode_t uplo,
                int64_t n, cudaDataType dataTypeA, void* A, int64_t lda, cudaDataType dataTypeW, void* W,
                cudaDataType computeType, void* bufferOnDevice, size_t workspaceInBytesOnDevice, void* bufferOnHost,
                size_t workspaceInBytesOnHost, int* info, int64_t batchSize),
               (handle, params, jobz, uplo, n, dataTypeA, A, lda, dataTypeW, W, computeType, bufferOnDevice,
                workspaceInBytesOnDevice, bufferOnHost, workspaceInBytesOnHost, info, batchSize))
SIMKIT_FORWARD(cusolver, cusolverStatus_t, cusolverDnXsyevBatched_bufferSize,
               (cusolverDnHandle_t handle, cusolverDnParams_t params, cusolverEigMode_t jobz, cublasFillMode_t uplo,
                int64_t n, cudaDataType dataTypeA, const void* A, int64_t lda, cudaDataType dataTypeW, const void* W,
                cudaDataType computeType, size_t* workspaceInBytesOnDevice, size_t* workspaceInBytesOnHost,
                int64_t batchSize),
               (handle, params, jobz, uplo, n, dataTypeA, A, lda, dataTypeW, W, computeType, workspaceInBytesOnDevice,
                workspaceInBytesOnHost, batchSize))
SIMKIT_FORWARD(cusparse, cusparseStatus_t, cusparseCreate, (cusparseHandle_t* handle), (handle))
SIMKIT_FORWARD(cusparse, cusparseStatus_t, cusparseCreateCsr,
               (cusparseSpMatDescr_t* spMatDescr, int64_t rows, int64_t cols, int64_t nnz, void* csrRowOffsets,
                void* csrColInd, void* csrValues, cusparseIndexType_t csrRowOffsetsType,
                cusparseIndexType_t csrColIndType, cusparseIndexBase_t idxBase, cudaDataType valueType),
               (spMatDescr, rows, cols, nnz, csrRowOffsets, csrColInd, csrValues, csrRowOffsetsType, csrColIndType,
                idxBase, valueType))
SIMKIT_FORWARD(cusparse, cusparseStatus_t, cusparseCreateDnMat,
               (cusparseDnMatDescr_t* dnMatDescr, int64_t rows, int64_t cols, int64_t ld, void* values,
                cudaDataType valueType, cusparseOrder_t order),
               (dnMatDescr, rows, cols, ld, values, valueType, order))
SIMKIT_FORWARD(cusparse, cusparseStatus_t, cusparseCsr2cscEx2,
               (cusparseHandle_t handle, int m, int n, int nnz, const void* csrVal, const int* csrRowPtr,
                const int* csrColInd, void* cscVal, int* cscColPtr, int* cscRowInd, cudaDataType valType,
                cusparseAction_t copyValues, cusparseIndexBase_t idxBase, cusparseCsr2CscAlg_t alg, void* buffer),
               (handle, m, n, nnz, csrVal, csrRowPtr, csrColInd, cscVal, cscColPtr, cscRowInd, valType, copyValues,
                idxBase, alg, buffer))
SIMKIT_FORWARD(cusparse, cusparseStatus_t, cusparseCsr2cscEx2_bufferSize,
               (cusparseHandle_t handle, int m, int n, int nnz, const void* csrVal, const int* csrRowPtr,
                const int* csrColInd, void* cscVal, int* cscColPtr, int* cscRowInd, cudaDataType valType,
                cusparseAction_t copyValues, cusparseIndexBase_t idxBase, cusparseCsr2CscAlg_t alg,
                size_t* bufferSize),
               (handle, m, n, nnz, csrVal, csrRowPtr, csrColInd, cscVal, cscColPtr, cscRowInd, valType, copyValues,
                idxBase, alg, bufferSize))
SIMKIT_FORWARD(cusparse, cusparseStatus_t, cusparseDestroy, (cusparseHandle_t handle), (handle))
SIMKIT_FORWARD(cusparse, cusparseStatus_t, cusparseDestroyDnMat, (cusparseConstDnMatDescr_t dnMatDescr), (dnMatDescr))
SIMKIT_FORWARD(cusparse, cusparseStatus_t, cusparseDestroySpMat, (cusparseConstSpMatDescr_t spMatDescr), (spMatDescr))
SIMKIT_FORWARD(cusparse, const char*, cusparseGetErrorString, (cusparseStatus_t status), (status))
SIMKIT_FORWARD(cusparse, cusparseStatus_t, cusparseSpMM,
               (cusparseHandle_t handle, cusparseOperation_t opA, cusparseOperation_t opB, const void* alpha,
                cusparseConstSpMatDescr_t matA, cusparseConstDnMatDescr_t matB, const void* beta,
                cusparseDnMatDescr_t matC, cudaDataType computeType, cusparseSpMMAlg_t alg, void* externalBuffer),
               (handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg, externalBuffer))
SIMKIT_FORWARD(cusparse, cusparseStatus_t, cusparseSpMM_bufferSize,
               (cusparseHandle_t handle, cusparseOperation_t opA, cusparseOperation_t opB, const void* alpha,
                cusparseConstSpMatDescr_t matA, cusparseConstDnMatDescr_t matB, const void* beta,
                cusparseDnMatDescr_t matC, cudaDataType computeType, cusparseSpMMAlg_t alg, size_t* bufferSize),
               (handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg, bufferSize))

#pragma GCC visibility pop
