// The kernels and protocols behind the CPU ceilings (cpu_ceilings_kernels.hpp).

#include "cpu_ceilings_kernels.hpp"

#include <immintrin.h>
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <vector>

#include "ridgeline/backend_api/ceilings.hpp"
#include "ridgeline/core/model.hpp"

namespace ridgeline::cpu::ceilings_detail {

namespace {

constexpr int accumulators = 12;

// Each kernel returns a value depending on every accumulator so the work cannot be removed. None is
// instrumented by a sanitizer (the asan preset runs the roofline tests; see stream_slice). Every loop over
// the accumulators is unrolled by pragma: without it g++ -O2 (the ci preset) keeps the accumulators in a
// stack array and the kernel measures a store-to-load chain at about half the issue peak.
//
// The fp32 kernels differ only in the vector type, its intrinsics and the instruction set they are compiled for;
// a target attribute cannot be a template argument (a template body calling an AVX-512 intrinsic does not
// compile for the default target, and GCC refuses to inline it), so one macro writes the three.
#define RIDGELINE_FMA_KERNEL(name, isa, vec, set1, fmadd, add, to_float)                                \
    __attribute__((target(isa), no_sanitize("address", "undefined"))) float name(std::int64_t iters) {  \
        vec acc[accumulators];                                                                         \
        _Pragma("GCC unroll 12")                                                                       \
        for (int k = 0; k < accumulators; ++k) acc[k] = set1(1.0f + 0.01f * static_cast<float>(k));    \
        const vec b = set1(0.999999f), c = set1(1e-6f);                                                 \
        for (std::int64_t i = 0; i < iters; ++i)                                                        \
            _Pragma("GCC unroll 12")                                                                   \
            for (int k = 0; k < accumulators; ++k) acc[k] = fmadd(acc[k], b, c);                       \
        vec s = acc[0];                                                                                 \
        _Pragma("GCC unroll 12")                                                                       \
        for (int k = 1; k < accumulators; ++k) s = add(s, acc[k]);                                     \
        return to_float(s);                                                                             \
    }

/// The sum of a 512-bit vector's 16 lanes.
__attribute__((target("avx512f"), no_sanitize("address", "undefined"))) float lane_sum(__m512 s) {
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, s);
    float total = 0;
    for (float x : lanes) total += x;
    return total;
}

/// The first lane of a 256-bit vector.
__attribute__((target("avx2"))) float first_lane(__m256 s) { return _mm_cvtss_f32(_mm256_castps256_ps128(s)); }

RIDGELINE_FMA_KERNEL(fma128_kernel, "fma", __m128, _mm_set1_ps, _mm_fmadd_ps, _mm_add_ps, _mm_cvtss_f32)
RIDGELINE_FMA_KERNEL(fma256_kernel, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, first_lane)
RIDGELINE_FMA_KERNEL(fma512_kernel, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, lane_sum)
#undef RIDGELINE_FMA_KERNEL

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
    return lane_sum(s);
}

const fma_variant variants[] = {
    {"fp32 fma128", "fp32", "fma", accumulators * 4.0 * 2.0, fma128_kernel},
    {"fp32 avx2", "fp32", "fma", accumulators * 8.0 * 2.0, fma256_kernel},
    {"fp32 avx512", "fp32", "avx512f", accumulators * 16.0 * 2.0, fma512_kernel},
    {"bf16 avx512_bf16", "bf16", "avx512_bf16", accumulators * 64.0, bf16_kernel},
};

volatile float g_sink = 0;

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

double seconds_now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

const fma_variant* fma_variants_begin() { return std::begin(variants); }
const fma_variant* fma_variants_end() { return std::end(variants); }

backend_api::timing_options ceiling_protocol(bool quick) {
    // a ceiling is the best clean sample, not a median: no noise target (the median's CI says nothing of the best),
    // a fixed window instead. A few dozen samples find the best as well as hundreds do on a quiet machine, and on
    // a busy one no budget of seconds helps: the spot check raises a roof that a later run finds higher.
    return backend_api::timing_options{.warmup_runs = quick ? 1 : 2,
                                    .warmup_ms = quick ? 3.0 : 10.0,
                                    .min_samples = quick ? 5 : 10,
                                    .min_time_s = quick ? 0.015 : 0.06,
                                    .max_noise = 1e9,  // met at once: sampling stops at min_samples and min_time
                                    .max_time_s = quick ? 0.04 : 0.2};
}

backend_api::timing_options spot_protocol() {
    backend_api::timing_options o{
        .warmup_runs = 1, .warmup_ms = 5, .min_samples = 5, .min_time_s = 0.01, .max_noise = 0.02, .max_time_s = 0.03};
    return o;
}

backend_api::timing_result measure_ceiling(const std::function<void()>& run, backend_api::device_timer& timer,
                                        const backend_api::timing_options& protocol,
                                        const backend_api::ceilings_options& options, backend_api::ceilings& c,
                                        const std::string& key, int attempts, const std::function<void()>& flush) {
    backend_api::timing_result best;
    for (int a = 0; a < attempts; ++a) {
        backend_api::timing_result t = backend_api::measure(run, timer, protocol, flush, nullptr, options.stop);
        const bool better = a == 0 || (best.disturbed && !t.disturbed) ||
                            (best.disturbed == t.disturbed && t.samples > best.samples);
        if (better) best = std::move(t);
        // a disturbed sample is replaced by the protocol and the best clean one stands: only a measurement that could
        // not collect its clean samples is tried again
        if (!best.disturbed || (options.stop && options.stop->load())) break;
    }
    c.spread[key] = backend_api::sample_spread(best.disturbed ? std::vector<double>{} : best.sample_ms);
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

double fma_gflops(const fma_variant& v, std::int64_t iters, const backend_api::timing_options& protocol,
                  const backend_api::ceilings_options& options, backend_api::ceilings& c, const std::string& key,
                  int attempts) {
    backend_api::steady_timer timer;
    const int threads = omp_get_max_threads();
    auto run = [&] {
        float sum = 0;
#pragma omp parallel reduction(+ : sum)
        sum += v.kernel(iters);
        g_sink = g_sink + sum;
    };
    const auto t = measure_ceiling(run, timer, protocol, options, c, key, attempts);
    if (!(t.stats.min > 0)) return 0.0;  // interrupted; a disturbed reading is marked in c
    return v.flops_per_iter * static_cast<double>(iters) * threads / (t.stats.min * 1e-3) / 1e9;
}

const char* to_string(stream_kernel k) {
    switch (k) {
        case stream_kernel::copy: return "copy";
        case stream_kernel::triad: return "triad";
        case stream_kernel::read: return "read";
        case stream_kernel::copy_streaming: return "streaming copy";
    }
    return "?";
}

stream_arrays::stream_arrays(std::int64_t working_set_bytes, bool streaming_copy)
    : n_(std::max<std::int64_t>(1, working_set_bytes / 24)), streaming_copy_(streaming_copy) {
    // a and c hold half the working set each (the streaming copy's source and destination), b a third; not
    // value-initialised, so that the first touch is the threads' own
    const std::int64_t half = streaming_copy ? n_ + n_ / 2 + 1 : n_;
    a_ = allocate(half);
    b_ = allocate(n_);
    c_ = allocate(half);
    double* pa = a_.get();
    double* pb = b_.get();
    double* pc = c_.get();
    const std::int64_t n = n_;
#pragma omp parallel
    {
        const std::int64_t t = omp_get_thread_num(), m = omp_get_num_threads();
        for (std::int64_t i = half * t / m; i < half * (t + 1) / m; ++i) {
            pa[i] = 1.0;
            pc[i] = 0.5;
        }
        for (std::int64_t i = n * t / m; i < n * (t + 1) / m; ++i) pb[i] = 2.0;
    }
}

void stream_arrays::free_deleter::operator()(double* p) const noexcept { std::free(p); }

stream_arrays::buffer stream_arrays::allocate(std::int64_t count) {
    // Pages as a layer's buffers get them: no MADV_HUGEPAGE. Where transparent huge pages are "madvise" (Debian's
    // default) advised arrays streamed 16-26% faster than plain ones on a Zen 4 VM (nested paging: a TLB miss walks
    // two page tables), a roof no oneDNN buffer reaches; where they are "always", both get them.
    constexpr std::size_t align = 64;
    const std::size_t bytes = (static_cast<std::size_t>(count) * sizeof(double) + align - 1) / align * align;
    void* p = std::aligned_alloc(align, bytes);
    if (!p) throw std::bad_alloc();
    return buffer(static_cast<double*>(p));
}

double stream_arrays::bytes_per_pass(stream_kernel k) const {
    return k == stream_kernel::copy ? 16.0 * static_cast<double>(n_) : 24.0 * static_cast<double>(n_);
}

void stream_arrays::passes(stream_kernel k, int reps) {
    // the streaming copy moves 16 bytes per element over 1.5 n elements: the same 24 n bytes as triad and read
    if (k == stream_kernel::copy_streaming && !streaming_copy_)
        throw std::logic_error("stream_arrays: the streaming copy needs arrays made for it");
    const std::int64_t m = k == stream_kernel::copy_streaming ? n_ + n_ / 2 : n_;
    double* pa = a_.get();
    double* pb = b_.get();
    double* pc = c_.get();
    double sum = 0;
#pragma omp parallel reduction(+ : sum)
    {
        const std::int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
        const std::int64_t lo = m * t / n, hi = m * (t + 1) / n;
        for (int r = 0; r < reps; ++r) sum += stream_slice(pa, pb, pc, lo, hi, k);
    }
    g_sink = g_sink + static_cast<float>(sum);
}

double stream_gbs(stream_arrays& s, stream_kernel k, const backend_api::timing_options& protocol,
                  const backend_api::ceilings_options& options, backend_api::ceilings& c, const std::string& key,
                  int attempts) {
    backend_api::steady_timer timer;
    const double per_pass = s.bytes_per_pass(k);
    const int reps = static_cast<int>(std::max(1.0, static_cast<double>(8u << 20) / per_pass));  // >= 8 MiB a run
    const auto t = measure_ceiling([&] { s.passes(k, reps); }, timer, protocol, options, c, key, attempts);
    if (!(t.stats.min > 0)) return 0.0;  // interrupted; a disturbed reading is marked in c
    return per_pass * reps / (t.stats.min * 1e-3) / 1e9;
}

double sweep_point_gbs(std::int64_t working_set_bytes, const backend_api::timing_options& protocol,
                       const backend_api::ceilings_options& options, backend_api::ceilings& c, bool& clean, int attempts) {
    if (working_set_bytes < 24) return 0.0;  // not a size the sweep measures (implausible_ceilings refuses such a cache)
    stream_arrays s(working_set_bytes);
    double best = 0, spread = 0;
    for (stream_kernel k : {stream_kernel::triad, stream_kernel::read, stream_kernel::copy_streaming}) {
        if (options.stop && options.stop->load()) throw backend_api::ceilings_interrupted();
        const bool was_disturbed = c.disturbed;
        const double gbs = stream_gbs(s, k, protocol, options, c, "working_set.point", attempts);
        if (!(gbs > 0) || (c.disturbed && !was_disturbed)) clean = false;
        if (gbs > best) {
            best = gbs;
            spread = c.spread["working_set.point"];
        }
    }
    c.spread.erase("working_set.point");
    c.spread["working_set"] = std::max(c.spread["working_set"], spread);
    c.spread["working_set." + std::to_string(s.working_set_bytes())] = spread;
    return best;
}

backend_api::timing_result dispatch_time(backend_api::backend& b, const backend_api::timing_options& protocol,
                                      const backend_api::ceilings_options& options, backend_api::ceilings& c,
                                      const std::string& key, bool cold, int attempts) {
    core::model_builder mb("dispatch");
    mb.input("x", core::shape{1});
    mb.then("relu", core::relu{});
    const core::model_analysis g = core::analyze(mb.build(), core::dtype::fp32);
    auto prep = b.prepare(g, backend_api::make_graph_data(g, core::dtype::fp32, 1));
    backend_api::timing_options o = protocol;
    o.max_noise = std::min(o.max_noise, 0.02);  // a median, not a best: the noise target applies
    if (cold) {
        o.cache = backend_api::cache_mode::cold;
        o.warmup_runs = 1;
        o.min_samples = std::max(o.min_samples, 10);
    }
    return measure_ceiling([&] { prep->run(); }, b.timer(), o, options, c, key, attempts,
                           cold ? std::function<void()>([&] { b.flush_cache(); }) : std::function<void()>());
}

progress::progress(const backend_api::ceilings_options& options, std::vector<std::pair<std::string, double>> plan)
    : options_(options), plan_(std::move(plan)), t0_(seconds_now()) {}

void progress::next(const std::string& name) {
    if (!options_.on_progress || plan_.empty()) {
        ++index_;
        return;
    }
    const std::size_t i = std::min(index_, plan_.size() - 1);
    backend_api::ceilings_progress p;
    p.step = name.empty() ? plan_[i].first : name;
    p.index = static_cast<int>(i);
    p.total = static_cast<int>(plan_.size());
    p.elapsed_s = seconds_now() - t0_;
    double planned_done = 0, planned_left = 0;
    for (std::size_t k = 0; k < plan_.size(); ++k) (k < i ? planned_done : planned_left) += plan_[k].second;
    // the plan's seconds, scaled by the pace so far once a third of the plan has passed (earlier, one slow step
    // would multiply the whole estimate), at most 4x
    const double pace = planned_done > 0 && planned_done >= (planned_done + planned_left) / 3
                            ? std::min(4.0, p.elapsed_s / planned_done)
                            : 1.0;
    p.left_s = planned_left * pace;
    options_.on_progress(p);
    ++index_;
}

}  // namespace ridgeline::cpu::ceilings_detail
