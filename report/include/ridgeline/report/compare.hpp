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

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ridgeline/report/chart.hpp"

namespace ridgeline::report {

struct compare_run {
    std::string label;  // file name or device
    nlohmann::json report;
};

/// Reads a profile (or prediction) JSON file; throws core::error naming the file and what is wrong.
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
