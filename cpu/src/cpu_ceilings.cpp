// CPU ceilings (docs/roofline.md): what this CPU can issue and what a real kernel attains.
//
// - FMA peak: a register-resident kernel per instruction set, 12 independent accumulators per thread
//   (more than FMA latency x FMA ports on current cores), on every thread at once. No memory traffic.
// - Compute roof: a large oneDNN matmul through the backend (what a real GEMM attains).
// - Bandwidth: STREAM copy (16 bytes per element pair) and triad (24 bytes) over arrays far larger than the
//   last-level cache, every thread, static partitioning, first-touch initialisation (McCalpin, STREAM).
// - Working-set sweep: triad over growing working sets, each thread on its own slice, repeated inside
//   one parallel region so that the slices stay in the cache level they fit in.
// - Dispatch overhead: the smallest op (relu of one element) through the backend.
// The peaks (FMA, GEMM, STREAM) use the best sample of the shared timing protocol, as STREAM reports its
// "best rate": a ceiling is what the machine can do, and on a shared machine a slow sample measures the
// neighbours, not the ceiling. The dispatch overhead is the median (the typical fixed cost, not the luckiest).
// If the GEMM still beats the FMA kernel of its data type, the FMA kernel was disturbed: it is measured
// again once, and if it still loses it is raised to the GEMM roof and the method says so.

#include <immintrin.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <vector>

#include "ridgeline/backends/timing.hpp"
#include "ridgeline/config.hpp"
#include "ridgeline/cpu/cpu_backends.hpp"
#include "ridgeline/cpu/cpu_ceilings.hpp"
#include "ridgeline/cpu/cpu_info.hpp"

namespace ridgeline::cpu {

namespace {

constexpr int accumulators = 12;

// Each kernel returns a value depending on every accumulator so the work cannot be removed. None is
// instrumented by a sanitizer (the asan preset runs the roofline tests; see stream_slice). Every loop over
// the accumulators is unrolled by pragma: without it g++ -O2 (the ci preset) keeps the accumulators in a
// stack array and the kernel measures a store-to-load chain at about half the issue peak.
__attribute__((target("fma"), no_sanitize("address", "undefined"))) float fma128_kernel(std::int64_t iters) {
    __m128 acc[accumulators];
    #pragma GCC unroll 12
    for (int k = 0; k < accumulators; ++k) acc[k] = _mm_set1_ps(1.0f + 0.01f * static_cast<float>(k));
    const __m128 b = _mm_set1_ps(0.999999f), c = _mm_set1_ps(1e-6f);
    for (std::int64_t i = 0; i < iters; ++i)
        #pragma GCC unroll 12
        for (int k = 0; k < accumulators; ++k) acc[k] = _mm_fmadd_ps(acc[k], b, c);
    __m128 s = acc[0];
    #pragma GCC unroll 12
    for (int k = 1; k < accumulators; ++k) s = _mm_add_ps(s, acc[k]);
    return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma"), no_sanitize("address", "undefined"))) float fma256_kernel(std::int64_t iters) {
    __m256 acc[accumulators];
    #pragma GCC unroll 12
    for (int k = 0; k < accumulators; ++k) acc[k] = _mm256_set1_ps(1.0f + 0.01f * static_cast<float>(k));
    const __m256 b = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-6f);
    for (std::int64_t i = 0; i < iters; ++i)
        #pragma GCC unroll 12
        for (int k = 0; k < accumulators; ++k) acc[k] = _mm256_fmadd_ps(acc[k], b, c);
    __m256 s = acc[0];
    #pragma GCC unroll 12
    for (int k = 1; k < accumulators; ++k) s = _mm256_add_ps(s, acc[k]);
    return _mm_cvtss_f32(_mm256_castps256_ps128(s));
}

__attribute__((target("avx512f"), no_sanitize("address", "undefined"))) float fma512_kernel(std::int64_t iters) {
    __m512 acc[accumulators];
    #pragma GCC unroll 12
    for (int k = 0; k < accumulators; ++k) acc[k] = _mm512_set1_ps(1.0f + 0.01f * static_cast<float>(k));
    const __m512 b = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);
    for (std::int64_t i = 0; i < iters; ++i)
        #pragma GCC unroll 12
        for (int k = 0; k < accumulators; ++k) acc[k] = _mm512_fmadd_ps(acc[k], b, c);
    __m512 s = acc[0];
    #pragma GCC unroll 12
    for (int k = 1; k < accumulators; ++k) s = _mm512_add_ps(s, acc[k]);
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, s);
    float total = 0;
    for (float x : lanes) total += x;
    return total;
}

/// One vdpbf16ps: 16 lanes x 2 bf16 products accumulated = 64 FLOP.
__attribute__((target("avx512f,avx512bf16"), no_sanitize("address", "undefined"))) float bf16_kernel(std::int64_t iters) {
    __m512 acc[accumulators];
    #pragma GCC unroll 12
    for (int k = 0; k < accumulators; ++k) acc[k] = _mm512_set1_ps(0.01f * static_cast<float>(k));
    const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
    const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
    for (std::int64_t i = 0; i < iters; ++i)
        #pragma GCC unroll 12
        for (int k = 0; k < accumulators; ++k) acc[k] = _mm512_dpbf16_ps(acc[k], a, b);
    __m512 s = acc[0];
    #pragma GCC unroll 12
    for (int k = 1; k < accumulators; ++k) s = _mm512_add_ps(s, acc[k]);
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, s);
    float total = 0;
    for (float x : lanes) total += x;
    return total;
}

struct fma_variant {
    const char* name;    // "fp32 avx2"
    const char* dtype;   // "fp32"
    const char* needs;   // cpu flag
    double flops_per_iter;
    float (*kernel)(std::int64_t);
};

const fma_variant variants[] = {
    {"fp32 fma128", "fp32", "fma", accumulators * 4.0 * 2.0, fma128_kernel},
    {"fp32 avx2", "fp32", "fma", accumulators * 8.0 * 2.0, fma256_kernel},
    {"fp32 avx512", "fp32", "avx512f", accumulators * 16.0 * 2.0, fma512_kernel},
    {"bf16 avx512_bf16", "bf16", "avx512_bf16", accumulators * 64.0, bf16_kernel},
};

volatile float g_sink = 0;

backends::timing_options protocol(bool quick) {
    backends::timing_options o;
    o.warmup_runs = 2;
    o.warmup_ms = quick ? 20 : 100;
    o.min_samples = quick ? 5 : 10;
    o.min_time_s = quick ? 0.05 : 0.2;
    o.max_noise = 0.02;
    o.max_time_s = quick ? 0.3 : 1.5;
    return o;
}

/// GFLOP/s of one FMA variant on every thread: a run is one parallel region of `iters` iterations per thread.
double fma_gflops(const fma_variant& v, const backends::ceilings_options& options) {
    const bool quick = options.quick;
    backends::steady_timer timer;
    const std::int64_t iters = quick ? 200'000 : 1'000'000;
    const int threads = omp_get_max_threads();
    auto run = [&] {
        float sum = 0;
#pragma omp parallel reduction(+ : sum)
        sum += v.kernel(iters);
        g_sink = g_sink + sum;
    };
    const auto t = backends::measure(run, timer, protocol(quick), {}, nullptr, options.stop);
    return v.flops_per_iter * static_cast<double>(iters) * threads / (t.stats.min * 1e-3) / 1e9;
}

/// STREAM-style arrays, first touched by the threads that use them.
struct stream_arrays {
    std::vector<double> a, b, c;
    explicit stream_arrays(std::size_t n) : a(n), b(n), c(n) {
        double* pa = a.data();
        double* pb = b.data();
        double* pc = c.data();
        const auto m = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < m; ++i) {
            pa[i] = 1.0;
            pb[i] = 2.0;
            pc[i] = 0.5;
        }
    }
};

/// One thread's slice [lo, hi) of one pass of triad (a = b + s*c) or copy (c = a), vectorised for the widest
/// instruction set the CPU has (target_clones picks at load time; `omp simd` makes g++ vectorise at -O1 and
/// -O2 too): the cache levels of the working-set sweep deliver what a SIMD kernel gets from them, not what
/// scalar loads get (a scalar triad reads about a third of AVX2's L1 bandwidth). Never instrumented by a
/// sanitizer: the asan preset runs the roofline tests, and an instrumented loop would measure the
/// sanitizer's checks instead of the memory system.
__attribute__((target_clones("avx512f", "avx2", "default"), no_sanitize("address", "undefined"))) void stream_slice(
    double* __restrict pa, const double* __restrict pb, double* __restrict pc, std::int64_t lo, std::int64_t hi,
    bool triad) {
    const double scalar = 3.0;
    if (triad) {
#pragma omp simd
        for (std::int64_t i = lo; i < hi; ++i) pa[i] = pb[i] + scalar * pc[i];
    } else {
#pragma omp simd
        for (std::int64_t i = lo; i < hi; ++i) pc[i] = pa[i];
    }
}

/// `reps` passes of triad or copy over the first m elements, every thread on its own contiguous static slice
/// (the same slice in every pass, so a slice that fits a cache level stays there).
void stream_passes(double* pa, const double* pb, double* pc, std::int64_t m, bool triad, int reps) {
#pragma omp parallel
    {
        const std::int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
        const std::int64_t lo = m * t / n, hi = m * (t + 1) / n;
        for (int r = 0; r < reps; ++r) stream_slice(pa, pb, pc, lo, hi, triad);
    }
}

double stream_gbs(stream_arrays& s, std::size_t n, bool triad, int reps, const backends::ceilings_options& options) {
    const bool quick = options.quick;
    backends::steady_timer timer;
    double* pa = s.a.data();
    double* pb = s.b.data();
    double* pc = s.c.data();
    const auto m = static_cast<std::int64_t>(n);
    auto run = [&] { stream_passes(pa, pb, pc, m, triad, reps); };
    const auto t = backends::measure(run, timer, protocol(quick), {}, nullptr, options.stop);
    const double bytes = (triad ? 24.0 : 16.0) * static_cast<double>(n) * reps;
    g_sink = g_sink + static_cast<float>(pa[0] + pc[0]);
    return bytes / (t.stats.min * 1e-3) / 1e9;
}

std::string iso_now() {
    const std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return buf;
}

}  // namespace

std::string cpu_fingerprint(int threads) {
    const cpu_info& c = host_cpu();
    return "cpu|" + c.model_name + "|" + std::to_string(c.physical_cores) + " cores|" + std::to_string(threads) +
           " threads|" + c.isa() + "|oneDNN " + dnnl_version();
}

backends::ceilings measure_cpu_ceilings(backends::backend& b, const backends::ceilings_options& options) {
    const bool quick = options.quick;
    const cpu_info& info = host_cpu();
    backends::ceilings c;
    c.backend = b.name();
    const int threads = omp_get_max_threads();
    c.fingerprint = cpu_fingerprint(threads);
    c.measured_at = iso_now();
    c.ridgeline_version = RIDGELINE_VERSION;
    c.last_level_cache_bytes = info.l3_bytes ? info.l3_bytes : info.l2_bytes;

    // 1. FMA kernels
    for (const auto& v : variants) {
        if (!info.has(v.needs)) continue;
        const double g = fma_gflops(v, options);
        c.fma_peak_by_isa_gflops[v.name] = g;
        double& best = c.fma_peak_gflops[v.dtype];
        best = std::max(best, g);
    }
    c.method["fma_peak_gflops"] = "register-resident FMA kernel, " + std::to_string(accumulators) +
                                  " independent accumulators per thread, " + std::to_string(threads) +
                                  " threads; best instruction set per data type";

    // 2. GEMM roof per data type the backend supports
    const std::int64_t n = quick ? 1024 : 2048;
    for (core::dtype dt : {core::dtype::fp32, core::dtype::bf16, core::dtype::fp16}) {
        core::model_builder mb("gemm");
        mb.input("a", core::shape{n, n});
        mb.input("b", core::shape{n, n});
        mb.add("gemm", core::matmul{}, {"a", "b"});
        const core::model_analysis g = core::analyze(mb.build(), dt);
        if (!b.supports(g.layers[0], dt).supported) continue;
        try {
            auto prep = b.prepare(g, backends::make_graph_data(g, dt, 1));
            const auto t = backends::measure([&] { prep->run(); }, b.timer(), protocol(quick), {}, nullptr, options.stop);
            const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
            c.peak_gflops[std::string(core::to_string(dt))] = flops / (t.stats.min * 1e-3) / 1e9;
            c.method["peak_gflops." + std::string(core::to_string(dt))] =
                "oneDNN matmul " + std::to_string(n) + "^3 (" + prep->notes() + "), best of " +
                std::to_string(t.samples) + " samples";
        } catch (const std::exception&) {
            // a data type the library declines has no roof; the report shows none
        }
    }

    // the GEMM roof cannot beat the instruction-issue peak of its data type; when it does, the FMA kernel met
    // a busy machine: once more, then the FMA peak is raised to the roof (never a roof above the issue peak)
    for (const auto& [dt, roof] : c.peak_gflops) {
        auto fma = c.fma_peak_gflops.find(dt);
        if (fma == c.fma_peak_gflops.end() || roof <= fma->second) continue;
        for (const auto& v : variants)
            if (v.dtype == dt && info.has(v.needs)) {
                const double g = fma_gflops(v, options);
                c.fma_peak_by_isa_gflops[v.name] = std::max(c.fma_peak_by_isa_gflops[v.name], g);
                fma->second = std::max(fma->second, g);
            }
        if (roof > fma->second) {
            c.method["fma_peak_gflops." + dt] = "raised to the GEMM roof: the FMA kernel measured " +
                                                std::to_string(fma->second) + " GFLOP/s twice (a busy machine)";
            fma->second = roof;
        }
    }

    // 3. STREAM copy and triad over arrays of 4x the last-level cache each (2x with quick)
    const std::int64_t llc = c.last_level_cache_bytes > 0 ? c.last_level_cache_bytes : (32 << 20);
    const auto big = static_cast<std::size_t>((quick ? 2 : 4) * llc / 8);
    {
        stream_arrays s(big);
        c.copy_gbs = stream_gbs(s, big, false, 1, options);
        c.triad_gbs = stream_gbs(s, big, true, 1, options);
    }
    c.bandwidth_gbs = c.triad_gbs;
    c.method["bandwidth_gbs"] = "STREAM triad a = b + s*c, 24 bytes per element, 3 arrays of " +
                                std::to_string(big * 8 / (1 << 20)) + " MiB, " + std::to_string(threads) + " threads";

    // 4. working-set sweep: triad, 3 arrays, total working set from 48 KiB to the big arrays' size
    {
        std::vector<std::size_t> sizes;
        for (std::size_t elems = 2048; elems * 3 * 8 <= big * 3 * 8 && elems <= big; elems *= quick ? 4 : 2)
            sizes.push_back(elems);
        stream_arrays s(sizes.empty() ? 1 : sizes.back());
        for (std::size_t elems : sizes) {
            // enough repetitions that one run moves >= 8 MiB
            const int reps = static_cast<int>(std::max<std::size_t>(1, (8u << 20) / (elems * 24)));
            c.working_set_gbs.emplace_back(static_cast<std::int64_t>(elems * 24), stream_gbs(s, elems, true, reps, options));
        }
    }
    c.method["working_set_gbs"] = "STREAM triad over a growing working set (3 arrays), each thread on its own slice";

    // 5. dispatch overhead: relu of one element through the backend
    {
        core::model_builder mb("dispatch");
        mb.input("x", core::shape{1});
        mb.then("relu", core::relu{});
        const core::model_analysis g = core::analyze(mb.build(), core::dtype::fp32);
        auto prep = b.prepare(g, backends::make_graph_data(g, core::dtype::fp32, 1));
        const auto t = backends::measure([&] { prep->run(); }, b.timer(), protocol(quick), {}, nullptr, options.stop);
        c.dispatch_overhead_ms = t.stats.median;  // the typical fixed cost: the median, not the best
        c.method["dispatch_overhead_ms"] = "oneDNN eltwise relu of 1 element, median";
    }
    if (options.stop && options.stop->load()) throw backends::ceilings_interrupted();  // never half-measured
    return c;
}

}  // namespace ridgeline::cpu
