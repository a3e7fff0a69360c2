// Independent check of ridgeline's triad bandwidth: the STREAM triad a[i] = b[i] + s*c[i] over three
// arrays of 128 MiB each (double), OpenMP static schedule, first touch, best of 10 (as STREAM reports).
// g++ -O3 -march=native -fopenmp stream_check.cpp; prints GB/s counting 24 bytes per element.
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : omp_get_max_threads();
    omp_set_num_threads(threads);
    const long n = 16L * 1024 * 1024;  // 128 MiB per array
    double* a = static_cast<double*>(std::aligned_alloc(64, n * sizeof(double)));
    double* b = static_cast<double*>(std::aligned_alloc(64, n * sizeof(double)));
    double* c = static_cast<double*>(std::aligned_alloc(64, n * sizeof(double)));
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) {
        a[i] = 1.0;
        b[i] = 2.0;
        c[i] = 0.5;
    }
    double best = 0;
    for (int rep = 0; rep < 10; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double gbs = 24.0 * n / s / 1e9;
        if (gbs > best) best = gbs;
    }
    std::printf("%.2f\n", best + 0 * a[n / 2]);
    std::free(a);
    std::free(b);
    std::free(c);
    return 0;
}
