// The "cuda" backend: device description, support decisions, cache flush, NVTX ranges and the GPU
// ceilings. The graph itself is in cuda_graph.cpp.
#include "ridgeline/cuda/cuda_backend.hpp"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include "context.hpp"
#include "index_math.hpp"
#include "library_types.hpp"
#include "ridgeline/backend_api/require_supported.hpp"
#include "ridgeline/backend_api/timing.hpp"
#include "ridgeline/config.hpp"
#include "ridgeline/core/datasheet.hpp"

namespace ridgeline::cuda {

namespace {

std::string version_text(int v) {  // 13000 -> "13.0" (CUDA's major * 1000 + minor * 10)
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

int attribute(cudaDeviceAttr a, int device) {
    int v = 0;
    if (!RIDGELINE_CUDA_STATUS(cudaDeviceGetAttribute(&v, a, device)).ok()) return 0;
    return v;
}

std::string iso_now() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return buf;
}

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

/// The timing protocol for ceilings: enough samples for a stable median, bounded in time.
backend_api::timing_options ceilings_protocol(bool quick) {
    if (quick) return backend_api::timing_options::quick();
    backend_api::timing_options t{
        .warmup_runs = 3, .warmup_ms = 50, .min_samples = 10, .min_time_s = 0.1, .max_noise = 0.01, .max_time_s = 1.0};
    return t;
}

class cuda_backend final : public backend_api::backend {
public:
    explicit cuda_backend(int ordinal) : ctx_(ordinal), timer_(ctx_) {}

    [[nodiscard]] std::string name() const override { return "cuda"; }

    [[nodiscard]] backend_api::device_info device() const override {
        const cudaDeviceProp& p = ctx_.props;
        backend_api::device_info d;
        d.backend = "cuda:" + std::to_string(ctx_.ordinal);
        d.kind = backend_api::device_kind::gpu;
        d.name = p.name;
        d.cores = p.multiProcessorCount;
        d.threads = 0;
        d.isa = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
        d.memory_bytes = static_cast<std::int64_t>(p.totalGlobalMem);
        d.last_level_cache_bytes = p.l2CacheSize;
        int driver = 0, runtime = 0;
        (void)RIDGELINE_CUDA_STATUS(cudaDriverGetVersion(&driver));
        (void)RIDGELINE_CUDA_STATUS(cudaRuntimeGetVersion(&runtime));
        const int sm_khz = attribute(cudaDevAttrClockRate, ctx_.ordinal);
        const int mem_khz = attribute(cudaDevAttrMemoryClockRate, ctx_.ordinal);
        d.details = {{"library", "cuBLAS " + cublas_version() + ", cuDNN " + cudnn_version()},
                     {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
                     {"sm_count", std::to_string(p.multiProcessorCount)},
                     {"sm_clock_mhz", std::to_string(sm_khz / 1000)},
                     {"memory_clock_mhz", std::to_string(mem_khz / 1000)},
                     {"memory_bus_width_bits", std::to_string(p.memoryBusWidth)},
                     {"l2_bytes", std::to_string(p.l2CacheSize)},
                     {"driver", version_text(driver)},
                     {"runtime", version_text(runtime)},
                     {"cublas", cublas_version()},
                     {"cudnn", cudnn_version()},
                     {"ecc", p.ECCEnabled ? "on" : "off"}};
        if (mem_khz > 0 && p.memoryBusWidth > 0)
            d.details.emplace_back("theoretical_bandwidth_gbs",
                                   fixed(theoretical_bandwidth_gbs(mem_khz, p.memoryBusWidth), 0));
        if (const char* tf32 = std::getenv("NVIDIA_TF32_OVERRIDE")) d.details.emplace_back("NVIDIA_TF32_OVERRIDE", tf32);
        if (const auto sheet = core::find_datasheet(p.name))
            d.details.emplace_back("datasheet", std::string(sheet->device) + ": " + core::describe_peaks(*sheet));
        return d;
    }

    [[nodiscard]] backend_api::support supports(const core::layer_analysis&, core::dtype dt) const override {
        const int cc = ctx_.props.major * 10 + ctx_.props.minor;
        const std::string gpu = std::string(ctx_.props.name) + " (sm_" + std::to_string(cc) + ")";
        if ((dt == core::dtype::tf32 || dt == core::dtype::bf16) && cc < 80)
            return backend_api::support::no(std::string(core::to_string(dt)) +
                                         " needs compute capability 8.0 (Ampere) or newer; this GPU is " + gpu);
        if (dt == core::dtype::fp16 && cc < 53)
            return backend_api::support::no("fp16 arithmetic needs compute capability 5.3 or newer; this GPU is " + gpu);
        return backend_api::support::yes();
    }

    std::unique_ptr<backend_api::prepared> prepare(const core::model_analysis& graph,
                                                const backend_api::graph_data& data) override {
        backend_api::require_supported(*this, graph);
        return build_graph(ctx_, graph, data);
    }

    void synchronize() override { RIDGELINE_CUDA_CHECK(cudaStreamSynchronize(ctx_.s())); }

    backend_api::device_timer& timer() override { return timer_; }

    void flush_cache() override {
        // a read of at least twice the L2 on the work stream, enqueued before the sample's start event: the L2 is
        // left full of the flush buffer's clean lines (a memset left ~2x L2 of dirty lines, which the timed run then
        // wrote back: CUTLASS's profiler rotates inputs for the same reason). The buffer is zeroed once.
        if (!flush_.get()) {
            flush_ = device_buffer(static_cast<std::size_t>(flush_bytes(ctx_.props.l2CacheSize)));
            flush_sink_ = device_buffer(sizeof(float));
            RIDGELINE_CUDA_CHECK(cudaMemsetAsync(flush_.get(), 0, flush_.bytes(), ctx_.s()));
        }
        RIDGELINE_CUDA_CHECK(kernels::stream_read(static_cast<const float*>(flush_.get()),
                                                  static_cast<std::int64_t>(flush_.bytes() / sizeof(float)),
                                                  static_cast<float*>(flush_sink_.get()), ctx_.s()));
    }

    [[nodiscard]] std::int64_t free_memory_bytes() const override {
        ctx_.activate();
        std::size_t free = 0, total = 0;
        RIDGELINE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
        return static_cast<std::int64_t>(free);
    }

    void push_range(const std::string& name) override { nvtxRangePushA(name.c_str()); }
    void pop_range() override { nvtxRangePop(); }

    backend_api::ceilings measure_ceilings(const backend_api::ceilings_options& options) override;
    [[nodiscard]] bool measures_ceilings() const override { return true; }

private:
    void gemm_roofs(backend_api::ceilings& c, bool quick);
    void fma_roofs(backend_api::ceilings& c, bool quick);
    void copy_bandwidth(backend_api::ceilings& c, bool quick);
    void overheads(backend_api::ceilings& c, bool quick);

    device_context ctx_;
    event_timer timer_;
    device_buffer flush_, flush_sink_;
};

backend_api::ceilings cuda_backend::measure_ceilings(const backend_api::ceilings_options& options) {
    ctx_.activate();
    const cudaDeviceProp& p = ctx_.props;
    backend_api::ceilings c;
    c.backend = "cuda:" + std::to_string(ctx_.ordinal);
    int driver = 0;
    (void)RIDGELINE_CUDA_STATUS(cudaDriverGetVersion(&driver));
    c.fingerprint = "cuda|" + std::string(p.name) + "|sm_" + std::to_string(p.major) + std::to_string(p.minor) + "|" +
                    std::to_string(p.multiProcessorCount) + " SMs|" + std::to_string(p.totalGlobalMem) +
                    " bytes|driver " + version_text(driver) + "|cuBLAS " + cublas_version() + "|cuDNN " +
                    cudnn_version();
    c.measured_at = iso_now();
    c.ridgeline_version = RIDGELINE_VERSION;
    c.last_level_cache_bytes = p.l2CacheSize;
    if (p.l2CacheSize > 0) c.cache_level_bytes = {static_cast<std::int64_t>(p.l2CacheSize)};
    c.method["last_level_cache_bytes"] = "cudaDeviceProp::l2CacheSize";
    auto stopped = [&] { return options.stop && options.stop->load(); };  // checked between the three parts
    gemm_roofs(c, options.quick);
    if (!stopped()) fma_roofs(c, options.quick);
    backend_api::finish_compute_roofs(c);  // peak_gflops: the highest measured compute ceiling, here the GEMM
    if (!stopped()) copy_bandwidth(c, options.quick);
    if (!stopped()) overheads(c, options.quick);
    if (stopped()) throw backend_api::ceilings_interrupted();  // never half-measured
    if (const auto sheet = core::find_datasheet(p.name))
        c.method["datasheet"] = std::string(sheet->device) + ": " + core::describe_peaks(*sheet) + " (" +
                                std::string(sheet->source) + ")";
    else
        c.method["datasheet"] = "no datasheet entry for \"" + std::string(p.name) + "\"";
    return c;
}

void cuda_backend::gemm_roofs(backend_api::ceilings& c, bool quick) {
    for (core::dtype dt : {core::dtype::fp32, core::dtype::tf32, core::dtype::fp16, core::dtype::bf16}) {
        const std::string key = "gemm." + std::string(core::to_string(dt));
        const core::layer_analysis none{};
        if (const auto s = supports(none, dt); !s.supported) {
            c.method[key] = "not measured: " + s.reason;
            continue;
        }
        try {
            const std::int64_t n = roof_gemm_size(dt, quick);
            const auto esize = static_cast<std::size_t>(precision_of(dt).storage_bytes);
            const auto bytes = static_cast<std::size_t>(n * n) * esize;
            device_buffer a(bytes), b(bytes), out(bytes), ws(gemm_workspace_bytes);
            RIDGELINE_CUDA_CHECK(kernels::fill_random(elem_of(dt), a.get(), n * n, 1, ctx_.s()));
            RIDGELINE_CUDA_CHECK(kernels::fill_random(elem_of(dt), b.get(), n * n, 2, ctx_.s()));
            const gemm_shape g = linear_gemm(n, n, n);
            const auto plan = plan_lt_gemm(ctx_, dt, g, a.get(), b.get(), out.get(), nullptr, ws.get(), ws.bytes());
            const auto t = backend_api::measure(
                [&] { run_lt_gemm(ctx_, *plan, a.get(), b.get(), out.get(), ws.get(), ws.bytes()); }, timer_,
                ceilings_protocol(quick));
            // the GPU has no FMA kernel: the GEMM is its highest measured compute ceiling (finish_compute_roofs
            // makes it the roof); a disturbed one (throttled clocks) marks the ceilings, which are then not cached
            c.gemm_gflops[std::string(core::to_string(dt))] = gemm_gflops(n, n, n, t.stats.min);
            c.spread[key] = backend_api::sample_spread(t.sample_ms);
            c.stolen_fraction = std::max(c.stolen_fraction, t.stolen_fraction);
            if (t.disturbed) {
                c.disturbed = true;
                c.disturbed_ceilings.push_back(key);
            }
            c.method[key] = "cuBLASLt GEMM " + std::to_string(n) + "^3, " + std::string(precision_of(dt).storage) + " in/out, " +
                            std::string(precision_of(dt).cublas_compute) + ", " + plan->note + ", best of " +
                            std::to_string(t.samples) + " clean samples";
        } catch (const std::bad_alloc& e) {
            c.method[key] = std::string("not measured: ") + e.what();
        } catch (const backend_api::unsupported& e) {
            c.method[key] = std::string("not measured: ") + e.what();
        }
    }
}

void cuda_backend::fma_roofs(backend_api::ceilings& c, bool quick) {
    // the CUDA cores' peak per data type (fma_peak_gflops): what a layer that is not matrix work is judged against
    // (core::matrix_work; profiler's roofs_for), where the tensor-core GEMM is the dtype's roof. tf32 is a storage
    // of fp32 whose non-matrix arithmetic is fp32's.
    device_buffer sink(sizeof(float));
    const int blocks = 8 * std::max(ctx_.props.multiProcessorCount, 1);  // 2,048 threads per SM: full occupancy
    const int iters = quick ? 1024 : 4096;
    for (core::dtype dt : {core::dtype::fp32, core::dtype::fp16, core::dtype::bf16}) {
        const std::string d(core::to_string(dt)), key = "fma_peak." + d;
        if (const auto s = supports(core::layer_analysis{}, dt); !s.supported) {
            c.method[key] = "not measured: " + s.reason;
            continue;
        }
        const kernels::elem e = elem_of(dt);
        const auto t = backend_api::measure(
            [&] { RIDGELINE_CUDA_CHECK(kernels::fma_peak(e, blocks, iters, static_cast<float*>(sink.get()), ctx_.s())); },
            timer_, ceilings_protocol(quick));
        const double gflops = t.stats.min > 0 ? static_cast<double>(kernels::fma_peak_flops(e, blocks, iters)) /
                                                    (t.stats.min * 1e6)
                                              : 0.0;
        c.fma_peak_gflops[d] = gflops;
        if (dt == core::dtype::fp32) c.fma_peak_gflops["tf32"] = gflops;
        c.spread[key] = backend_api::sample_spread(t.sample_ms);
        if (t.disturbed) {
            c.disturbed = true;
            c.disturbed_ceilings.push_back(key);
        }
        c.method[key] = "CUDA cores: " + std::to_string(blocks) + " blocks of 256 threads, " +
                        std::to_string(kernels::fma_chains) + " independent chains of " + std::to_string(iters) + " " +
                        (dt == core::dtype::fp32 ? "FFMA" : "HFMA2 (" + d + " pairs)") + " each, best of " +
                        std::to_string(t.samples) + " clean samples";
    }
}

void cuda_backend::copy_bandwidth(backend_api::ceilings& c, bool quick) {
    // The DRAM roof: the highest of ridgeline's vectorised STREAM copy, triad and read kernels and the driver's
    // device-to-device copy, over buffers of 8x the L2 (docs/cuda.md). Bytes as STREAM counts them
    // (kernels::stream_bytes: each array read or written once).
    const std::int64_t bytes = copy_bench_bytes(ctx_.props.l2CacheSize, free_memory_bytes(), quick);
    const std::int64_t n = bytes / 4;  // floats per array
    device_buffer a(static_cast<std::size_t>(bytes)), b(static_cast<std::size_t>(bytes));
    RIDGELINE_CUDA_CHECK(kernels::fill_random(kernels::elem::f32, a.get(), n, 3, ctx_.s()));
    RIDGELINE_CUDA_CHECK(kernels::fill_random(kernels::elem::f32, b.get(), n, 5, ctx_.s()));
    auto* fa = static_cast<float*>(a.get());
    auto* fb = static_cast<float*>(b.get());
    const auto protocol = ceilings_protocol(quick);
    auto keep = [&](const char* key, const backend_api::timing_result& t) {
        c.spread[key] = backend_api::sample_spread(t.sample_ms);
        if (t.disturbed) {
            c.disturbed = true;
            c.disturbed_ceilings.push_back(key);
        }
        return t.stats.min;
    };
    auto gbs = [](std::int64_t moved, double ms) { return ms > 0 ? static_cast<double>(moved) / (ms * 1e-3) / 1e9 : 0.0; };

    const auto tc = backend_api::measure([&] { RIDGELINE_CUDA_CHECK(kernels::stream_copy(fa, fb, n, ctx_.s())); }, timer_,
                                      protocol);
    c.copy_gbs = gbs(kernels::stream_bytes(kernels::stream_kind::copy, n, 4), keep("copy", tc));
    std::string triad_note = "not measured";
    try {
        device_buffer third(static_cast<std::size_t>(bytes));
        RIDGELINE_CUDA_CHECK(kernels::fill_random(kernels::elem::f32, third.get(), n, 7, ctx_.s()));
        auto* fc = static_cast<float*>(third.get());
        const auto tt = backend_api::measure(
            [&] { RIDGELINE_CUDA_CHECK(kernels::stream_triad(fa, fb, fc, 3.0f, n, ctx_.s())); }, timer_, protocol);
        c.triad_gbs = gbs(kernels::stream_bytes(kernels::stream_kind::triad, n, 4), keep("triad", tt));
        triad_note = fixed(c.triad_gbs, 0) + " GB/s";
    } catch (const std::bad_alloc&) {
        triad_note = "not measured (no memory for a third array of " + format_bytes(bytes) + ")";
    }
    device_buffer sink(sizeof(float));
    auto* fs = static_cast<float*>(sink.get());
    const auto tr = backend_api::measure([&] { RIDGELINE_CUDA_CHECK(kernels::stream_read(fa, n, fs, ctx_.s())); }, timer_,
                                         protocol);
    c.read_gbs = gbs(kernels::stream_bytes(kernels::stream_kind::read, n, 4), keep("read", tr));
    const auto td = backend_api::measure(
        [&] {
            RIDGELINE_CUDA_CHECK(cudaMemcpyAsync(fb, fa, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice, ctx_.s()));
        },
        timer_, protocol);
    c.device_copy_gbs = copy_gbs(bytes, keep("device_copy", td));
    c.bandwidth_gbs = std::max({c.copy_gbs, c.triad_gbs, c.read_gbs, c.device_copy_gbs});
    const char* best = c.bandwidth_gbs == c.copy_gbs    ? "STREAM copy"
                       : c.bandwidth_gbs == c.triad_gbs ? "STREAM triad"
                       : c.bandwidth_gbs == c.read_gbs  ? "STREAM read"
                                                        : "device copy";
    c.method["bandwidth_gbs"] = std::string("the highest of ridgeline's STREAM copy (") + fixed(c.copy_gbs, 0) +
                                " GB/s), triad (" + triad_note + ") and read (" + fixed(c.read_gbs, 0) +
                                " GB/s) kernels, 16-byte accesses, and the driver's device-to-device copy (" +
                                fixed(c.device_copy_gbs, 0) + " GB/s): " + best + ", over arrays of " +
                                format_bytes(bytes) + ", bytes as STREAM counts them, best of each measurement's clean "
                                "samples";
    // working-set sweep: at each size the higher of the STREAM copy (s bytes touch 2 s: source and destination)
    // and the STREAM read of the whole working set (a read-heavy layer must not beat its level's roof)
    for (std::int64_t ws : working_set_sizes(2 * bytes)) {
        if (quick && ws < 4 * 1024 * 1024 && ws != 256 * 1024) continue;
        const std::int64_t m = ws / 2 / 4;
        const auto w = backend_api::measure([&] { RIDGELINE_CUDA_CHECK(kernels::stream_copy(fa, fb, m, ctx_.s())); }, timer_,
                                            backend_api::timing_options::quick());
        const auto r = backend_api::measure(
            [&] {  // the working set: a's first m floats and b's (each array holds n >= m)
                RIDGELINE_CUDA_CHECK(kernels::stream_read(fa, m, fs, ctx_.s()));
                RIDGELINE_CUDA_CHECK(kernels::stream_read(fb, m, fs, ctx_.s()));
            },
            timer_, backend_api::timing_options::quick());
        c.working_set_gbs.emplace_back(
            ws, std::max(gbs(kernels::stream_bytes(kernels::stream_kind::copy, m, 4), w.stats.min),
                         gbs(kernels::stream_bytes(kernels::stream_kind::read, 2 * m, 4), r.stats.min)));
    }
    c.method["working_set_gbs"] = "the higher of ridgeline's STREAM copy kernel (working set = source + destination) "
                                  "and its STREAM read kernel over the whole working set";
}

void cuda_backend::overheads(backend_api::ceilings& c, bool quick) {
    // launch overhead: an empty kernel launched and waited for, on the host's clock
    const int reps = quick ? 50 : 500;
    std::vector<double> ms;
    for (int i = 0; i < reps + 10; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        RIDGELINE_CUDA_CHECK(kernels::empty(ctx_.s()));
        RIDGELINE_CUDA_CHECK(cudaStreamSynchronize(ctx_.s()));
        const auto t1 = std::chrono::steady_clock::now();
        if (i >= 10) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::nth_element(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(ms.size() / 2), ms.end());
    c.launch_overhead_ms = ms[ms.size() / 2];
    c.method["launch_overhead_ms"] = "empty kernel <<<1, 1>>> launched and synchronised, host clock, median of " +
                                     std::to_string(reps);
    // dispatch overhead: the smallest op through the backend (relu of one element), back to back on the stream
    core::model_builder mb("dispatch");
    mb.input("x", core::shape{1});
    mb.then("relu", core::relu{});
    const core::model_analysis g = core::analyze(mb.build(), core::dtype::fp32);
    const auto data = backend_api::make_graph_data(g, core::dtype::fp32, 1);
    auto prep = prepare(g, data);
    const auto t = backend_api::measure([&] { prep->run(); }, timer_, ceilings_protocol(quick));
    c.dispatch_overhead_ms = t.stats.median;
    c.method["dispatch_overhead_ms"] = "relu of 1 element through the backend, back-to-back runs timed with CUDA "
                                       "events, median of " + std::to_string(t.samples) + " samples";
    // the cold fixed cost, as on the CPU: the same relu, one run per sample after the L2 flush (a cold profile's
    // overhead roof); the event pair's own overhead is taken out of each sample (measure)
    backend_api::timing_options cold = ceilings_protocol(quick);
    cold.cache = backend_api::cache_mode::cold;
    cold.min_samples = std::max(cold.min_samples, 10);
    const auto tc = backend_api::measure([&] { prep->run(); }, timer_, cold, [&] { flush_cache(); });
    c.cold_dispatch_overhead_ms = tc.stats.median;
    c.method["cold_dispatch_overhead_ms"] = "relu of 1 element through the backend, the L2 flushed (a read of twice "
                                            "its size) before each run, CUDA events less their own overhead, median "
                                            "of " + std::to_string(tc.samples) + " samples";
    // what one run after a flush moves: relu over 16 Mi floats (64 MiB read, 64 MiB written: past a 50-60 MiB L2)
    core::model_builder big("cold_bandwidth");
    big.input("x", core::shape{1 << 24});
    big.then("relu", core::relu{});
    const core::model_analysis gb = core::analyze(big.build(), core::dtype::fp32);
    auto prep_big = prepare(gb, backend_api::make_graph_data(gb, core::dtype::fp32, 1));
    const auto tb = backend_api::measure([&] { prep_big->run(); }, timer_, cold, [&] { flush_cache(); });
    const double move_ms = tb.stats.median - c.cold_dispatch_overhead_ms;
    c.cold_bandwidth_gbs = move_ms > 0 ? 128.0 * (1 << 20) / (move_ms * 1e6) : 0.0;
    c.method["cold_bandwidth_gbs"] = "relu of 16 Mi floats (128 MiB moved), the L2 flushed before each run, median less "
                                     "the cold dispatch cost";
}

}  // namespace

std::unique_ptr<backend_api::backend> make_cuda_backend(int ordinal) { return std::make_unique<cuda_backend>(ordinal); }

}  // namespace ridgeline::cuda
