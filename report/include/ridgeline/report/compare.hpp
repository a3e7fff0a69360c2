#pragma once
// `ridgeline compare`: runs of the same model (profile JSON reports, ridgeline.profile/1 or /2) on different
// devices or settings, side by side. The first run is the baseline.
//
// Per layer present in every run: each run's median and 95% CI, the speedup over the baseline
// (baseline median / run median; "same" when the two CIs overlap), each run's roof fraction on its own
// device's ceilings, the speedup `ridgeline predict` expects (core::predict_time from the baseline's time and
// the roofs each run judged the layer against: the one method of both), and whether the bound changed.
//
// A run may be a prediction (ridgeline.prediction/1, written by `ridgeline predict --format json`): its layers
// carry predicted times in the same fields, so a later measurement on the target checks it layer by layer.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ridgeline/report/chart.hpp"
#include "ridgeline/report/profile_record.hpp"

namespace ridgeline::report {

/// What a run's time of a layer says against the baseline's: the same (their 95% CIs overlap), faster, slower, or not
/// comparable (other work disturbed one of the two).
enum class compare_verdict { same, faster, slower, not_comparable };

/// "same", "faster", "slower", "not comparable" (the JSON's "verdict").
std::string_view to_string(compare_verdict v);

/// The verdict a comparison's JSON names; nullopt for any other value.
std::optional<compare_verdict> parse_compare_verdict(std::string_view text);

struct compare_run {
    std::string label;  // file name or device
    profile_record report;
    compare_run() = default;
    compare_run(std::string label, profile_record report);
    /// A report held in memory (a prediction, a profile just measured), read and checked as a file is
    /// (profile_from_json); throws core::error naming `label` and the field.
    compare_run(std::string label, const nlohmann::json& report);
};

/// Reads a profile (or prediction) JSON file through profile_from_json; throws core::error naming the file and what is
/// wrong.
compare_run load_run(const std::string& path);

/// {"schema": "ridgeline.compare/1", "runs": [...], "layers": [{"name", "op", "runs": [{"median_ms", "ci95_low_ms",
///  "ci95_high_ms", "roof_fraction", "bound", "speedup", "verdict", "predicted_speedup"}]}], "end_to_end": [...]}
/// Throws core::error when fewer than two runs, or the runs are of different models.
nlohmann::json compare_json(const std::vector<compare_run>& runs);

std::string compare_table(const nlohmann::json& comparison);

/// One chart with each run's roofs and points.
chart compare_chart(const std::vector<compare_run>& runs);

std::string compare_table_html(const nlohmann::json& comparison);

}  // namespace ridgeline::report
