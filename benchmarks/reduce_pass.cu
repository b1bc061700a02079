/* One GPU's passes of a full reduction, timed apart: the library's first
 * pass (kernels/reduce.cuh, as cuda_reduce.c plans it for one output cut
 * into chunks for 1, 2 or 4 waves of blocks) and then its final pass, for
 * a sum and an argmax of n float32 (random, then with NaNs), each checked
 * against the host.  Events around each pass; best and median of 60.
 *
 *   nvcc -O3 -std=c++17 --fmad=false -arch=sm_90 -Isrc/core -Isrc/backend/cuda \
 *        -Ikernels -o /tmp/reduce_pass benchmarks/reduce_pass.cu
 *   /tmp/reduce_pass [n (default 2^27)]
 */
#define DG_RED_PART 1000 /* no part's table: the kernels are named here */
#include "reduce.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                   \
    do {                                                                        \
        cudaError_t e_ = (x);                                                   \
        if (e_ != cudaSuccess) {                                                \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));            \
            return 1;                                                           \
        }                                                                       \
    } while (0)

typedef dg_red_arg_op<DG_FLOAT32, false> ArgMax;
typedef dg_red_loop_op<206> Sum; /* add, float32 (DG_LOOP_LIST) */

/* x[i]: uniform in [-0.5, 0.5) by a hash of i; NaNs at two places (nan). */
__global__ void fill(float *x, int64_t n, int nan)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull;
        h ^= h >> 31;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
        x[i] = nan && (i == n / 3 + 7 || i == n / 2 + 1) ? NAN
                                                         : (float)((h >> 40) * 0x1p-24) - 0.5f;
    }
}

struct pass {
    const char *name;
    void (*first)(dg_cu_red), (*final)(dg_cu_red);
    bool arg;
};

int main(int argc, char **argv)
{
    const int64_t n = argc > 1 ? atoll(argv[1]) : (int64_t)1 << 27;
    const pass passes[] = {{"argmax", dg_red_inner_k<ArgMax, 4>, dg_red_final_k<ArgMax>, true},
                           {"sum", dg_red_inner_k<Sum, 4>, dg_red_final_k<Sum>, false}};
    int nsm = 0;
    float *x, *dst;
    int64_t *idx, *pidx;
    char *part;
    unsigned char *phave;
    cudaEvent_t ev[3];
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaMalloc(&x, (size_t)n * 4));
    CK(cudaMalloc(&part, 1 << 20));
    CK(cudaMalloc(&pidx, 1 << 20));
    CK(cudaMalloc(&phave, 1 << 18));
    CK(cudaMalloc(&dst, 16));
    CK(cudaMalloc(&idx, 16));
    for (int i = 0; i < 3; i++)
        CK(cudaEventCreate(&ev[i]));
    for (int nan = 0; nan < 2; nan++) {
        std::vector<float> h((size_t)n);
        int64_t want = 0;
        double hsum = 0;
        fill<<<1024, 256>>>(x, n, nan);
        CK(cudaMemcpy(h.data(), x, (size_t)n * 4, cudaMemcpyDeviceToHost));
        for (int64_t j = 0; j < n; j++) {
            hsum += h[j];
            if (!std::isnan(h[want]) && (std::isnan(h[j]) || h[j] > h[want]))
                want = j;
        }
        printf("%s, n %lld: argmax %lld\n", nan ? "with NaNs" : "random", (long long)n,
               (long long)want);
        for (const pass &p : passes) {
            int per_sm = 0;
            cudaFuncAttributes fa;
            if (nan && !p.arg)
                continue;
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, p.first, 256, 0));
            CK(cudaFuncGetAttributes(&fa, p.first));
            for (int waves = 1; waves <= 4; waves *= 2) {
                /* red_args and red_plan for one output of n dense elements */
                dg_cu_red a;
                memset(&a, 0, sizeof a);
                a.nk = a.nr = 1;
                a.kshape[0] = 1;
                a.rshape[0] = n;
                a.rstr[0] = 4;
                a.rgs[0] = p.arg;
                a.m = 1;
                a.k = n;
                a.tpo = 256;
                a.tx = 1;
                a.src = (const char *)x;
                a.dst = (char *)dst;
                a.idx = p.arg ? idx : NULL;
                const int64_t most = (n + 256 * 4 * 8 - 1) / (256 * 4 * 8);
                const int64_t want_c = std::min<int64_t>((int64_t)waves * per_sm * nsm, most);
                a.kchunk = ((n + want_c - 1) / want_c + 3) / 4 * 4;
                a.nsplit = (int32_t)((n + a.kchunk - 1) / a.kchunk);
                a.part = part;
                a.part_idx = p.arg ? pidx : NULL;
                a.part_have = phave;
                dg_cu_red f = a;
                f.tpo = a.nsplit >= 64 ? 256 : a.nsplit >= 8 ? 32 : 1;
                std::vector<float> t1, t2;
                for (int rep = 0; rep < 65; rep++) {
                    float ms1, ms2;
                    CK(cudaEventRecord(ev[0]));
                    p.first<<<dim3(1, (unsigned)a.nsplit), 256>>>(a);
                    CK(cudaEventRecord(ev[1]));
                    p.final<<<1, 256>>>(f);
                    CK(cudaEventRecord(ev[2]));
                    CK(cudaEventSynchronize(ev[2]));
                    CK(cudaEventElapsedTime(&ms1, ev[0], ev[1]));
                    CK(cudaEventElapsedTime(&ms2, ev[0], ev[2]));
                    if (rep >= 5) {
                        t1.push_back(ms1 * 1e3f);
                        t2.push_back(ms2 * 1e3f);
                    }
                }
                CK(cudaGetLastError());
                std::sort(t1.begin(), t1.end());
                std::sort(t2.begin(), t2.end());
                float v = 0;
                int64_t got = -1;
                CK(cudaMemcpy(&v, dst, 4, cudaMemcpyDeviceToHost));
                if (p.arg)
                    CK(cudaMemcpy(&got, idx, 8, cudaMemcpyDeviceToHost));
                const bool ok = p.arg ? got == want : std::fabs(v - hsum) < 1e-3 * std::sqrt((double)n);
                printf("  %-6s %d wave(s), %5d chunks, %3d registers, %d blocks/SM: first pass "
                       "%6.1f us (%5.0f GB/s), median %6.1f; with the final %6.1f, median %6.1f  "
                       "%s\n",
                       p.name, waves, a.nsplit, fa.numRegs, per_sm, t1[0], n * 4 / (t1[0] * 1e3),
                       t1[t1.size() / 2], t2[0], t2[t2.size() / 2], ok ? "ok" : "WRONG");
                if (!ok)
                    return 2;
            }
        }
    }
    return 0;
}
