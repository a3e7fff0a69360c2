// CPU ceilings (docs/roofline.md): what this CPU can issue and what a real kernel attains.
//
// - FMA peak: a register-resident kernel per instruction set, 12 independent accumulators per thread
//   (more than FMA latency x FMA ports on current cores), on every thread at once. No memory traffic.
// - GEMM: a large oneDNN matmul through the backend (what a real GEMM attains), a lower ceiling.
// - Working-set sweep: triad, read and a copy with non-temporal stores over growing working sets (every kernel of
//   a point moves the same bytes a pass), each thread on its own slice, repeated inside one parallel region so
//   that the slices stay in the cache level they fit in; from 48 KiB into the DRAM level.
// - DRAM: STREAM copy, triad and read over three arrays of at least 4x the sum of the caches each (McCalpin's
//   rule), every thread, static partitioning, first touch by the threads; the DRAM roof is the highest of them and
//   of the sweep's points in the DRAM level (dram_level_bytes). The sweep's points between the last cache level and
//   the DRAM level are the transition: shown, never a roof.
// - Dispatch overhead: the smallest op (relu of one element) through the backend, hot and cold.
// The peaks (FMA, GEMM, STREAM) use the best clean sample of the shared timing protocol, as STREAM reports its
// "best rate": a ceiling is what the machine can do, and on a shared machine a slow sample measures the
// neighbours, not the ceiling. The dispatch overhead is the median (the typical fixed cost, not the luckiest).
// Every measurement keeps its spread ((median - best) / best of its clean samples), from which the roofs'
// tolerances come. A measurement that saw stolen time (a disturbed sample, backend_api/disturbance.hpp) is
// repeated, up to three times in all; one that still cannot collect clean samples marks the ceilings
// disturbed, and disturbed ceilings are never cached. The compute roof of a data type is the highest
// measured compute ceiling (finish_compute_roofs): the FMA kernel; if the GEMM still beats it after the FMA
// kernel was measured once more, the GEMM is the roof and the method says so.
// Each step is announced (ceilings_options::on_progress) with the time left; a full measurement takes about 15 s on a
// 2-core VM with a 300 MB L3 (most of it STREAM over 3.8 GB), --quick about 4 s (docs/performance.md).

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "cpu_ceilings_kernels.hpp"
#include "ridgeline/backend_api/timing.hpp"
#include "ridgeline/config.hpp"
#include "ridgeline/cpu/cpu_backends.hpp"
#include "ridgeline/cpu/cpu_ceilings.hpp"
#include "ridgeline/cpu/cpu_info.hpp"

namespace ridgeline::cpu {

using namespace ceilings_detail;

namespace {

std::string iso_now() {
    const std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return buf;
}

/// "6.29 MB": decimal, 3 significant digits (the ceilings table's way of writing sizes).
std::string mb(std::int64_t bytes) {
    char buf[32];
    const double m = static_cast<double>(bytes) / 1e6;
    std::snprintf(buf, sizeof buf, m < 1000 ? "%.3g MB" : "%.0f MB", m);
    return buf;
}

/// The levels the sweep's threads fill: a per-core level (L1d; L2 below an L3) once per thread, up to the cores
/// allowed; the last level once per instance (llc_total_bytes).
std::vector<std::int64_t> cache_levels(const cpu_info& info, int threads) {
    std::vector<std::int64_t> levels;
    const std::int64_t per_core = std::max(1, std::min(threads, info.physical_cores));
    if (info.l1d_bytes > 0) levels.push_back(info.l1d_bytes * per_core);
    if (info.l2_bytes > 0 && info.l3_bytes > 0) levels.push_back(info.l2_bytes * per_core);
    if (info.llc_total_bytes > 0 && (levels.empty() || info.llc_total_bytes > levels.back()))
        levels.push_back(info.llc_total_bytes);
    return levels;
}

/// What the measurement will do, in order, with a guess of each step's seconds (for the time left).
struct plan {
    std::vector<const fma_variant*> fmas;
    std::vector<core::dtype> gemms;
    std::int64_t gemm_n = 2048;
    std::vector<std::int64_t> sweep;  // working sets, bytes
    std::int64_t stream_bytes = 0;    // the STREAM arrays' working set (three arrays of a third each)
    std::vector<std::pair<std::string, double>> steps;
};

}  // namespace

std::int64_t last_level_from_sweep(const std::vector<std::pair<std::int64_t, double>>& sweep, std::int64_t below) {
    double best = 0;
    std::int64_t last = 0;
    for (const auto& [bytes, gbs] : sweep) {
        if (bytes <= below) continue;
        if (best > 0 && gbs < 0.75 * best) return last;
        best = std::max(best, gbs);
        last = bytes;
    }
    return 0;
}

namespace {

plan make_plan(backend_api::backend& b, const cpu_info& info, const backend_api::ceilings& c, bool quick) {
    plan p;
    const double per_kernel = ceiling_protocol(quick).min_time_s * 1.6;
    for (const fma_variant* v = fma_variants_begin(); v != fma_variants_end(); ++v)
        if (info.has(v->needs)) {
            p.fmas.push_back(v);
            p.steps.emplace_back(std::string("FMA ") + v->name, per_kernel);
        }
    p.gemm_n = quick ? 1024 : 2048;
    for (core::dtype dt : {core::dtype::fp32, core::dtype::bf16, core::dtype::fp16}) {
        core::model_builder mb("gemm");
        mb.input("a", core::shape{p.gemm_n, p.gemm_n});
        mb.input("b", core::shape{p.gemm_n, p.gemm_n});
        mb.add("gemm", core::matmul{}, {"a", "b"});
        if (!b.supports(core::analyze(mb.build(), dt).layers[0], dt).supported) continue;
        p.gemms.push_back(dt);
        p.steps.emplace_back("GEMM " + std::string(core::to_string(dt)) + " " + std::to_string(p.gemm_n) + "^3",
                             quick ? 0.25 : 0.5);  // preparing and filling the matrices, then a few runs
    }
    // the sweep runs into the DRAM level: up to its first point at or past dram_level_bytes, at most a quarter of
    // the memory available (a point holds 4/3 of its working set); the STREAM arrays hold 4x the sum of the caches
    // each (3 arrays: 12x), at most the same quarter
    const std::int64_t dram = std::max<std::int64_t>(c.dram_level_bytes(), std::int64_t{128} << 20);
    const std::int64_t available = available_memory_bytes();
    const std::int64_t cap = available > 0 ? available / 4 : std::int64_t{4} << 30;
    // --quick takes every fourth size up to the last cache level (and the first point past it where the OS gives no
    // topology: the fall to DRAM there sets the last level), then one point only in the DRAM level, the first the
    // full sweep has there: the transition between them (up to 4x the caches) is most of a full sweep's gigabytes,
    // and the DRAM point's streaming copy is the DRAM roof's best kernel where ordinary stores read each line before
    // writing it (on a Zen 4 VM STREAM's copy and triad read 60-80% of it, and a quick roof from STREAM alone sat
    // that far under the independent kernels)
    const std::int64_t last_level = c.last_level_cache_bytes > 0 ? c.last_level_cache_bytes : dram / 4;
    const bool topology = info.cache_source != "cpuid";
    for (std::int64_t ws = 49'152; ws <= cap; ws *= quick ? 4 : 2) {
        if (quick && topology && ws > last_level) break;
        p.sweep.push_back(ws);
        p.steps.emplace_back("sweep " + mb(ws), 3 * per_kernel + static_cast<double>(ws) / 2e9);
        if (ws >= dram || (quick && ws > last_level)) break;
    }
    if (quick && !p.sweep.empty() && p.sweep.back() < dram) {
        std::int64_t ws = 49'152;
        while (ws < dram) ws *= 2;
        if (ws <= cap) {
            p.sweep.push_back(ws);
            p.steps.emplace_back("sweep " + mb(ws) + " (the DRAM level)", 3 * per_kernel + static_cast<double>(ws) / 2e9);
        }
    }
    p.stream_bytes = std::min(3 * dram, cap * 3 / 4);
    for (const char* k : {"copy", "triad", "read"})
        p.steps.emplace_back(std::string("STREAM ") + k + " " + mb(p.stream_bytes),
                             4 * per_kernel + static_cast<double>(p.stream_bytes) / 3e9);
    p.steps.emplace_back("dispatch (relu of 1 element)", per_kernel);
    p.steps.emplace_back("dispatch, cold cache", per_kernel * 2);
    p.steps.emplace_back("bandwidth of one run after a flush", per_kernel * 2);
    return p;
}

}  // namespace

std::string cpu_fingerprint(int threads) {
    const cpu_info& c = host_cpu();
    return "cpu|" + c.model_name + "|" + std::to_string(c.physical_cores) + " cores|" + std::to_string(threads) +
           " threads|" + c.isa() + "|oneDNN " + dnnl_version();
}

namespace {

/// One measurement of the ceilings, step by step (the numbered steps of measure_cpu_ceilings): the backend, the
/// options, the plan and the ceilings being filled.
struct calibration {
    backend_api::backend& b;
    const backend_api::ceilings_options& options;
    const bool quick;
    const cpu_info& info;
    const int threads;
    const backend_api::timing_options protocol;
    const std::int64_t iters;  // FMA kernel iterations
    backend_api::ceilings c;
    plan p;
    progress step;

    calibration(backend_api::backend& backend, const backend_api::ceilings_options& o, backend_api::ceilings started)
        : b(backend),
          options(o),
          quick(o.quick),
          info(host_cpu()),
          threads(omp_get_max_threads()),
          protocol(ceiling_protocol(o.quick)),
          iters(o.quick ? 100'000 : 400'000),
          c(std::move(started)),
          p(make_plan(backend, info, c, o.quick)),
          step(o, p.steps) {}
    [[nodiscard]] bool stopped() const { return options.stop && options.stop->load(); }

    void fma_peaks();
    void gemms();
    void recheck_fma_below_gemm();
    void working_set_sweep();
    void stream_and_dram_roof();
    void dispatch();
    void cold_bandwidth();
};

void calibration::fma_peaks() {
    // 1. FMA kernels (the spread of a data type's peak is that of its best instruction set)
    for (const fma_variant* v : p.fmas) {
        step.next();
        const double g = fma_gflops(*v, iters, protocol, options, c, std::string("fma_peak.") + v->name);
        c.fma_peak_by_isa_gflops[v->name] = g;
        double& best = c.fma_peak_gflops[v->dtype];
        if (g > best) {
            best = g;
            c.spread[std::string("fma_peak.") + v->dtype] = c.spread[std::string("fma_peak.") + v->name];
        }
    }
    c.method["fma_peak_gflops"] = "register-resident FMA kernel, 12 independent accumulators per thread, " +
                                  std::to_string(threads) + " threads; best instruction set per data type, best clean sample";

}

void calibration::gemms() {
    // 2. GEMM per data type the backend supports: a lower ceiling, what a real library kernel attains
    const std::int64_t n = p.gemm_n;
    for (core::dtype dt : p.gemms) {
        step.next();
        if (stopped()) break;
        core::model_builder mb("gemm");
        mb.input("a", core::shape{n, n});
        mb.input("b", core::shape{n, n});
        mb.add("gemm", core::matmul{}, {"a", "b"});
        const core::model_analysis g = core::analyze(mb.build(), dt);
        try {
            auto prep = b.prepare(g, backend_api::make_graph_data(g, dt, 1));
            const std::string name(core::to_string(dt));
            backend_api::timing_options o = protocol;
            o.min_samples = quick ? 3 : 5;  // a 2048^3 GEMM runs for tens of ms: a budget for its samples, of which a
            o.max_time_s = quick ? 0.3 : 1.0;  // VM's time slices disturb some (5 clean samples of 46 ms in 0.2 s failed)
            const auto t = measure_ceiling([&] { prep->run(); }, b.timer(), o, options, c, "gemm." + name);
            const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
            if (t.stats.min > 0) c.gemm_gflops[name] = flops / (t.stats.min * 1e-3) / 1e9;
            c.method["gemm." + name] = "oneDNN matmul " + std::to_string(n) + "^3 (" + prep->notes() + "), best of " +
                                       std::to_string(t.samples) + " clean samples";
        } catch (const std::exception&) {
            // a data type the library declines has no GEMM ceiling; the report shows none
        }
    }

}

void calibration::recheck_fma_below_gemm() {
    // the GEMM cannot beat the instruction-issue peak of its data type; when it does, the FMA kernel met a busy
    // machine that the accounting did not see (a neighbour on the sibling hyperthread, say): once more. If it
    // still loses, finish_compute_roofs takes the GEMM as the roof and says so.
    for (const auto& [dt, gemm] : c.gemm_gflops) {
        auto fma = c.fma_peak_gflops.find(dt);
        if (fma == c.fma_peak_gflops.end() || gemm <= fma->second) continue;
        for (const fma_variant* v : p.fmas)
            if (v->dtype == dt) {
                const double g = fma_gflops(*v, iters, protocol, options, c, std::string("fma_peak.") + v->name);
                c.fma_peak_by_isa_gflops[v->name] = std::max(c.fma_peak_by_isa_gflops[v->name], g);
                if (g > fma->second) {
                    fma->second = g;
                    c.spread["fma_peak." + dt] = c.spread[std::string("fma_peak.") + v->name];
                }
            }
    }
}

void calibration::working_set_sweep() {
    // 3. working-set sweep (before the DRAM kernels: seconds of full-bandwidth DRAM traffic just before made the
    //    cache levels of a shared host measure low): each point the highest of triad, read and a streaming-store
    //    copy (oneDNN writes large outputs with non-temporal stores: on a Xeon with 2 MiB of L2 a 6.4 MB BatchNorm
    //    moved 36 GB/s where triad and read got 30, the streaming copy 39). Arrays of just this size per point: a
    //    process holding hundreds of MB while it measured an L1-sized working set read a third of its bandwidth on
    //    a VM whose kernel samples the accessed bits of large mappings (DAMON: TLB shootdowns).
    for (std::int64_t ws : p.sweep) {
        step.next();
        if (stopped()) break;
        bool clean = true;
        const double gbs = sweep_point_gbs(ws, protocol, options, c, clean);
        if (gbs > 0) c.working_set_gbs.emplace_back(24 * (ws / 24), gbs);
    }
    // without the OS's cache topology the last level's size is what the CPU reports, which a hypervisor may inflate
    // (the host socket's L3): where the sweep falls off to DRAM sets it, and the STREAM arrays follow
    if (info.cache_source == "cpuid" && c.cache_level_bytes.size() >= 2) {
        const std::int64_t below = c.cache_level_bytes[c.cache_level_bytes.size() - 2];
        if (const std::int64_t seen = last_level_from_sweep(c.working_set_gbs, below);
            seen > 0 && seen < c.cache_level_bytes.back()) {
            c.cache_level_bytes.back() = seen;
            c.last_level_cache_bytes = seen;
            p.stream_bytes = std::min(3 * std::max<std::int64_t>(c.dram_level_bytes(), std::int64_t{128} << 20),
                                      p.stream_bytes);
        }
        c.method["cache_level_bytes"] = "the OS gives no cache topology: L1d and L2 as the CPU reports them (" +
                                        mb(info.l1d_bytes) + ", " + mb(info.l2_bytes) + " per core); the last level (" +
                                        mb(info.l3_bytes) + " reported) read from the sweep: " +
                                        mb(c.cache_level_bytes.back()) +
                                        ", the largest working set within 25% of the best point past the level below";
    }
    c.method["working_set_gbs"] = "the highest of STREAM triad, read and a copy with non-temporal stores, each moving the "
                                  "working set once a pass (triad and read over 3 arrays of a third, the copy from one "
                                  "half into the other), each thread on its own slice";

}

void calibration::stream_and_dram_roof() {
    // 4. STREAM copy, triad and read over arrays of 4x the sum of the caches each: the DRAM level's plateau, each
    //    over a longer window than the other ceilings (a VM's DRAM bandwidth moves the most)
    {
        stream_arrays s(p.stream_bytes, false);
        backend_api::timing_options longer = protocol;
        longer.min_time_s *= 4;
        longer.max_time_s *= 4;
        if (quick) {  // a pass over gigabytes takes 0.1-0.3 s: one warm-up and 3 samples, the best kept (without the
            longer.min_samples = 3;  // warm-up one quick copy read 57% of the roof)
            longer.warmup_runs = 1;
            longer.warmup_ms = 0;
        }
        step.next("STREAM copy " + mb(p.stream_bytes));  // the size the sweep settled (a cache read from it)
        if (!stopped()) c.copy_gbs = stream_gbs(s, stream_kernel::copy, longer, options, c, "copy");
        step.next("STREAM triad " + mb(p.stream_bytes));
        if (!stopped()) c.triad_gbs = stream_gbs(s, stream_kernel::triad, longer, options, c, "triad");
        step.next("STREAM read " + mb(p.stream_bytes));
        if (!stopped()) c.read_gbs = stream_gbs(s, stream_kernel::read, longer, options, c, "read");
        // where the three readings lie on the DRAM level's size axis (ceilings::dram_roof_gbs(bytes))
        if (c.copy_gbs > 0 && c.read_gbs > 0) c.stream_bytes = p.stream_bytes;
    }
    // the DRAM roof: the highest of the three and of the sweep's points in the DRAM level (they are DRAM too,
    // measured at another moment: a roof must not sit under a DRAM reading of its own ceilings)
    const std::int64_t dram = c.dram_level_bytes();
    c.bandwidth_gbs = std::max({c.copy_gbs, c.triad_gbs, c.read_gbs});
    std::string best = c.bandwidth_gbs == c.read_gbs ? "read" : c.bandwidth_gbs == c.triad_gbs ? "triad" : "copy";
    double best_spread = c.spread[best];
    for (const auto& [bytes, gbs] : c.working_set_gbs)
        if (bytes >= dram && gbs > c.bandwidth_gbs) {
            c.bandwidth_gbs = gbs;
            best = "the working-set sweep at " + mb(bytes);
            best_spread = c.spread["working_set." + std::to_string(bytes)];
        }
    c.spread["bandwidth"] = best_spread;
    // how far the DRAM level's readings lie apart (the highest best over the lowest median of its kernels and
    // points): a VM's DRAM bandwidth moves by 20-40% from one second to the next, more than one kernel's samples
    // show, and a spot check is judged against this spread (profiler::obtain_ceilings)
    {
        double high = 0, low = 0;
        auto reading = [&](double best_gbs, const std::string& key) {
            if (!(best_gbs > 0)) return;
            const double median = best_gbs / (1 + (c.spread.count(key) ? c.spread.at(key) : 0.0));
            high = std::max(high, best_gbs);
            low = low > 0 ? std::min(low, median) : median;
        };
        reading(c.copy_gbs, "copy");
        reading(c.triad_gbs, "triad");
        reading(c.read_gbs, "read");
        for (const auto& [bytes, gbs] : c.working_set_gbs)
            if (bytes >= dram) reading(gbs, "working_set." + std::to_string(bytes));
        if (low > 0) c.spread["dram_level"] = high / low - 1;
    }
    c.method["bandwidth_gbs"] = "the highest of STREAM copy (c = a, 16 bytes per element), triad (a = b + s*c, 24 bytes) "
                                "and read (sum of a + b + c, 24 bytes) over 3 arrays of " + mb(p.stream_bytes / 3) +
                                " (at least 4x the sum of the caches each, " + mb(dram / 4) + ", where memory allows), " +
                                std::to_string(threads) + " threads, and of the sweep's points from " + mb(dram) +
                                " (the DRAM level): " + best;

}

void calibration::dispatch() {
    // 5. dispatch overhead: relu of one element through the backend, hot and with the cache flushed before each run
    step.next();
    c.dispatch_overhead_ms = dispatch_time(b, protocol, options, c, "dispatch", false).stats.median;
    c.method["dispatch_overhead_ms"] = "oneDNN eltwise relu of 1 element, median (a floor: a spot check that finds it "
                                       "lower lowers it)";
    step.next();
    c.cold_dispatch_overhead_ms = dispatch_time(b, protocol, options, c, "cold_dispatch", true).stats.median;
    c.method["cold_dispatch_overhead_ms"] =
        "oneDNN eltwise relu of 1 element, the last-level cache flushed before each run, median";

}

void calibration::cold_bandwidth() {
    // 6. what one run after a flush moves: relu over 1 Mi floats (4 MiB read, 4 MiB written), flushed before each
    //    run, less the cold dispatch cost
    step.next();
    {
        core::model_builder cold_mb("cold_bandwidth");
        cold_mb.input("x", core::shape{1 << 20});
        cold_mb.then("relu", core::relu{});
        const core::model_analysis gb = core::analyze(cold_mb.build(), core::dtype::fp32);
        auto prep = b.prepare(gb, backend_api::make_graph_data(gb, core::dtype::fp32, 1));
        backend_api::timing_options cold = protocol;
        cold.max_noise = 0.02;  // a median
        cold.cache = backend_api::cache_mode::cold;
        cold.warmup_runs = 1;
        cold.min_samples = std::max(cold.min_samples, 10);
        const auto tb = measure_ceiling([&] { prep->run(); }, b.timer(), cold, options, c, "cold_bandwidth", 3,
                                        [&] { b.flush_cache(); });
        const double move_ms = tb.stats.median - c.cold_dispatch_overhead_ms;
        const double bytes = 8.0 * (1 << 20);
        c.cold_bandwidth_gbs = move_ms > 0 ? bytes / (move_ms * 1e6) : 0.0;
        c.method["cold_bandwidth_gbs"] = "oneDNN eltwise relu of 1 Mi floats (8 MiB moved), the last-level cache flushed "
                                         "before each run, median less the cold dispatch cost";
    }
}

}  // namespace

backend_api::ceilings measure_cpu_ceilings(backend_api::backend& b, const backend_api::ceilings_options& options) {
    const cpu_info& info = host_cpu();
    backend_api::ceilings c;
    c.backend = b.name();
    const int threads = omp_get_max_threads();
    c.fingerprint = cpu_fingerprint(threads);
    c.measured_at = iso_now();
    c.ridgeline_version = RIDGELINE_VERSION;
    c.last_level_cache_bytes = info.llc_total_bytes;  // all instances the threads can fill: "beyond" means beyond this
    c.cache_level_bytes = cache_levels(info, threads);
    c.quick = options.quick;
    c.load_average = load_average();
    calibration run(b, options, std::move(c));
    run.fma_peaks();
    run.gemms();
    run.recheck_fma_below_gemm();
    backend_api::finish_compute_roofs(run.c);
    run.working_set_sweep();
    run.stream_and_dram_roof();
    run.dispatch();
    run.cold_bandwidth();
    if (run.stopped()) throw backend_api::ceilings_interrupted();  // never half-measured
    return std::move(run.c);
}

}  // namespace ridgeline::cpu
