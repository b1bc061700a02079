// Where the time of a 1 GiB device-to-host copy goes, apart from dgarray:
// the PCIe ceiling (pinned destination), cudaMemcpy into pageable memory
// already touched and fresh (what CuPy's get does), the host's first touch
// of fresh pages by 1 to 16 threads (the kernel zeroing them), and
// cudaHostRegister of the destination (fresh, or touched first) with the
// DMA straight into it.  A diagnostic for the d2h_1GiB row of
// benchmarks/run.py, built and run by benchmarks/gpu_check.sh (step hostcopy):
//
//   nvcc -O2 -std=c++17 -o d2h_probe benchmarks/d2h_probe.cu && ./d2h_probe [MiB]
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

#define CK(x)                                                                  \
    do {                                                                       \
        cudaError_t e_ = (x);                                                  \
        if (e_ != cudaSuccess) {                                               \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));     \
            std::exit(1);                                                      \
        }                                                                      \
    } while (0)

static double now_ms()
{
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Fresh anonymous memory, huge pages advised (as NumPy's allocator does).
static char *fresh(size_t n)
{
    void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("mmap");
        std::exit(1);
    }
    madvise(p, n, MADV_HUGEPAGE);
    return (char *)p;
}

// One byte of every 4 KiB page written, by t threads over equal parts.
static void touch(char *p, size_t n, int t)
{
    std::vector<std::thread> th;
    for (int i = 0; i < t; i++)
        th.emplace_back([=] {
            size_t lo = n * i / t, hi = n * (i + 1) / t;
            for (size_t o = lo; o < hi; o += 4096)
                ((volatile char *)p)[o] = 0;
        });
    for (auto &x : th)
        x.join();
}

int main(int argc, char **argv)
{
    const size_t n = (size_t)(argc > 1 ? std::atol(argv[1]) : 1024) << 20;
    const int reps = 3;
    void *dev = nullptr, *pin = nullptr;
    CK(cudaMalloc(&dev, n));
    CK(cudaMemset(dev, 1, n));
    CK(cudaHostAlloc(&pin, n, cudaHostAllocDefault));
    CK(cudaDeviceSynchronize());
    std::printf("d2h_probe: %zu MiB, best of %d, ms\n", n >> 20, reps);
    auto best = [&](const char *what, auto f) {
        double b = 1e30;
        for (int r = 0; r < reps; r++) {
            double t = f();
            if (t < b)
                b = t;
        }
        std::printf("  %-44s %8.2f ms  %6.1f GB/s\n", what, b, n / b / 1e6);
        return b;
    };
    best("pinned destination (PCIe ceiling)", [&] {
        double t0 = now_ms();
        CK(cudaMemcpy(pin, dev, n, cudaMemcpyDeviceToHost));
        return now_ms() - t0;
    });
    best("h2d from pinned", [&] {
        double t0 = now_ms();
        CK(cudaMemcpy(dev, pin, n, cudaMemcpyHostToDevice));
        return now_ms() - t0;
    });
    {
        char *w = fresh(n);
        touch(w, n, 16);
        best("pageable, touched before", [&] {
            double t0 = now_ms();
            CK(cudaMemcpy(w, dev, n, cudaMemcpyDeviceToHost));
            return now_ms() - t0;
        });
        munmap(w, n);
    }
    best("pageable, fresh (CuPy's get)", [&] {
        char *w = fresh(n);
        double t0 = now_ms();
        CK(cudaMemcpy(w, dev, n, cudaMemcpyDeviceToHost));
        double t = now_ms() - t0;
        munmap(w, n);
        return t;
    });
    for (int t : {1, 4, 8, 16}) {
        char name[64];
        std::snprintf(name, sizeof name, "first touch of fresh pages, %d threads", t);
        best(name, [&] {
            char *w = fresh(n);
            double t0 = now_ms();
            touch(w, n, t);
            double dt = now_ms() - t0;
            munmap(w, n);
            return dt;
        });
    }
    for (int pre : {0, 16}) {
        double treg = 1e30, tcp = 1e30, tun = 1e30, ttot = 1e30;
        for (int r = 0; r < reps; r++) {
            char *w = fresh(n);
            double t0 = now_ms();
            if (pre)
                touch(w, n, pre);
            double t1 = now_ms();
            CK(cudaHostRegister(w, n, cudaHostRegisterDefault));
            double t2 = now_ms();
            CK(cudaMemcpy(w, dev, n, cudaMemcpyDeviceToHost));
            double t3 = now_ms();
            CK(cudaHostUnregister(w));
            double t4 = now_ms();
            munmap(w, n);
            treg = std::min(treg, t2 - t1);
            tcp = std::min(tcp, t3 - t2);
            tun = std::min(tun, t4 - t3);
            ttot = std::min(ttot, t4 - t0);
        }
        std::printf("  register (%s): register %.2f, DMA %.2f, unregister %.2f, all %.2f ms"
                    " (%.1f GB/s)\n", pre ? "touched by 16 threads first" : "fresh", treg, tcp,
                    tun, ttot, n / ttot / 1e6);
    }
    CK(cudaFreeHost(pin));
    CK(cudaFree(dev));
    return 0;
}
