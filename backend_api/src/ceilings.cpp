#include "ridgeline/backend_api/ceilings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "ridgeline/core/roofline.hpp"

namespace ridgeline::backend_api {

std::string_view to_string(ceilings_source s) {
    switch (s) {
        case ceilings_source::measured: return "measured";
        case ceilings_source::cache: return "cache";
        case ceilings_source::datasheet: return "datasheet";
    }
    return "measured";
}

std::optional<ceilings_source> parse_ceilings_source(std::string_view text) {
    for (auto s : {ceilings_source::measured, ceilings_source::cache, ceilings_source::datasheet})
        if (to_string(s) == text) return s;
    return std::nullopt;
}

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

std::int64_t ceilings::dram_level_bytes() const {
    std::int64_t sum = 0;
    std::int64_t lower = 0;
    for (std::int64_t capacity : cache_level_bytes) {  // as far as the levels grow (levels_of)
        if (capacity <= lower || capacity > (std::int64_t{1} << 50)) break;
        sum += capacity;
        lower = capacity;
    }
    if (sum == 0) sum = std::max<std::int64_t>(0, last_level_cache_bytes);
    return sum > (std::int64_t{1} << 60) ? std::int64_t{1} << 62 : 4 * sum;
}

namespace {
/// The cache levels as (lower bound, capacity) pairs, smallest first, as far as they grow (a malformed list is
/// not trusted past its fault).
std::vector<std::pair<std::int64_t, std::int64_t>> levels_of(const std::vector<std::int64_t>& capacities) {
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    std::int64_t lower = 0;
    for (std::int64_t capacity : capacities) {
        if (capacity <= lower) break;
        out.emplace_back(lower, capacity);
        lower = capacity;
    }
    return out;
}
}  // namespace

ceilings::memory_level ceilings::level_of(std::int64_t bytes) const {
    const auto levels = levels_of(cache_level_bytes);
    if (!levels.empty() && bytes <= levels.back().second) return memory_level::cache;
    const std::int64_t dram = dram_level_bytes();
    if (dram > 0 && bytes < dram && !levels.empty()) return memory_level::transition;
    return memory_level::dram;
}

double ceilings::dram_roof_gbs() const {
    double roof = bandwidth_gbs;
    const std::int64_t dram = dram_level_bytes();
    if (dram > 0)
        for (const auto& [size, gbs] : working_set_gbs)
            if (size >= dram) roof = std::max(roof, gbs);
    return roof;
}

std::vector<std::pair<std::int64_t, double>> ceilings::dram_roof_knots() const {
    const std::int64_t dram = dram_level_bytes();
    if (stream_bytes <= 0 || dram <= 0) return {};
    // the DRAM level's readings by working set: the sweep's points there and the STREAM kernels at their own
    std::vector<std::pair<std::int64_t, double>> readings;
    for (const auto& [size, gbs] : working_set_gbs)
        if (size >= dram && gbs > 0) readings.emplace_back(size, gbs);
    // a kernel not measured reads nothing; sizes of at least 1 byte (a hand-written stream_bytes of 1 places copy at 0)
    if (copy_gbs > 0) readings.emplace_back(std::max<std::int64_t>(1, stream_bytes / 3 * 2), copy_gbs);
    if (std::max(triad_gbs, read_gbs) > 0) readings.emplace_back(stream_bytes, std::max(triad_gbs, read_gbs));
    if (readings.empty()) return {};
    std::sort(readings.begin(), readings.end());
    double highest = 0;
    for (const auto& r : readings) highest = std::max(highest, r.second);
    if (bandwidth_gbs > highest * (1 + 1e-9)) return {};  // a roof from elsewhere: keep it whole
    // the envelope: at each size the highest reading at that size or above (a larger working set is no faster)
    for (std::size_t i = readings.size() - 1; i-- > 0;)
        readings[i].second = std::max(readings[i].second, readings[i + 1].second);
    // one knot per size (the envelope's value there is its first's) and none inside a flat stretch
    std::vector<std::pair<std::int64_t, double>> knots;
    for (const auto& r : readings) {
        if (!knots.empty() && knots.back().first == r.first) continue;
        if (knots.size() >= 2 && knots.back().second == r.second && knots[knots.size() - 2].second == r.second)
            knots.back() = r;
        else
            knots.push_back(r);
    }
    while (knots.size() >= 2 && knots.back().second == knots[knots.size() - 2].second) knots.pop_back();
    return knots;
}

double ceilings::dram_roof_gbs(std::int64_t bytes) const {
    const auto knots = dram_roof_knots();
    if (knots.empty()) return dram_roof_gbs();
    if (bytes <= knots.front().first) return knots.front().second;  // the highest: dram_roof_gbs()
    if (bytes >= knots.back().first) return knots.back().second;
    std::size_t hi = 1;
    while (knots[hi].first < bytes) ++hi;
    const auto& [s0, g0] = knots[hi - 1];
    const auto& [s1, g1] = knots[hi];
    const double w = (std::log(static_cast<double>(bytes)) - std::log(static_cast<double>(s0))) /
                     (std::log(static_cast<double>(s1)) - std::log(static_cast<double>(s0)));
    return g0 + w * (g1 - g0);
}

std::vector<std::int64_t> ceilings::sweep_points_for_working_set(std::int64_t bytes) const {
    std::vector<std::int64_t> points;
    const auto levels = levels_of(cache_level_bytes);
    if (levels.empty()) {
        // no levels known: the two points around `bytes` (the sweep's sizes grow by 2x, 4x quick: the point below
        // counts too, so that the step never puts a roof under the level the data really fits)
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
        return points;
    }
    // the levels the roof draws on: every level up to the one `bytes` fits (all of them past the last); past the
    // last level the transition's points around `bytes` and the DRAM level's points
    const memory_level where = level_of(bytes);
    std::int64_t upto = levels.back().second;
    for (const auto& [lower, capacity] : levels)
        if (bytes <= capacity) {
            upto = capacity;
            break;
        }
    const std::int64_t dram = dram_level_bytes();
    for (const auto& [size, gbs] : working_set_gbs)
        if ((where != memory_level::dram && size <= upto) || (where != memory_level::cache && dram > 0 && size >= dram))
            points.push_back(size);
    if (where == memory_level::transition)
        for (std::int64_t size : transition_points_around(bytes)) points.push_back(size);
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    return points;
}

std::vector<std::int64_t> ceilings::transition_points_around(std::int64_t bytes) const {
    // the transition's points nearest below and at-or-above `bytes`
    std::vector<std::int64_t> around;
    std::int64_t below = -1;
    for (const auto& [size, gbs] : working_set_gbs) {
        if (level_of(size) != memory_level::transition) continue;
        if (size >= bytes) {
            if (below >= 0) around.push_back(below);
            around.push_back(size);
            return around;
        }
        below = size;
    }
    if (below >= 0) around.push_back(below);
    return around;
}

namespace {
double level_roof(const std::vector<std::pair<std::int64_t, std::int64_t>>& levels, std::size_t level,
                  const std::vector<std::pair<std::int64_t, double>>& sweep) {
    double roof = 0;
    if (level < levels.size())
        for (const auto& [size, gbs] : sweep)
            if (size > levels[level].first && size <= levels[level].second) roof = std::max(roof, gbs);
    return roof;
}
}  // namespace

double ceilings::level_roof_gbs(std::size_t level) const {
    return level_roof(levels_of(cache_level_bytes), level, working_set_gbs);
}

double ceilings::bandwidth_for_working_set_gbs(std::int64_t bytes) const {
    const double dram = dram_roof_gbs(bytes);
    const auto levels = levels_of(cache_level_bytes);
    if (levels.empty()) {
        double roof = dram;
        for (std::int64_t size : sweep_points_for_working_set(bytes))
            for (const auto& [s, gbs] : working_set_gbs)
                if (s == size) roof = std::max(roof, gbs);
        return roof;
    }
    if (level_of(bytes) == memory_level::dram) return dram;
    // derived: fastest level first, each serves at most its own capacity of the working set at its roof (as if the
    // levels were exclusive: an upper bound), the level `bytes` fits the rest, or DRAM past the last level
    double time = 0, remaining = static_cast<double>(std::max<std::int64_t>(1, bytes));
    for (std::size_t i = 0; i < levels.size() && remaining > 0; ++i) {
        const double roof = level_roof(levels, i, working_set_gbs);
        if (!(roof > dram)) continue;  // a level without points (or no faster than DRAM) serves nothing faster
        const bool last_needed = bytes <= levels[i].second;
        const double take = last_needed ? remaining : std::min(remaining, static_cast<double>(levels[i].second));
        time += take / roof;
        remaining -= take;
    }
    time += remaining / dram;
    double roof = std::max(dram, static_cast<double>(std::max<std::int64_t>(1, bytes)) / time);
    // in the transition, what the sweep measured around `bytes` where it read more: a cache that holds more than
    // its nominal size (a VM's two vCPUs on two L3 slices of the host, say) must not make a layer there impossible
    // (between two of them, log-linear in the size; past them, the nearest)
    if (level_of(bytes) == memory_level::transition) {
        const auto around = transition_points_around(bytes);
        auto gbs_at = [&](std::int64_t size) {
            for (const auto& [s, g] : working_set_gbs)
                if (s == size) return g;
            return 0.0;
        };
        double measured = 0;
        if (around.size() == 1 || (around.size() == 2 && around[1] == bytes)) {
            measured = gbs_at(around.back());
        } else if (around.size() == 2) {
            const double x0 = std::log(static_cast<double>(around[0])), x1 = std::log(static_cast<double>(around[1]));
            const double w = (std::log(static_cast<double>(bytes)) - x0) / (x1 - x0);
            measured = gbs_at(around[0]) + w * (gbs_at(around[1]) - gbs_at(around[0]));
        }
        roof = std::max(roof, measured);
    }
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
    if (c.stream_bytes < 0 || c.stream_bytes > (std::int64_t{1} << 40))
        return "the STREAM kernels' working set is " + std::to_string(c.stream_bytes) + " B (0 to 1 TiB)";
    std::int64_t previous = 0;
    for (const auto& [bytes, gbs] : c.working_set_gbs) {
        if (bytes < 1024 || bytes > (std::int64_t{1} << 40) || bad(gbs, max_gbs, min_gbs))
            return "a working-set point is " + std::to_string(bytes) + " B at " + num(gbs) +
                   " GB/s (each between 1 KiB and 1 TiB, at 0.01 to 10^6 GB/s)";
        if (bytes <= previous) return "the working-set sweep's sizes do not grow (" + std::to_string(bytes) + " B after " +
                                      std::to_string(previous) + " B)";
        previous = bytes;
    }
    // the smallest op of any device today dispatches in microseconds (a GPU launch 5-20 us): a cached 8 ms called
    // every layer of a profile overhead-bound, 2000x faster than its "floor"
    // nor in less than 10 ns (a few dozen instructions): a cached 0 judged a 2 us relu memory-bound at 0% of its
    // roof, and the spot check, which only ever lowers the floor, would never have raised it
    if (!std::isfinite(c.dispatch_overhead_ms) || c.dispatch_overhead_ms < 1e-5 || c.dispatch_overhead_ms > 1)
        return "dispatch overhead is " + num(c.dispatch_overhead_ms) + " ms (10 ns to 1 ms)";
    if (!std::isfinite(c.cold_bandwidth_gbs) || c.cold_bandwidth_gbs < 0 || c.cold_bandwidth_gbs > max_gbs ||
        (c.cold_bandwidth_gbs > 0 && c.cold_bandwidth_gbs < min_gbs))
        return "cold bandwidth is " + num(c.cold_bandwidth_gbs) + " GB/s (0: not measured; else 0.01 GB/s or more)";
    if (!std::isfinite(c.cold_dispatch_overhead_ms) || c.cold_dispatch_overhead_ms < 0 || c.cold_dispatch_overhead_ms > 100)
        return "cold dispatch overhead is " + num(c.cold_dispatch_overhead_ms) + " ms (0 to 100 ms)";
    if (c.last_level_cache_bytes < 0 || c.last_level_cache_bytes > (std::int64_t{1} << 40))
        return "last-level cache is " + std::to_string(c.last_level_cache_bytes) + " bytes";
    for (std::size_t i = 0; i < c.cache_level_bytes.size(); ++i)
        if (c.cache_level_bytes[i] <= 0 || c.cache_level_bytes[i] > (std::int64_t{1} << 40) ||
            (i > 0 && c.cache_level_bytes[i] <= c.cache_level_bytes[i - 1]))
            return "cache level " + std::to_string(i + 1) + " is " + std::to_string(c.cache_level_bytes[i]) +
                   " bytes (levels must grow, each between 1 B and 1 TiB)";
    if (c.cache_level_bytes.size() > max_cache_levels)
        return std::to_string(c.cache_level_bytes.size()) + " cache levels (at most " + std::to_string(max_cache_levels) + ")";
    if (!c.cache_level_bytes.empty() && c.last_level_cache_bytes > 0 && c.cache_level_bytes.back() > c.last_level_cache_bytes)
        return "the last cache level (" + std::to_string(c.cache_level_bytes.back()) +
               " bytes) is larger than the last-level cache (" + std::to_string(c.last_level_cache_bytes) + " bytes)";
    // the DRAM roof is the plateau of the DRAM level: none of its points may read more (a recheck that raises one
    // raises the roof too)
    if (const std::int64_t dram = c.dram_level_bytes(); dram > 0 && !c.cache_level_bytes.empty())
        for (const auto& [bytes, gbs] : c.working_set_gbs)
            if (bytes >= dram && gbs > c.bandwidth_gbs * (1 + 1e-9))
                return "the sweep's point at " + std::to_string(bytes) + " B, in the DRAM level (from " +
                       std::to_string(dram) + " B), reads " + num(gbs) + " GB/s, above the DRAM roof " +
                       num(c.bandwidth_gbs) + " GB/s";
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
    // the kernels' higher readings may come from either size: placed at the smaller (a roof too high, never too low)
    now.stream_bytes = now.stream_bytes > 0 && earlier.stream_bytes > 0 ? std::min(now.stream_bytes, earlier.stream_bytes)
                                                                        : 0;
    // the sweep: the higher reading at a size both have, and every point only the earlier has (a layer's own working
    // set a roof recheck measured, or a sweep of other sizes): each is a reading, and dropping one could leave
    // bandwidth_gbs above every reading, which turns the roof by working set off (dram_roof_knots)
    for (const auto& point : earlier.working_set_gbs) {
        const std::int64_t s2 = point.first;  // not a structured binding: clang 14 cannot capture one in a lambda
        const double g2 = point.second;
        auto& sweep = now.working_set_gbs;
        const auto at = std::find_if(sweep.begin(), sweep.end(), [&](const auto& pt) { return pt.first >= s2; });
        if (at != sweep.end() && at->first == s2)
            at->second = std::max(at->second, g2);
        else if (s2 > 0 && g2 > 0)
            sweep.insert(at, {s2, g2});
    }
    now.bandwidth_gbs = std::max(now.bandwidth_gbs, now.dram_roof_gbs());
    // the fixed costs are floors: the lower of the two
    auto lower = [](double& into, double from) {
        if (from > 0 && (!(into > 0) || from < into)) into = from;
    };
    lower(now.dispatch_overhead_ms, earlier.dispatch_overhead_ms);
    lower(now.cold_dispatch_overhead_ms, earlier.cold_dispatch_overhead_ms);
    now.method["merged"] = "each compute and bandwidth ceiling is the higher of this measurement and the one of " +
                           earlier.measured_at + ", each dispatch cost the lower (a recalibration starts afresh)";
}

double sample_spread(const std::vector<double>& sample_ms) {
    if (sample_ms.empty()) return 0;
    std::vector<double> v = sample_ms;
    std::sort(v.begin(), v.end());
    const double best = v.front();
    const double median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    return best > 0 ? (median - best) / best : 0.0;
}

}  // namespace ridgeline::backend_api
