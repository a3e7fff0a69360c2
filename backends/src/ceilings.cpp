#include "ridgeline/backends/ceilings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ridgeline/core/roofline.hpp"

namespace ridgeline::backends {

std::optional<double> ceilings::compute_roof_gflops(core::dtype dt) const {
    auto it = peak_gflops.find(std::string(core::to_string(dt)));
    if (it == peak_gflops.end() || !(it->second > 0)) return std::nullopt;
    return it->second;
}

std::optional<double> ceilings::ridge_point(core::dtype dt) const {
    auto roof = compute_roof_gflops(dt);
    if (!roof || !(bandwidth_gbs > 0)) return std::nullopt;
    return *roof / bandwidth_gbs;
}

std::vector<std::int64_t> ceilings::sweep_points_for_working_set(std::int64_t bytes) const {
    // the sweep's sizes grow by 2x (4x quick): a working set just below a cache level's size is judged against
    // the point below it too, so that the step never puts a roof under the level the data really fits
    std::vector<std::int64_t> points;
    std::int64_t below = -1;
    bool found = false;
    for (const auto& [size, gbs] : working_set_gbs) {
        if (size >= bytes) {
            if (below >= 0) points.push_back(below);
            points.push_back(size);
            found = true;
            break;
        }
        below = size;
    }
    if (!found && below >= 0) points.push_back(below);
    // the level `bytes` fits: every sweep point of that level (above the level below's capacity, up to its own)
    std::int64_t lower = 0;
    for (std::int64_t capacity : cache_level_bytes) {
        if (capacity <= lower) break;  // levels are smallest first; a malformed list is not trusted further
        if (bytes <= capacity) {
            for (const auto& [size, gbs] : working_set_gbs)
                if (size > lower && size <= capacity) points.push_back(size);
            break;
        }
        lower = capacity;
    }
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    return points;
}

double ceilings::bandwidth_for_working_set_gbs(std::int64_t bytes) const {
    double roof = bandwidth_gbs;
    for (std::int64_t size : sweep_points_for_working_set(bytes))
        for (const auto& [s, gbs] : working_set_gbs)
            if (s == size) roof = std::max(roof, gbs);
    return roof;
}

std::int64_t ceilings::hot_cache_capacity_bytes() const {
    if (working_set_gbs.empty() || !(bandwidth_gbs > 0)) return last_level_cache_bytes > 0 ? last_level_cache_bytes : -1;
    const double above_dram = bandwidth_gbs * (1 + bandwidth_tolerance());
    std::int64_t held = 0;
    for (const auto& [size, gbs] : working_set_gbs)
        if (gbs > above_dram) held = std::max(held, size);
    return last_level_cache_bytes > 0 ? std::min(held, last_level_cache_bytes) : held;
}

double ceilings::compute_tolerance(core::dtype dt) const { return compute_tolerance(std::string(core::to_string(dt))); }

double ceilings::compute_tolerance(const std::string& dtype_name) const {
    auto it = spread.find("peak_gflops." + dtype_name);
    return core::roof_tolerance(it != spread.end() ? it->second : 0.0);
}

double ceilings::bandwidth_tolerance() const {
    double s = 0;
    for (const char* k : {"copy", "triad", "read", "working_set"})
        if (auto it = spread.find(k); it != spread.end()) s = std::max(s, it->second);
    return core::roof_tolerance(s);
}

std::string implausible_ceilings(const ceilings& c) {
    // below 1 MFLOP/s or 10 MB/s no device of any age: a value that small was damaged or edited, and would give
    // times beyond any report's reach
    auto bad = [](double v, double hi, double lo = 0) { return !std::isfinite(v) || v <= lo || v > hi; };
    constexpr double max_gflops = 1e7, max_gbs = 1e6, min_gflops = 1e-3, min_gbs = 1e-2;
    auto num = [](double v) {  // 4 significant digits, never "0.000000" for a tiny value
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.4g", v);
        return std::string(buf);
    };
    for (const auto* m : {&c.peak_gflops, &c.gemm_gflops, &c.fma_peak_gflops, &c.fma_peak_by_isa_gflops})
        for (const auto& [k, v] : *m)
            if (bad(v, max_gflops, min_gflops)) return "compute ceiling " + k + " is " + num(v) + " GFLOP/s";
    for (const auto& [dt, v] : c.peak_gflops) {
        const double fma = c.fma_peak_gflops.count(dt) ? c.fma_peak_gflops.at(dt) : 0.0;
        const double gemm = c.gemm_gflops.count(dt) ? c.gemm_gflops.at(dt) : 0.0;
        if (std::abs(v - std::max(fma, gemm)) > 1e-9 * v)
            return "compute roof " + dt + " is not the highest of its FMA and GEMM ceilings";
    }
    if (c.peak_gflops.empty()) return "no compute roof";
    if (bad(c.bandwidth_gbs, max_gbs, min_gbs)) return "DRAM bandwidth is " + num(c.bandwidth_gbs) + " GB/s";
    for (double k : {c.copy_gbs, c.triad_gbs, c.read_gbs, c.device_copy_gbs})
        if (!std::isfinite(k) || k < 0 || k > c.bandwidth_gbs * (1 + 1e-9)) return "a STREAM kernel beats the DRAM roof";
    std::int64_t previous = 0;
    for (const auto& [bytes, gbs] : c.working_set_gbs) {
        if (bytes < 1024 || bytes > (std::int64_t{1} << 40) || bad(gbs, max_gbs, min_gbs))
            return "a working-set point is " + std::to_string(bytes) + " B at " + num(gbs) + " GB/s";
        if (bytes <= previous) return "the working-set sweep's sizes do not grow (" + std::to_string(bytes) + " B after " +
                                      std::to_string(previous) + " B)";
        previous = bytes;
    }
    if (!std::isfinite(c.dispatch_overhead_ms) || c.dispatch_overhead_ms < 0 || c.dispatch_overhead_ms > 1000)
        return "dispatch overhead is " + num(c.dispatch_overhead_ms) + " ms";
    if (!std::isfinite(c.cold_bandwidth_gbs) || c.cold_bandwidth_gbs < 0 || c.cold_bandwidth_gbs > max_gbs ||
        (c.cold_bandwidth_gbs > 0 && c.cold_bandwidth_gbs < min_gbs))
        return "cold bandwidth is " + num(c.cold_bandwidth_gbs) + " GB/s (0: not measured; else 0.01 GB/s or more)";
    if (!std::isfinite(c.cold_dispatch_overhead_ms) || c.cold_dispatch_overhead_ms < 0 || c.cold_dispatch_overhead_ms > 1000)
        return "cold dispatch overhead is " + num(c.cold_dispatch_overhead_ms) + " ms";
    if (c.last_level_cache_bytes < 0 || c.last_level_cache_bytes > (std::int64_t{1} << 40))
        return "last-level cache is " + std::to_string(c.last_level_cache_bytes) + " bytes";
    for (std::size_t i = 0; i < c.cache_level_bytes.size(); ++i)
        if (c.cache_level_bytes[i] <= 0 || c.cache_level_bytes[i] > (std::int64_t{1} << 40) ||
            (i > 0 && c.cache_level_bytes[i] <= c.cache_level_bytes[i - 1]))
            return "cache level " + std::to_string(i + 1) + " is " + std::to_string(c.cache_level_bytes[i]) +
                   " bytes (levels must grow, each between 1 B and 1 TiB)";
    for (const auto& [k, v] : c.spread)
        if (!std::isfinite(v) || v < 0) return "spread " + k + " is " + num(v);
    return {};
}

void finish_compute_roofs(ceilings& c) {
    std::map<std::string, bool> dtypes;
    for (const auto& [dt, g] : c.fma_peak_gflops) dtypes[dt] = true;
    for (const auto& [dt, g] : c.gemm_gflops) dtypes[dt] = true;
    for (const auto& [dt, unused] : dtypes) {
        const double fma = c.fma_peak_gflops.count(dt) ? c.fma_peak_gflops.at(dt) : 0.0;
        const double gemm = c.gemm_gflops.count(dt) ? c.gemm_gflops.at(dt) : 0.0;
        const bool from_fma = fma >= gemm;
        c.peak_gflops[dt] = std::max(fma, gemm);
        const std::string from = from_fma ? "fma_peak." + dt : "gemm." + dt;
        if (auto it = c.spread.find(from); it != c.spread.end()) c.spread["peak_gflops." + dt] = it->second;
        c.method["peak_gflops." + dt] =
            from_fma ? "the FMA kernel's issue peak (the highest measured compute ceiling; the GEMM reaches " +
                           std::to_string(static_cast<int>(gemm > 0 && fma > 0 ? 100.0 * gemm / fma + 0.5 : 0)) + "% of it)"
                     : "the library GEMM (the highest measured compute ceiling" +
                           std::string(fma > 0 ? "; above the FMA kernel" : ": no FMA kernel for this data type") + ")";
    }
}

void merge_ceilings(ceilings& now, const ceilings& earlier) {
    auto higher = [](std::map<std::string, double>& into, const std::map<std::string, double>& from) {
        for (const auto& [k, v] : from)
            if (into.count(k)) into[k] = std::max(into[k], v);
    };
    higher(now.peak_gflops, earlier.peak_gflops);
    higher(now.gemm_gflops, earlier.gemm_gflops);
    higher(now.fma_peak_gflops, earlier.fma_peak_gflops);
    higher(now.fma_peak_by_isa_gflops, earlier.fma_peak_by_isa_gflops);
    now.bandwidth_gbs = std::max(now.bandwidth_gbs, earlier.bandwidth_gbs);
    now.copy_gbs = std::max(now.copy_gbs, earlier.copy_gbs);
    now.triad_gbs = std::max(now.triad_gbs, earlier.triad_gbs);
    now.read_gbs = std::max(now.read_gbs, earlier.read_gbs);
    now.device_copy_gbs = std::max(now.device_copy_gbs, earlier.device_copy_gbs);
    for (auto& [size, gbs] : now.working_set_gbs)
        for (const auto& [s2, g2] : earlier.working_set_gbs)
            if (s2 == size) gbs = std::max(gbs, g2);
    now.method["merged"] = "each compute and bandwidth ceiling is the higher of this measurement and the one of " +
                           earlier.measured_at + " (--recalibrate starts afresh)";
}

double sample_spread(const std::vector<double>& sample_ms) {
    if (sample_ms.empty()) return 0;
    std::vector<double> v = sample_ms;
    std::sort(v.begin(), v.end());
    const double best = v.front();
    const double median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    return best > 0 ? (median - best) / best : 0.0;
}

}  // namespace ridgeline::backends
