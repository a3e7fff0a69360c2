#include "ridgeline/core/roofline.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace ridgeline::core {

namespace {
std::string pct(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", v * 100.0);
    return buf;
}
std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}
}  // namespace

roofline_point classify(std::int64_t flops, std::int64_t bytes, double median_ms, double ci_low_ms, double ci_high_ms,
                        const roofs& r) {
    roofline_point p;
    p.compute_ms = r.compute_gflops > 0 ? static_cast<double>(flops) / (r.compute_gflops * 1e9) * 1e3 : 0.0;
    p.memory_ms = r.bandwidth_gbs > 0 ? static_cast<double>(bytes) / (r.bandwidth_gbs * 1e9) * 1e3 : 0.0;
    p.floor_ms = std::max(p.compute_ms, p.memory_ms);
    const double issue = r.issue_peak_gflops > 0 ? std::max(r.issue_peak_gflops, r.compute_gflops) : r.compute_gflops;
    const double hard_compute = issue > 0 ? static_cast<double>(flops) / (issue * 1e9) * 1e3 : 0.0;
    const double hard_memory = p.memory_ms / bandwidth_hard_factor;
    p.hard_floor_ms = std::max(hard_compute, hard_memory);
    p.roof_fraction = median_ms > 0 ? p.floor_ms / median_ms : std::numeric_limits<double>::quiet_NaN();
    if ((flops == 0 && bytes == 0) || !(median_ms > 0)) {
        p.bound = "none";
        p.reason = flops == 0 && bytes == 0 ? "no arithmetic and no data movement" : "no time";
        return p;
    }
    if (ci_high_ms < p.hard_floor_ms) {
        p.bound = "mistrusted";
        p.reason = "measured " + num(median_ms) + " ms (CI up to " + num(ci_high_ms) + ") is below what the device " +
                   "can do at all (" + num(p.hard_floor_ms) + " ms): the time, a count or a ceiling is wrong";
        return p;
    }
    const double threshold = overhead_dispatch_multiple * r.dispatch_ms;
    if (r.dispatch_ms > 0 && p.roof_fraction < overhead_roof_fraction) {
        if (median_ms <= threshold && ci_high_ms <= threshold) {
            p.bound = "overhead";
            p.reason = "the roofs explain " + pct(p.roof_fraction) + " of the time, which is within " +
                       num(overhead_dispatch_multiple) + "x the dispatch cost " + num(r.dispatch_ms) + " ms";
            return p;
        }
        if (ci_low_ms <= threshold && threshold < ci_high_ms) {
            p.bound = "ambiguous";
            p.reason = "the time's 95% CI straddles " + num(overhead_dispatch_multiple) + "x the dispatch cost";
            return p;
        }
    }
    const bool has_ridge = r.compute_gflops > 0 && r.bandwidth_gbs > 0 && bytes > 0;
    if (has_ridge && flops > 0) {
        const double intensity = static_cast<double>(flops) / static_cast<double>(bytes);
        const double ridge = r.compute_gflops / r.bandwidth_gbs;
        if (ridge >= intensity * (1.0 - ridge_tolerance) && ridge <= intensity * (1.0 + ridge_tolerance)) {
            p.bound = "ambiguous";
            p.reason = "intensity " + num(intensity) + " FLOP/B is within 10% of the ridge point " + num(ridge);
            return p;
        }
    }
    if (p.compute_ms >= p.memory_ms) {
        p.bound = "compute";
        p.reason = "the compute floor (" + num(p.compute_ms) + " ms) exceeds the memory floor (" + num(p.memory_ms) +
                   " ms); at " + pct(p.roof_fraction) + " of the roof";
    } else {
        p.bound = "memory";
        p.reason = "the memory floor (" + num(p.memory_ms) + " ms) exceeds the compute floor (" + num(p.compute_ms) +
                   " ms); at " + pct(p.roof_fraction) + " of the roof";
    }
    return p;
}

}  // namespace ridgeline::core
