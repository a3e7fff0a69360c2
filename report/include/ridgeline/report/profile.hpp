#pragma once
// Reports of `ridgeline profile`: JSON ("ridgeline.profile/1", extending ridgeline.summary/1; see
// docs/json-schema.md), the console table, and CSV.

#include <string>

#include <nlohmann/json.hpp>

#include "ridgeline/backends/profiler.hpp"
#include "ridgeline/report/summary.hpp"

namespace ridgeline::report {

nlohmann::json device_json(const backends::device_info& d);

/// {"median_ms", "mean_ms", "stddev_ms", "min_ms", "max_ms", "p5_ms", "p95_ms", "ci95_low_ms", "ci95_high_ms",
///  "cv", "samples", "runs", "runs_per_sample", "warmup_runs", "noise_target_met", "stop_reason"}
nlohmann::json time_json(const backends::timing_result& t);

nlohmann::json profile_json(const backends::profile_result& r, const run_info& info);

/// `skipped_nodes`: nodes of an imported model left out, listed in a footer line.
std::string profile_table(const backends::profile_result& r, const std::vector<skipped_node>& skipped_nodes = {});

/// Per-layer CSV: the summary columns plus state, median_ms, ci95_low_ms, ci95_high_ms, samples, runs,
/// noise_target_met, achieved_gflops, achieved_gbs, verification, rel_l2_error.
std::string profile_csv(const backends::profile_result& r);

}  // namespace ridgeline::report
