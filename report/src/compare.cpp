#include "ridgeline/report/compare.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/file.hpp"
#include "ridgeline/core/predict.hpp"
#include "ridgeline/report/ceilings.hpp"
#include "ridgeline/report/format.hpp"
#include "ridgeline/report/predict.hpp"

namespace ridgeline::report {

std::string_view to_string(compare_verdict v) {
    switch (v) {
        case compare_verdict::same: return "same";
        case compare_verdict::faster: return "faster";
        case compare_verdict::slower: return "slower";
        case compare_verdict::not_comparable: return "not comparable";
    }
    return "same";
}

std::optional<compare_verdict> parse_compare_verdict(std::string_view text) {
    for (compare_verdict v : {compare_verdict::same, compare_verdict::faster, compare_verdict::slower,
                              compare_verdict::not_comparable})
        if (to_string(v) == text) return v;
    return std::nullopt;
}

namespace {
/// The cell of a run's speedup: the verdict where it is not a speedup (same, not comparable), else "1.23x".
std::string speedup_cell(const nlohmann::json& run) {
    const auto v = parse_compare_verdict(run["verdict"].is_string() ? run["verdict"].get<std::string>() : "");
    if (v == compare_verdict::same || v == compare_verdict::not_comparable) return std::string(to_string(*v));
    return fixed(run["speedup"].get<double>(), 2) + "x";
}
}  // namespace

compare_run::compare_run(std::string l, profile_record r) : label(std::move(l)), report(std::move(r)) {}

compare_run::compare_run(std::string l, const nlohmann::json& r)
    : label(std::move(l)), report(profile_from_json(r, "\"" + label + "\"")) {}

compare_run load_run(const std::string& path) {
    const std::string where = "\"" + core::printable(path) + "\"";
    const std::string text = core::read_regular_file(path, where);
    core::check_json_text(text, where);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw core::error(where + " is not valid JSON: " + core::without_json_exception_tag(e.what()));
    }
    profile_record r = profile_from_json(std::move(j), where);
    // the dtype is named where it is not fp32, so a compare of one model in two dtypes says which is which
    std::string label = core::printable(std::filesystem::path(path).stem().string()) + " (" + r.backend +
                        (r.threads > 0 ? ", " + counted(r.threads, "thread") : "") +
                        (r.dtype != "fp32" ? ", " + r.dtype : "") + (r.prediction ? ", predicted" : "") + ")";
    return compare_run(std::move(label), std::move(r));
}

namespace {

/// Throws core::error unless every run profiles the same work as the baseline: the same model, the same layer for a
/// one-layer profile, the same transformer pass.
void check_same_work(const std::vector<compare_run>& runs) {
    const std::string& model = runs[0].report.model;
    for (const auto& r : runs)
        if (r.report.model != model)
            throw core::error("compare: \"" + r.label + "\" profiles model \"" + r.report.model + "\", the baseline \"" +
                              model + "\"");
    // every one-layer profile is the model "layer": its source ("layer:linear:in_features=256,...") says which
    const std::string& source = runs[0].report.source;
    if (model == "layer")
        for (const auto& r : runs)
            if (r.report.source != source)
                throw core::error("compare: \"" + r.label + "\" profiles " + r.report.source + ", the baseline " + source);
    // a transformer's pass (phase, batch, tokens) is the work itself: the layers of two passes have the same names
    // and do different work, so their times are not a speedup. A report written before reports named their pass
    // has none, and is compared as before
    std::string pass;
    const compare_run* with = nullptr;
    for (const auto& r : runs) {
        const std::string p = r.report.pass_text();
        if (p.empty()) continue;
        if (!with) {
            pass = p;
            with = &r;
        } else if (p != pass) {
            throw core::error("compare: \"" + r.label + "\" is a " + p + ", \"" + with->label + "\" a " + pass +
                              ": the same layers do other work (compare one pass on other devices, threads or dtypes)");
        }
    }
    // a fused report's groups carry their producers' names: beside an unfused report they would be other work
    auto fused = [](const compare_run& r) {
        return std::any_of(r.report.layers.begin(), r.report.layers.end(),
                           [](const layer_record& l) { return !l.fused.empty(); });
    };
    for (std::size_t i = 1; i < runs.size(); ++i)
        if (fused(runs[i]) != fused(runs[0]))
            throw core::error("compare: \"" + (fused(runs[i]) ? runs[i].label : runs[0].label) +
                              "\" profiles the model fused and \"" +
                              (fused(runs[i]) ? runs[0].label : runs[i].label) +
                              "\" does not: their rows are other work (compare runs profiled alike; an unfused profile says what "
                              "fusing saves)");
    // the same names must do the same work: two configs saved under one name (hidden_size 64 and 512), or one model
    // at two batch sizes, have layers of the same names whose FLOPs differ (FLOPs do not depend on the dtype)
    for (std::size_t i = 1; i < runs.size(); ++i)
        for (const auto& l : runs[i].report.layers) {
            const layer_record* b = runs[0].report.layer(l.name);
            if (b && l.flops != b->flops)
                throw core::error("compare: layer \"" + l.name + "\" does " + with_commas(static_cast<std::int64_t>(l.flops)) +
                                  " FLOPs in \"" + runs[i].label + "\", " + with_commas(static_cast<std::int64_t>(b->flops)) +
                                  " in the baseline \"" + runs[0].label +
                                  "\": other work under the same name (compare one model at one size)");
        }
}

/// Every run's layers by name.
struct compared_runs {
    const std::vector<compare_run>& runs;
    std::vector<std::map<std::string, const layer_record*>> by_name;
};

compared_runs read_runs(const std::vector<compare_run>& runs) {
    compared_runs cr{runs, {}};
    cr.by_name.resize(runs.size());
    for (std::size_t i = 0; i < runs.size(); ++i)
        for (const auto& l : runs[i].report.layers) cr.by_name[i][l.name] = &l;
    return cr;
}

/// The speedup `ridgeline predict` expects for run `i` (core::predict_time, its inputs from prediction_input_for),
/// from the baseline's time and roofs and the run's ceilings; without them, the roofs the run judged the layer
/// against. None (null) where the baseline is a prediction: it has no measured time to predict from.
nlohmann::json predicted_speedup(const layer_record& base, const layer_record& l, const compared_runs& cr, std::size_t i) {
    const profile_record& b = cr.runs[0].report;
    if (b.prediction) return nullptr;  // no prediction of a prediction (it would read 1.00x against its device)
    const profile_record& r = cr.runs[i].report;
    // a GPU run against a baseline of another class: the GPU's op-class models, as predict takes them
    if (r.ceilings && b.backend.rfind("cuda", 0) != 0) {
        std::optional<core::gpu_spec> spec;
        try {
            spec = gpu_spec_for(*r.ceilings, b.dtype);
        } catch (const core::error&) {
            return nullptr;  // a GPU without a datasheet entry: no model of it to predict from
        }
        if (spec) {
            std::string why;
            const auto e = class_estimate(base, b.dtype, *spec, why);
            return e && e->time_ms > 0 ? nlohmann::json(base.time->median_ms / e->time_ms) : nlohmann::json(nullptr);
        }
    }
    core::prediction_input in;
    if (r.ceilings) {
        in = prediction_input_for(base, base.roofs, b.cold, *r.ceilings, b.dtype, r.cold);
    } else {
        in.flops = static_cast<std::int64_t>(std::max(0.0, base.executed_flops()));
        in.bytes = std::max<std::int64_t>(0, base.bytes);
        in.median_ms = base.time->median_ms;
        in.ci95_low_ms = base.time->ci95_low_ms;
        in.ci95_high_ms = base.time->ci95_high_ms;
        in.source = base.roofs;
        in.target = l.roofs;
    }
    const core::prediction pr = core::predict_time(in);
    return pr.rule != core::prediction_rule::none && pr.time_ms > 0 ? nlohmann::json(base.time->median_ms / pr.time_ms)
                                                                    : nlohmann::json(nullptr);
}

/// The baseline's layer `base` next to the same layer of every run: each run's time and, but for the baseline,
/// its speedup, verdict and predicted speedup.
nlohmann::json compare_layer(const layer_record& base, const compared_runs& cr) {
    const time_record& bt = *base.time;
    nlohmann::json entry = {{"name", base.name},
                            {"op", base.op},
                            {"flops", static_cast<std::int64_t>(base.flops)},
                            {"bytes", static_cast<std::int64_t>(base.bytes)}};
    if (!base.fused.empty()) entry["label"] = base.label;  // a fused group: its members, as a profile shows them
    nlohmann::json per = nlohmann::json::array();
    for (std::size_t i = 0; i < cr.runs.size(); ++i) {
        const layer_record& l = *cr.by_name[i].at(base.name);
        const time_record& t = *l.time;
        nlohmann::json r = {{"median_ms", t.median_ms},
                            {"ci95_low_ms", t.ci95_low_ms},
                            {"ci95_high_ms", t.ci95_high_ms},
                            {"roof_fraction", l.roof_fraction ? nlohmann::json(*l.roof_fraction) : nlohmann::json(nullptr)},
                            {"bound", l.bound.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.bound)}};
        if (i > 0) {
            const double speedup = bt.median_ms / t.median_ms;
            r["speedup"] = speedup;
            const bool overlap = t.ci95_low_ms <= bt.ci95_high_ms && bt.ci95_low_ms <= t.ci95_high_ms;
            r["verdict"] = to_string(overlap ? compare_verdict::same
                                     : speedup > 1 ? compare_verdict::faster
                                                   : compare_verdict::slower);
            // a time that other work disturbed measures the neighbours as much as the layer
            if (base.disturbed() || l.disturbed()) {
                r["verdict"] = to_string(compare_verdict::not_comparable);
                r["speedup"] = nullptr;
            }
            r["predicted_speedup"] = predicted_speedup(base, l, cr, i);
            // "disturbed" is no verdict: a layer is not said to change bound from or to it
            r["bound_changed"] = l.bound != base.bound && !base.disturbed() && !l.disturbed();
        }
        per.push_back(r);
    }
    entry["runs"] = per;
    return entry;
}

/// The error when no layer was timed in every run: names the run that shares no timed layer with the baseline.
[[noreturn]] void no_common_layer(const compared_runs& cr) {
    const auto& runs = cr.runs;
    const auto& by_name = cr.by_name;
    // name the run that shares no timed layer with the baseline, when one does not
    auto timed = [](const layer_record* l) { return l->time.has_value(); };
    for (std::size_t i = 1; i < runs.size(); ++i) {
        bool shares = false;
        for (const auto& [name, l] : by_name[0])
            if (timed(l) && by_name[i].count(name) && timed(by_name[i].at(name))) shares = true;
        if (!shares)
            throw core::error("compare: no layer was measured in every run (\"" + runs[0].label + "\" and \"" +
                                     runs[i].label + "\" have no timed layer of the same name)");
    }
    throw core::error("compare: no layer was measured in all " + std::to_string(runs.size()) +
                             " runs (each shares timed layers with the baseline, but no layer is timed in every one)");
}

}  // namespace

nlohmann::json compare_json(const std::vector<compare_run>& runs) {
    if (runs.size() < 2) throw core::error("compare needs at least two profile reports");
    check_same_work(runs);
    const compared_runs cr = read_runs(runs);
    nlohmann::json out = {{"schema", "ridgeline.compare/1"}, {"model", runs[0].report.model}};
    nlohmann::json jruns = nlohmann::json::array();
    for (const auto& r : runs)
        jruns.push_back({{"label", r.label},
                         {"device", r.report.json.value("device", nlohmann::json::object())},
                         {"dtype", r.report.dtype_given ? r.report.dtype : std::string()},
                         {"batch", r.report.batch.value_or(0)},
                         {"cache", r.report.timing_mode},
                         {"predicted", r.report.prediction}});
    out["runs"] = jruns;
    for (const auto& r : runs)  // the pass of the runs that name one (check_same_work: the same for all)
        if (r.report.pass) {
            out["pass"] = r.report.json["pass"];
            break;
        }
    nlohmann::json layers = nlohmann::json::array();
    nlohmann::json left_out = nlohmann::json::array();  // timed in the baseline, not in every other run
    for (const auto& base : runs[0].report.layers) {
        if (!base.time) continue;
        bool everywhere = true;
        for (std::size_t i = 1; i < runs.size(); ++i) {
            auto it = cr.by_name[i].find(base.name);
            everywhere = everywhere && it != cr.by_name[i].end() && it->second->time;
        }
        if (!everywhere) {
            left_out.push_back(base.name);
            continue;
        }
        layers.push_back(compare_layer(base, cr));
    }
    out["layers_left_out"] = left_out;
    // timed in another run but absent from, or untimed in, the baseline (a prediction that left layers out): not
    // compared, and said so rather than dropped in silence
    nlohmann::json not_in_baseline = nlohmann::json::array();
    for (std::size_t i = 1; i < runs.size(); ++i)
        for (const auto& l : runs[i].report.layers) {
            if (!l.time) continue;
            const auto it = cr.by_name[0].find(l.name);
            if ((it == cr.by_name[0].end() || !it->second->time) &&
                std::find(not_in_baseline.begin(), not_in_baseline.end(), l.name) == not_in_baseline.end())
                not_in_baseline.push_back(l.name);
        }
    out["layers_not_in_baseline"] = not_in_baseline;
    if (layers.empty()) no_common_layer(cr);
    out["layers"] = layers;
    nlohmann::json e2e = nlohmann::json::array();
    for (const auto& r : runs) {
        const double ms = r.report.end_to_end_ms();  // null where not measured or disturbed
        e2e.push_back(std::isfinite(ms) ? nlohmann::json(ms) : nlohmann::json(nullptr));
    }
    out["end_to_end_ms"] = e2e;
    // a prediction's end to end that sums its layers and leaves some out is part of a pass (predict's PARTIAL)
    nlohmann::json partial = nlohmann::json::array();
    for (const auto& r : runs) {
        const auto& e = r.report.json.value("end_to_end", nlohmann::json::object());
        partial.push_back(e.is_object() && e.value("partial", false));
    }
    out["end_to_end_partial"] = partial;
    return out;
}

std::string compare_table(const nlohmann::json& c) {
    std::ostringstream o;
    const auto& runs = c["runs"];
    o << "compare " << c["model"].get<std::string>() << ": baseline " << runs[0]["label"].get<std::string>() << "\n";
    for (std::size_t i = 1; i < runs.size(); ++i) o << "  run " << i << ": " << runs[i]["label"].get<std::string>() << "\n";
    o << "\n";
    text_table t;
    t.add_column("layer", text_table::align::left, {0, true, false});
    t.add_column("op", text_table::align::left, {3, false, false});
    t.add_column("base", text_table::align::right);
    t.add_column("roof", text_table::align::right, {1, false, false});
    for (std::size_t i = 1; i < runs.size(); ++i) {
        const std::string k = runs.size() > 2 ? std::to_string(i) : "";
        t.add_column("run" + k, text_table::align::right);
        t.add_column("roof" + k, text_table::align::right, {1, false, false});
        t.add_column("speedup" + k, text_table::align::right);
        t.add_column("predicted" + k, text_table::align::right, {2, false, false});
        t.add_column("bound" + k, text_table::align::left);
    }
    auto pct = [](const nlohmann::json& v) { return v.is_number() ? fixed(100 * v.get<double>(), 0) + "%" : std::string("-"); };
    int changed = 0;
    for (const auto& l : c["layers"]) {
        const auto& r = l["runs"];
        std::vector<std::string> row{l.value("label", l["name"].get<std::string>()), l["op"].get<std::string>(),
                                     time_ms(r[0]["median_ms"].get<double>()), pct(r[0]["roof_fraction"])};
        for (std::size_t i = 1; i < r.size(); ++i) {
            const auto& x = r[i];
            row.push_back(time_ms(x["median_ms"].get<double>()));
            row.push_back(pct(x["roof_fraction"]));
            row.push_back(speedup_cell(x));
            row.push_back(x["predicted_speedup"].is_number() ? fixed(x["predicted_speedup"].get<double>(), 2) + "x" : "-");
            const std::string b0 = r[0]["bound"].is_string() ? r[0]["bound"].get<std::string>() : "-";
            const std::string b1 = x["bound"].is_string() ? x["bound"].get<std::string>() : "-";
            row.push_back(x["bound_changed"].get<bool>() ? b0 + " -> " + b1 : b1);
            changed += x["bound_changed"].get<bool>();
        }
        t.add_row(row);
    }
    o << t.render() << "\n";
    const auto& e2e = c["end_to_end_ms"];
    const nlohmann::json partial = c.value("end_to_end_partial", nlohmann::json::array());
    auto is_partial = [&](std::size_t i) { return i < partial.size() && partial[i].get<bool>(); };
    o << "end to end:";
    for (std::size_t i = 0; i < e2e.size(); ++i)
        o << (i ? ", " : " ") << (e2e[i].is_number() ? time_ms(e2e[i].get<double>()) : std::string("-"))
          << (is_partial(i) ? " PARTIAL" : "");
    // each run's speedup over the baseline, where both are whole passes
    for (std::size_t i = 1; i < e2e.size(); ++i)
        if (e2e[0].is_number() && e2e[i].is_number() && !is_partial(0) && !is_partial(i))
            o << " (" << (e2e.size() > 2 ? "run " + std::to_string(i) + " " : std::string()) << "speedup "
              << fixed(e2e[0].get<double>() / e2e[i].get<double>(), 2) << "x)";
    if (std::any_of(partial.begin(), partial.end(), [](const nlohmann::json& v) { return v.get<bool>(); }))
        o << " (PARTIAL: a prediction's sum that leaves out layers it could not predict: no speedup from it)";
    bool any_missing = false;
    for (const auto& e : e2e) any_missing = any_missing || !e.is_number();
    if (any_missing) o << " (-: no clean end-to-end time in that run: not timed, or disturbed by other work)";
    o << "\n";
    bool any_prediction = false;
    for (const auto& r : runs) any_prediction = any_prediction || r.value("predicted", false);
    if (const auto& left = c.value("layers_left_out", nlohmann::json::array()); !left.empty())
        o << left.size() << (left.size() == 1 ? " layer" : " layers") << " of the baseline left out, not timed in every run ("
          << left[0].get<std::string>() << (left.size() > 1 ? ", ..." : "")
          << "): a view, a skipped or failed layer, or one a prediction did not predict\n";
    if (const auto& extra = c.value("layers_not_in_baseline", nlohmann::json::array()); !extra.empty())
        o << extra.size() << (extra.size() == 1 ? " layer" : " layers") << " timed in another run but not in the baseline ("
          << extra[0].get<std::string>() << (extra.size() > 1 ? ", ..." : "")
          << "): not compared (the baseline skipped them, or a prediction did not predict them)\n";
    o << changed << " layer(s) changed bound; \"same\": the two 95% CIs overlap"
      << (any_prediction ? " (a prediction's is its predicted interval: \"same\" says the measurement lies within reach "
                           "of the prediction)"
                         : "")
      << "; \"not comparable\": other work "
         "disturbed a time; roof: the layer's fraction of its roofs in that run; predicted: the speedup `ridgeline predict` "
         "expects from the baseline's time and the two runs' roofs (its efficiency kept, dispatch cost added; "
         "docs/roofline.md)"
      << (runs[0].value("predicted", false) ? "; none here: the baseline is a prediction, with no measured time to "
                                              "predict from (put the measured run first)"
                                            : "")
      << "\n";
    return wrap_lines(o.str());
}

chart compare_chart(const std::vector<compare_run>& runs) {
    chart c;
    c.title = "compare " + runs[0].report.model;
    for (std::size_t s = 0; s < runs.size(); ++s) {
        const profile_record& r = runs[s].report;
        c.series.push_back(runs[s].label);
        if (r.ceilings)
            for (const auto& [dt, peak] : r.ceilings->peak_gflops)
                if (r.dtype_given && dt == r.dtype) {
                    chart_roof roof{dt, peak, r.ceilings->bandwidth_gbs, static_cast<int>(s), 0.0, {}, 0.0};
                    roof.dispatch_ms = r.ceilings->dispatch_overhead_ms;
                    if (const auto g = r.ceilings->gemm_gflops.find(dt); g != r.ceilings->gemm_gflops.end() && g->second < peak)
                        roof.gemm_gflops = g->second;
                    std::vector<double> judged;
                    for (const auto& l : r.layers)
                        if (l.roofs.bandwidth_gbs > 0) judged.push_back(l.roofs.bandwidth_gbs);
                    roof.caches = cache_roofs(*r.ceilings, judged);
                    c.roofs.push_back(roof);
                }
        for (const auto& l : r.layers) {
            if (!l.time) continue;
            const double flops = l.executed_flops();
            const auto bytes = static_cast<double>(l.bytes);
            const double g = l.achieved_gflops.value_or(0.0);
            if (!(flops > 0) || !(bytes > 0) || !(g > 0)) continue;
            c.points.push_back({l.name, flops / bytes, g, l.time->median_ms, core::parse_bound(l.bound), static_cast<int>(s)});
        }
    }
    return c;
}

std::string compare_table_html(const nlohmann::json& c) {
    std::ostringstream o;
    o << "<table class=\"compare\"><thead><tr><th>layer</th><th>base</th>";
    for (std::size_t i = 1; i < c["runs"].size(); ++i) o << "<th>run " << i << "</th><th>speedup</th><th>predicted</th><th>bound</th>";
    o << "</tr></thead><tbody>\n";
    for (const auto& l : c["layers"]) {
        const auto& r = l["runs"];
        o << "<tr><td>" << xml_escape(l["name"].get<std::string>()) << "</td><td>" << time_ms(r[0]["median_ms"].get<double>())
          << "</td>";
        for (std::size_t i = 1; i < r.size(); ++i) {
            const auto& x = r[i];
            o << "<td>" << time_ms(x["median_ms"].get<double>()) << "</td><td>"
              << speedup_cell(x)
              << "</td><td>"
              << (x["predicted_speedup"].is_number() ? fixed(x["predicted_speedup"].get<double>(), 2) + "x" : "-")
              << "</td><td>" << (x["bound"].is_string() ? x["bound"].get<std::string>() : "-") << "</td>";
        }
        o << "</tr>\n";
    }
    o << "</tbody></table>\n";
    return o.str();
}

}  // namespace ridgeline::report
