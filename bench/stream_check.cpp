// Independent check of ridgeline's DRAM roof: the STREAM triad a[i] = b[i] + s*c[i] over three arrays of
// `mib` MiB each (double; default 128), OpenMP static schedule, first touch, best of `reps` (default 20), as STREAM
// reports it; twice: with ordinary stores (the destination is read for ownership first: 32 bytes move for the 24
// counted) and with non-temporal stores (as STREAM is built with streaming stores, and as oneDNN writes large
// outputs: 24 bytes move); then the copy a[i] = b[i] with non-temporal stores (16 bytes counted and moved), and
// STREAM's own Copy with ordinary stores (16 bytes counted, as STREAM counts them: on CPUs that skip the read for
// ownership of a fully written line it moves 16, elsewhere 24), and the C library's memcpy over each thread's half
// (glibc streams large copies with its own non-temporal path: 42.8 GB/s on the Xeon VM where the SSE2 streaming
// copy gets 37 and STREAM's Copy 25), the kernels ridgeline's roof most often comes from. Prints "<triad GB/s>
// <triad non-temporal GB/s> <copy non-temporal GB/s> <copy GB/s> <memcpy GB/s>", counting 24 bytes per element for
// the triad and 16 for the copies.
// g++ -O3 -march=native -fopenmp stream_check.cpp; usage: stream_check [threads] [mib] [reps]
#include <immintrin.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : omp_get_max_threads();
    const long mib = argc > 2 ? std::atol(argv[2]) : 128;
    const int reps = argc > 3 ? std::atoi(argv[3]) : 20;
    omp_set_num_threads(threads);
    const long n = mib * 1024 * 1024 / 8;
    double* a = static_cast<double*>(std::aligned_alloc(64, n * sizeof(double)));
    double* b = static_cast<double*>(std::aligned_alloc(64, n * sizeof(double)));
    double* c = static_cast<double*>(std::aligned_alloc(64, n * sizeof(double)));
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) {
        a[i] = 1.0;
        b[i] = 2.0;
        c[i] = 0.5;
    }
    double best[5] = {0, 0, 0, 0, 0};
    for (int rep = 0; rep < reps; ++rep)
        for (int nt = 0; nt < 5; ++nt) {
            const auto t0 = std::chrono::steady_clock::now();
            if (nt == 4) {
#pragma omp parallel
                {
                    const long t = omp_get_thread_num(), m = omp_get_num_threads();
                    const long lo = n * t / m, hi = n * (t + 1) / m;
                    std::memcpy(c + lo, a + lo, static_cast<std::size_t>(hi - lo) * sizeof(double));
                }
            } else if (nt == 3) {
#pragma omp parallel for schedule(static)
                for (long i = 0; i < n; ++i) c[i] = a[i];
            } else if (nt == 0) {
#pragma omp parallel for schedule(static)
                for (long i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
            } else {
                const bool copy = nt == 2;
#pragma omp parallel
                {
                    const long t = omp_get_thread_num(), m = omp_get_num_threads();
                    long lo = n * t / m, hi = n * (t + 1) / m;
                    lo -= lo % 2;
                    if (t == m - 1) hi = n;
                    else hi -= hi % 2;
                    const __m128d s = _mm_set1_pd(3.0);
                    long i = lo;
                    if (copy) {
                        for (; i + 2 <= hi; i += 2) _mm_stream_pd(a + i, _mm_load_pd(b + i));
                        for (; i < hi; ++i) a[i] = b[i];
                    } else {
                        for (; i + 2 <= hi; i += 2)
                            _mm_stream_pd(a + i, _mm_add_pd(_mm_load_pd(b + i), _mm_mul_pd(s, _mm_load_pd(c + i))));
                        for (; i < hi; ++i) a[i] = b[i] + 3.0 * c[i];
                    }
                    _mm_sfence();
                }
            }
            const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            const double gbs = (nt >= 2 ? 16.0 : 24.0) * n / sec / 1e9;
            if (gbs > best[nt]) best[nt] = gbs;
        }
    std::printf("%.2f %.2f %.2f %.2f %.2f\n", best[0] + 0 * a[n / 2] + 0 * c[n / 2], best[1], best[2], best[3],
                best[4]);
    std::free(a);
    std::free(b);
    std::free(c);
    return 0;
}
