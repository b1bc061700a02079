// How fast can one GPU run the GEMMs of dgarray's matrix products?  Times,
// for row-major C[m,n] = A[m,k] B[k,n] (A's rows lda apart), the call
// dgarray makes (cublasGemmStridedBatchedEx_64, one batch), cublasGemmEx,
// and every algorithm cuBLASLt's heuristic offers, each with a 32 MiB
// workspace.  A diagnostic for the matmul rows of benchmarks/run.py, built
// and run on the GPU machine by benchmarks/gpu_check.sh (step gemm), on
// random data:
//
//   nvcc -O2 -o gemm_algos benchmarks/gemm_algos.cu -lcublasLt -lcublas
//   [SM_TARGET=n] ./gemm_algos tf32|f32|f64 m n k [lda]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CK(x)                                                                  \
    do {                                                                       \
        cudaError_t e_ = (x);                                                  \
        if (e_ != cudaSuccess) {                                               \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));     \
            return 1;                                                          \
        }                                                                      \
    } while (0)
#define CB(x)                                                                  \
    do {                                                                       \
        cublasStatus_t s_ = (x);                                               \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                     \
            std::fprintf(stderr, "%s: %s\n", #x, cublasGetStatusString(s_));  \
            return 1;                                                          \
        }                                                                      \
    } while (0)

static const size_t kWorkspace = (size_t)32 << 20;

// x[i] uniform in [-1, 1) from a hash of i: random data, as the benchmark
// rows use (constant data draws less power and runs faster).
template <class T> __global__ void fill_random(T *x, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        x[i] = (T)((double)h / 2147483648.0 - 1.0);
    }
}

// Host microseconds per enqueue of the last time_us (the GPU is busy with
// the earlier calls meanwhile, so this is the call's own host cost).
static double g_host_us;

// Mean microseconds of `reps` launches of f after two untimed ones.
template <class F> static double time_us(cudaStream_t s, F f, int reps = 8)
{
    cudaEvent_t a, b;
    float ms = 0.f;
    f();
    f();
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a, s);
    const auto h0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; i++)
        f();
    g_host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0)
                    .count() / reps;
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return cudaGetLastError() == cudaSuccess ? 1e3 * ms / reps : -1.0;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s tf32|f32|f64 m n k [lda]\n", argv[0]);
        return 2;
    }
    const bool f64 = !std::strcmp(argv[1], "f64"), tf32 = !std::strcmp(argv[1], "tf32");
    const long m = std::atol(argv[2]), n = std::atol(argv[3]), k = std::atol(argv[4]);
    const long lda = argc > 5 ? std::atol(argv[5]) : k;
    const size_t isz = f64 ? 8 : 4;
    const cudaDataType dt = f64 ? CUDA_R_64F : CUDA_R_32F;
    const cublasComputeType_t ct = f64 ? CUBLAS_COMPUTE_64F
                                 : tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const double flops = 2.0 * m * n * k;
    const double one64 = 1.0, zero64 = 0.0;
    const float one32 = 1.f, zero32 = 0.f;
    const void *alpha = f64 ? (const void *)&one64 : (const void *)&one32;
    const void *beta = f64 ? (const void *)&zero64 : (const void *)&zero32;
    void *A, *B, *C, *ws;
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&A, (size_t)m * lda * isz));
    CK(cudaMalloc(&B, (size_t)k * n * isz));
    CK(cudaMalloc(&C, (size_t)m * n * isz));
    CK(cudaMalloc(&ws, kWorkspace));
    if (f64) {
        fill_random<<<1024, 256, 0, s>>>((double *)A, (size_t)m * lda, 1u);
        fill_random<<<1024, 256, 0, s>>>((double *)B, (size_t)k * n, 2u);
    } else {
        fill_random<<<1024, 256, 0, s>>>((float *)A, (size_t)m * lda, 1u);
        fill_random<<<1024, 256, 0, s>>>((float *)B, (size_t)k * n, 2u);
    }
    CK(cudaGetLastError());

    cublasHandle_t h;
    CB(cublasCreate(&h));
    CB(cublasSetStream(h, s));
    CB(cublasSetWorkspace(h, ws, kWorkspace));
    CB(cublasSetMathMode(h, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    std::printf("%s m=%ld n=%ld k=%ld lda=%ld\n", argv[1], m, n, k, lda);
    // C^T[n,m] = B^T[n,k] A^T[k,m]: row-major operands are the column-major transposes
    double t = time_us(s, [&] {
        cublasGemmStridedBatchedEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, alpha, B, dt, n, 0, A,
                                      dt, lda, 0, beta, C, dt, n, 0, 1, ct, CUBLAS_GEMM_DEFAULT);
    });
    std::printf("  strided batched (dgarray's call): %9.1f us %7.1f TFLOP/s, host %5.1f us\n", t,
                flops / t / 1e6, g_host_us);
    t = time_us(s, [&] {
        cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, alpha, B, dt, n, A, dt, lda, beta, C,
                     dt, n, ct, CUBLAS_GEMM_DEFAULT);
    });
    std::printf("  cublasGemmEx                    : %9.1f us %7.1f TFLOP/s, host %5.1f us\n", t,
                flops / t / 1e6, g_host_us);

    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulPreference_t pref;
    CB(cublasLtCreate(&lt));
    CB(cublasLtMatmulDescCreate(&op, ct, f64 ? CUDA_R_64F : CUDA_R_32F));
    if (const char *t = std::getenv("SM_TARGET")) { // kernels sized to fewer SMs
        int32_t target = std::atoi(t);
        CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &target,
                                          sizeof target));
        std::printf("  (cuBLASLt: SM count target %d)\n", target);
    }
    CB(cublasLtMatrixLayoutCreate(&la, dt, n, k, n));   // cuBLAS's A: our B^T
    CB(cublasLtMatrixLayoutCreate(&lb, dt, k, m, lda)); // cuBLAS's B: our A^T
    CB(cublasLtMatrixLayoutCreate(&lc, dt, n, m, n));
    CB(cublasLtMatmulPreferenceCreate(&pref));
    size_t wsz = kWorkspace;
    CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsz,
                                            sizeof(wsz)));
    std::vector<cublasLtMatmulHeuristicResult_t> res(32);
    int got = 0;
    CB(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, (int)res.size(), res.data(),
                                      &got));
    for (int i = 0; i < got; i++) {
        int tile = -1, stages = -1, splitk = -1, swizzle = -1, cluster = -1;
        size_t w;
        cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                             sizeof(tile), &w);
        cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                             sizeof(stages), &w);
        cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
                                             &splitk, sizeof(splitk), &w);
        cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING,
                                             &swizzle, sizeof(swizzle), &w);
        cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID,
                                             &cluster, sizeof(cluster), &w);
        t = time_us(s, [&] {
            cublasLtMatmul(lt, op, alpha, B, la, A, lb, beta, C, lc, C, lc, &res[i].algo, ws,
                           kWorkspace, s);
        });
        std::printf("  lt[%2d] tile %3d stages %3d splitk %2d swz %d cluster %2d ws %8zu: %9.1f us "
                    "%7.1f TFLOP/s, host %5.1f us\n",
                    i, tile, stages, splitk, swizzle, cluster, res[i].workspaceSize, t,
                    t > 0 ? flops / t / 1e6 : 0.0, g_host_us);
    }
    return 0;
}
