// The ceilings cache and its policy: when cached ceilings answer, the spot check, measuring again (ceilings_store.hpp).
#include "ridgeline/profiler/ceilings_store.hpp"

#include <chrono>
#include <climits>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include <unistd.h>

#include "ridgeline/backend_api/disturbance.hpp"
#include "ridgeline/config.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/datasheet.hpp"
#include "ridgeline/core/file.hpp"
#include "ridgeline/core/format.hpp"

namespace ridgeline::profiler {

using core::fixed;
using core::si;
using core::time_ms;

namespace {
/// An absolute path from the environment variable `name`; empty where it is unset, empty or relative (the XDG Base
/// Directory specification: "If an implementation encounters a relative path in any of these variables it should
/// consider the path invalid and ignore it"; a relative HOME would put the cache wherever the command ran).
std::filesystem::path absolute_env(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) return {};
    std::filesystem::path p(v);
    return p.is_absolute() ? p : std::filesystem::path();
}

std::filesystem::path cache_dir() {
    if (auto x = absolute_env("XDG_CACHE_HOME"); !x.empty()) return x / "ridgeline" / "ceilings";
    if (auto h = absolute_env("HOME"); !h.empty()) return h / ".cache" / "ridgeline" / "ceilings";
    // a folder of the user's own: a shared /tmp/ridgeline would let another user plant ceilings (or a link) there
    return std::filesystem::temp_directory_path() / ("ridgeline-" + std::to_string(::getuid())) / "ceilings";
}
}  // namespace

std::string ceilings_cache_path(const std::string& fingerprint, bool quick) {
    // FNV-1a of the fingerprint keeps the file name short and free of odd characters
    std::uint64_t h = 1469598103934665603ULL;
    for (unsigned char ch : fingerprint) h = (h ^ ch) * 1099511628211ULL;
    char name[64];
    std::snprintf(name, sizeof name, "%016llx%s.json", static_cast<unsigned long long>(h), quick ? "-quick" : "");
    return (cache_dir() / name).string();
}

namespace {
/// Whether `schema` is a ceilings schema of a higher version than ceilings_schema ("ridgeline.ceilings/9").
bool schema_is_newer(const std::string& schema) {
    const std::string prefix = "ridgeline.ceilings/", mine = ceilings_schema;
    if (schema.rfind(prefix, 0) != 0) return false;
    const std::string v = schema.substr(prefix.size()), own = mine.substr(prefix.size());
    if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) return false;
    return std::stol(v) > std::stol(own);
}

/// The cache file of `fingerprint` when it answers; `why` says why an existing file does not (empty when there
/// is no file, or the file answers).
std::optional<backend_api::ceilings> load_one(const std::string& fingerprint, bool quick, std::string& why) {
    const std::string path = ceilings_cache_path(fingerprint, quick);
    why.clear();
    if (!std::filesystem::exists(path)) return std::nullopt;
    try {
        // read_regular_file: a FIFO or device at the cache's path would block or never end
        const std::string text = core::read_regular_file(path, path);
        core::check_json_text(text, path);
        const nlohmann::json j = nlohmann::json::parse(text);
        backend_api::ceilings c = ceilings_from_json(j);
        const std::string schema = j.contains("schema") && j.at("schema").is_string() ? j.at("schema").get<std::string>() : "";
        if (c.fingerprint != fingerprint) why = "it is of another device";
        else if (schema != ceilings_schema)
            why = schema_is_newer(schema)
                      ? "a newer ridgeline wrote it (" + schema + "; this one writes " + std::string(ceilings_schema) + ")"
                      : "it was measured by an older method (" + (schema.empty() ? std::string("no schema") : schema) +
                            "; " + std::string(ceilings_schema) + " has the DRAM level at 4x the sum of the caches)";
        else if (c.ridgeline_version != RIDGELINE_VERSION) why = "ridgeline " + c.ridgeline_version + " wrote it";
        else if (c.quick != quick) why = "its quick flag does not match its name";
        else if (c.disturbed) why = "it says it was disturbed";
        else if (c.backend == "cpu" && c.cache_level_bytes.empty())
            why = "it has no cache levels (measured where the OS gave no cache topology, before ridgeline read them "
                  "from CPUID and its own sweep), so its DRAM roof may be a cache's";
        else why = backend_api::implausible_ceilings(c);  // damaged or edited: measured again
        if (!why.empty()) return std::nullopt;
        c.source = backend_api::ceilings_source::cache;
        return c;
    } catch (const std::exception& e) {
        why = e.what();  // a damaged cache file is measured again
        return std::nullopt;
    }
}
}  // namespace

std::optional<backend_api::ceilings> load_cached_ceilings(const std::string& fingerprint, bool quick, std::string* refused) {
    std::string why_full, why_fast;
    auto full = load_one(fingerprint, false, why_full);
    std::optional<backend_api::ceilings> fast;
    if (quick) fast = load_one(fingerprint, true, why_fast);
    if (refused) {
        const std::string& why = !why_full.empty() ? why_full : why_fast;
        *refused = why.empty() ? std::string()
                               : ceilings_cache_path(fingerprint, !why_full.empty() ? false : true) + " is not used: " + why;
    }
    if (!quick) return full;
    // a quick request: the newer of the two (a quick measurement that a spot check sent back was merged with
    // the full one it checked, so it is at least as high; answering with the full one again would send it back
    // again on every run)
    if (full && fast) return fast->measured_at > full->measured_at ? fast : full;
    return full ? full : fast;
}

std::string save_cached_ceilings(const backend_api::ceilings& c) {
    if (c.disturbed) throw std::logic_error("disturbed ceilings are never cached");
    const std::string path = ceilings_cache_path(c.fingerprint, c.quick);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    // the cache is ridgeline's own file: a FIFO or device in its place is not written into (that would block
    // or leak the ceilings elsewhere) and not replaced either (someone put it there)
    std::error_code ec;
    if (const auto st = std::filesystem::status(path, ec); std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
        throw core::error("\"" + path + "\" is not a regular file; it was left as it is");
    nlohmann::json j = ceilings_json(c);
    j["source"] = "measured";
    core::write_file_atomic(path, j.dump(2) + "\n");
    return path;
}

namespace {

/// One obtain_ceilings: the request, what it found, and the lines it says.
struct ceilings_obtainer {
    backend_api::backend& b;
    const ceilings_request& request;
    obtained_ceilings out;
    std::string why_measure = "once";
    std::string refused;                        // why an existing cache file was not used (damaged or edited)
    std::optional<backend_api::ceilings> earlier;  // cached ceilings that a disagreeing spot check sends back

    void info(const std::string& line) const {
        if (request.on_info) request.on_info(line);
    }
    void warn(std::string line) {
        if (request.on_warning) request.on_warning(line);
        out.warnings.push_back(std::move(line));
    }
    /// The cached ceilings, spot-checked: true when they answer (in out), false when they must be measured again
    /// (a check that found more: earlier and why_measure say so).
    bool answer_from_cache(std::optional<backend_api::ceilings> cached);
    /// Measured now, merged with `earlier` when a spot check sent them back, cached unless disturbed.
    void measure(const backend_api::device_info& dev, const std::string& fp);
};

bool ceilings_obtainer::answer_from_cache(std::optional<backend_api::ceilings> cached) {
    std::optional<backend_api::ceilings_spot_check> check;
    if (request.spot_check) {
        check = b.spot_check_ceilings(*cached, backend_api::ceilings_options{true, request.stop, {}});
        if (check && !check->clean) check = b.spot_check_ceilings(*cached, backend_api::ceilings_options{true, request.stop, {}});
    }
    if (!check) {
        out.ceilings = *cached;
        return true;
    }
    const double fma_cached = cached->fma_peak_by_isa_gflops.count(check->fma_isa)
                                  ? cached->fma_peak_by_isa_gflops.at(check->fma_isa)
                                  : 0.0;
    const double fma_ratio = fma_cached > 0 && check->fma_gflops > 0 ? check->fma_gflops / fma_cached : 1.0;
    // a sweep point: the spot check's reading against the cached one at the same size
    auto at = [&](std::int64_t size) {
        for (const auto& [bytes, gbs] : cached->working_set_gbs)
            if (bytes == size) return gbs;
        return 0.0;
    };
    const double cache_cached = at(check->cache_working_set_bytes), dram_cached = at(check->dram_working_set_bytes);
    const double cache_ratio = cache_cached > 0 && check->cache_gbs > 0 ? check->cache_gbs / cache_cached : 1.0;
    const double dram_ratio = dram_cached > 0 && check->dram_gbs > 0 ? check->dram_gbs / dram_cached : 1.0;
    std::string found = "spot check in " + fixed(check->seconds, 2) + " s: FMA " + check->fma_isa + " " +
                        (check->fma_gflops > 0 ? fixed(check->fma_gflops, 1) + " GFLOP/s" : std::string("disturbed")) +
                        " (cached " + fixed(fma_cached, 1) + ")";
    for (const auto& [bytes, now, then] : {std::tuple{check->cache_working_set_bytes, check->cache_gbs, cache_cached},
                                           std::tuple{check->dram_working_set_bytes, check->dram_gbs, dram_cached}})
        if (now > 0)
            found += ", " + si(static_cast<double>(bytes), "B") + " working set " + fixed(now, 1) + " GB/s (cached " +
                     fixed(then, 1) + ")";
    if (!check->clean) {
        warn("the spot check of the cached ceilings was disturbed by other work twice, so it proves nothing: the "
             "cached ceilings are used unchecked (" + found + ")");
        out.ceilings = *cached;
        out.spot_check = found + ", disturbed";
        return true;
    }
    // The dispatch cost is a floor: a clean check below the cached value lowers it (and the cache keeps it), as a
    // higher roof raises the roofs below. A VM's dispatch cost has two modes minutes apart, and a cache that
    // kept the slow one called a 512 kB relu at 5.6 us overhead-bound.
    std::string lowered;
    if (check->dispatch_ms > 0 && check->dispatch_ms < cached->dispatch_overhead_ms * (1 - dispatch_floor_margin)) {
        lowered = "; dispatch cost lowered to " + time_ms(check->dispatch_ms) + " (cached " +
                  time_ms(cached->dispatch_overhead_ms) + ")";
        cached->dispatch_overhead_ms = check->dispatch_ms;
        cached->method["dispatch_overhead_ms"] = "oneDNN eltwise relu of 1 element, median; lowered to " +
                                                 time_ms(check->dispatch_ms) + " by a spot check (a floor)";
        try {
            backend_api::ceilings keep = *cached;
            keep.source = backend_api::ceilings_source::measured;
            save_cached_ceilings(keep);
        } catch (const std::exception& e) {
            warn(std::string("could not cache the lowered dispatch cost: ") + e.what());
        }
    }
    found += (check->dispatch_ms > 0 ? ", dispatch " + time_ms(check->dispatch_ms) : std::string()) + lowered;
    // Above the cache by more than the tolerance: the cached roofs understate the machine and would make layers
    // that reach the real ones look impossible: measure again, keeping the higher of each (merge_ceilings).
    // Below: the machine does less now than it did (a clock, or neighbours on a shared host that the accounting
    // cannot see); measuring again would not lower a roof, so this is said, not acted on, and only beyond the
    // ceiling's own measured spread: a short check reads anywhere between the ceiling's best sample and its
    // median, and a VM's DRAM point spreads by 30-80% (a check 40% below such a roof says nothing).
    auto spread_of = [&](const std::string& key) {
        const auto it = cached->spread.find(key);
        return it != cached->spread.end() && it->second > 0 ? it->second : 0.0;
    };
    auto point_spread = [&](std::int64_t bytes) {
        const double s = spread_of("working_set." + std::to_string(bytes));
        return s > 0 ? s : spread_of("working_set");
    };
    const double fma_spread = spread_of("fma_peak." + check->fma_isa);
    const double cache_spread = point_spread(check->cache_working_set_bytes);
    const double dram_spread = std::max(point_spread(check->dram_working_set_bytes), spread_of("dram_level"));
    // above: 10% plus the spread, at most 20% in all; below: under the ceiling's median (best / (1 + spread))
    // by more than 10%
    auto above = [](double ratio, double spread) {
        return ratio - 1 > spot_check_tolerance + std::min(spot_check_tolerance, spread);
    };
    auto below = [](double ratio, double spread) { return ratio * (1 + spread) < 1 - spot_check_tolerance; };
    const bool any_above = above(fma_ratio, fma_spread) || above(cache_ratio, cache_spread) || above(dram_ratio, dram_spread);
    const bool any_below = below(fma_ratio, fma_spread) || below(cache_ratio, cache_spread) || below(dram_ratio, dram_spread);
    const double lowest = std::min({fma_ratio, dram_ratio, cache_ratio});
    const double highest = std::max({fma_ratio, dram_ratio, cache_ratio});
    if (!any_above) {
        out.ceilings = *cached;
        out.spot_check = found + ": agrees within 10% plus each ceiling's spread";
        if (!any_below) info("cached ceilings checked: " + out.spot_check);
        if (any_below) {
            warn("the machine does less now than its cached ceilings (" + found + ", " +
                 fixed(100 * (1 - lowest), 0) + "% below, more than 10% under the ceiling's median): something the "
                 "per-thread accounting cannot see (a clock, neighbours on a shared host) slows it, and %roof will "
                 "read low; a recalibration measures afresh");
            out.spot_check = found + ": " + fixed(100 * (1 - lowest), 0) + "% below";
        }
        return true;
    }
    // a note, not a warning: the roofs are measured again now (and raised), so nothing in the report stands on
    // the low cache; a warning is for what the reader cannot trust (a spot check that reads low, a disturbed one)
    info("the machine does more than its cached ceilings (" + found + ", " + fixed(100 * (highest - 1), 0) +
         "% above, more than 10% plus the ceiling's spread): measuring them again, keeping the higher of each");
    out.spot_check = found + ": " + fixed(100 * (highest - 1), 0) + "% above";
    why_measure = "again (the spot check found more)";
    earlier = *cached;
    return false;
}

void ceilings_obtainer::measure(const backend_api::device_info& dev, const std::string& fp) {
    if (!refused.empty() && why_measure == "once") why_measure = "again (" + refused + ")";
    info("measuring the ceilings of " + b.name() + (request.quick ? " (quick) " : " ") + why_measure + " (cached in " +
         ceilings_cache_path(fp, request.quick) + (request.recalibrate ? "" : "; a recalibration measures again") + ")");
    const auto t0 = std::chrono::steady_clock::now();
    backend_api::ceilings c = b.measure_ceilings(backend_api::ceilings_options{request.quick, request.stop, request.on_progress});
    c.fingerprint = fp;
    c.device_name = dev.name;
    c.quick = request.quick;
    if (request.quick) c.method["quick"] = "measured quick (smaller problems, fewer samples)";
    if (earlier && !c.disturbed) backend_api::merge_ceilings(c, *earlier);
    if (earlier && c.disturbed) {
        // measured again because a spot check found more, but the new measurement met other work: the cached
        // ceilings (clean when measured) still judge the layers, and stay cached
        std::string which;
        for (const auto& k : c.disturbed_ceilings) which += (which.empty() ? "" : ", ") + k;
        warn("the ceilings measured again were disturbed by other work (" + which +
             "): the cached ones are used, and kept");
        info("ceilings measured in " + fixed(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1) + " s");
        out.ceilings = *earlier;
        return;
    }
    if (c.disturbed) {
        std::string which;
        for (const auto& k : c.disturbed_ceilings) which += (which.empty() ? "" : ", ") + k;
        if (backend_api::disturbance_accounting_off())
            warn("the ceilings were measured with the accounting of other work off (RIDGELINE_DISTURBANCE): they "
                 "cannot be called clean, so they are not cached and no roofline verdict is drawn from them");
        else
            warn("the ceilings measurement was disturbed by other work (" + which +
                 "): not cached, and no roofline verdict is drawn from them; a quieter machine or a rerun helps");
    } else {
        try {
            save_cached_ceilings(c);
        } catch (const std::exception& e) {
            warn(std::string("could not cache the ceilings: ") + e.what());
        }
    }
    info("ceilings measured in " + fixed(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1) + " s");
    c.source = backend_api::ceilings_source::measured;
    out.ceilings = std::move(c);
    out.measured = true;
    return;
}

}  // namespace

obtained_ceilings obtain_ceilings(backend_api::backend& b, const ceilings_request& request) {
    const backend_api::device_info dev = b.device();
    // said before any line about measuring or caching (cpu-ref: the reference loops have no ceilings to measure)
    if (!b.measures_ceilings()) throw backend_api::unsupported("the " + b.name() + " backend does not measure ceilings");
    const std::string fp = backend_api::device_fingerprint(dev);
    ceilings_obtainer o{b, request, {}, "once", {}, std::nullopt};
    if (request.recalibrate) {
        o.why_measure = "again (a recalibration was asked for)";
    } else if (auto cached = load_cached_ceilings(fp, request.quick, &o.refused)) {
        if (o.answer_from_cache(std::move(cached))) return std::move(o.out);
    }
    o.measure(dev, fp);
    return std::move(o.out);
}

}  // namespace ridgeline::profiler
