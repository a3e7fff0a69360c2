// Independent check of ridgeline's FMA peak: a plain loop of fused multiply-adds over 10 independent
// 8-wide accumulators per thread (10 + 2 constants fit the 16 AVX2 registers; 16 accumulators spill to
// memory and measured half the peak), written with GCC vector extensions (not intrinsics) and compiled on its
// own: g++ -O3 -march=native -fopenmp fma_check.cpp. Prints GFLOP/s (best of 5) for the given threads.
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

typedef float v8 __attribute__((vector_size(32)));

static float kernel(long iters) {
    v8 acc[10];
    for (int k = 0; k < 10; ++k) acc[k] = (v8){} + (1.0f + 0.01f * k);
    const v8 b = (v8){} + 0.999999f, c = (v8){} + 1e-6f;
    for (long i = 0; i < iters; ++i)
#pragma GCC unroll 10
        for (int k = 0; k < 10; ++k) acc[k] = acc[k] * b + c;  // contracted to vfmadd with -march=native
    v8 s = acc[0];
    for (int k = 1; k < 10; ++k) s += acc[k];
    return s[0];
}

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : omp_get_max_threads();
    omp_set_num_threads(threads);
    const long iters = 20'000'000;
    double best = 0;
    volatile float sink = 0;
    for (int rep = 0; rep < 5; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        float sum = 0;
#pragma omp parallel reduction(+ : sum)
        sum += kernel(iters);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        sink = sink + sum;
        const double gflops = 10.0 * 8 * 2 * iters * threads / s / 1e9;
        if (gflops > best) best = gflops;
    }
    std::printf("%.2f\n", best);
    return 0;
}
