#pragma once
// Device ceilings as JSON, as a table, and cached per device fingerprint in the user's cache directory
// ($XDG_CACHE_HOME/ridgeline/ceilings, else ~/.cache/ridgeline/ceilings), with the date and version.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ridgeline/backends/ceilings.hpp"

namespace ridgeline::report {

/// {"backend", "fingerprint", "peak_gflops": {dtype: GFLOP/s}, "fma_peak_gflops": {...},
///  "fma_peak_by_isa_gflops": {...}, "bandwidth_gbs", "copy_gbs", "triad_gbs", "working_set_gbs": [[bytes, GB/s]...],
///  "ridge_point": {dtype: FLOP/B}, "dispatch_overhead_ms", "launch_overhead_ms", "last_level_cache_bytes",
///  "measured_at", "ridgeline_version", "source", "method": {...}}
nlohmann::json ceilings_json(const backends::ceilings& c);

/// Inverse of ceilings_json; throws std::runtime_error naming the missing or mistyped field.
backends::ceilings ceilings_from_json(const nlohmann::json& j);

/// Human-readable table of the ceilings (and the datasheet values when the device is recognised).
std::string ceilings_table(const backends::ceilings& c);

/// The cache file for a fingerprint.
std::string ceilings_cache_path(const std::string& fingerprint);

/// Cached ceilings for the fingerprint, if a readable cache file written by this ridgeline version exists.
std::optional<backends::ceilings> load_cached_ceilings(const std::string& fingerprint);

/// Writes the cache file (atomically), creating the folder. Returns the path; throws on failure.
std::string save_cached_ceilings(const backends::ceilings& c);

}  // namespace ridgeline::report
