#include "ridgeline/profiler/profiler.hpp"

#include "profiler_detail.hpp"
#include "ridgeline/core/fusion.hpp"

#include <algorithm>
#include <map>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <new>
#include <ostream>

#include "ridgeline/core/checked.hpp"
#include "ridgeline/core/memory.hpp"
#include "ridgeline/cpu/reference.hpp"

namespace ridgeline::profiler {

using backend_api::backend;
using backend_api::cache_mode;
using backend_api::disturbed_lost_fraction;
using backend_api::prepared;
using backend_api::single_layer_graph;
using backend_api::support;
using backend_api::unsupported;
using backend_api::graph_data;
using backend_api::host_tensor;
using backend_api::measure;
using backend_api::timing_result;

std::string_view to_string(run_state s) {
    switch (s) {
        case run_state::measured: return "measured";
        case run_state::view: return "view";
        case run_state::unsupported: return "unsupported";
        case run_state::skipped: return "skipped";
        case run_state::failed: return "failed";
        case run_state::not_measured: return "not_measured";
        case run_state::disturbed: return "disturbed";
    }
    return "skipped";
}

std::ostream& operator<<(std::ostream& os, run_state s) { return os << to_string(s); }

std::string_view to_string(verification_state s) {
    switch (s) {
        case verification_state::passed: return "passed";
        case verification_state::failed: return "failed";
        case verification_state::unsupported: return "unsupported";
        case verification_state::skipped: return "skipped";
    }
    return "skipped";
}

std::ostream& operator<<(std::ostream& os, verification_state s) { return os << to_string(s); }

reference_provider cpu_reference() {
    // the reference loops over a graph, never a cpu-ref backend: its constructor sets the OpenMP thread count,
    // which every later layer's timing would then run on
    return {"cpu-ref", [](const core::model_analysis& g, const graph_data& data) {
                return cpu::reference_graph_outputs(g, data);
            }};
}

double verification_tolerance(core::dtype dt) {
    switch (dt) {
        case core::dtype::fp32: return 1e-4;
        case core::dtype::tf32: return 5e-3;
        case core::dtype::fp16: return 5e-3;
        case core::dtype::bf16: return 2e-2;
    }
    return 1e-4;
}

double verification_tolerance(core::dtype dt, const core::model_analysis& g) {
    const double t = verification_tolerance(dt);
    if (dt != core::dtype::fp16 && dt != core::dtype::bf16) return t;
    for (const auto& la : g.layers)
        if (std::holds_alternative<core::attention>(la.layer.op)) return 2 * t;
    return t;
}

verification_result compare_outputs(const std::vector<host_tensor>& got, const std::vector<host_tensor>& want,
                                    double tolerance) {
    verification_result v;
    v.tolerance = tolerance;
    if (got.size() != want.size()) {
        v.state = verification_state::failed;
        v.message = "backend returned " + std::to_string(got.size()) + " outputs, the reference " +
                    std::to_string(want.size());
        return v;
    }
    double diff = 0, norm = 0;
    std::int64_t non_finite = 0, reference_non_finite = 0, compared = 0;
    for (std::size_t t = 0; t < got.size(); ++t) {
        if (got[t].data.size() != want[t].data.size()) {
            v.state = verification_state::failed;
            v.message = "output " + std::to_string(t) + " has " + std::to_string(got[t].data.size()) +
                        " elements, the reference " + std::to_string(want[t].data.size());
            return v;
        }
        for (std::size_t i = 0; i < got[t].data.size(); ++i) {
            const double w = want[t].data[i];
            const double g = got[t].data[i];
            if (std::isinf(w) && g == w) continue;  // an infinity the op defines (max over a window of padding only: -inf)
            if (!std::isfinite(w)) {
                ++reference_non_finite;
                continue;
            }
            if (std::isnan(g)) {
                ++v.unwritten;
                continue;
            }
            if (!std::isfinite(g)) {
                ++non_finite;
                continue;
            }
            diff += (g - w) * (g - w);
            norm += w * w;
            ++compared;
        }
    }
    // the reference's norm floored at 0.01 per element (RMS): an output whose values are all near zero (GELU of -8 is
    // -5e-15) is judged by its absolute error, where a relative one would only measure the last bits of nothing
    const double floor = 1e-4 * static_cast<double>(compared);
    v.rel_l2_error = compared == 0 ? 0.0 : std::sqrt(diff / std::max(norm, floor));  // 0 compared: all matched infinities
    if (reference_non_finite > 0) {
        // the reference itself is NaN or infinite there (NaN or huge weights, e.g. a broken checkpoint): nothing
        // to compare against, so the output is not verified, whatever the rest agrees on
        v.state = verification_state::failed;
        v.message = "the reference output has " + std::to_string(reference_non_finite) +
                    " NaN or infinite elements (are the weights finite? `ridgeline weights` counts them)";
    } else if (v.unwritten > 0) {
        v.state = verification_state::failed;
        v.message = std::to_string(v.unwritten) + " output elements were never written";
    } else if (non_finite > 0) {
        v.state = verification_state::failed;
        v.message = std::to_string(non_finite) + " output elements are infinite";
    } else if (!(v.rel_l2_error <= tolerance)) {
        v.state = verification_state::failed;
        char buf[160];
        std::snprintf(buf, sizeof buf, "relative L2 error %.3g exceeds the tolerance %.3g", v.rel_l2_error, tolerance);
        v.message = buf;
    } else {
        v.state = verification_state::passed;
    }
    return v;
}

double layer_profile::achieved_gflops() const {
    if (!has_time() || !(time->stats.median > 0)) return std::numeric_limits<double>::quiet_NaN();
    return static_cast<double>(analysis.cost.executed_flops()) / (time->stats.median * 1e-3) / 1e9;
}

double layer_profile::achieved_gbs() const {
    if (!has_time() || !(time->stats.median > 0)) return std::numeric_limits<double>::quiet_NaN();
    return static_cast<double>(analysis.cost.bytes) / (time->stats.median * 1e-3) / 1e9;
}

namespace {

std::uint64_t layer_seed(std::uint64_t seed, const std::string& name) {
    std::uint64_t h = seed;
    for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ULL;
    return h;
}

}  // namespace

std::int64_t layer_bytes_needed(const core::layer_analysis& la, core::dtype dt, bool verify, bool host_memory) {
    using core::checked::add;
    using core::checked::mul;
    const char* what = "bytes needed";
    std::int64_t inputs = 0;
    for (const auto& s : la.input_shapes) inputs = add(inputs, s.numel(), what);
    const std::int64_t out = la.output_shape.numel();
    const std::int64_t held = core::checked::sum({inputs, la.cost.params, la.cost.buffers}, what);
    // the backend's own tensors, in the data type
    const std::int64_t backend = mul(add(held, out, what), core::size_bytes(dt), what);
    if (!host_memory) return backend;
    // the seeded host data (float32), and verification's float32 copies: the reference's inputs and output, the
    // copy of it the reference returns, the backend's result read back
    const std::int64_t host = mul(add(held, verify ? add(inputs, mul(out, 3, what), what) : 0, what), 4, what);
    return add(backend, host, what);
}

namespace {

/// An upper bound on what the whole forward pass allocates: every layer's buffers (inputs, output,
/// parameters) as if none were shared, and the host data (the pass is not verified); more than any limit when
/// the count overflows.
std::int64_t model_bytes_needed(const core::model_analysis& a, bool host_memory) {
    std::int64_t total = 0;
    try {
        for (const auto& la : a.layers)
            total = core::checked::add(total, layer_bytes_needed(la, a.data_type, false, host_memory), "bytes needed");
    } catch (const core::overflow_error&) {
        return std::numeric_limits<std::int64_t>::max();
    }
    return total;
}

/// A named range on the backend's tracing tools (NVTX on CUDA) for the guard's lifetime.
class range_guard {
public:
    range_guard(backend& b, const std::string& name) : b_(b) { b_.push_range(name); }
    ~range_guard() { b_.pop_range(); }
    range_guard(const range_guard&) = delete;
    range_guard& operator=(const range_guard&) = delete;

private:
    backend& b_;
};

/// "512 B", "3.0 KiB", "48.0 MiB", "2.5 GiB": never "0.0 MiB" for a few bytes.
std::string describe_bytes(std::int64_t b) {
    if (b < 1024) return std::to_string(b) + " B";
    const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(b) / 1024.0;
    std::size_t u = 0;
    while (v >= 1024.0 && u + 1 < std::size(units)) {
        v /= 1024.0;
        ++u;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    return buf;
}

/// The memory a run may use (0: unknown, nothing is checked) and how a message names it.
struct memory_budget {
    std::int64_t bytes = 0;
    std::string says;
};

memory_budget budget_of(backend& b, std::int64_t max_memory_bytes) {
    if (max_memory_bytes > 0) return {max_memory_bytes, "allowed by the memory limit given"};
    return {b.free_memory_bytes(), "free"};
}

}  // namespace

namespace {
/// Why a time is disturbed: what other work took of how many samples.
std::string disturbed_reason(const timing_result& t) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "other work took more than %.0f%% of the time of %lld of %lld samples; fewer than the minimum were clean",
                  disturbed_lost_fraction * 100.0, static_cast<long long>(t.disturbed_samples),
                  static_cast<long long>(t.disturbed_samples + t.clean_samples));
    return t.throttle_cause.empty() ? std::string(buf) : std::string(buf) + " (" + t.throttle_cause + ")";
}
}  // namespace

core::roofline_point judge(const core::cost& cost, const timing_result& t, const core::roofs& roofs) {
    if (!t.disturbed) {
        const auto& st = t.stats;
        return core::classify(cost.executed_flops(), cost.bytes, st.median, st.ci95_low, st.ci95_high, roofs);
    }
    // too few clean samples: the time measures the neighbours as much as the layer; no verdict
    core::roofline_point p;
    p.bound = core::bound_class::disturbed;
    p.rule = "!";
    p.roof_fraction = std::numeric_limits<double>::quiet_NaN();
    p.reason = disturbed_reason(t);
    return p;
}

bool fewer_multiplies(const std::string& implementation) {
    std::string low = implementation;
    for (char& ch : low) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return low.find("wino") != std::string::npos || low.find("fft") != std::string::npos;
}

double model_bandwidth_gbs(const core::model_analysis& a, const backend_api::ceilings& c, cache_mode cache) {
    double floor_ns = 0;
    for (const auto& la : a.layers) {
        const double roof = cache == cache_mode::cold ? c.dram_roof_gbs(la.cost.bytes)
                                                      : c.bandwidth_for_working_set_gbs(la.cost.bytes);
        if (la.cost.bytes > 0 && roof > 0) floor_ns += static_cast<double>(la.cost.bytes) / roof;
    }
    return floor_ns > 0 ? static_cast<double>(a.totals.bytes) / floor_ns : c.dram_roof_gbs();
}

core::roofs roofs_for(const core::layer_analysis& l, core::dtype dt, const backend_api::ceilings& c, cache_mode cache,
                      const std::string& implementation) {
    core::roofs r;
    r.compute_gflops = c.compute_roof_gflops(dt).value_or(0.0);
    // vector work (softmax, norms, elementwise) runs on the vector units, whose FMA peak lies below the dtype's
    // roof where matrix units set it (a GPU's tensor-core GEMM, a CPU's AMX): judged against that peak
    if (!core::matrix_work(l.layer.op))
        if (const auto it = c.fma_peak_gflops.find(std::string(core::to_string(dt)));
            it != c.fma_peak_gflops.end() && it->second > 0 && it->second < r.compute_gflops)
            r.compute_gflops = it->second;
    if (auto it = c.gemm_gflops.find(std::string(core::to_string(dt))); it != c.gemm_gflops.end()) r.gemm_gflops = it->second;
    r.bandwidth_gbs =
        cache == cache_mode::cold ? c.dram_roof_gbs(l.cost.bytes) : c.bandwidth_for_working_set_gbs(l.cost.bytes);
    // a cold sample is one run after a flush: its fixed cost is the cold one, where measured
    r.dispatch_ms = c.dispatch_ms(cache == cache_mode::cold);
    r.compute_tolerance = c.compute_tolerance(dt);
    r.bandwidth_tolerance = c.bandwidth_tolerance();
    r.compute_checked = !fewer_multiplies(implementation);
    return r;
}

layer_profile profile_layer(const core::layer_analysis& la, const core::model_analysis& parent, backend& b,
                            const profile_options& o) {
    layer_profile p;
    p.analysis = la;
    const core::dtype dt = parent.data_type;
    if (core::is_view(la.layer.op)) {
        p.state = run_state::view;
        p.reason = "a view: no arithmetic and no data movement";
        p.verification.state = verification_state::skipped;
        p.verification.message = "view";
        return p;
    }
    const support s = b.supports(la, dt);
    if (!s.supported) {
        p.state = run_state::unsupported;
        p.reason = s.reason;
        p.verification.state = verification_state::unsupported;
        return p;
    }
    std::int64_t need = std::numeric_limits<std::int64_t>::max();  // more than any limit when the count overflows
    try {
        need = layer_bytes_needed(la, dt, o.verify && o.reference.outputs && b.name() != o.reference.backend,
                                  b.device().kind != backend_api::device_kind::gpu);
    } catch (const core::overflow_error&) {
    }
    if (const memory_budget m = budget_of(b, o.max_memory_bytes); m.bytes > 0 && need > m.bytes) {
        p.state = run_state::skipped;
        p.reason = "needs about " + describe_bytes(need) + ", only " + describe_bytes(m.bytes) + " " + m.says;
        return p;
    }
    const core::model_analysis g = single_layer_graph(la, parent);
    std::unique_ptr<prepared> prep;
    graph_data data;
    try {
        data = make_graph_data(g, dt, layer_seed(o.seed, la.layer.name), o.weights.get());
        prep = b.prepare(g, data);
    } catch (const unsupported& e) {
        p.state = run_state::unsupported;
        p.reason = e.what();
        p.verification.state = verification_state::unsupported;
        return p;
    } catch (const std::bad_alloc&) {
        p.state = run_state::skipped;
        p.reason = "allocation of about " + describe_bytes(need) + " failed";
        return p;
    } catch (const std::exception& e) {
        p.state = run_state::failed;
        p.reason = e.what();
        p.verification.state = verification_state::failed;
        p.verification.message = e.what();
        return p;
    }
    p.workspace_bytes = prep->workspace_bytes();
    p.implementation = prep->notes();
    try {
        if (o.verify && o.reference.outputs && b.name() != o.reference.backend) {
            prep->poison_outputs();
            prep->run();
            const auto got = prep->outputs();
            p.verification = compare_outputs(got, o.reference.outputs(g, data), verification_tolerance(dt, g));
            if (p.verification.state == verification_state::failed) {
                p.state = run_state::failed;
                p.reason = "verification: " + p.verification.message;
                return p;
            }
        } else {
            p.verification.state = verification_state::skipped;
            p.verification.message = !o.verify               ? "verification turned off"
                                     : !o.reference.outputs ? "no reference to verify against"
                                                            : "the backend is the reference";
        }
        const range_guard range(b, la.layer.name);
        timing_result t = measure([&] { prep->run(); }, b.timer(), o.timing, [&] { b.flush_cache(); }, nullptr, o.stop);
        if (t.samples == 0) {
            p.state = run_state::not_measured;
            p.reason = "interrupted";
            return p;
        }
        p.time = std::move(t);
        p.state = run_state::measured;
        if (o.ceilings) {
            p.roofs_used = roofs_for(la, dt, *o.ceilings, o.timing.cache, p.implementation);
            p.roofline = judge(la.cost, *p.time, p.roofs_used);
        } else if (p.time->disturbed) {
            // no roofs, but the bound "disturbed" needs none: every format says so alike (JSON, CSV, the table,
            // time_by_bound), as with roofs
            p.roofline = judge(la.cost, *p.time, {});
        }
        // host cost of issuing one run: a burst of run() calls on the wall clock, then one wait
        {
            const int burst = 10;
            b.synchronize();
            const auto h0 = std::chrono::steady_clock::now();
            for (int i = 0; i < burst; ++i) prep->run();
            const auto h1 = std::chrono::steady_clock::now();
            b.synchronize();
            p.host_ms_per_run = std::chrono::duration<double, std::milli>(h1 - h0).count() / burst;
        }
    } catch (const std::exception& e) {
        p.state = run_state::failed;
        p.reason = e.what();
    }
    return p;
}

namespace {

bool beats_memory_roof(const layer_profile& p) {
    if (!p.roofline || p.roofline->bound != core::bound_class::mistrusted) return false;
    const core::roofs& r = p.roofs_used;
    const double hard_compute = r.compute_checked ? p.roofline->compute_ms / (1.0 + r.compute_tolerance) : 0.0;
    return p.roofline->memory_ms / (1.0 + r.bandwidth_tolerance) > hard_compute;
}

/// Bytes in decimal units with 4 significant digits, as the ceilings table writes the sweep's sizes ("1.573 MB").
std::string decimal_bytes(std::int64_t b) {
    const char* units[] = {"B", "kB", "MB", "GB", "TB"};
    double v = static_cast<double>(b);
    int u = 0;
    while (v >= 1000.0 && u < 4) {
        v /= 1000.0;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g %s", v, units[u]);
    return buf;
}

std::string gbs_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

/// Layers that beat their memory roof: the sweep points behind those roofs are measured again now, raised
/// where higher, and every layer judged again against the raised roofs (profile_result::roof_rechecks).
void recheck_memory_roofs(profile_result& r, backend& b, const profile_options& o) {
    if (!r.ceilings || o.timing.cache == cache_mode::cold || (o.stop && o.stop->load())) return;
    std::vector<std::int64_t> points;
    std::vector<std::string> beaten;
    const auto& c = *r.ceilings;
    for (const auto& p : r.layers)
        if (beats_memory_roof(p)) {
            beaten.push_back(p.analysis.layer.name);
            for (std::int64_t s : c.sweep_points_for_working_set(p.analysis.cost.bytes)) points.push_back(s);
            // past the sweep's DRAM points the roof is the STREAM kernels' (dram_roof_gbs(bytes)), which a recheck
            // of the sweep does not touch: the layer's own working set is measured, a new point of the sweep
            const std::int64_t bytes = p.analysis.cost.bytes;
            if (c.stream_bytes > 0 && c.level_of(bytes) == backend_api::ceilings::memory_level::dram &&
                (c.working_set_gbs.empty() || bytes > c.working_set_gbs.back().first) && bytes <= (std::int64_t{1} << 33))
                points.push_back(bytes);
        }
    if (beaten.empty()) return;
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    std::vector<double> now;
    try {
        now = b.remeasure_working_set(points, backend_api::ceilings_options{true, o.stop, {}});
    } catch (const backend_api::ceilings_interrupted&) {
        return;
    }
    const std::string head = std::to_string(beaten.size()) + (beaten.size() == 1 ? " layer (" : " layers (") +
                             beaten.front() + (beaten.size() > 1 ? ", ..." : "") +
                             (beaten.size() == 1 ? ") beat its memory roof" : ") beat their memory roofs") +
                             " by more than the tolerance";
    if (points.empty()) {
        r.roof_rechecks.push_back(head + "; the ceilings have no working-set sweep to measure again");
        return;
    }
    if (now.size() != points.size()) {
        r.roof_rechecks.push_back(head + "; the " + b.name() + " backend cannot measure its working-set sweep again");
        return;
    }
    std::string changes;
    auto& sweep = r.ceilings->working_set_gbs;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const std::string reading =
            now[i] > 0 ? gbs_text(now[i]) + " GB/s" : std::string("not measured (disturbed or too large)");
        const auto at = std::find_if(sweep.begin(), sweep.end(), [&](const auto& pt) { return pt.first >= points[i]; });
        if (at == sweep.end() || at->first != points[i]) {  // a beaten layer's own working set: a new point
            // kept only above the roof it would replace (dram_roof_gbs there): a recheck raises roofs, never lowers
            // them, and a reading below the STREAM kernels' at that size says only that this one was disturbed
            const double before = r.ceilings->dram_roof_gbs(points[i]);
            const bool higher = now[i] > before;
            changes += (changes.empty() ? "" : ", ") + decimal_bytes(points[i]) + " (a layer's own working set) " + reading +
                       (now[i] > 0 && !higher ? " (not above the roof there, " + gbs_text(before) + " GB/s: not kept)" : "");
            if (higher) {
                sweep.insert(at, {points[i], now[i]});
                r.ceilings_raised = true;
            }
            continue;
        }
        changes += (changes.empty() ? "" : ", ") + decimal_bytes(at->first) + " " + gbs_text(at->second) + " GB/s -> " + reading;
        if (now[i] > at->second) {
            at->second = now[i];
            r.ceilings_raised = true;
        }
    }
    // every layer again: a raised point is a higher roof for each layer of its level, not only the beaten ones
    std::size_t still = 0;
    r.bound_ms.clear();
    for (auto& p : r.layers) {
        if (p.has_time() && p.roofline) {
            p.roofs_used = roofs_for(p.analysis, r.analysis.data_type, *r.ceilings, o.timing.cache, p.implementation);
            p.roofline = judge(p.analysis.cost, *p.time, p.roofs_used);
            still += beats_memory_roof(p);
        }
        if (p.has_time() && p.roofline) r.bound_ms[p.roofline->bound] += p.time->stats.median;
    }
    // a raised point of the DRAM level raises the DRAM roof with it
    r.ceilings->bandwidth_gbs = std::max(r.ceilings->bandwidth_gbs, r.ceilings->dram_roof_gbs());
    if (r.ceilings_raised)
        r.ceilings->method["working_set_rechecked"] =
            "sweep points measured again during a profile after layers beat their roofs; each kept the higher reading";
    r.roof_rechecks.push_back(head + ": its sweep points, measured again now: " + changes + "; " +
                              (still == 0 ? std::string("no layer beats a memory roof now")
                                          : std::to_string(still) + (still == 1 ? " layer still beats" : " layers still beat") +
                                                " a memory roof (mistrusted)"));
}

/// profile_options::trace_passes passes of `prep` with a mark after each layer, into r.trace (or the reason there is
/// none into r.trace_note): the host's steady clock read as each layer's work ends.
void record_trace(profile_result& r, backend_api::prepared& prep, backend& b, const profile_options& o) {
    using clock = std::chrono::steady_clock;
    const auto origin = clock::now();
    auto ns = [&] { return std::chrono::duration<double, std::nano>(clock::now() - origin).count(); };
    for (std::size_t k = 0; k < o.trace_passes; ++k) {
        if (k >= 3 && ns() > 2e9) break;  // a long pass: at least 3, within about 2 s
        if (o.stop && o.stop->load()) {
            r.trace_note = "interrupted after " + std::to_string(k) + " traced passes";
            return;
        }
        traced_pass pass;
        pass.start_ns = ns();
        const bool marked = prep.run_marked([&](std::size_t layer) { pass.layer_end_ns.emplace_back(layer, ns()); });
        if (!marked) {
            r.trace_note = "the " + b.name() + " backend cannot tell its layers' work apart in a pass";
            r.trace.clear();
            return;
        }
        pass.end_ns = ns();
        r.trace.push_back(std::move(pass));
    }
}

/// The outputs of one pass of `prep` (outputs poisoned first) against the reference run of the whole model, where
/// verification is on, the backend is not the reference itself, and the model is within end_to_end_verify_max_macs.
verification_result verify_end_to_end(backend_api::prepared& prep, const core::model_analysis& analysis,
                                      const graph_data& data, backend& b, const profile_options& o) {
    verification_result v;
    if (!o.verify || !o.reference.outputs || b.name() == o.reference.backend) {
        v.message = !o.verify                ? "verification turned off"
                    : !o.reference.outputs ? "no reference to verify against"
                                           : "the backend is the reference";
        return v;
    }
    std::int64_t macs = 0;  // up to the limit: a sum past it stops there, so it never overflows
    for (const auto& la : analysis.layers) {
        if (la.cost.executed_macs() > end_to_end_verify_max_macs - macs) {
            v.message = "the reference run of the whole model (over " + std::to_string(end_to_end_verify_max_macs) +
                        " MACs) would take too long; each distinct layer is verified alone";
            return v;
        }
        macs += la.cost.executed_macs();
    }
    prep.poison_outputs();
    prep.run();
    return compare_outputs(prep.outputs(), o.reference.outputs(analysis, data),
                           verification_tolerance(analysis.data_type, analysis));
}

/// The whole forward pass of `analysis` (and its graph replay where asked), into r's end-to-end fields: skipped
/// before anything is allocated when it cannot fit the memory allowed.
void time_end_to_end(profile_result& r, const core::model_analysis& analysis, backend& b, const profile_options& o) {
    const std::int64_t need = model_bytes_needed(analysis, b.device().kind != backend_api::device_kind::gpu);
    if (o.stop && o.stop->load()) {
        r.end_to_end_state = run_state::not_measured;
        r.end_to_end_reason = "interrupted";
    } else if (const memory_budget m = budget_of(b, o.max_memory_bytes); m.bytes > 0 && need > m.bytes) {
        // checked before allocating, like each layer: a model larger than the device is skipped, not tried
        r.end_to_end_state = run_state::skipped;
        r.end_to_end_reason = "needs about " + describe_bytes(need) + ", only " + describe_bytes(m.bytes) + " " + m.says;
    } else {
        try {
            const graph_data data = make_graph_data(analysis, analysis.data_type, o.seed, o.weights.get());
            auto prep = b.prepare(analysis, data);
            r.end_to_end_verification = verify_end_to_end(*prep, analysis, data, b, o);
            if (r.end_to_end_verification.state == verification_state::failed) {
                r.end_to_end_state = run_state::failed;
                r.end_to_end_reason = "verification: " + r.end_to_end_verification.message;
                return;
            }
            std::optional<range_guard> range(std::in_place, b, "end to end");
            timing_result t = measure([&] { prep->run(); }, b.timer(), o.timing, [&] { b.flush_cache(); },
                                      nullptr, o.stop);
            range.reset();
            if (t.samples > 0) {
                r.end_to_end_state = t.disturbed ? run_state::disturbed : run_state::measured;
                if (t.disturbed) r.end_to_end_reason = disturbed_reason(t);
                r.end_to_end = std::move(t);
                if (o.trace_passes > 0) record_trace(r, *prep, b, o);
            } else {
                r.end_to_end_state = run_state::not_measured;
                r.end_to_end_reason = "interrupted";
            }
            if (o.graph_replay && r.end_to_end) {  // timed, clean or disturbed
                // a capture that fails is the replay's failure, not the end-to-end pass's
                try {
                    if (prep->enable_graph_replay()) {
                        const range_guard replay_range(b, "graph replay");
                        timing_result g = measure([&] { prep->run(); }, b.timer(), o.timing,
                                                  [&] { b.flush_cache(); }, nullptr, o.stop);
                        if (g.samples > 0) {
                            r.graph_replay_state = g.disturbed ? run_state::disturbed : run_state::measured;
                            if (g.disturbed) r.graph_replay_reason = disturbed_reason(g);
                            r.graph_replay = std::move(g);
                        } else {
                            r.graph_replay_state = run_state::not_measured;
                            r.graph_replay_reason = "interrupted";
                        }
                    } else {
                        r.graph_replay_state = run_state::unsupported;
                        r.graph_replay_reason = "the " + b.name() + " backend has no graph capture";
                    }
                } catch (const std::exception& e) {
                    r.graph_replay_state = run_state::failed;
                    r.graph_replay_reason = e.what();
                }
            }
        } catch (const unsupported& e) {
            r.end_to_end_state = run_state::unsupported;
            r.end_to_end_reason = e.what();
        } catch (const std::bad_alloc&) {
            r.end_to_end_state = run_state::skipped;
            r.end_to_end_reason = "allocation failed";
        } catch (const std::exception& e) {
            r.end_to_end_state = run_state::failed;
            r.end_to_end_reason = e.what();
        }
    }
}

}  // namespace

void detail::profile_end_to_end(profile_result& r, const core::model_analysis& analysis, backend& b,
                                const profile_options& o) {
    time_end_to_end(r, analysis, b, o);
}

void require_kv_cache_fits(const core::model_analysis& analysis, backend& b, std::int64_t max_memory_bytes) {
    const std::int64_t cache = core::memory_of(analysis).kv_cache_bytes;
    if (cache <= 0) return;
    if (const memory_budget m = budget_of(b, max_memory_bytes); m.bytes > 0 && cache > m.bytes) {
        // sizes that round alike are given to the byte
        const bool alike = describe_bytes(cache) == describe_bytes(m.bytes);
        auto size = [&](std::int64_t v) { return alike ? std::to_string(v) + " bytes" : describe_bytes(v); };
        throw core::error((analysis.run ? "a " + core::describe(*analysis.run) + ", batch " + std::to_string(analysis.run->batch)
                                        : std::string("this model")) +
                          ", needs " + size(cache) + " of KV cache: only " + size(m.bytes) + " " + m.says +
                          " (a step needs its whole cache; a shorter kv_len or a smaller batch fits)");
    }
}

profile_result profile_model(const core::model_analysis& analysis, backend& b, const profile_options& o) {
    require_kv_cache_fits(analysis, b, o.max_memory_bytes);
    profile_result r;
    r.analysis = analysis;
    r.device = b.device();
    r.timer_name = b.timer().name();
    r.timer_resolution_ns = b.timer().resolution_ns();
    r.timer_overhead_ns = b.timer().overhead_ns();
    r.timing = o.timing;
    r.verify = o.verify;
    r.seed = o.seed;
    r.memory = core::memory_of(analysis);
    r.ceilings = o.ceilings;
    if (!r.ceilings) r.no_ceilings_reason = o.no_ceilings_reason.empty() ? "none were given" : o.no_ceilings_reason;
    // a training step runs the model unfused (folding a batch norm is an inference rewrite)
    const core::model_analysis trained = core::unfuse(analysis);
    r.training = core::estimate_training(trained, core::memory_of(trained));
    auto stopped = [&] { return o.stop && o.stop->load(); };
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    const std::size_t n = analysis.layers.size();
    std::size_t done_work = 0, total_work = 0;
    // the first layer of each signature is measured; later ones report it unless every layer is asked for
    std::map<std::string, std::size_t> first_of;  // signature -> index in r.layers
    std::vector<std::string> signature(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto& la = analysis.layers[i];
        if (core::is_view(la.layer.op)) continue;
        signature[i] = core::layer_signature(la, analysis.data_type);
        if (o.every_layer || !first_of.count(signature[i])) {
            ++total_work;
            if (!o.every_layer) first_of[signature[i]] = n;  // reserved: filled when measured
        }
    }
    first_of.clear();
    for (std::size_t i = 0; i < n && o.per_layer; ++i) {
        const auto& la = analysis.layers[i];
        if (o.on_progress) {
            progress_event ev{i, n, la.layer.name, elapsed(), -1};
            if (done_work > 0) ev.eta_s = elapsed() / static_cast<double>(done_work) * static_cast<double>(total_work - done_work);
            o.on_progress(ev);
        }
        if (stopped()) {
            layer_profile p;
            p.analysis = la;
            p.state = run_state::not_measured;
            p.reason = "interrupted";
            r.layers.push_back(std::move(p));
            r.not_measured.push_back(la.layer.name);
            continue;
        }
        if (!o.every_layer && !signature[i].empty()) {
            const auto it = first_of.find(signature[i]);
            if (it != first_of.end()) {  // the same work as a layer measured before: its measurement, said so
                layer_profile p = r.layers[it->second];
                p.analysis = la;
                p.measured_as = r.layers[it->second].analysis.layer.name;
                ++r.layers_reused;
                if (p.has_time()) {
                    r.sum_of_layers_ms += p.time->stats.median;
                    if (p.roofline) r.bound_ms[p.roofline->bound] += p.time->stats.median;
                }
                if (p.state == run_state::not_measured) r.not_measured.push_back(la.layer.name);
                r.layers.push_back(std::move(p));
                continue;
            }
            first_of[signature[i]] = r.layers.size();
        }
        layer_profile p = profile_layer(la, analysis, b, o);
        if (!core::is_view(la.layer.op)) {
            ++done_work;
            ++r.layers_measured;
        }
        if (p.state == run_state::not_measured) r.not_measured.push_back(la.layer.name);
        if (p.has_time()) {
            r.sum_of_layers_ms += p.time->stats.median;
            if (p.roofline) r.bound_ms[p.roofline->bound] += p.time->stats.median;
        }
        r.workspace_bytes += p.workspace_bytes;
        r.layers.push_back(std::move(p));
    }
    if (!stopped() && o.every_layer) detail::check_twins(r, b, o);
    recheck_memory_roofs(r, b, o);
    if (o.end_to_end) {
        if (o.on_progress) o.on_progress(progress_event{n, n, "end to end", elapsed(), -1});
        time_end_to_end(r, analysis, b, o);
    }
    if (o.fusion_savings && !stopped()) detail::measure_fusion_savings(r, b, o);
    r.complete = r.not_measured.empty() && r.end_to_end_state != run_state::not_measured && !stopped();
    return r;
}

}  // namespace ridgeline::profiler
