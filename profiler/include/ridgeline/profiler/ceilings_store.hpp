#pragma once
// Device ceilings as JSON, cached per device fingerprint in the user's cache directory
// ($XDG_CACHE_HOME/ridgeline/ceilings, else ~/.cache/ridgeline/ceilings; each only where absolute, else
// /tmp/ridgeline-<uid>/ceilings) with the date and version, and the policy
// of obtaining them for a profile: from the cache, checked by the backend's spot check, or measured again.

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/backend_api/ceilings.hpp"

namespace ridgeline::profiler {

/// {"schema": "ridgeline.ceilings/3", "backend", "fingerprint", "peak_gflops": {dtype: GFLOP/s} (the compute
///  roof: the highest measured ceiling), "gemm_gflops", "fma_peak_gflops", "fma_peak_by_isa_gflops",
///  "bandwidth_gbs", "copy_gbs", "triad_gbs", "working_set_gbs": [[bytes, GB/s]...], "ridge_point": {dtype: FLOP/B},
///  "dispatch_overhead_ms", "launch_overhead_ms", "last_level_cache_bytes", "cache_level_bytes": [bytes of each
///  level the threads fill, smallest first], "dram_level_bytes" (derived: 4x their sum), "spread": {...}, "tolerance":
///  {"compute": {dtype: fraction}, "bandwidth": fraction}, "measured_under": {"quick", "disturbed",
///  "disturbed_ceilings", "stolen_fraction", "load_average"}, "measured_at", "ridgeline_version", "source",
///  "method": {...}} (docs/json-schema.md)
nlohmann::json ceilings_json(const backend_api::ceilings& c);

/// Inverse of ceilings_json; throws core::error naming the missing or mistyped field.
backend_api::ceilings ceilings_from_json(const nlohmann::json& j);

/// The cache file for a fingerprint: one for full measurements, another for --quick ones.
std::string ceilings_cache_path(const std::string& fingerprint, bool quick = false);

/// Cached ceilings for the fingerprint, if a readable cache file written by this ridgeline version exists.
/// A full request (`quick` false) is answered only by a full measurement; a quick one by either, the more
/// recent first.
std::optional<backend_api::ceilings> load_cached_ceilings(const std::string& fingerprint, bool quick = false,
                                                       std::string* refused = nullptr);

/// Writes the cache file (atomically), creating the folder. Returns the path; throws on failure, and throws
/// std::logic_error for disturbed ceilings, which are never cached.
std::string save_cached_ceilings(const backend_api::ceilings& c);

/// What obtain_ceilings may do.
struct ceilings_request {
    bool recalibrate = false;  // measure again even when cached
    bool quick = false;        // smaller problems and fewer samples (answered by a full cache too)
    bool spot_check = true;    // check cached ceilings with the backend's short spot check
    const std::atomic<bool>* stop = nullptr;  // SIGINT/SIGTERM: the measurement throws ceilings_interrupted
    /// Called with one line before anything slow starts ("measuring the ceilings of cpu once ...").
    std::function<void(const std::string&)> on_info;
    /// Called with each warning as it arises (they are also in obtained_ceilings::warnings).
    std::function<void(const std::string&)> on_warning;
    /// Called as each step of a measurement starts (the kernel measured, the time left).
    std::function<void(const backend_api::ceilings_progress&)> on_progress;
};

struct obtained_ceilings {
    backend_api::ceilings ceilings;
    std::vector<std::string> warnings;  // for the report and stderr: disturbed, not cached, spot check failed
    std::string spot_check;             // what the spot check found, one line; empty when none ran
    bool measured = false;              // measured now (not from the cache)
    /// The roofs to judge layers against: none when the ceilings are disturbed (roofs that other work pushed
    /// down would make every verdict against them wrong). Moves the ceilings out.
    std::optional<backend_api::ceilings> roofs_for_verdicts() && {
        if (ceilings.disturbed) return std::nullopt;
        return std::move(ceilings);
    }
};

/// The device's ceilings (docs/roofline.md, "Ceilings that stay true"): from the cache when present, checked by
/// the backend's spot check (a disturbed one is tried once more, then not trusted). A clean spot check above a
/// cached ceiling by more than 10% plus that ceiling's measured spread (at most 20% in all) measures them again
/// and keeps the higher of each (backend_api::merge_ceilings); more than 10% under the ceiling's median (its best
/// over 1 + its spread) is a warning (the machine does less now; a roof is what it can do). A clean dispatch cost
/// below the cached one lowers it, and the cache keeps it (a floor). Measured ceilings are cached unless disturbed.
obtained_ceilings obtain_ceilings(backend_api::backend& b, const ceilings_request& request);

/// Relative difference above which a clean spot check says the machine changed: 10%, plus the ceiling's spread
/// (above: at most 20% in all; below: under the ceiling's median).
inline constexpr double spot_check_tolerance = 0.10;
/// A spot check's dispatch cost lowers the cached one when it is lower by more than this fraction (a floor).
inline constexpr double dispatch_floor_margin = 0.02;
/// The schema of the ceilings JSON; a cache file of another schema was measured by an older method and is measured
/// again (a ceilings file of an older schema is still read by predict and compare).
inline constexpr const char* ceilings_schema = "ridgeline.ceilings/3";

}  // namespace ridgeline::profiler
