#include "ridgeline/report/profile.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "ridgeline/core/fusion.hpp"
#include "ridgeline/config.hpp"
#include "ridgeline/git_revision.hpp"
#include "ridgeline/report/ceilings.hpp"
#include "ridgeline/report/format.hpp"
#include "ridgeline/report/advice.hpp"
#include "ridgeline/report/rollup.hpp"

namespace ridgeline::report {

namespace {
nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

/// "a, b, c and 4 more"
std::string name_list(const std::vector<std::string>& names, std::size_t shown = 8) {
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < shown; ++i) out += (i ? ", " : "") + names[i];
    if (names.size() > shown) out += " and " + std::to_string(names.size() - shown) + " more";
    return out;
}

/// The part of sum_of_layers_ms that is disturbed layers' medians (other work slowed them: not a measurement).
double disturbed_layers_ms(const profiler::profile_result& r) {
    double ms = 0;
    for (const auto& p : r.layers)
        if (p.has_time() && p.time->disturbed) ms += p.time->stats.median;
    return ms;
}

/// The total row's time: the sum of the layers' medians, marked ! where disturbed medians are in it.
std::string total_time(const profiler::profile_result& r) {
    return time_ms(r.sum_of_layers_ms) + (disturbed_layers_ms(r) > 0 ? "!" : "");
}

}  // namespace

std::string rule_text(const core::roofline_point& p) {
    std::string out = p.rule;
    for (std::size_t i = 0; i < p.candidates.size(); ++i) {
        const core::bound_class b = p.candidates[i];
        out += (i ? "|" : " ") + std::string(b == core::bound_class::overhead ? "O" : b == core::bound_class::compute ? "C" : "M");
    }
    return out;
}

layer_rates shown_rates(const profiler::layer_profile& p) {
    layer_rates r;
    if (!p.has_time()) return r;
    using core::bound_class;
    const bound_class bound = p.roofline ? p.roofline->bound : bound_class::none;
    if (bound == bound_class::mistrusted || bound == bound_class::disturbed || p.time->disturbed) {
        r.hidden = true;
        r.why_hidden = bound == bound_class::mistrusted ? bound_class::mistrusted : bound_class::disturbed;
        return r;
    }
    r.gflops = p.achieved_gflops();
    r.gbs = p.achieved_gbs();
    if (bound == bound_class::overhead && p.roofs_used.dispatch_ms > 0) {
        // an overhead-bound layer's floor is its fixed cost: %roof against the dispatch cost, not against roofs that
        // explain less than half its time (a 16% read as a slow kernel)
        r.roof_fraction = std::min(1.0, p.roofs_used.dispatch_ms / p.time->stats.median);
        return r;
    }
    if (p.roofline && std::isfinite(p.roofline->roof_fraction)) {
        // within the tolerance of the roof that set the floor a layer reads as at the roof; beyond it (a wide CI
        // whose slow end stayed under the roof, or a Winograd kernel against the compute roof) the ratio as measured
        const double tol = p.roofline->compute_ms >= p.roofline->memory_ms ? p.roofs_used.compute_tolerance
                                                                            : p.roofs_used.bandwidth_tolerance;
        const double raw = p.roofline->roof_fraction;
        r.roof_fraction = raw <= 1.0 + tol ? std::min(1.0, raw) : raw;
    }
    return r;
}

std::vector<std::string> profile_warnings(const profiler::profile_result& r) {
    std::vector<std::string> w;
    std::vector<std::string> disturbed;
    for (const auto& p : r.layers)
        if (p.has_time() && p.time->disturbed) disturbed.push_back(p.analysis.layer.name);
    if (!disturbed.empty())
        w.push_back(counted(static_cast<std::int64_t>(disturbed.size()), "layer") + " disturbed by other work: " +
                    name_list(disturbed) + " (fewer than " + std::to_string(r.timing.min_samples) +
                    " clean samples within the time budget: no verdict, their times are not to be trusted; a quieter "
                    "machine or a rerun helps)");
    for (const auto& c : r.roof_rechecks) w.push_back(c);
    if (r.twins_interrupted)
        w.push_back("interrupted while twins that read apart were measured again (" +
                    name_list(r.twins_remeasured) + "): each keeps the lowest median it had, judged on what was measured");
    if (!r.twins_disagreeing.empty())
        w.push_back(counted(static_cast<std::int64_t>(r.twins_disagreeing.size()), "layer") +
                    " read apart from twins of the same op and shapes, beyond their CIs, after measuring again: " +
                    name_list(r.twins_disagreeing) + " (marked ~: something the accounting cannot see slowed the slower "
                    "ones; their verdicts say so, and a rerun helps)");

    for (const auto& p : r.layers)
        if (p.has_time() && (p.time->disturbance_source.rfind("off", 0) == 0 ||
                             p.time->disturbance_source.rfind("unavailable", 0) == 0)) {
            w.push_back("the accounting of other work was " + p.time->disturbance_source +
                        ": no sample could be called disturbed, and a time slowed by other work would look clean");
            break;
        }
    if (r.end_to_end && r.end_to_end->disturbed)
        w.push_back("the end-to-end pass was disturbed by other work (" + std::to_string(r.end_to_end->disturbed_samples) +
                    " samples lost more than " + fixed(100.0 * backend_api::disturbed_lost_fraction, 0) +
                    "% of their time): its time is not to be trusted");
    if (r.end_to_end && !r.end_to_end->disturbed && r.sum_of_layers_ms > 0 && r.end_to_end->stats.median > 0) {
        const double e2e = r.end_to_end->stats.median;
        const double ratio = r.sum_of_layers_ms / e2e;
        if (ratio > sum_mismatch_factor) {
            // the layers that stand out: the largest medians, with what other work took from them
            std::vector<const profiler::layer_profile*> timed;
            for (const auto& p : r.layers)
                if (p.has_time()) timed.push_back(&p);
            std::sort(timed.begin(), timed.end(),
                      [](auto* a, auto* b) { return a->time->stats.median > b->time->stats.median; });
            std::vector<std::string> names;
            for (std::size_t i = 0; i < timed.size() && i < 3; ++i)
                names.push_back(core::group_label(timed[i]->analysis) + " " + time_ms(timed[i]->time->stats.median) + " (" +
                                fixed(100.0 * timed[i]->time->stolen_fraction, 1) + "% stolen, " +
                                std::to_string(timed[i]->time->disturbed_samples) + " disturbed samples)");
            w.push_back("the sum of the layer medians (" + time_ms(r.sum_of_layers_ms) + ") is " + fixed(ratio, 1) +
                        "x the end-to-end time (" + time_ms(e2e) + "): the layers alone ran slower than in the pass; "
                        "the largest: " + name_list(names));
        } else if (1.0 / ratio > sum_mismatch_factor) {
            w.push_back("the end-to-end time (" + time_ms(e2e) + ") is " + fixed(1.0 / ratio, 1) +
                        "x the sum of the layer medians (" + time_ms(r.sum_of_layers_ms) +
                        "): work between the layers (layout conversions, launches, allocation) costs more than the "
                        "layers themselves, or the pass met other work the accounting did not see");
        }
    }
    return w;
}

nlohmann::json device_json(const backend_api::device_info& d) {
    nlohmann::json details = nlohmann::json::object();
    for (const auto& [k, v] : d.details) details[k] = v;
    return {{"backend", d.backend},     {"kind", std::string(backend_api::to_string(d.kind))},
            {"name", d.name},           {"cores", d.cores},
            {"threads", d.threads},     {"isa", d.isa},
            {"memory_bytes", d.memory_bytes}, {"last_level_cache_bytes", d.last_level_cache_bytes},
            {"details", details}};
}

nlohmann::json time_json(const backend_api::timing_result& t) {
    const auto& s = t.stats;
    return {{"median_ms", s.median},
            {"mean_ms", s.mean},
            {"stddev_ms", s.stddev},
            {"min_ms", s.min},
            {"max_ms", s.max},
            {"p5_ms", s.p5},
            {"p95_ms", s.p95},
            {"ci95_low_ms", s.ci95_low},
            {"ci95_high_ms", s.ci95_high},
            {"cv", s.cv},
            {"samples", t.samples},
            {"runs", t.runs},
            {"runs_per_sample", t.runs_per_sample},
            {"warmup_runs", t.warmup_runs},
            {"noise_target_met", t.noise_target_met},
            {"stop_reason", std::string(to_string(t.stop_reason))},
            {"disturbed", t.disturbed},
            {"clean_samples", t.clean_samples},
            {"disturbed_samples", t.disturbed_samples},
            {"stolen_fraction", t.stolen_fraction},
            {"involuntary_switches", t.involuntary_switches},
            {"disturbance_source", t.disturbance_source},
            {"min_clock_fraction", t.min_clock_fraction},
            {"mean_clock_fraction", t.mean_clock_fraction},
            {"throttle_cause", t.throttle_cause}};
}

nlohmann::json verification_json(const profiler::verification_result& v) {
    return {{"state", std::string(to_string(v.state))},
            {"rel_l2_error", number_or_null(v.rel_l2_error)},
            {"tolerance", v.tolerance},
            {"unwritten", v.unwritten},
            {"message", v.message}};
}

namespace {

/// The timing protocol of a run, for its "timing" object.
nlohmann::json timing_json(const profiler::profile_result& r) {
    const auto& t = r.timing;
    return {{"mode", backend_api::to_string(t.cache)},
            {"warmup_runs", t.warmup_runs},
            {"warmup_ms", t.warmup_ms},
            {"min_samples", t.min_samples},
            {"min_time_s", t.min_time_s},
            {"max_noise", t.max_noise},
            {"max_time_s", t.max_time_s},
            {"timer", r.timer_name},
            {"timer_resolution_ns", r.timer_resolution_ns},
            {"timer_overhead_ns", r.timer_overhead_ns},
            {"verify", r.verify},
            {"seed", r.seed},
            {"disturbance",
             {{"rule", "a sample is disturbed when the run-queue wait (and steal) of the threads that ran exceeds " +
                           fixed(100.0 * backend_api::disturbed_lost_fraction, 0) +
                           "% of its wall time, or a GPU's SM clock falls below " +
                           fixed(100.0 * backend_api::throttled_clock_fraction, 0) + "% of its default"},
              {"lost_fraction", backend_api::disturbed_lost_fraction},
              {"throttled_clock_fraction", backend_api::throttled_clock_fraction}}}};
}

/// A layer's measurement, verdict and roofs, added to its summary object `l`.
void add_layer_profile(nlohmann::json& l, const profiler::layer_profile& p, std::int64_t activation_bytes,
                       double sum_of_layers_ms) {
    l["state"] = std::string(to_string(p.state));
    l["reason"] = p.reason;
    l["time"] = p.has_time() ? time_json(*p.time) : nlohmann::json(nullptr);
    const layer_rates shown = shown_rates(p);
    l["achieved_gflops"] = number_or_null(shown.gflops);
    l["time_share"] = number_or_null(p.has_time() && sum_of_layers_ms > 0 ? p.time->stats.median / sum_of_layers_ms
                                                                           : std::nan(""));
    l["achieved_gbs"] = number_or_null(shown.gbs);
    l["verification"] = verification_json(p.verification);
    l["workspace_bytes"] = p.workspace_bytes;
    l["implementation"] = p.implementation;
    l["activation_bytes"] = activation_bytes;
    l["host_ms_per_run"] = number_or_null(p.host_ms_per_run);
    l["measured_as"] = p.measured_as.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.measured_as);
    if (p.twins)
        l["twins"] = {{"names", p.twins->twins},
                      {"group_size", p.twins->group_size},
                      {"measurements", p.twins->measurements},
                      {"remeasured", p.twins->remeasured},
                      {"first_median_ms", number_or_null(p.twins->first_median_ms)},
                      {"second_median_ms", number_or_null(p.twins->second_median_ms)},
                      {"disagree", p.twins->disagree}};
    else
        l["twins"] = nullptr;
    if (p.roofline) {
        l["floor_ms"] = p.roofline->floor_ms;
        l["compute_floor_ms"] = p.roofline->compute_ms;
        l["memory_floor_ms"] = p.roofline->memory_ms;
        l["roof_fraction"] = number_or_null(shown.roof_fraction);
        l["roof_fraction_measured"] = number_or_null(shown.hidden ? std::nan("") : p.roofline->roof_fraction);
        l["bound"] = std::string(to_string(p.roofline->bound));
        l["bound_reason"] = p.roofline->reason;
        l["bound_rule"] = p.roofline->rule;
        nlohmann::json candidates = nlohmann::json::array();
        for (core::bound_class b : p.roofline->candidates) candidates.push_back(std::string(to_string(b)));
        l["bound_candidates"] = candidates;
        l["roofs"] = {{"compute_gflops", p.roofs_used.compute_gflops},
                      {"gemm_gflops", p.roofs_used.gemm_gflops},
                      {"bandwidth_gbs", p.roofs_used.bandwidth_gbs},
                      {"dispatch_ms", p.roofs_used.dispatch_ms},
                      {"compute_tolerance", p.roofs_used.compute_tolerance},
                      {"bandwidth_tolerance", p.roofs_used.bandwidth_tolerance},
                      {"compute_checked", p.roofs_used.compute_checked}};
    } else {
        l["floor_ms"] = nullptr;
        l["roof_fraction"] = nullptr;
        l["bound"] = nullptr;
        l["bound_rule"] = nullptr;
        l["bound_candidates"] = nlohmann::json::array();
    }
}

}  // namespace

nlohmann::json profile_json(const profiler::profile_result& r, const run_info& info) {
    nlohmann::json j = summary_json(r.analysis, info);
    j["schema"] = "ridgeline.profile/2";
    j["device"] = device_json(r.device);
    j["timing"] = timing_json(r);
    j["end_to_end"] = {{"state", std::string(to_string(r.end_to_end_state))},
                       {"reason", r.end_to_end_reason},
                       {"time", r.end_to_end ? time_json(*r.end_to_end) : nlohmann::json(nullptr)},
                       {"verification", verification_json(r.end_to_end_verification)},
                       {"graph_replay",
                        {{"state", std::string(to_string(r.graph_replay_state))},
                         {"reason", r.graph_replay_reason},
                         {"time", r.graph_replay ? time_json(*r.graph_replay) : nlohmann::json(nullptr)}}}};
    if (r.fusion) j["fusion_savings"] = fusion_savings_json(r);
    j["sum_of_layers_ms"] = r.sum_of_layers_ms;
    j["sum_of_layers_disturbed_ms"] = disturbed_layers_ms(r);
    j["advice"] = advice_json(advise(r));
    const auto& m = r.memory;
    j["memory"] = {{"parameter_bytes", m.parameter_bytes},
                   {"buffer_bytes", m.buffer_bytes},
                   {"kv_cache_bytes", m.kv_cache_bytes},
                   {"input_bytes", m.input_bytes},
                   {"total_activation_bytes", m.total_activation_bytes},
                   {"peak_activation_bytes", m.peak_activation_bytes},
                   {"peak_at", m.peak_at},
                   {"workspace_bytes", r.workspace_bytes}};
    const auto& tr = r.training;
    j["training_estimate"] = {{"note", "an estimate: backward = 2x forward flops for linear/conv2d/matmul, 1x for "
                                       "other ops; optimizer state from parameter memory"},
                              {"forward_flops", tr.forward_flops},
                              {"backward_flops", tr.backward_flops},
                              {"step_flops", tr.step_flops},
                              {"gradient_bytes", tr.gradient_bytes},
                              {"optimizer_state_bytes",
                               {{"sgd", tr.sgd_state_bytes}, {"sgd_momentum", tr.momentum_state_bytes},
                                {"adam", tr.adam_state_bytes}}},
                              {"saved_activation_bytes", tr.saved_activation_bytes}};
    j["complete"] = r.complete;
    j["layers_measured"] = r.layers_measured;
    j["layers_reused"] = r.layers_reused;
    j["not_measured"] = r.not_measured;
    if (r.ceilings) j["device"]["ceilings"] = profiler::ceilings_json(*r.ceilings);
    nlohmann::json libs = nlohmann::json::object();
    for (const auto& [k, v] : r.device.details)
        if (k == "library" || k.find("version") != std::string::npos) libs[k] = v;
    std::string governor, fingerprint = backend_api::device_fingerprint(r.device);
    for (const auto& [k, v] : r.device.details)
        if (k == "governor") governor = v;
    j["reproducibility"] = {{"ridgeline_version", RIDGELINE_VERSION},
                            {"git_revision", RIDGELINE_GIT_REVISION},
                            {"command_line", info.command_line},
                            {"device_fingerprint", fingerprint},
                            {"libraries", libs},
                            {"cpu_governor", governor.empty() ? std::string("unknown") : governor},
                            {"threads", r.device.threads},
                            {"seed", r.seed},
                            {"cache_mode", backend_api::to_string(r.timing.cache)},
                            {"load_average", info.load_average >= 0 ? nlohmann::json(info.load_average) : nlohmann::json(nullptr)}};
    j["warnings"] = info.warnings;
    auto& by_bound = j["time_by_bound_ms"];
    by_bound = nlohmann::json::object();
    for (const auto& [b, ms] : r.bound_ms) by_bound[std::string(to_string(b))] = ms;
    auto& layers = j["layers"];
    for (std::size_t i = 0; i < r.layers.size() && i < layers.size(); ++i)
        add_layer_profile(layers[i], r.layers[i], i < m.activation_bytes.size() ? m.activation_bytes[i] : 0,
                          r.sum_of_layers_ms);
    if (info.view.any()) {  // what the table and the CSV showed; the layers stay every one, in the model's order
        j["view"] = view_json(info.view);
        if (info.view.group != group_key::none) j["groups"] = groups_json(rollup(r, info.view));
    }
    return j;
}

std::string ci_text(const backend_api::timing_result& t) {
    const auto& s = t.stats;
    if (!(s.median > 0)) return "-";
    // a disturbed time's interval describes the neighbours as much as the layer (often one scheduler time
    // slice, again and again: a tight CI around the wrong time): no width is shown, only the mark
    if (t.disturbed) return "!";
    const double half = (s.ci95_high - s.ci95_low) / 2.0 / s.median * 100.0;
    // two decimals below 0.1%, so that a half-width under a --max-noise of 0.1% or less reads as such
    return "±" + fixed(half, half < 0.1 ? 2 : half < 10 ? 1 : 0) + "%" +
           (t.disturbed ? "!" : t.noise_target_met ? "" : "*");
}

namespace {

/// Up to three significant digits, no trailing zeros: 2, 0.05, 0.005 (the noise target of the header).
std::string significant(double v) { return fmt::format("{:.3g}", v); }

std::string state_text(const profiler::layer_profile& p) {
    if (p.state == profiler::run_state::failed) return "FAILED";
    return std::string(to_string(p.state));
}

}  // namespace

namespace {

/// The layer rows (in the view's order, cut to its top N) and the total; `noisy` and `twins_apart` count the layers
/// the footnotes name; `rest_ms` is the time of the layers the top N left out.
text_table layer_table(const profiler::profile_result& r, const view_options& view, int& noisy, int& twins_apart,
                       double& rest_ms) {
    using al = text_table::align;
    text_table t;
    // to fit 120 columns the counts go first (the summary, --wide, CSV and JSON have them), the timing stays
    using fit = text_table::fit;
    for (auto [h, a, f] : std::initializer_list<std::tuple<const char*, al, fit>>{
             {"layer", al::left, {0, true, false}}, {"op", al::left, {}}, {"output", al::left, {2, false, false}},
             {"params", al::right, {4, false, false}}, {"MACs", al::right, {5, false, false}},
             {"FLOPs", al::right, {3, false, false}}, {"bytes", al::right, {6, false, false}},
             {"FLOP/B", al::right, {7, false, false}}, {"median", al::right, {}}, {"%time", al::right, {}},
             {"CI95", al::right, {}}, {"GFLOP/s", al::right, {}}, {"GB/s", al::right, {}}, {"bound", al::left, {}},
             {"rule", al::left, {}}, {"%roof", al::right, {}}, {"verify", al::left, {1, false, false}}})
        t.add_column(h, a, f);
    const std::vector<std::size_t> order = layer_order(r, view.sort);
    const std::size_t shown_rows = view.top ? std::min(*view.top, order.size()) : order.size();
    rest_ms = 0;
    for (std::size_t k = shown_rows; k < order.size(); ++k)
        if (r.layers[order[k]].has_time()) rest_ms += r.layers[order[k]].time->stats.median;
    for (std::size_t k = 0; k < shown_rows; ++k) {
        const auto& p = r.layers[order[k]];
        const auto& c = p.analysis.cost;
        auto ai = c.arithmetic_intensity();
        std::vector<std::string> row{core::group_label(p.analysis),
                                     std::string(core::kind_of(p.analysis.layer.op)),
                                     p.analysis.output_shape.to_string(),
                                     with_commas(c.params) + (p.analysis.layer.tied.empty() ? "" : "^"),
                                     si(static_cast<double>(c.macs)),
                                     si(static_cast<double>(c.flops)),
                                     si(static_cast<double>(c.bytes), "B"),
                                     ai ? fixed(*ai, 2) : "-"};
        if (p.has_time()) {
            if (!p.time->noise_target_met && !p.time->disturbed) ++noisy;
            const layer_rates shown = shown_rates(p);
            row.push_back(time_ms(p.time->stats.median) + (p.measured_as.empty() ? "" : "="));
            const double share = time_share(r, p);
            row.push_back(std::isfinite(share) ? fixed(100.0 * share, 1) + "%" : "");
            row.push_back(ci_text(*p.time));
            row.push_back(shown.hidden ? "?" : fixed(shown.gflops, 2));
            row.push_back(shown.hidden ? "?" : fixed(shown.gbs, 2));
            const bool apart = p.twins && p.twins->disagree;
            twins_apart += apart;
            row.push_back(std::string(p.roofline         ? to_string(p.roofline->bound)
                                      : p.time->disturbed ? to_string(core::bound_class::disturbed)
                                                          : std::string_view()) +
                          (apart ? "~" : ""));
            row.push_back(p.roofline ? rule_text(*p.roofline) : "");
            row.push_back(std::isfinite(shown.roof_fraction) ? fixed(shown.roof_fraction * 100.0, 0) + "%" : "");
            row.emplace_back(to_string(p.verification.state));
        } else {
            row.push_back(state_text(p));
            row.insert(row.end(), {"", "", "", "", "", "", "", p.verification.state == profiler::verification_state::skipped
                                                         ? std::string()
                                                         : std::string(to_string(p.verification.state))});
        }
        t.add_row(row);
    }
    t.add_rule();
    const auto& tot = r.analysis.totals;
    t.add_row({"total (" + counted(static_cast<std::int64_t>(r.layers.size()), "layer") + ")", "", "", with_commas(tot.params),
               si(static_cast<double>(tot.macs)), si(static_cast<double>(tot.flops)),
               si(static_cast<double>(tot.bytes), "B"),
               tot.arithmetic_intensity() ? fixed(*tot.arithmetic_intensity(), 2) : "-", total_time(r),
               r.sum_of_layers_ms > 0 ? "100.0%" : "", "", "", "", "", "", "", ""});

    return t;
}

/// One row per group of the view (rollup.hpp), cut to its top N; `rest_ms` is the time of the groups left out.
text_table group_table(const profiler::profile_result& r, const view_options& view, std::size_t& all_groups,
                       double& rest_ms) {
    using al = text_table::align;
    text_table t;
    std::string first(to_string(view.group));
    if (view.group == group_key::prefix) first = "module:" + std::to_string(view.prefix_parts);
    for (auto [h, a] : std::initializer_list<std::pair<std::string, al>>{
             {first, al::left}, {"layers", al::right}, {"time", al::right}, {"%time", al::right}, {"FLOPs", al::right},
             {"bytes", al::right}, {"GFLOP/s", al::right}, {"GB/s", al::right}, {"%roof", al::right},
             {"bound (share of its time)", al::left}})
        t.add_column(h, a);
    const std::vector<group_row> groups = rollup(r, view);
    all_groups = groups.size();
    const std::size_t shown_rows = view.top ? std::min(*view.top, groups.size()) : groups.size();
    rest_ms = 0;
    for (std::size_t k = shown_rows; k < groups.size(); ++k) rest_ms += groups[k].time_ms;
    for (std::size_t k = 0; k < shown_rows; ++k) {
        const group_row& g = groups[k];
        // no time at all (views, skipped layers): "-"; timed but every rate hidden (mistrusted, disturbed): "?"
        auto num = [&](double v, int d) { return std::isfinite(v) ? fixed(v, d) : g.timed ? "?" : "-"; };
        t.add_row({g.key, std::to_string(g.layers), g.timed ? time_ms(g.time_ms) + (g.disturbed_ms > 0 ? "!" : "") : "-",
                   g.timed && r.sum_of_layers_ms > 0 ? fixed(100.0 * g.time_share, 1) + "%" : "", si(g.flops),
                   si(g.bytes, "B"), num(g.gflops, 2), num(g.gbs, 2),
                   std::isfinite(g.roof_fraction) ? fixed(100.0 * g.roof_fraction, 0) + "%" : "",
                   g.bound.empty() ? "-" : g.bound + " " + fixed(100.0 * g.bound_share, 0) + "%"});
    }
    t.add_rule();
    t.add_row({"total (" + counted(static_cast<std::int64_t>(r.layers.size()), "layer") + ")",
               std::to_string(r.layers.size()), total_time(r), r.sum_of_layers_ms > 0 ? "100.0%" : "",
               si(static_cast<double>(r.analysis.totals.flops)), si(static_cast<double>(r.analysis.totals.bytes), "B"),
               "", "", "", ""});
    return t;
}

/// The model, the device and the timing protocol: the lines above the table.
void profile_heading(std::ostream& out, const profiler::profile_result& r) {
    const auto& d = r.device;
    out << model_heading(r.analysis) << "  " << inputs_text(r.analysis.inputs) << "  dtype "
        << core::to_string(r.analysis.data_type) << "\n" << fusion_line(r.analysis);
    out << "device " << d.backend << ": " << d.name;
    if (d.kind == backend_api::device_kind::gpu)
        out << ", " << d.cores << " SMs, " << d.isa;  // a GPU has no host threads to show
    else
        out << ", " << counted(d.threads, "thread");
    for (const auto& [k, v] : d.details)
        if (k == "library" || k == "onednn_isa") out << ", " << v;
    out << "\n";
    out << "timing: cache " << backend_api::to_string(r.timing.cache) << ", warm-up >= " << r.timing.warmup_runs << " runs and "
        << fixed(r.timing.warmup_ms, 0) << " ms, >= " << r.timing.min_samples << " samples, noise target: the median's 95% CI narrower than "
        << significant(r.timing.max_noise * 100) << "% of it (CI95 within +-" << significant(r.timing.max_noise * 50) << "%), <= " << fixed(r.timing.max_time_s, 2)
        << " s per layer; timer " << r.timer_name << " resolution " << fixed(r.timer_resolution_ns, 0) << " ns, overhead "
        << fixed(r.timer_overhead_ns, 0) << " ns\n\n";
}

/// What the marks and columns mean, and the footnotes of the marks this run used.
void profile_legend(std::ostream& out, const profiler::profile_result& r, int noisy, int twins_apart) {
    out << "median: per run; CI95: half-width of the median's 95% confidence interval, in % of it (* the noise "
           "target was not met, ! disturbed by other work); bound: compute, memory, overhead (fixed cost dominates), "
           "ambiguous, mistrusted (faster than a roof allows) or disturbed (no verdict); %roof: the roofs' floor / "
           "median (an overhead-bound layer's: the dispatch cost / median), 100% within a roof's tolerance "
           "(docs/roofline.md); GFLOP/s counts the FLOPs the kernel executes (padding taps excluded), FLOPs what "
           "PyTorch counts; "
        << core::rule_legend() << "\n";
    if (twins_apart > 0)
        out << "~ " << counted(static_cast<std::int64_t>(twins_apart), "layer")
            << " read apart from twins of the same op and shapes beyond their CIs, after measuring again: something "
               "the accounting cannot see slowed the slower ones; the verdict's reason says so (JSON bound_reason, the "
               "HTML page)\n";
    if (!r.twins_remeasured.empty() && r.twins_disagreeing.empty() && !r.twins_interrupted)
        out << counted(static_cast<std::int64_t>(r.twins_remeasured.size()), "layer")
            << " measured again because twins of the same op and shapes read apart; they agree now, each with its lower "
               "median\n";
    if (std::any_of(r.layers.begin(), r.layers.end(), [](const auto& p) { return !p.analysis.layer.tied.empty(); }))
        out << "^ a parameter tensor another layer uses too (tied or shared): shown on each layer, counted once in the total\n";
    if (r.layers_reused > 0)
        out << "= " << counted(static_cast<std::int64_t>(r.layers_reused), "layer")
            << " report the measurement of an identical earlier layer (the same op, attributes, input shapes and dtype; "
            << r.layers_measured << " distinct layers measured); --every-layer measures each\n";
    if (noisy > 0)
        out << "* " << counted(static_cast<std::int64_t>(noisy), "layer") << " stopped before the noise target was met "
            << "(at --max-time, or when more samples stopped narrowing the CI: noise stable)\n";
    if (const double d = disturbed_layers_ms(r); d > 0)
        out << "! the total holds " << time_ms(d) << " of disturbed layers' medians (other work slowed them: not a "
            << "measurement)\n";
}

/// The end-to-end pass and its graph replay.
void profile_passes(std::ostream& out, const profiler::profile_result& r) {
    if (r.end_to_end && r.end_to_end_state == profiler::run_state::disturbed)
        out << "end to end: DISTURBED (" << time_ms(r.end_to_end->stats.median) << " median of "
            << r.end_to_end->clean_samples << " clean samples, not a measurement: " << r.end_to_end_reason
            << ")  sum of layer medians: " << total_time(r) << "\n";
    else if (r.end_to_end)
        out << "end to end: " << time_ms(r.end_to_end->stats.median) << " median (" << ci_text(*r.end_to_end)
            << ", " << r.end_to_end->samples << " samples"
            << (r.end_to_end_verification.state == profiler::verification_state::passed ? ", outputs verified" : "")
            << ")  sum of layer medians: " << total_time(r) << "\n";
    else
        out << "end to end: " << to_string(r.end_to_end_state) << (r.end_to_end_reason.empty() ? "" : " (" + r.end_to_end_reason + ")")
            << "  sum of layer medians: " << total_time(r) << "\n";
    if (r.graph_replay && r.graph_replay_state == profiler::run_state::disturbed) {
        out << "graph replay: DISTURBED (" << time_ms(r.graph_replay->stats.median) << " median, not a measurement: "
            << r.graph_replay_reason << ")\n";
    } else if (r.graph_replay) {
        // --graph: the same forward pass replayed as one captured graph; the difference is launch overhead
        out << "graph replay: " << time_ms(r.graph_replay->stats.median) << " median (" << ci_text(*r.graph_replay) << ", "
            << r.graph_replay->samples << " samples)";
        if (r.end_to_end && r.end_to_end_state == profiler::run_state::measured)
            out << "  launch overhead removed: " << time_ms(r.end_to_end->stats.median - r.graph_replay->stats.median);
        out << "\n";
    } else if (r.graph_replay_state != profiler::run_state::skipped) {
        out << "graph replay: " << to_string(r.graph_replay_state)
            << (r.graph_replay_reason.empty() ? "" : " (" + r.graph_replay_reason + ")") << "\n";
    }
    out << fusion_savings_text(r);
}

/// The time by bound and the roofs the layers were judged against.
void profile_roofs(std::ostream& out, const profiler::profile_result& r) {
    if (!r.bound_ms.empty() && r.sum_of_layers_ms > 0) {
        out << "time by bound:";
        using core::bound_class;
        for (bound_class b : {bound_class::compute, bound_class::memory, bound_class::overhead, bound_class::ambiguous,
                              bound_class::mistrusted, bound_class::disturbed}) {
            auto it = r.bound_ms.find(b);
            if (it == r.bound_ms.end()) continue;
            out << " " << to_string(b) << " " << fixed(100.0 * it->second / r.sum_of_layers_ms, 0) << "% (" << time_ms(it->second)
                << ")";
        }
        out << "\n";
    }
    if (r.ceilings) {
        const auto& c = *r.ceilings;
        const std::string dt(core::to_string(r.analysis.data_type));
        out << "roofs (" << (c.source == backend_api::ceilings_source::cache ? "cached ceilings measured " : "ceilings measured ") << c.measured_at
            << (c.quick ? ", quick" : "") << (c.disturbed ? ", DISTURBED: not cached" : "") << "): compute " << dt << " "
            << (c.peak_gflops.count(dt) ? fixed(c.peak_gflops.at(dt), 1) + " GFLOP/s" : std::string("unknown"))
            << (c.fma_peak_gflops.count(dt) && c.peak_gflops.count(dt) && c.fma_peak_gflops.at(dt) >= c.peak_gflops.at(dt)
                    ? " (FMA peak)"
                    : "")
            << (c.gemm_gflops.count(dt) ? ", GEMM " + fixed(c.gemm_gflops.at(dt), 1) + " GFLOP/s (a lower ceiling)" : "")
            << ", DRAM bandwidth " << fixed(c.bandwidth_gbs, 1) << " GB/s"
            << (dram_roof_by_size(c).empty() ? std::string() : " (by working set: " + dram_roof_by_size(c) + ")")
            << (r.timing.cache == backend_api::cache_mode::hot
                    ? " (with a hot cache, a layer whose working set fits a cache level is judged against that level's "
                      "bandwidth from the sweep)"
                    : "")
            << ", dispatch " << time_ms(c.dispatch_ms(r.timing.cache == backend_api::cache_mode::cold))
            << (r.timing.cache == backend_api::cache_mode::cold && c.cold_dispatch_overhead_ms > 0
                    ? " (one run after a flush; " + time_ms(c.dispatch_overhead_ms) + " hot)"
                    : "")
            << "; tolerances compute "
            << fixed(100.0 * c.compute_tolerance(dt), 1) << "%, bandwidth " << fixed(100.0 * c.bandwidth_tolerance(), 1)
            << "%\n";
    } else {  // an empty bound column is explained where it is read
        out << "roofs: none, so no bound verdicts: " << r.no_ceilings_reason << "\n";
    }
}

/// Mistrusted layers, other work, warnings, memory, training, the layers not measured and the ONNX nodes left out.
void profile_footer(std::ostream& out, const profiler::profile_result& r, const std::vector<skipped_node>& skipped_nodes,
                    const std::vector<skipped_node>& folded_nodes) {
    std::size_t mistrusted = 0;
    for (const auto& p : r.layers) mistrusted += p.roofline && p.roofline->bound == core::bound_class::mistrusted;
    if (mistrusted)
        out << "MISTRUSTED: " << counted(static_cast<std::int64_t>(mistrusted), "layer") << " measured faster than the roofs allow; their rates are not "
            << "shown (the timer, a count or a ceiling is wrong)\n";
    {
        // what other work took, even when every layer still found clean samples
        std::int64_t replaced = 0, kept = 0;
        for (const auto& p : r.layers)
            if (p.has_time()) {
                replaced += p.time->disturbed_samples;
                kept += p.time->clean_samples;
            }
        if (replaced > 0)
            out << "other work: " << counted(replaced, "sample") << " of " << with_commas(replaced + kept)
                << " lost more than " << fixed(100.0 * backend_api::disturbed_lost_fraction, 0)
                << "% of their time to it and were replaced (docs/timing.md; what it cannot see, a neighbour on a "
                   "shared cache or memory bus, can still slow a layer)\n";
    }
    for (const auto& w : profile_warnings(r)) out << "WARNING: " << w << "\n";
    const auto& m = r.memory;
    out << "memory: parameters " << si(static_cast<double>(m.parameter_bytes), "B") << ", buffers "
        << si(static_cast<double>(m.buffer_bytes), "B")
        << (m.kv_cache_bytes > 0 ? " (the KV cache " + si(static_cast<double>(m.kv_cache_bytes), "B") + ")" : std::string())
        << ", peak activations "
        << si(static_cast<double>(m.peak_activation_bytes), "B") << " (at " << m.peak_at << "), workspace "
        << si(static_cast<double>(r.workspace_bytes), "B") << "\n";
    const auto& tr = r.training;
    out << "training (estimate): " << si(static_cast<double>(tr.step_flops), "FLOP") << " per step (backward "
        << si(static_cast<double>(tr.backward_flops), "FLOP") << "), gradients " << si(static_cast<double>(tr.gradient_bytes), "B")
        << ", optimizer state SGD 0 B / momentum " << si(static_cast<double>(tr.momentum_state_bytes), "B") << " / Adam "
        << si(static_cast<double>(tr.adam_state_bytes), "B") << "\n";
    int failed = 0, unsupported = 0, skipped_layers = 0;
    for (const auto& p : r.layers) {
        failed += p.state == profiler::run_state::failed;
        unsupported += p.state == profiler::run_state::unsupported;
        skipped_layers += p.state == profiler::run_state::skipped;
    }
    if (failed || unsupported || skipped_layers) {
        out << "\n";
        for (const auto& p : r.layers)
            if (p.state == profiler::run_state::failed || p.state == profiler::run_state::unsupported ||
                p.state == profiler::run_state::skipped)
                out << to_string(p.state) << ": " << p.analysis.layer.name << ": " << p.reason << "\n";
    }
    if (!r.complete)
        out << "\nINCOMPLETE: interrupted; " << r.not_measured.size() << " layer(s) not measured\n";
    if (!skipped_nodes.empty()) out << "\n" << skipped_nodes_footer(skipped_nodes);
    out << folded_nodes_footer(folded_nodes);
}

}  // namespace

std::string profile_table(const profiler::profile_result& r, const std::vector<skipped_node>& skipped_nodes,
                          const std::vector<skipped_node>& folded_nodes, const view_options& view) {
    int noisy = 0, twins_apart = 0;
    double rest_ms = 0;
    std::ostringstream head, out;
    profile_heading(head, r);
    std::string table;
    if (view.group == group_key::none) {
        const text_table t = layer_table(r, view, noisy, twins_apart, rest_ms);
        table = t.render() + "\n";
        if (const std::string left = t.dropped(table_width()); !left.empty())
            out << "columns left out to fit " << table_width() << ": " << left
                << " (--wide shows every one; CSV and JSON have them)\n";
        out << top_footer(view.top ? std::min(*view.top, r.layers.size()) : r.layers.size(), r.layers.size(), rest_ms,
                          r.sum_of_layers_ms, "layers", view.sort);
    } else {
        std::size_t all = 0;
        const text_table t = group_table(r, view, all, rest_ms);
        table = t.render() + "\n";
        out << top_footer(view.top ? std::min(*view.top, all) : all, all, rest_ms, r.sum_of_layers_ms, "groups",
                          view.sort);
        out << "groups: time is the sum of their layers' medians (!: some of it disturbed by other work, not a "
               "measurement), %time of the sum of layers; GFLOP/s and GB/s of their layers with shown rates; %roof "
               "weighted by time; bound: the verdict holding most of their time (--group-by drops the per-layer rows: "
               "JSON keeps every layer)\n";
        for (const auto& p : r.layers)  // the legend's marks count every layer, shown or grouped
            if (p.has_time()) {
                noisy += !p.time->noise_target_met && !p.time->disturbed;
                twins_apart += p.twins && p.twins->disagree;
            }
    }
    profile_legend(out, r, noisy, twins_apart);
    profile_passes(out, r);
    profile_roofs(out, r);
    out << advice_text(advise(r));
    profile_footer(out, r, skipped_nodes, folded_nodes);
    return wrap_lines(head.str()) + table + wrap_lines(out.str());
}

namespace {

/// The groups of the view as CSV, one row each (rollup.hpp).
std::string group_csv(const profiler::profile_result& r, const view_options& view) {
    std::ostringstream out;
    out << "group,layers,time_ms,time_share,flops,executed_flops,bytes,achieved_gflops,achieved_gbs,roof_fraction,"
           "bound,bound_share\n";
    const std::vector<group_row> groups = rollup(r, view);
    const std::size_t rows = view.top ? std::min(*view.top, groups.size()) : groups.size();
    auto number = [](double v) { return std::isfinite(v) ? shortest(v) : std::string(); };
    for (std::size_t k = 0; k < rows; ++k) {
        const group_row& g = groups[k];
        out << csv_field(g.key) << ',' << g.layers << ',' << shortest(g.time_ms) << ',' << shortest(g.time_share) << ','
            << shortest(g.flops) << ',' << shortest(g.executed_flops) << ',' << shortest(g.bytes) << ','
            << number(g.gflops) << ',' << number(g.gbs) << ',' << number(g.roof_fraction) << ',' << g.bound << ','
            << (g.bound.empty() ? std::string() : shortest(g.bound_share)) << '\n';
    }
    return out.str();
}

}  // namespace

std::string profile_csv(const profiler::profile_result& r, const view_options& view) {
    if (view.group != group_key::none) return group_csv(r, view);
    std::ostringstream out;
    out << "name,op,layer,inputs,input_shapes,output_shape,params,buffers,macs,flops,bytes,arithmetic_intensity,"
           "state,median_ms,ci95_low_ms,ci95_high_ms,samples,runs,noise_target_met,achieved_gflops,achieved_gbs,"
           "verification,rel_l2_error,executed_macs,executed_flops,disturbed,disturbed_samples,stolen_fraction,bound,"
           "roof_fraction,bound_rule,twins_disagree,time_share,measured_as\n";
    const std::vector<std::size_t> order = layer_order(r, view.sort);
    const std::size_t rows = view.top ? std::min(*view.top, order.size()) : order.size();
    for (std::size_t k = 0; k < rows; ++k) {
        const auto& p = r.layers[order[k]];
        const auto& l = p.analysis;
        const std::string inputs = core::input_labels(r.analysis, l);  // named as the rows are: a group by its label
        auto ai = l.cost.arithmetic_intensity();
        out << csv_field(core::group_label(l)) << ',' << core::kind_of(l.layer.op) << ',' << csv_field(core::to_string(l.layer.op))
            << ',' << csv_field(inputs) << ',' << shapes_text(l.input_shapes) << ',' << l.output_shape.to_string() << ','
            << l.cost.params << ',' << l.cost.buffers << ',' << l.cost.macs << ',' << l.cost.flops << ',' << l.cost.bytes
            << ',' << (ai ? shortest(*ai) : "") << ',' << to_string(p.state) << ',';
        const layer_rates shown = shown_rates(p);
        auto number = [](double v) { return std::isfinite(v) ? shortest(v) : std::string(); };
        if (p.has_time()) {
            const auto& s = p.time->stats;
            out << shortest(s.median) << ',' << shortest(s.ci95_low) << ',' << shortest(s.ci95_high) << ','
                << p.time->samples << ',' << p.time->runs << ',' << (p.time->noise_target_met ? "true" : "false") << ','
                << number(shown.gflops) << ',' << number(shown.gbs);
        } else {
            out << ",,,,,,,";
        }
        out << ',' << to_string(p.verification.state) << ',' << number(p.verification.rel_l2_error) << ',' << l.cost.executed_macs()
            << ',' << l.cost.executed_flops() << ',';
        if (p.has_time())
            out << (p.time->disturbed ? "true" : "false") << ',' << p.time->disturbed_samples << ','
                << shortest(p.time->stolen_fraction);
        else
            out << ",,";
        out << ',' << (p.roofline ? to_string(p.roofline->bound) : std::string_view()) << ',' << number(shown.roof_fraction)
            << ',' << csv_field(p.roofline ? rule_text(*p.roofline) : std::string()) << ','
            << (p.twins ? (p.twins->disagree ? "true" : "false") : "") << ',' << number(time_share(r, p)) << ','
            << csv_field(p.measured_as) << '\n';
    }
    return out.str();
}

}  // namespace ridgeline::report
