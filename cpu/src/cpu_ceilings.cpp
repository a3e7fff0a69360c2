// CPU ceilings (docs/roofline.md): what this CPU can issue and what a real kernel attains.
//
// - FMA peak: a register-resident kernel per instruction set, 12 independent accumulators per thread
//   (more than FMA latency x FMA ports on current cores), on every thread at once. No memory traffic.
// - Compute roof: a large oneDNN matmul through the backend (what a real GEMM attains).
// - Bandwidth: STREAM copy (16 bytes per element pair) and triad (24 bytes) over arrays far larger than the
//   last-level cache, every thread, static partitioning, first-touch initialisation (McCalpin, STREAM).
// - Working-set sweep: triad, read and a copy with non-temporal stores over growing working sets, each thread on
//   its own slice, repeated inside
//   one parallel region so that the slices stay in the cache level they fit in.
// - Dispatch overhead: the smallest op (relu of one element) through the backend.
// The peaks (FMA, GEMM, STREAM) use the best clean sample of the shared timing protocol, as STREAM reports its
// "best rate": a ceiling is what the machine can do, and on a shared machine a slow sample measures the
// neighbours, not the ceiling. The dispatch overhead is the median (the typical fixed cost, not the luckiest).
// Every measurement keeps its spread ((median - best) / best of its clean samples), from which the roofs'
// tolerances come. A measurement that saw stolen time (a disturbed sample, backends/disturbance.hpp) is
// repeated, up to three times in all; one that still cannot collect clean samples marks the ceilings
// disturbed, and disturbed ceilings are never cached. The compute roof of a data type is the highest
// measured compute ceiling (finish_compute_roofs): the FMA kernel; if the GEMM still beats it after the FMA
// kernel was measured once more, the GEMM is the roof and the method says so.

#include <immintrin.h>
#include <omp.h>

#include <chrono>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <algorithm>
#include <functional>
#include <new>
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

/// One ceiling's measurement: repeated while it sees disturbed samples (up to `attempts` in all); the result
/// with the most clean samples is kept, its spread and stolen fraction recorded under `key`, and the ceilings
/// marked disturbed when it never collected the minimum of clean samples.
backends::timing_result measure_ceiling(const std::function<void()>& run, backends::device_timer& timer,
                                        const backends::timing_options& protocol,
                                        const backends::ceilings_options& options, backends::ceilings& c,
                                        const std::string& key, int attempts = 3,
                                        const std::function<void()>& flush = {}) {
    backends::timing_result best;
    for (int a = 0; a < attempts; ++a) {
        backends::timing_result t = backends::measure(run, timer, protocol, flush, nullptr, options.stop);
        const bool better = a == 0 || (best.disturbed && !t.disturbed) ||
                            (best.disturbed == t.disturbed && t.samples > best.samples);
        if (better) best = std::move(t);
        if ((best.disturbed_samples == 0 && !best.disturbed) || (options.stop && options.stop->load())) break;
    }
    c.spread[key] = backends::sample_spread(best.disturbed ? std::vector<double>{} : best.sample_ms);
    c.stolen_fraction = std::max(c.stolen_fraction, best.stolen_fraction);
    // a measurement whose accounting was off cannot say it was clean: never cached either
    const bool unverified = best.disturbance_source.rfind("off", 0) == 0;
    if (best.disturbed || unverified) {
        c.disturbed = true;
        if (std::find(c.disturbed_ceilings.begin(), c.disturbed_ceilings.end(), key) == c.disturbed_ceilings.end())
            c.disturbed_ceilings.push_back(key);
    }
    return best;
}

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
double fma_gflops(const fma_variant& v, const backends::ceilings_options& options, backends::ceilings& c) {
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
    const auto t = measure_ceiling(run, timer, protocol(quick), options, c, std::string("fma_peak.") + v.name);
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

/// The STREAM kernels: copy (c = a, 16 bytes per element), triad (a = b + s*c, 24 bytes) and read
/// (sum of a + b + c, 24 bytes, no writes). Read gives a memory level's read bandwidth, which kernels that read
/// more than they write (a GEMV's weights, a pool, relu with non-temporal stores) can reach and triad cannot:
/// a roof must be the highest of them.
enum class stream_kernel { copy, triad, read, copy_streaming };

double stream_bytes_per_element(stream_kernel k) {
    return k == stream_kernel::copy || k == stream_kernel::copy_streaming ? 16.0 : 24.0;
}

/// One thread's slice [lo, hi) of one pass of a STREAM kernel, vectorised for the widest instruction set the
/// CPU has (target_clones picks at load time; `omp simd` makes g++ vectorise at -O1 and -O2 too): the cache
/// levels of the working-set sweep deliver what a SIMD kernel gets from them, not what scalar loads get (a
/// scalar triad reads about a third of AVX2's L1 bandwidth). Never instrumented by a sanitizer: the asan preset
/// runs the roofline tests, and an instrumented loop would measure the sanitizer's checks instead of the
/// memory system. Returns the read kernel's sum (0 for the others) so the reads cannot be removed.
__attribute__((target_clones("avx512f", "avx2", "default"), no_sanitize("address", "undefined"))) double stream_slice(
    double* __restrict pa, double* __restrict pb, double* __restrict pc, std::int64_t lo, std::int64_t hi,
    stream_kernel kernel) {
    const double scalar = 3.0;
    double sum = 0;
    switch (kernel) {
        case stream_kernel::triad:
#pragma omp simd
            for (std::int64_t i = lo; i < hi; ++i) pa[i] = pb[i] + scalar * pc[i];
            break;
        case stream_kernel::copy:
#pragma omp simd
            for (std::int64_t i = lo; i < hi; ++i) pc[i] = pa[i];
            break;
        case stream_kernel::copy_streaming: {
            // copy with non-temporal stores, as oneDNN writes large outputs: no read-for-ownership of the
            // destination, so a level delivers more than a plain copy or triad gets from it
            std::int64_t i = lo;
            for (; i < hi && (reinterpret_cast<std::uintptr_t>(pc + i) & 15) != 0; ++i) pc[i] = pa[i];
            for (; i + 2 <= hi; i += 2) _mm_stream_pd(pc + i, _mm_loadu_pd(pa + i));
            for (; i < hi; ++i) pc[i] = pa[i];
            _mm_sfence();
            break;
        }
        case stream_kernel::read:
#pragma omp simd reduction(+ : sum)
            for (std::int64_t i = lo; i < hi; ++i) sum += pa[i] + pb[i] + pc[i];
            break;
    }
    return sum;
}

/// `reps` passes of a kernel over the first m elements, every thread on its own contiguous static slice (the
/// same slice in every pass, so a slice that fits a cache level stays there).
void stream_passes(double* pa, double* pb, double* pc, std::int64_t m, stream_kernel kernel, int reps) {
    double sum = 0;
#pragma omp parallel reduction(+ : sum)
    {
        const std::int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
        const std::int64_t lo = m * t / n, hi = m * (t + 1) / n;
        for (int r = 0; r < reps; ++r) sum += stream_slice(pa, pb, pc, lo, hi, kernel);
    }
    g_sink = g_sink + static_cast<float>(sum);
}

double stream_gbs(stream_arrays& s, std::size_t n, stream_kernel kernel, int reps,
                  const backends::ceilings_options& options, backends::ceilings& c, const std::string& key) {
    const bool quick = options.quick;
    backends::steady_timer timer;
    double* pa = s.a.data();
    double* pb = s.b.data();
    double* pc = s.c.data();
    const auto m = static_cast<std::int64_t>(n);
    auto run = [&] { stream_passes(pa, pb, pc, m, kernel, reps); };
    const auto t = measure_ceiling(run, timer, protocol(quick), options, c, key);
    const double bytes = stream_bytes_per_element(kernel) * static_cast<double>(n) * reps;
    return bytes / (t.stats.min * 1e-3) / 1e9;
}

std::string iso_now() {
    const std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return buf;
}

backends::timing_result stream_spot(stream_arrays& s, std::size_t n, stream_kernel kernel, int reps,
                                    const backends::timing_options& o, const backends::ceilings_options& options,
                                    backends::ceilings& scratch) {
    backends::steady_timer timer;
    double* pa = s.a.data();
    double* pb = s.b.data();
    double* pc = s.c.data();
    auto run = [&] { stream_passes(pa, pb, pc, static_cast<std::int64_t>(n), kernel, reps); };
    return measure_ceiling(run, timer, o, options, scratch, "spot", 2);
}

/// The short protocol of a spot check and of a sweep point measured again: 5 samples within about 0.03 s.
backends::timing_options spot_protocol() {
    backends::timing_options o;
    o.warmup_runs = 1;
    o.warmup_ms = 5;
    o.min_samples = 5;
    o.min_time_s = 0.01;
    o.max_noise = 0.02;
    o.max_time_s = 0.03;
    return o;
}

/// One point of the working-set sweep measured again as the sweep measured it: the highest of triad, read and
/// the streaming-store copy on arrays of just that size (`size` bytes over 3 arrays of doubles), each under the
/// protocol `o`. `clean` turns false when a kernel's samples were disturbed (that kernel then counts 0).
double sweep_point_gbs(std::int64_t size, const backends::timing_options& o, const backends::ceilings_options& options,
                       backends::ceilings& scratch, bool& clean) {
    const auto elems = static_cast<std::size_t>(size / 24);
    if (elems == 0) return 0.0;  // not a size the sweep measures (implausible_ceilings refuses such a cache)
    stream_arrays s(elems);
    const int reps = static_cast<int>(std::max<std::size_t>(1, (8u << 20) / (elems * 24)));
    double best = 0;
    for (stream_kernel k : {stream_kernel::triad, stream_kernel::read, stream_kernel::copy_streaming}) {
        if (options.stop && options.stop->load()) throw backends::ceilings_interrupted();
        const auto t = stream_spot(s, elems, k, reps, o, options, scratch);
        if (t.disturbed || !(t.stats.min > 0)) clean = false;
        else best = std::max(best, stream_bytes_per_element(k) * static_cast<double>(elems) * reps / (t.stats.min * 1e-3) / 1e9);
    }
    return best;
}

}  // namespace

std::vector<double> remeasure_cpu_working_set(const std::vector<std::int64_t>& sizes,
                                              const backends::ceilings_options& options) {
    const backends::timing_options o = spot_protocol();  // three kernels: about 0.1 s a point
    std::vector<double> out;
    for (std::int64_t size : sizes) {
        // a point the host cannot hold twice over is not measured again (0: as if disturbed)
        const std::int64_t available = available_memory_bytes();
        if (available > 0 && size > available / 2) {
            out.push_back(0.0);
            continue;
        }
        backends::ceilings scratch;
        bool clean = true;
        double gbs = 0;
        try {
            gbs = sweep_point_gbs(size, o, backends::ceilings_options{true, options.stop}, scratch, clean);
        } catch (const std::bad_alloc&) {
            clean = false;
        }
        out.push_back(clean && !scratch.disturbed ? gbs : 0.0);
    }
    return out;
}

backends::ceilings_spot_check spot_check_cpu_ceilings(const backends::ceilings& cached,
                                                      const backends::ceilings_options& options) {
    const auto t0 = std::chrono::steady_clock::now();
    backends::ceilings_spot_check check;
    const cpu_info& info = host_cpu();
    // five measurements (FMA, two kernels at two sweep points): about 0.3 s in all
    const backends::timing_options o = spot_protocol();
    backends::ceilings scratch;  // measure_ceiling's bookkeeping: only `disturbed` is read here
    const backends::ceilings_options quick{true, options.stop};
    // the fp32 instruction set whose FMA kernel set the cached peak (the highest the cache has and the CPU runs)
    const fma_variant* chosen = nullptr;
    double chosen_gflops = 0;
    for (const auto& v : variants)
        if (std::string(v.dtype) == "fp32" && info.has(v.needs) && cached.fma_peak_by_isa_gflops.count(v.name) &&
            cached.fma_peak_by_isa_gflops.at(v.name) > chosen_gflops) {
            chosen = &v;
            chosen_gflops = cached.fma_peak_by_isa_gflops.at(v.name);
        }
    if (chosen) {
        backends::steady_timer timer;
        const std::int64_t iters = 200'000;
        const int threads = omp_get_max_threads();
        auto run = [&] {
            float sum = 0;
#pragma omp parallel reduction(+ : sum)
            sum += chosen->kernel(iters);
            g_sink = g_sink + sum;
        };
        const auto t = measure_ceiling(run, timer, o, quick, scratch, "spot", 2);
        if (options.stop && options.stop->load()) throw backends::ceilings_interrupted();
        check.fma_isa = chosen->name;
        if (t.disturbed || !(t.stats.min > 0)) check.clean = false;
        else check.fma_gflops = chosen->flops_per_iter * static_cast<double>(iters) * threads / (t.stats.min * 1e-3) / 1e9;
    }
    const std::int64_t llc = cached.last_level_cache_bytes > 0 ? cached.last_level_cache_bytes : (32 << 20);
    // Two points of the cached working-set sweep, measured the way the sweep measured them (the highest of triad,
    // read and the streaming-store copy, on arrays of just that size), so that the check compares like with like: a cache level (the
    // point nearest a quarter of the LLC) and DRAM (the smallest point of at least twice the LLC, at most
    // 384 MiB: larger ones would not fit the check's budget)
    auto nearest = [&](std::int64_t want, std::int64_t at_least, std::int64_t at_most) {
        std::int64_t size = 0;
        for (const auto& [bytes, gbs] : cached.working_set_gbs)
            if (bytes >= at_least && bytes <= at_most && (size == 0 || std::llabs(bytes - want) < std::llabs(size - want)))
                size = bytes;
        return size;
    };
    auto point = [&](std::int64_t size) {
        bool clean = true;
        const double gbs = sweep_point_gbs(size, o, quick, scratch, clean);
        check.clean = check.clean && clean;
        return gbs;
    };
    if (const std::int64_t size = nearest(llc / 4, 0, llc)) {
        check.cache_working_set_bytes = size;
        check.cache_gbs = point(size);
    }
    if (const std::int64_t size = nearest(2 * llc, 2 * llc, std::int64_t{384} << 20)) {
        check.dram_working_set_bytes = size;
        check.dram_gbs = point(size);
    }
    check.clean = check.clean && !scratch.disturbed;
    if (options.stop && options.stop->load()) throw backends::ceilings_interrupted();
    check.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return check;
}

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
    c.last_level_cache_bytes = info.llc_total_bytes;  // all instances the threads can fill: "beyond" means beyond this
    {
        // the levels the sweep's threads fill: a per-core level (L1d; L2 below an L3) once per thread, up to the
        // cores allowed; the last level once per instance (llc_total_bytes)
        const std::int64_t per_core = std::max(1, std::min(threads, info.physical_cores));
        if (info.l1d_bytes > 0) c.cache_level_bytes.push_back(info.l1d_bytes * per_core);
        if (info.l2_bytes > 0 && info.l3_bytes > 0) c.cache_level_bytes.push_back(info.l2_bytes * per_core);
        if (info.llc_total_bytes > 0 && (c.cache_level_bytes.empty() || info.llc_total_bytes > c.cache_level_bytes.back()))
            c.cache_level_bytes.push_back(info.llc_total_bytes);
    }

    c.quick = quick;
    c.load_average = load_average();

    // 1. FMA kernels (the spread of a data type's peak is that of its best instruction set)
    for (const auto& v : variants) {
        if (!info.has(v.needs)) continue;
        const double g = fma_gflops(v, options, c);
        c.fma_peak_by_isa_gflops[v.name] = g;
        double& best = c.fma_peak_gflops[v.dtype];
        if (g > best) {
            best = g;
            c.spread[std::string("fma_peak.") + v.dtype] = c.spread[std::string("fma_peak.") + v.name];
        }
    }
    c.method["fma_peak_gflops"] = "register-resident FMA kernel, " + std::to_string(accumulators) +
                                  " independent accumulators per thread, " + std::to_string(threads) +
                                  " threads; best instruction set per data type, best clean sample";

    // 2. GEMM per data type the backend supports: a lower ceiling, what a real library kernel attains
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
            const std::string name(core::to_string(dt));
            const auto t = measure_ceiling([&] { prep->run(); }, b.timer(), protocol(quick), options, c, "gemm." + name);
            const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
            c.gemm_gflops[name] = flops / (t.stats.min * 1e-3) / 1e9;
            c.method["gemm." + name] = "oneDNN matmul " + std::to_string(n) + "^3 (" + prep->notes() + "), best of " +
                                       std::to_string(t.samples) + " clean samples";
        } catch (const std::exception&) {
            // a data type the library declines has no GEMM ceiling; the report shows none
        }
    }

    // the GEMM cannot beat the instruction-issue peak of its data type; when it does, the FMA kernel met a busy
    // machine that the accounting did not see (a neighbour on the sibling hyperthread, say): once more. If it
    // still loses, finish_compute_roofs takes the GEMM as the roof and says so.
    for (const auto& [dt, gemm] : c.gemm_gflops) {
        auto fma = c.fma_peak_gflops.find(dt);
        if (fma == c.fma_peak_gflops.end() || gemm <= fma->second) continue;
        for (const auto& v : variants)
            if (v.dtype == dt && info.has(v.needs)) {
                const double g = fma_gflops(v, options, c);
                c.fma_peak_by_isa_gflops[v.name] = std::max(c.fma_peak_by_isa_gflops[v.name], g);
                if (g > fma->second) {
                    fma->second = g;
                    c.spread["fma_peak." + dt] = c.spread[std::string("fma_peak.") + v.name];
                }
            }
    }
    backends::finish_compute_roofs(c);

    const std::int64_t llc = c.last_level_cache_bytes > 0 ? c.last_level_cache_bytes : (32 << 20);
    const auto big = static_cast<std::size_t>((quick ? 2 : 4) * llc / 8);
    // 3. working-set sweep (before the DRAM kernels: seconds of full-bandwidth DRAM traffic just before made the
    //    cache levels of a shared host measure low): triad, read and a streaming-store copy over 3 arrays, total
    //    working set from 48 KiB to the big arrays' size; each level's roof is the highest of the three (oneDNN
    //    writes large outputs with non-temporal stores: on a Xeon with 2 MiB of L2 a 6.4 MB BatchNorm moved 36 GB/s
    //    where triad and read got 30, the streaming copy 39)
    {
        std::vector<std::size_t> sizes;
        for (std::size_t elems = 2048; elems * 3 * 8 <= big * 3 * 8 && elems <= big; elems *= quick ? 4 : 2)
            sizes.push_back(elems);
        double spread = 0;
        for (std::size_t elems : sizes) {
            // arrays of just this size, allocated per point: a process holding hundreds of MB while it measures
            // an L1-sized working set measured a third of its bandwidth on a VM whose kernel samples the
            // accessed bits of large mappings (DAMON: TLB shootdowns), and nothing is gained by keeping them
            stream_arrays s(elems);
            // enough repetitions that one run moves >= 8 MiB
            const int reps = static_cast<int>(std::max<std::size_t>(1, (8u << 20) / (elems * 24)));
            const double triad = stream_gbs(s, elems, stream_kernel::triad, reps, options, c, "working_set");
            spread = std::max(spread, c.spread["working_set"]);
            const double read = stream_gbs(s, elems, stream_kernel::read, reps, options, c, "working_set");
            spread = std::max(spread, c.spread["working_set"]);
            const double copy = stream_gbs(s, elems, stream_kernel::copy_streaming, reps, options, c, "working_set");
            spread = std::max(spread, c.spread["working_set"]);
            c.working_set_gbs.emplace_back(static_cast<std::int64_t>(elems * 24), std::max({triad, read, copy}));
        }
        c.spread["working_set"] = spread;
    }
    c.method["working_set_gbs"] = "the highest of STREAM triad, read and a copy with non-temporal stores over a "
                                  "growing working set (3 arrays), each thread on its own slice";

    // 4. STREAM copy, triad and read over arrays of 4x the last-level cache each (2x with quick); the DRAM roof is
    //    the highest of them (which one depends on the machine: writes cost more than reads on most)
    {
        stream_arrays s(big);
        c.copy_gbs = stream_gbs(s, big, stream_kernel::copy, 1, options, c, "copy");
        c.triad_gbs = stream_gbs(s, big, stream_kernel::triad, 1, options, c, "triad");
        c.read_gbs = stream_gbs(s, big, stream_kernel::read, 1, options, c, "read");
    }
    // the DRAM roof: the highest of the three, and of the sweep's points beyond twice the LLC (they are DRAM too,
    // measured at another moment: a roof must not sit under a DRAM reading of its own ceilings)
    c.bandwidth_gbs = std::max({c.copy_gbs, c.triad_gbs, c.read_gbs});
    std::string best = c.bandwidth_gbs == c.read_gbs ? "read" : c.bandwidth_gbs == c.triad_gbs ? "triad" : "copy";
    for (const auto& [bytes, gbs] : c.working_set_gbs)
        if (bytes >= 2 * llc && gbs > c.bandwidth_gbs) {
            c.bandwidth_gbs = gbs;
            best = "the working-set sweep at " + std::to_string(bytes >> 20) + " MiB";
        }
    c.method["bandwidth_gbs"] = "the highest of STREAM copy (c = a, 16 bytes per element), triad (a = b + s*c, 24 bytes) "
                                "and read (sum of a + b + c, 24 bytes), 3 arrays of " +
                                std::to_string(big * 8 / (1 << 20)) + " MiB, " + std::to_string(threads) +
                                " threads, and of the sweep beyond twice the LLC: " + best;

    // 5. dispatch overhead: relu of one element through the backend
    {
        core::model_builder mb("dispatch");
        mb.input("x", core::shape{1});
        mb.then("relu", core::relu{});
        const core::model_analysis g = core::analyze(mb.build(), core::dtype::fp32);
        auto prep = b.prepare(g, backends::make_graph_data(g, core::dtype::fp32, 1));
        const auto t = measure_ceiling([&] { prep->run(); }, b.timer(), protocol(quick), options, c, "dispatch");
        c.dispatch_overhead_ms = t.stats.median;  // the typical fixed cost: the median, not the best
        c.method["dispatch_overhead_ms"] = "oneDNN eltwise relu of 1 element, median";
        // the same op with the last-level cache flushed before each run: what --cache cold pays per sample
        backends::timing_options cold = protocol(quick);
        cold.cache = backends::cache_mode::cold;
        cold.warmup_runs = 1;
        cold.min_samples = quick ? 5 : 15;
        cold.max_time_s = quick ? 0.5 : 2.0;
        const auto tc = measure_ceiling([&] { prep->run(); }, b.timer(), cold, options, c, "cold_dispatch", 3,
                                        [&] { b.flush_cache(); });
        c.cold_dispatch_overhead_ms = tc.stats.median;
        c.method["cold_dispatch_overhead_ms"] =
            "oneDNN eltwise relu of 1 element, the last-level cache flushed before each run, median";

        // 6. what one run after a flush moves: relu over 1 Mi floats (4 MiB read, 4 MiB written), flushed before
        // each run, less the cold dispatch cost
        core::model_builder cold_mb("cold_bandwidth");
        cold_mb.input("x", core::shape{1 << 20});
        cold_mb.then("relu", core::relu{});
        const core::model_analysis gb = core::analyze(cold_mb.build(), core::dtype::fp32);
        auto prep_big = b.prepare(gb, backends::make_graph_data(gb, core::dtype::fp32, 1));
        const auto tb = measure_ceiling([&] { prep_big->run(); }, b.timer(), cold, options, c, "cold_bandwidth", 3,
                                        [&] { b.flush_cache(); });
        const double move_ms = tb.stats.median - c.cold_dispatch_overhead_ms;
        const double bytes = 8.0 * (1 << 20);
        c.cold_bandwidth_gbs = move_ms > 0 ? bytes / (move_ms * 1e6) : 0.0;
        c.method["cold_bandwidth_gbs"] = "oneDNN eltwise relu of 1 Mi floats (8 MiB moved), the last-level cache flushed "
                                         "before each run, median less the cold dispatch cost";
    }
    if (options.stop && options.stop->load()) throw backends::ceilings_interrupted();  // never half-measured
    return c;
}

}  // namespace ridgeline::cpu
