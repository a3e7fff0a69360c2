#include "ridgeline/report/weights.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "ridgeline/config.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/report/format.hpp"

namespace ridgeline::report {

namespace {

/// Type-7 percentile of sorted values.
double percentile(const std::vector<float>& sorted, double q) {
    const double h = static_cast<double>(sorted.size() - 1) * q;
    const auto lo = static_cast<std::size_t>(std::floor(h));
    const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
    return static_cast<double>(sorted[lo]) + (h - static_cast<double>(lo)) * (static_cast<double>(sorted[hi]) - sorted[lo]);
}

double share_below(const std::vector<float>& sorted, float t) {
    const auto it = std::lower_bound(sorted.begin(), sorted.end(), t);
    return static_cast<double>(it - sorted.begin()) / static_cast<double>(sorted.size());
}

nlohmann::json stats_json(const std::optional<weight_stats>& s) {
    if (!s) return nullptr;
    return {{"count", s->count},        {"non_finite", s->non_finite}, {"mean_abs", s->mean_abs},     {"std", s->stddev},
            {"min", s->min},            {"max", s->max},               {"p10_abs", s->p10_abs},
            {"p25_abs", s->p25_abs},    {"p50_abs", s->p50_abs},       {"p75_abs", s->p75_abs},
            {"p90_abs", s->p90_abs},    {"below_1e-3", s->below_1e_3}, {"below_1e-2", s->below_1e_2},
            {"below_1e-1", s->below_1e_1}};
}

std::string num(double v) {
    if (v == 0) return "0";
    if (std::isnan(v)) return "-";  // no finite value to describe
    std::ostringstream o;
    o.precision(4);
    o << v;
    return o.str();
}

std::string percent(double share) { return std::isnan(share) ? "-" : fixed(100.0 * share, 1) + "%"; }

}  // namespace

weight_stats compute_weight_stats(const std::vector<float>& all) {
    if (all.empty()) throw core::error("weight statistics of an empty tensor");
    weight_stats s;
    s.count = static_cast<std::int64_t>(all.size());
    std::vector<float> values;
    values.reserve(all.size());
    for (float v : all)
        if (std::isfinite(v)) values.push_back(v);  // a NaN would also break the sort below
    s.non_finite = s.count - static_cast<std::int64_t>(values.size());
    if (values.empty()) {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        s.mean_abs = s.stddev = s.min = s.max = nan;
        s.p10_abs = s.p25_abs = s.p50_abs = s.p75_abs = s.p90_abs = nan;
        s.below_1e_3 = s.below_1e_2 = s.below_1e_1 = nan;
        return s;
    }
    const double n = static_cast<double>(values.size());
    double sum = 0, sum_abs = 0;
    s.min = s.max = values[0];
    for (float v : values) {
        sum += v;
        sum_abs += std::fabs(v);
        s.min = std::min<double>(s.min, v);
        s.max = std::max<double>(s.max, v);
    }
    const double mean = sum / n;
    double sq = 0;
    for (float v : values) sq += (v - mean) * (v - mean);  // two passes: no cancellation
    s.mean_abs = sum_abs / n;
    s.stddev = std::sqrt(sq / n);
    std::vector<float> a(values.size());
    std::transform(values.begin(), values.end(), a.begin(), [](float v) { return std::fabs(v); });
    std::sort(a.begin(), a.end());
    s.p10_abs = percentile(a, 0.10);
    s.p25_abs = percentile(a, 0.25);
    s.p50_abs = percentile(a, 0.50);
    s.p75_abs = percentile(a, 0.75);
    s.p90_abs = percentile(a, 0.90);
    s.below_1e_3 = share_below(a, 1e-3f);
    s.below_1e_2 = share_below(a, 1e-2f);
    s.below_1e_1 = share_below(a, 1e-1f);
    return s;
}

weights_report weight_statistics(const core::model_analysis& a, const backend_api::graph_data& values) {
    weights_report r;
    r.model = a.model_name;
    std::set<std::string> seen_w, seen_b;
    std::vector<float> all_w, all_b;
    auto gather = [&](const core::layer& l, const std::string& key) -> const std::vector<float>& {
        auto it = values.tensors.find(key);
        if (it == values.tensors.end())
            throw core::error(core::where(l) + ": no values for \"" + key + "\" (the model's weights are incomplete)");
        return it->second.data;
    };
    for (const auto& la : a.layers) {
        const core::layer& l = la.layer;
        layer_weight_stats s;
        s.layer = l.name;
        s.op = std::string(core::kind_of(l.op));
        std::vector<float> w, b;
        for (const auto& p : core::parameters_of(l.op)) {
            // a parameter layer's trainable value (ViT's class token and position embedding) is a weight too
            if (!p.trainable || (p.name != "weight" && p.name != "bias" && p.name != "value")) continue;
            const std::string key = backend_api::param_key(l, p.name);
            const auto& v = gather(l, key);
            const bool is_weight = p.name != "bias";
            (is_weight ? s.weight_tensors : s.bias_tensors).push_back(key);
            (is_weight ? w : b).insert((is_weight ? w : b).end(), v.begin(), v.end());
            auto& seen = is_weight ? seen_w : seen_b;
            if (seen.insert(key).second) {
                auto& all = is_weight ? all_w : all_b;
                all.insert(all.end(), v.begin(), v.end());
            }
        }
        if (w.empty() && b.empty()) continue;
        if (!w.empty()) s.weights = compute_weight_stats(w);
        if (!b.empty()) s.biases = compute_weight_stats(b);
        r.layers.push_back(std::move(s));
    }
    if (!all_w.empty()) r.weights = compute_weight_stats(all_w);
    if (!all_b.empty()) r.biases = compute_weight_stats(all_b);
    r.weight_tensors = static_cast<std::int64_t>(seen_w.size());
    r.bias_tensors = static_cast<std::int64_t>(seen_b.size());
    return r;
}

nlohmann::json weights_json(const weights_report& r, const run_info& info) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : r.layers)
        layers.push_back({{"name", l.layer},
                          {"op", l.op},
                          {"weight_tensors", l.weight_tensors},
                          {"bias_tensors", l.bias_tensors},
                          {"weights", stats_json(l.weights)},
                          {"biases", stats_json(l.biases)}});
    return {{"schema", "ridgeline.weights/1"},
            {"ridgeline_version", RIDGELINE_VERSION},
            {"model", r.model},
            {"source", info.source},
            {"command_line", info.command_line},
            {"skipped_nodes", skipped_nodes_json(info.skipped_nodes)},
            {"folded_nodes", skipped_nodes_json(info.folded_nodes)},
            {"totals",
             {{"weights", stats_json(r.weights)},
              {"biases", stats_json(r.biases)},
              {"weight_tensors", r.weight_tensors},
              {"bias_tensors", r.bias_tensors}}},
            {"layers", layers}};
}

std::string weights_table(const weights_report& r, const std::vector<skipped_node>& skipped) {
    using al = text_table::align;
    text_table t;
    t.add_column("layer", al::left, {0, true, false});
    t.add_column("tensor", al::left);
    // to fit 120 columns the outer percentiles and the spread go first (--wide and JSON have them)
    for (const char* h : {"count", "NaN/inf", "mean|w|", "std", "min", "max", "p10|w|", "p25|w|", "p50|w|", "p75|w|", "p90|w|",
                          "<1e-3", "<1e-2", "<1e-1"}) {
        const std::string name = h;
        const int drop = name == "p25|w|" || name == "p75|w|" ? 2 : name == "std" ? 1 : 0;
        t.add_column(h, al::right, {drop, false, false});
    }
    auto row = [&](const std::string& name, const std::string& what, const weight_stats& s) {
        t.add_row({name, what, with_commas(s.count), with_commas(s.non_finite), num(s.mean_abs), num(s.stddev), num(s.min), num(s.max),
                   num(s.p10_abs), num(s.p25_abs), num(s.p50_abs), num(s.p75_abs), num(s.p90_abs),
                   percent(s.below_1e_3), percent(s.below_1e_2), percent(s.below_1e_1)});
    };
    for (const auto& l : r.layers) {
        if (l.weights) row(l.layer, "weight", *l.weights);
        if (l.biases) row(l.weights ? "" : l.layer, "bias", *l.biases);
    }
    t.add_rule();
    if (r.weights) row("model (" + std::to_string(r.weight_tensors) + " tensors)", "weight", *r.weights);
    if (r.biases) row("model (" + std::to_string(r.bias_tensors) + " tensors)", "bias", *r.biases);
    std::ostringstream out;
    out << "model " << r.model << "  weight statistics (|w|: magnitude; <1e-3: share of |w| below 1e-3)\n\n";
    out << t.render();
    out << skipped_nodes_footer(skipped);
    return wrap_lines(out.str());
}

}  // namespace ridgeline::report
