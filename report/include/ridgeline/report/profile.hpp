#pragma once
// Reports of `ridgeline profile`: JSON ("ridgeline.profile/2", extending ridgeline.summary/1; see
// docs/json-schema.md), the console table, and CSV. Every format shows a layer's rates through
// shown_rates(), so none prints a rate the others hide.

#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ridgeline/profiler/profiler.hpp"
#include "ridgeline/report/summary.hpp"

namespace ridgeline::report {

nlohmann::json device_json(const backend_api::device_info& d);

/// {"median_ms", "mean_ms", "stddev_ms", "min_ms", "max_ms", "p5_ms", "p95_ms", "ci95_low_ms", "ci95_high_ms",
///  "cv", "samples", "runs", "runs_per_sample", "warmup_runs", "noise_target_met", "stop_reason", "disturbed",
///  "clean_samples", "disturbed_samples", "stolen_fraction", "involuntary_switches", "disturbance_source"}
nlohmann::json time_json(const backend_api::timing_result& t);

/// A verification as JSON: {"state", "rel_l2_error" (null where not compared), "tolerance", "unwritten", "message"}.
nlohmann::json verification_json(const profiler::verification_result& v);

nlohmann::json profile_json(const profiler::profile_result& r, const run_info& info);

/// What fusing would save (profile_result::fusion), as the JSON's "fusion_savings": each group's label, members,
/// fused median (null where disturbed or not timed), its members' medians summed, and the fused end to end; null
/// without one. The table's lines: fusion_savings_text (empty without one).
nlohmann::json fusion_savings_json(const profiler::profile_result& r);
std::string fusion_savings_text(const profiler::profile_result& r);

/// A layer's rates as every report shows them: hidden (NaN, with the reason) for a layer without a time, a
/// `mistrusted` one (its time beats a roof: no rate can be believed) and a `disturbed` one (other work took
/// its samples); %roof capped at 1 within the tolerance of the roof that set the floor (a layer there reads as at
/// the roof), the measured ratio beyond it.
struct layer_rates {
    double gflops = std::numeric_limits<double>::quiet_NaN();
    double gbs = std::numeric_limits<double>::quiet_NaN();
    double roof_fraction = std::numeric_limits<double>::quiet_NaN();  // NaN without a verdict
    bool hidden = false;
    core::bound_class why_hidden = core::bound_class::none;  // mistrusted or disturbed when hidden
};
layer_rates shown_rates(const profiler::layer_profile& p);
/// The deciding rule of a verdict as the table writes it: its code (core::roofline_point::rule) and, for an
/// ambiguous layer, its two candidates ("~4D O|M": overhead or memory; "~ridge C|M").
std::string rule_text(const core::roofline_point& p);
/// A time's 95% CI as the tables show it: "±1.7%" (half-width over the median), "*" where the noise target was
/// not met, "!" alone for a time other work disturbed, "-" without a median.
std::string ci_text(const backend_api::timing_result& t);

/// What other work did to a run, one line each, for stderr, the table's footer and the JSON `warnings`:
/// layers disturbed by other work, a disturbed end-to-end pass, and an end-to-end time that disagrees with the
/// sum of the layer medians by more than `sum_mismatch_factor` (with the layers that stand out).
std::vector<std::string> profile_warnings(const profiler::profile_result& r);

/// The end-to-end time and the sum of layer medians disagree when one is more than twice the other: on a
/// quiet machine they stay within 1.5x of each other (resnet18 1.3x, resnet50 1.5x on 2 CPU threads: layout
/// conversions in the pass, caches warmed by the previous layer), and the 8 ms layers of a busy machine made
/// the sum 6.7x the pass.
inline constexpr double sum_mismatch_factor = 2.0;

/// `skipped_nodes`: nodes of an imported model left out, listed in a footer line.
/// `folded_nodes`: ONNX nodes evaluated into constants, counted in a footer line.
/// `view`: the rows' grouping, order and top N (rollup.hpp): one row per group instead of per layer, with a line for
/// what --top left out.
std::string profile_table(const profiler::profile_result& r, const std::vector<skipped_node>& skipped_nodes = {},
                          const std::vector<skipped_node>& folded_nodes = {}, const view_options& view = {});

/// Per-layer CSV: the summary columns plus state, median_ms, ci95_low_ms, ci95_high_ms, samples, runs,
/// noise_target_met, achieved_gflops, achieved_gbs (empty when mistrusted or disturbed), verification,
/// rel_l2_error, executed_macs, executed_flops, disturbed, disturbed_samples, stolen_fraction, bound, roof_fraction,
/// bound_rule, twins_disagree, time_share (of the sum of layers), measured_as (the earlier identical layer whose
/// measurement this row reports; empty where measured itself). With a grouping in `view`, one row per group:
/// group, layers, time_ms, time_share, flops, executed_flops, bytes, achieved_gflops, achieved_gbs, roof_fraction,
/// bound, bound_share. Rows follow the view's order and top N.
std::string profile_csv(const profiler::profile_result& r, const view_options& view = {});

}  // namespace ridgeline::report
