#include "ridgeline/core/predict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ridgeline::core {

std::string_view to_string(prediction_rule r) {
    switch (r) {
        case prediction_rule::roofs: return "roofs";
        case prediction_rule::dispatch: return "dispatch";
        case prediction_rule::none: return "none";
    }
    return "none";
}

namespace {

struct floors {
    double compute_ms = 0, memory_ms = 0;
    [[nodiscard]] double floor() const { return std::max(compute_ms, memory_ms); }
    [[nodiscard]] bool compute_larger() const { return compute_ms >= memory_ms; }
};

// GFLOP/s and GB/s are 10^6 FLOP and bytes per millisecond; a roof that is zero or missing gives no floor
floors floors_of(const prediction_input& in, const roofs& r) {
    floors f;
    if (r.compute_gflops > 0 && std::isfinite(r.compute_gflops))
        f.compute_ms = static_cast<double>(in.flops) / (r.compute_gflops * 1e6);
    if (r.bandwidth_gbs > 0 && std::isfinite(r.bandwidth_gbs))
        f.memory_ms = static_cast<double>(in.bytes) / (r.bandwidth_gbs * 1e6);
    return f;
}

double dispatch_of(const roofs& r) { return r.dispatch_ms > 0 && std::isfinite(r.dispatch_ms) ? r.dispatch_ms : 0.0; }

}  // namespace

prediction predict_time(const prediction_input& in, double rule_error) {
    prediction p;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    p.time_ms = p.low_ms = p.high_ms = p.baseline_ms = p.efficiency = nan;
    const floors fs = floors_of(in, in.source), ft = floors_of(in, in.target);
    // the target in the state it is judged in: with a cache shift, its bandwidth and dispatch cost change
    roofs final_roofs = in.target;
    double shift_ms = 0;
    if (in.shift) {
        const cache_shift& c = *in.shift;
        const double cold_d = c.cold_dispatch_ms > 0 ? c.cold_dispatch_ms : c.hot_dispatch_ms;
        const double bytes = static_cast<double>(in.bytes);
        const double extra = (c.dram_gbs > 0 ? bytes / (c.dram_gbs * 1e6) : 0.0) -
                             (c.level_gbs > 0 ? bytes / (c.level_gbs * 1e6) : 0.0) + (cold_d - c.hot_dispatch_ms);
        shift_ms = c.to_cold ? extra : -extra;
        final_roofs.bandwidth_gbs = c.to_cold ? c.dram_gbs : c.level_gbs;
        final_roofs.dispatch_ms = c.to_cold ? cold_d : c.hot_dispatch_ms;
    }
    const floors ff = floors_of(in, final_roofs);
    p.source_floor_ms = fs.floor();
    p.target_floor_ms = ff.floor();
    const double ds = dispatch_of(in.source), dt = dispatch_of(in.target), df = dispatch_of(final_roofs);
    if (!(in.median_ms > 0) || !std::isfinite(in.median_ms)) {
        p.reason = "no time measured on the source";
        return p;
    }
    const bool floors_known = fs.floor() > 0 && ft.floor() > 0;
    if (floors_known && ff.floor() > 0) p.baseline_ms = in.median_ms * ff.floor() / fs.floor();
    const bool roofs_rule = in.median_ms > ds && floors_known;
    const bool dispatch_rule = !roofs_rule && ds > 0 && dt > 0;
    if (!roofs_rule && !dispatch_rule) {
        p.reason = fs.floor() > 0 && !(ft.floor() > 0) ? "the target has no roofs for this layer"
                   : !(fs.floor() > 0)                  ? "the layer has no floor and no dispatch cost is known"
                                                        : "the source has no roofs for this layer";
        return p;
    }
    // e measured on the source; never above 1 (work faster than the roofs would mean the dispatch cost overlaps
    // the work, and the target cannot beat its roofs either)
    const double e = roofs_rule ? std::min(1.0, fs.floor() / (in.median_ms - ds)) : nan;
    const double ratio = floors_known ? ft.floor() / fs.floor() : 1.0;
    // the work split by what accounts for it on the source: the share its memory floor explains at the full
    // bandwidth roof moves with the bandwidth, the rest (the compute floor, and in-core work the roofline does not
    // count: the polynomials of gelu and tanh, a small GEMM's packing) with the compute roof
    const double work = roofs_rule ? std::max(in.median_ms - ds, fs.floor()) : 0.0;
    const double memory_share = work > 0 ? std::clamp(fs.memory_ms / work, 0.0, 1.0) : 0.0;
    const double memory_ratio = fs.memory_ms > 0 && ft.memory_ms > 0 ? ft.memory_ms / fs.memory_ms
                                : in.source.bandwidth_gbs > 0 && in.target.bandwidth_gbs > 0
                                    ? in.source.bandwidth_gbs / in.target.bandwidth_gbs
                                    : ratio;
    const double compute_ratio = fs.compute_ms > 0 && ft.compute_ms > 0 ? ft.compute_ms / fs.compute_ms
                                 : in.source.compute_gflops > 0 && in.target.compute_gflops > 0
                                     ? in.source.compute_gflops / in.target.compute_gflops
                                     : ratio;
    const double scale = memory_share * memory_ratio + (1 - memory_share) * compute_ratio;
    p.memory_share = memory_share;
    // the rule as a function of a source time: continuous and increasing, so the CI bounds map to the interval;
    // never below the target's dispatch cost plus its floor in the state it is judged in
    auto apply = [&](double t) {
        // the dispatch rule: the layer is all fixed cost (t <= d_source), on the target d_target + floor_target
        const double same_state =
            roofs_rule ? std::max(dt + std::max(t - ds, fs.floor()) * scale, dt + ft.floor()) : dt + ft.floor();
        return std::max(same_state + shift_ms, df + ff.floor());
    };
    p.rule = roofs_rule ? prediction_rule::roofs : prediction_rule::dispatch;
    p.efficiency = e;
    p.cache_shift_ms = shift_ms;
    p.time_ms = apply(in.median_ms);
    if (!(p.time_ms > 0) || !std::isfinite(p.time_ms)) {
        p.rule = prediction_rule::none;
        p.time_ms = p.low_ms = p.high_ms = nan;
        p.reason = "nothing to time on the target: no floor and no fixed cost left, or a time beyond a double";
        return p;
    }
    const double lo = in.ci95_low_ms > 0 && in.ci95_low_ms <= in.median_ms ? in.ci95_low_ms : in.median_ms;
    const double hi = in.ci95_high_ms >= in.median_ms ? in.ci95_high_ms : in.median_ms;
    const double err = rule_error > 0 && std::isfinite(rule_error) ? rule_error : 0.0;
    // the interval's low end stays at or above the target's dispatch cost plus its floor, as the time does
    p.low_ms = std::max(std::min(apply(lo), p.time_ms) / (1 + err), std::min(p.time_ms, df + ff.floor()));
    p.high_ms = std::max(apply(hi), p.time_ms) * (1 + err);
    p.bound_changes = floors_known && fs.compute_ms > 0 && fs.memory_ms > 0 && ff.compute_ms > 0 && ff.memory_ms > 0 &&
                      fs.compute_larger() != ff.compute_larger();
    char buf[300];
    if (roofs_rule)
        std::snprintf(buf, sizeof buf,
                      "the layer's work (its time less the dispatch cost) reached %.0f%% of its roofs on the source; "
                      "the %.0f%% its memory floor accounts for scales by %.3g, the rest by the compute roofs' %.3g on "
                      "the target (floor %.4g ms, dispatch %.4g ms)",
                      100 * e, 100 * memory_share, memory_ratio, compute_ratio, ff.floor(), df);
    else
        std::snprintf(buf, sizeof buf,
                      "the time is within the source's dispatch cost (%.4g ms): the target's (%.4g ms) plus its floor", ds, dt);
    p.reason = buf;
    if (in.shift) {
        std::snprintf(buf, sizeof buf, "; %s cache: %+.4g ms (its bytes from %s, the %s dispatch cost)",
                      in.shift->to_cold ? "cold" : "hot", shift_ms, in.shift->to_cold ? "DRAM" : "the cache",
                      in.shift->to_cold ? "cold" : "hot");
        p.reason += buf;
    }
    if (p.bound_changes)
        p.reason += std::string("; the larger floor is ") + (fs.compute_larger() ? "compute" : "memory") +
                    " on the source and " + (ff.compute_larger() ? "compute" : "memory") + " on the target";
    return p;
}

double predict_end_to_end(double source_end_to_end_ms, double source_layers_ms, double predicted_layers_ms) {
    if (!(source_end_to_end_ms > 0) || !(source_layers_ms > 0) || !(predicted_layers_ms > 0) ||
        !std::isfinite(source_end_to_end_ms + source_layers_ms + predicted_layers_ms))
        return std::numeric_limits<double>::quiet_NaN();
    const double ratio = predicted_layers_ms / source_layers_ms;
    const double gap = source_end_to_end_ms - source_layers_ms;
    if (gap <= 0) return source_end_to_end_ms * ratio;
    return predicted_layers_ms + gap * std::pow(ratio, gap_exponent);
}

bool pass_stays_cached(double distinct_bytes, std::int64_t capacity_bytes) {
    return capacity_bytes < 0 || distinct_bytes <= pass_cache_share * static_cast<double>(capacity_bytes);
}

double pass_cache_shift_ms(const pass_cache_change& c) {
    const double values[] = {c.distinct_bytes, c.level_gbs, c.cold_gbs, c.hot_dispatch_ms, c.cold_dispatch_ms};
    for (double v : values)
        if (!std::isfinite(v) || v < 0) return std::numeric_limits<double>::quiet_NaN();
    const double cold_d = c.cold_dispatch_ms > 0 ? c.cold_dispatch_ms : c.hot_dispatch_ms;
    const bool fits = pass_stays_cached(c.distinct_bytes, c.capacity_bytes);
    const double bytes_ms = fits && c.cold_gbs > 0 && c.level_gbs > 0
                                ? std::max(0.0, c.distinct_bytes / (c.cold_gbs * 1e6) - c.distinct_bytes / (c.level_gbs * 1e6))
                                : 0.0;
    return cold_d - c.hot_dispatch_ms + bytes_ms;
}

}  // namespace ridgeline::core
