#include "ridgeline/report/compare.hpp"

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
#include "report_json.hpp"

namespace ridgeline::report {

using detail::disturbed;
using detail::num;
using detail::str;
using detail::end_to_end_ms;

namespace {
// a time beyond this (11.6 days per layer) is not a measurement: a hand-edited or corrupted report
constexpr double max_time_ms = 1e9;

/// Every string value below `j` through core::printable (the depth is bounded: core::check_json_text).
void sanitize_strings(nlohmann::json& j) {
    if (j.is_string()) {
        j = core::printable(j.get_ref<const std::string&>());
    } else if (j.is_structured()) {
        for (auto& v : j) sanitize_strings(v);
    }
}

/// Every field compare and predict read has the type a profile report gives it (docs/json-schema.md), so a
/// hand-edited or foreign file fails here with the field's path rather than deep inside with a JSON library error.
void check_fields(const std::string& path, const nlohmann::json& j) {
    auto expect = [&](bool ok, const std::string& where, const char* what, const nlohmann::json& got) {
        if (ok) return;
        // the type, or the value when it is a scalar (never dump() a container: it may be nested 100,000 deep)
        std::string shown = got.is_primitive() ? got.dump() : std::string(got.type_name());
        if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
        throw core::error("\"" + path + "\": " + where + ": expected " + what + ", got " + shown);
    };
    for (const char* k : {"model", "dtype", "source"})
        if (j.contains(k)) expect(j[k].is_string(), std::string("$.") + k, "a string", j[k]);
    if (j.contains("dtype")) {
        const nlohmann::json& d = j["dtype"];
        expect(d == "fp32" || d == "tf32" || d == "fp16" || d == "bf16", "$.dtype", "fp32, tf32, fp16 or bf16", d);
    }
    // a time is a positive, finite number of milliseconds, at most max_time_ms: anything else was not measured
    auto expect_time = [&](const nlohmann::json& v, const std::string& where) {
        expect(v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0 && v.get<double>() <= max_time_ms,
               where, "a positive number of milliseconds (at most 1e9)", v);
    };
    if (j.contains("batch")) expect(j["batch"].is_number_integer(), "$.batch", "an integer", j["batch"]);
    if (j.contains("pass") && !j["pass"].is_null()) {  // a transformer's pass: compare keeps to one, predict copies it
        const auto& p = j["pass"];
        expect(p.is_object(), "$.pass", "an object or null", p);
        const nlohmann::json phase = p.value("phase", nlohmann::json(nullptr));
        expect(phase == "prefill" || phase == "decode", "$.pass.phase", "\"prefill\" or \"decode\"", phase);
        for (const char* k : {"batch", "seq", "kv_len", "kv_cache_bytes"})
            if (p.contains(k))
                expect(p[k].is_number_integer() && p[k].get<std::int64_t>() >= 0, std::string("$.pass.") + k,
                       "an integer >= 0", p[k]);
        // the pass's length: a prefill's tokens, a decode step's cache (a pass without it would read as 0 tokens)
        const char* length = phase == "decode" ? "kv_len" : "seq";
        expect(p.contains(length), std::string("$.pass.") + length, "an integer >= 0 (the pass's length)",
               p.value(length, nlohmann::json(nullptr)));
    }
    if (j.contains("end_to_end")) {
        expect(j["end_to_end"].is_object(), "$.end_to_end", "an object", j["end_to_end"]);
        const auto& e = j["end_to_end"];
        if (e.contains("time") && !e["time"].is_null()) {
            expect(e["time"].is_object(), "$.end_to_end.time", "an object or null", e["time"]);
            expect_time(e["time"].contains("median_ms") ? e["time"]["median_ms"] : nlohmann::json(nullptr),
                        "$.end_to_end.time.median_ms");
        }
    }
    if (j.contains("device") && j["device"].is_object())
        for (const char* k : {"name", "backend"})
            if (j["device"].contains(k))
                expect(j["device"][k].is_string(), std::string("$.device.") + k, "a string", j["device"][k]);
    if (j.contains("timing")) expect(j["timing"].is_object(), "$.timing", "an object", j["timing"]);
    if (j.contains("device")) {
        const auto& d = j["device"];
        expect(d.is_object(), "$.device", "an object", d);
        if (d.contains("threads"))
            expect(d["threads"].is_number_integer() && d["threads"].get<std::int64_t>() >= 0 &&
                       d["threads"].get<std::int64_t>() <= 4096,
                   "$.device.threads", "an integer from 0 to 4096", d["threads"]);
        if (d.contains("ceilings")) {
            const auto& ce = d["ceilings"];
            expect(ce.is_object(), "$.device.ceilings", "an object", ce);
            if (ce.contains("peak_gflops")) {
                expect(ce["peak_gflops"].is_object(), "$.device.ceilings.peak_gflops", "an object", ce["peak_gflops"]);
                for (auto it = ce["peak_gflops"].begin(); it != ce["peak_gflops"].end(); ++it)
                    expect(it.value().is_number(), "$.device.ceilings.peak_gflops." + it.key(), "a number", it.value());
            }
        }
    }
    for (std::size_t i = 0; i < j["layers"].size(); ++i) {
        const auto& l = j["layers"][i];
        const std::string at = "$.layers[" + std::to_string(i) + "]";
        expect(l.is_object(), at, "an object", l);
        // counts are non-negative integers that fit in int64 (the report writes them so)
        for (const char* k : {"flops", "bytes", "macs", "executed_macs"})
            if (l.contains(k) && !l[k].is_null())
                expect(l[k].is_number() && std::isfinite(l[k].get<double>()) && l[k].get<double>() >= 0 &&
                           l[k].get<double>() < 9.2e18,
                       at + "." + k, "a count (a non-negative integer below 2^63)", l[k]);
        expect(l.contains("name") && l["name"].is_string(), at + ".name", "a string", l.value("name", nlohmann::json(nullptr)));
        if (l.contains("bound")) expect(l["bound"].is_string() || l["bound"].is_null(), at + ".bound", "a string or null", l["bound"]);
        if (l.contains("roofs")) {
            expect(l["roofs"].is_object() || l["roofs"].is_null(), at + ".roofs", "an object or null", l["roofs"]);
            if (l["roofs"].is_object())
                for (const char* k : {"compute_gflops", "bandwidth_gbs"})
                    if (l["roofs"].contains(k))
                        expect(l["roofs"][k].is_number(), at + ".roofs." + k, "a number", l["roofs"][k]);
        }
        if (l.contains("time")) {
            const auto& t = l["time"];
            expect(t.is_object() || t.is_null(), at + ".time", "an object or null", t);
            if (t.is_object() && t.contains("disturbed"))
                expect(t["disturbed"].is_boolean(), at + ".time.disturbed", "true or false", t["disturbed"]);
            if (t.is_object())
                for (const char* k : {"median_ms", "ci95_low_ms", "ci95_high_ms"})
                    expect_time(t.contains(k) ? t[k] : nlohmann::json(nullptr), at + ".time." + k);
        }
    }
}

}  // namespace

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

compare_run load_run(const std::string& path) {
    const std::string text = core::read_regular_file(path, "\"" + path + "\"");
    compare_run r;
    core::check_json_text(text, "\"" + core::printable(path) + "\"");
    try {
        r.report = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw core::error("\"" + path + "\" is not valid JSON: " + core::without_json_exception_tag(e.what()));
    }
    const bool prediction = str(r.report, "schema") == "ridgeline.prediction/1";
    if (!prediction && str(r.report, "schema").rfind("ridgeline.profile/", 0) != 0)
        throw core::error("\"" + path + "\" is not a ridgeline profile report (schema \"" + str(r.report, "schema") +
                                 "\"; write one with `ridgeline profile --format json --output FILE`)");
    if (const std::string schema = str(r.report, "schema");
        !prediction && schema != "ridgeline.profile/1" && schema != "ridgeline.profile/2")
        throw core::error("\"" + path + "\" is a profile report of a schema this ridgeline does not know (\"" +
                                 schema + "\"; it reads ridgeline.profile/1 and /2)");
    if (!r.report.contains("layers") || !r.report["layers"].is_array())
        throw core::error("\"" + path + "\" has no layers");
    check_fields(path, r.report);
    // every string of the report as it will be shown: a name with control characters (a hand-edited or foreign
    // file) must not reach a terminal raw; names compared across runs are escaped alike
    sanitize_strings(r.report);
    const std::string device = r.report.contains("device") ? str(r.report["device"], "backend") : "";
    const auto threads = r.report.contains("device") && r.report["device"].contains("threads")
                             ? r.report["device"]["threads"].get<int>()
                             : 0;
    // the dtype is named where it is not fp32, so a compare of one model in two dtypes says which is which
    const std::string dtype = r.report.contains("dtype") && r.report["dtype"].is_string() ? str(r.report, "dtype") : "";
    r.label = core::printable(std::filesystem::path(path).stem().string()) + " (" + device +
              (threads > 0 ? ", " + counted(threads, "thread") : "") + (!dtype.empty() && dtype != "fp32" ? ", " + dtype : "") +
              (prediction ? ", predicted" : "") + ")";
    return r;
}

namespace {

/// Throws core::error unless every run profiles the same work as the baseline: the same model, the same layer for a
/// one-layer profile, the same transformer pass.
void check_same_work(const std::vector<compare_run>& runs) {
    const std::string model = str(runs[0].report, "model");
    for (const auto& r : runs)
        if (str(r.report, "model") != model)
            throw core::error("compare: \"" + r.label + "\" profiles model \"" + str(r.report, "model") +
                                     "\", the baseline \"" + model + "\"");
    // every one-layer profile is the model "layer": its source ("layer:linear:in_features=256,...") says which
    const std::string source = str(runs[0].report, "source");
    if (model == "layer")
        for (const auto& r : runs)
            if (str(r.report, "source") != source)
                throw core::error("compare: \"" + r.label + "\" profiles " + str(r.report, "source") +
                                         ", the baseline " + source);
    // a transformer's pass (phase, batch, tokens) is the work itself: the layers of two passes have the same names
    // and do different work, so their times are not a speedup. A report written before reports named their pass
    // has none, and is compared as before
    std::string pass;
    const compare_run* with = nullptr;
    for (const auto& r : runs) {
        const std::string p = detail::pass_text(r.report);
        if (p.empty()) continue;
        if (!with) {
            pass = p;
            with = &r;
        } else if (p != pass) {
            throw core::error("compare: \"" + r.label + "\" is a " + p + ", \"" + with->label + "\" a " + pass +
                              ": the same layers do other work (compare one pass on other devices, threads or dtypes)");
        }
    }
    // the same names must do the same work: two configs saved under one name (hidden_size 64 and 512), or one model
    // at two batch sizes, have layers of the same names whose FLOPs differ (FLOPs do not depend on the dtype)
    std::map<std::string, const nlohmann::json*> base;
    for (const auto& l : runs[0].report["layers"]) base[str(l, "name")] = &l;
    for (std::size_t i = 1; i < runs.size(); ++i)
        for (const auto& l : runs[i].report["layers"]) {
            const auto it = base.find(str(l, "name"));
            if (it == base.end()) continue;
            const double f = num(l, "flops"), b = num(*it->second, "flops");
            if (std::isfinite(f) && std::isfinite(b) && f != b)
                throw core::error("compare: layer \"" + core::printable(it->first) + "\" does " + with_commas(static_cast<std::int64_t>(f)) +
                                  " FLOPs in \"" + runs[i].label + "\", " + with_commas(static_cast<std::int64_t>(b)) + " in the baseline \"" +
                                  runs[0].label + "\": other work under the same name (compare one model at one size)");
        }
}

/// What compare reads of every run: its layers by name, its ceilings and its cache state (for the predicted
/// speedups, predict's method).
struct compared_runs {
    const std::vector<compare_run>& runs;
    std::string dtype;
    bool baseline_predicted = false;
    std::vector<std::map<std::string, const nlohmann::json*>> by_name;
    std::vector<std::optional<backend_api::ceilings>> ceilings;
    std::vector<bool> cold;
};

compared_runs read_runs(const std::vector<compare_run>& runs) {
    compared_runs cr{runs, {}, false, {}, {}, {}};
    cr.by_name.resize(runs.size());
    for (std::size_t i = 0; i < runs.size(); ++i)
        for (const auto& l : runs[i].report["layers"]) cr.by_name[i][str(l, "name")] = &l;
    // each run's ceilings and cache state, for the predicted speedups (predict's method)
    cr.dtype = str(runs[0].report, "dtype").empty() ? std::string("fp32") : str(runs[0].report, "dtype");
    cr.ceilings.resize(runs.size());
    cr.cold.assign(runs.size(), false);
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto& j = runs[i].report;
        cr.cold[i] = j.contains("timing") && str(j["timing"], "mode") == "cold";
        if (j.contains("device") && j["device"].is_object() && j["device"].contains("ceilings") &&
            j["device"]["ceilings"].is_object()) {
            try {
                cr.ceilings[i] = profiler::ceilings_from_json(j["device"]["ceilings"]);
            } catch (const core::error&) {
            }
        }
    }
    cr.baseline_predicted = str(runs[0].report, "schema") == "ridgeline.prediction/1";
    return cr;
}

/// The baseline's layer `base` next to the same layer of every run: each run's time and, but for the baseline,
/// its speedup, verdict and predicted speedup.
nlohmann::json compare_layer(const nlohmann::json& base, const std::string& name, const compared_runs& cr) {
    const auto& runs = cr.runs;
    const auto& by_name = cr.by_name;
    const auto& ceilings = cr.ceilings;
    const auto& cold = cr.cold;
    const std::string& dtype = cr.dtype;
    const bool baseline_predicted = cr.baseline_predicted;
        const double b_med = num(base["time"], "median_ms");
        const double b_lo = num(base["time"], "ci95_low_ms"), b_hi = num(base["time"], "ci95_high_ms");
        const std::string b_bound = str(base, "bound");
        nlohmann::json entry = {{"name", name}, {"op", str(base, "op")}, {"flops", base.value("flops", 0LL)},
                                {"bytes", base.value("bytes", 0LL)}};
        nlohmann::json per = nlohmann::json::array();
        for (std::size_t i = 0; i < runs.size(); ++i) {
            const nlohmann::json& l = *by_name[i].at(name);
            const double med = num(l["time"], "median_ms");
            const double lo = num(l["time"], "ci95_low_ms"), hi = num(l["time"], "ci95_high_ms");
            nlohmann::json r = {{"median_ms", med}, {"ci95_low_ms", lo}, {"ci95_high_ms", hi},
                                {"roof_fraction", l.contains("roof_fraction") ? l["roof_fraction"] : nlohmann::json(nullptr)},
                                {"bound", l.contains("bound") ? l["bound"] : nlohmann::json(nullptr)}};
            if (i > 0) {
                const double speedup = b_med / med;
                r["speedup"] = speedup;
                const bool overlap = lo <= b_hi && b_lo <= hi;
                r["verdict"] = to_string(overlap ? compare_verdict::same
                                         : speedup > 1 ? compare_verdict::faster
                                                       : compare_verdict::slower);
                // a time that other work disturbed measures the neighbours as much as the layer
                if (disturbed(base) || disturbed(l)) {
                    r["verdict"] = to_string(compare_verdict::not_comparable);
                    r["speedup"] = nullptr;
                }
                // the method of `ridgeline predict` (core::predict_time, its inputs from prediction_input_for), from
                // the baseline's time and roofs and the run's ceilings; without them, the roofs the run judged the
                // layer against
                core::prediction_input in;
                if (ceilings[i]) {
                    in = prediction_input_for(base, detail::judged_roofs(base), cold[0], *ceilings[i], dtype, cold[i]);
                } else {
                    in.flops = static_cast<std::int64_t>(std::max(0.0, detail::executed_flops(base)));
                    in.bytes = static_cast<std::int64_t>(std::max(0.0, num(base, "bytes")));
                    in.median_ms = b_med;
                    in.ci95_low_ms = b_lo;
                    in.ci95_high_ms = b_hi;
                    in.source = detail::judged_roofs(base);
                    in.target = detail::judged_roofs(l);
                }
                // a prediction as the baseline has no measured time to predict from: no column of predictions of a
                // prediction (it would read 1.00x against the device it was predicted for)
                const core::prediction pr = baseline_predicted ? core::prediction{} : core::predict_time(in);
                r["predicted_speedup"] = !baseline_predicted && pr.rule != core::prediction_rule::none && pr.time_ms > 0
                                             ? nlohmann::json(b_med / pr.time_ms)
                                             : nlohmann::json(nullptr);
                r["bound_changed"] = str(l, "bound") != b_bound;
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
    auto timed = [](const nlohmann::json* l) { return l->contains("time") && l->at("time").is_object(); };
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
    const std::string model = str(runs[0].report, "model");
    const compared_runs cr = read_runs(runs);
    nlohmann::json out = {{"schema", "ridgeline.compare/1"}, {"model", model}};
    nlohmann::json jruns = nlohmann::json::array();
    for (const auto& r : runs)
        jruns.push_back({{"label", r.label},
                         {"device", r.report.value("device", nlohmann::json::object())},
                         {"dtype", str(r.report, "dtype")},
                         {"batch", r.report.value("batch", 0)},
                         {"cache", r.report.contains("timing") ? str(r.report["timing"], "mode") : ""},
                         {"predicted", str(r.report, "schema") == "ridgeline.prediction/1"}});
    out["runs"] = jruns;
    for (const auto& r : runs)  // the pass of the runs that name one (check_same_work: the same for all)
        if (!detail::pass_text(r.report).empty()) {
            out["pass"] = r.report["pass"];
            break;
        }
    nlohmann::json layers = nlohmann::json::array();
    nlohmann::json left_out = nlohmann::json::array();  // timed in the baseline, not in every other run
    for (const auto& base : runs[0].report["layers"]) {
        const std::string name = str(base, "name");
        if (!base.contains("time") || !base["time"].is_object()) continue;
        bool everywhere = true;
        for (std::size_t i = 1; i < runs.size(); ++i) {
            auto it = cr.by_name[i].find(name);
            everywhere = everywhere && it != cr.by_name[i].end() && it->second->contains("time") &&
                         it->second->at("time").is_object();
        }
        if (!everywhere) {
            left_out.push_back(name);
            continue;
        }
        layers.push_back(compare_layer(base, name, cr));
    }
    out["layers_left_out"] = left_out;
    if (layers.empty()) no_common_layer(cr);
    out["layers"] = layers;
    nlohmann::json e2e = nlohmann::json::array();
    for (const auto& r : runs) {
        const double ms = end_to_end_ms(r.report);  // null where not measured or disturbed
        e2e.push_back(std::isfinite(ms) ? nlohmann::json(ms) : nlohmann::json(nullptr));
    }
    out["end_to_end_ms"] = e2e;
    return out;
}

std::string compare_table(const nlohmann::json& c) {
    std::ostringstream o;
    const auto& runs = c["runs"];
    o << "compare " << c["model"].get<std::string>() << ": baseline " << runs[0]["label"].get<std::string>() << "\n";
    for (std::size_t i = 1; i < runs.size(); ++i) o << "  run " << i << ": " << runs[i]["label"].get<std::string>() << "\n";
    o << "\n";
    text_table t;
    t.add_column("layer", text_table::align::left);
    t.add_column("op", text_table::align::left);
    t.add_column("base", text_table::align::right);
    t.add_column("roof", text_table::align::right);
    for (std::size_t i = 1; i < runs.size(); ++i) {
        const std::string k = runs.size() > 2 ? std::to_string(i) : "";
        t.add_column("run" + k, text_table::align::right);
        t.add_column("roof" + k, text_table::align::right);
        t.add_column("speedup" + k, text_table::align::right);
        t.add_column("predicted" + k, text_table::align::right);
        t.add_column("bound" + k, text_table::align::left);
    }
    auto pct = [](const nlohmann::json& v) { return v.is_number() ? fixed(100 * v.get<double>(), 0) + "%" : std::string("-"); };
    int changed = 0;
    for (const auto& l : c["layers"]) {
        const auto& r = l["runs"];
        std::vector<std::string> row{l["name"].get<std::string>(), l["op"].get<std::string>(),
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
    o << "end to end:";
    for (std::size_t i = 0; i < e2e.size(); ++i)
        o << (i ? ", " : " ") << (e2e[i].is_number() ? time_ms(e2e[i].get<double>()) : std::string("-"));
    if (e2e.size() > 1 && e2e[0].is_number() && e2e[1].is_number())
        o << " (speedup " << fixed(e2e[0].get<double>() / e2e[1].get<double>(), 2) << "x)";
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
    return o.str();
}

chart compare_chart(const std::vector<compare_run>& runs) {
    chart c;
    c.title = "compare " + str(runs[0].report, "model");
    for (std::size_t s = 0; s < runs.size(); ++s) {
        const auto& j = runs[s].report;
        c.series.push_back(runs[s].label);
        if (j.contains("device") && j["device"].contains("ceilings")) {
            const auto& ce = j["device"]["ceilings"];
            for (auto it = ce["peak_gflops"].begin(); it != ce["peak_gflops"].end(); ++it)
                if (it.key() == str(j, "dtype")) {
                    chart_roof roof{it.key(), it.value().get<double>(), num(ce, "bandwidth_gbs"), static_cast<int>(s), 0.0, {}};
                    if (ce.contains("gemm_gflops") && ce["gemm_gflops"].is_object() && ce["gemm_gflops"].contains(it.key()) &&
                        ce["gemm_gflops"][it.key()].is_number() && ce["gemm_gflops"][it.key()].get<double>() < roof.peak_gflops)
                        roof.gemm_gflops = ce["gemm_gflops"][it.key()].get<double>();
                    std::vector<double> judged;
                    for (const auto& l : j["layers"])
                        if (l.contains("roofs") && l["roofs"].is_object()) judged.push_back(num(l["roofs"], "bandwidth_gbs"));
                    roof.cache_gbs = cache_levels(judged, roof.bandwidth_gbs);
                    c.roofs.push_back(roof);
                }
        }
        for (const auto& l : j["layers"]) {
            if (!l.contains("time") || !l["time"].is_object()) continue;
            const double flops = detail::executed_flops(l);
            const double bytes = num(l, "bytes");
            const double g = num(l, "achieved_gflops");
            if (!(flops > 0) || !(bytes > 0) || !(g > 0)) continue;
            c.points.push_back({str(l, "name"), flops / bytes, g, num(l["time"], "median_ms"),
                                core::parse_bound(str(l, "bound")),
                                static_cast<int>(s)});
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
