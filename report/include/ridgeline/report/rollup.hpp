#pragma once
// Roll-ups of a profile: its layers grouped (by op, by module, by numbered block, by bound), sorted and cut to the
// top N, as PyTorch's profiler's key_averages().table(sort_by=..., row_limit=N) and fvcore's by-module tables read.
// A resnet50 profile is 175 flat rows; its four stages and their blocks are what a user compares, as a
// transformer's blocks are.
//
// A group's time is the sum of its layers' medians (a layer reporting its twin's measurement counts once per
// occurrence, as in the sum of layers); its %time is of the sum of layers; its GFLOP/s and GB/s are its rated
// layers' executed FLOPs and bytes over their time (a layer whose rates are hidden, mistrusted or disturbed, adds
// none); its %roof is time-weighted over the layers with a verdict; its bound is the bound holding most of its time.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ridgeline/profiler/profiler.hpp"
#include "ridgeline/report/view.hpp"

namespace ridgeline::report {

/// The group a layer named `name` falls in, by `v`'s key (module, prefix or block).
std::string module_of(const std::string& name, const view_options& v);

/// One row of a roll-up.
struct group_row {
    std::string key;
    std::size_t layers = 0;
    std::size_t timed = 0;  // its layers with a time (views and skipped layers have none)
    double time_ms = 0;     // sum of the timed layers' medians
    double disturbed_ms = 0;  // of it, the medians other work disturbed (no measurement)
    double time_share = 0;  // of the sum of layers (0 where that is 0)
    double flops = 0, executed_flops = 0, bytes = 0;
    double gflops = 0, gbs = 0;  // of its rated layers; NaN where none is rated
    double roof_fraction = 0;    // time-weighted over its layers with a verdict; NaN where none has one
    std::string bound;           // the bound holding most of its time ("" where none has a verdict)
    double bound_share = 0;      // that bound's share of the group's time
};

/// The groups of `r` by `v.group` (group_key::none is refused: std::invalid_argument), in first-seen order, then
/// sorted by `v.sort`.
std::vector<group_row> rollup(const profiler::profile_result& r, const view_options& v);

/// The layers' indices in the order of `v.sort` (model order for sort_key::model; stable).
std::vector<std::size_t> layer_order(const profiler::profile_result& r, sort_key s);

/// A layer's share of the sum of layers (NaN where it has no time or the sum is 0).
double time_share(const profiler::profile_result& r, const profiler::layer_profile& p);

/// The line under a view cut by --top: "showing 5 of 69 layers, by time; the other 64 take 8.123 ms (46.5% of the
/// sum of layers)"; "" where nothing was cut. `shown` are the rows kept, `all` every row.
std::string top_footer(std::size_t shown, std::size_t all, double rest_ms, double sum_ms, const std::string& what,
                       sort_key s);

/// The groups as JSON rows: [{"key", "layers", "time_ms", "time_share", "flops", "executed_flops", "bytes",
/// "achieved_gflops", "achieved_gbs", "roof_fraction", "bound", "bound_share"}] (NaN as null).
nlohmann::json groups_json(const std::vector<group_row>& groups);
/// {"group_by", "sort", "top"}: what the table and the CSV showed.
nlohmann::json view_json(const view_options& v);

}  // namespace ridgeline::report
