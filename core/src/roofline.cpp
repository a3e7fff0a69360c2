#include "ridgeline/core/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>

#include "ridgeline/core/format.hpp"

namespace ridgeline::core {

namespace {
std::string pct(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", v * 100.0);
    return buf;
}
std::string num(double v) { return significant(v, 3); }
}  // namespace

std::string_view to_string(bound_class b) {
    switch (b) {
        case bound_class::compute: return "compute";
        case bound_class::memory: return "memory";
        case bound_class::overhead: return "overhead";
        case bound_class::ambiguous: return "ambiguous";
        case bound_class::mistrusted: return "mistrusted";
        case bound_class::disturbed: return "disturbed";
        case bound_class::none: return "none";
    }
    return "none";
}

std::optional<bound_class> parse_bound(std::string_view s) {
    for (bound_class b : {bound_class::compute, bound_class::memory, bound_class::overhead, bound_class::ambiguous,
                          bound_class::mistrusted, bound_class::disturbed, bound_class::none})
        if (to_string(b) == s) return b;
    return std::nullopt;
}

std::ostream& operator<<(std::ostream& os, bound_class b) { return os << to_string(b); }

std::string_view rule_legend() {
    return "rule: C>M compute floor above the memory floor, M>C the reverse, <=4D within 4x the dispatch cost (overhead), "
           "~4D the CI straddles 4x the dispatch cost, ~ridge intensity within 10% of the ridge point (ambiguous: "
           "the two candidates follow), >C / >M faster than the compute / memory roof (mistrusted)";
}

double roof_tolerance(double spread) {
    if (!(spread > 0)) spread = 0;
    return std::min(0.10, 0.02 + spread);
}

roofline_point classify(std::int64_t flops, std::int64_t bytes, double median_ms, double ci_low_ms, double ci_high_ms,
                        const roofs& r) {
    roofline_point p;
    p.compute_ms = r.compute_gflops > 0 ? static_cast<double>(flops) / (r.compute_gflops * 1e9) * 1e3 : 0.0;
    p.memory_ms = r.bandwidth_gbs > 0 ? static_cast<double>(bytes) / (r.bandwidth_gbs * 1e9) * 1e3 : 0.0;
    p.floor_ms = std::max(p.compute_ms, p.memory_ms);
    const double hard_compute = r.compute_checked ? p.compute_ms / (1.0 + r.compute_tolerance) : 0.0;
    const double hard_memory = p.memory_ms / (1.0 + r.bandwidth_tolerance);
    p.hard_floor_ms = std::max(hard_compute, hard_memory);
    p.roof_fraction = median_ms > 0 ? p.floor_ms / median_ms : std::numeric_limits<double>::quiet_NaN();
    if ((flops == 0 && bytes == 0) || !(median_ms > 0)) {
        p.bound = bound_class::none;
        p.reason = flops == 0 && bytes == 0 ? "no arithmetic and no data movement" : "no time";
        p.rule = "-";
        return p;
    }
    if (ci_high_ms < p.hard_floor_ms) {
        const bool compute = hard_compute >= hard_memory;
        const double tol = compute ? r.compute_tolerance : r.bandwidth_tolerance;
        p.bound = bound_class::mistrusted;
        p.rule = compute ? ">C" : ">M";
        p.reason = "measured " + num(median_ms) + " ms (CI up to " + num(ci_high_ms) + ") beats the " +
                   (compute ? "compute" : "memory") + " roof's " + num(compute ? p.compute_ms : p.memory_ms) +
                   " ms by more than its tolerance " + pct(tol) + ": the time, a count or a ceiling is wrong";
        return p;
    }
    const double threshold = overhead_dispatch_multiple * r.dispatch_ms;
    if (r.dispatch_ms > 0 && p.roof_fraction < overhead_roof_fraction) {
        if (median_ms <= threshold && ci_high_ms <= threshold) {
            p.bound = bound_class::overhead;
            p.rule = "<=4D";
            p.reason = "the roofs explain " + pct(p.roof_fraction) + " of the time, which is within " +
                       num(overhead_dispatch_multiple) + "x the dispatch cost " + num(r.dispatch_ms) + " ms";
            return p;
        }
        if (ci_low_ms <= threshold && threshold < ci_high_ms) {
            const bound_class other = p.compute_ms >= p.memory_ms ? bound_class::compute : bound_class::memory;
            p.bound = bound_class::ambiguous;
            p.rule = "~4D";
            p.candidates = {bound_class::overhead, other};
            p.reason = "overhead or " + std::string(to_string(other)) + ": the time's 95% CI (" + num(ci_low_ms) + "-" +
                       num(ci_high_ms) + " ms) straddles " + num(overhead_dispatch_multiple) + "x the dispatch cost (" +
                       num(threshold) + " ms)";
            return p;
        }
    }
    const bool has_ridge = r.compute_gflops > 0 && r.bandwidth_gbs > 0 && bytes > 0;
    if (has_ridge && flops > 0) {
        const double intensity = static_cast<double>(flops) / static_cast<double>(bytes);
        const double ridge = r.compute_gflops / r.bandwidth_gbs;
        if (ridge >= intensity * (1.0 - ridge_tolerance) && ridge <= intensity * (1.0 + ridge_tolerance)) {
            p.bound = bound_class::ambiguous;
            p.rule = "~ridge";
            p.candidates = {bound_class::compute, bound_class::memory};
            p.reason = "compute or memory: intensity " + num(intensity) + " FLOP/B is within 10% of the ridge point " +
                       num(ridge);
            return p;
        }
    }
    if (p.compute_ms >= p.memory_ms) {
        p.bound = bound_class::compute;
        p.rule = "C>M";
        p.reason = "the compute floor (" + num(p.compute_ms) + " ms) exceeds the memory floor (" + num(p.memory_ms) +
                   " ms); at " + pct(p.roof_fraction) + " of the roof";
    } else {
        p.bound = bound_class::memory;
        p.rule = "M>C";
        p.reason = "the memory floor (" + num(p.memory_ms) + " ms) exceeds the compute floor (" + num(p.compute_ms) +
                   " ms); at " + pct(p.roof_fraction) + " of the roof";
    }
    return p;
}

}  // namespace ridgeline::core
