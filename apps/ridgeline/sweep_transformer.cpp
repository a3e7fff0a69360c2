// `ridgeline sweep` of a transformer's step (sweep_transformer.hpp).
#include "sweep_transformer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>

#include "ceilings_source.hpp"
#include "ridgeline/core/file.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/zoo.hpp"
#include "ridgeline/io/hf_config.hpp"
#include "ridgeline/profiler/profiler.hpp"
#include "ridgeline/profiler/registry.hpp"
#include "ridgeline/report/chart.hpp"
#include "ridgeline/report/compare.hpp"
#include "ridgeline/report/format.hpp"
#include "ridgeline/report/predict.hpp"
#include "ridgeline/report/profile.hpp"

namespace ridgeline::app {

namespace {

using i64 = std::int64_t;

/// The layer classes a decode step is read by: the projections and MLP, attention, the cache append, the rest.
const char* class_of(const core::layer_analysis& la) {
    const auto kind = core::kind_of(la.layer.op);
    if (kind == "linear") return "linear";
    if (kind == "attention") return "attention";
    if (kind == "kv_cache") return "kv_cache";
    return "other";
}
constexpr const char* classes[] = {"linear", "attention", "kv_cache", "other"};

/// Where one step spends its time: per bound, and per layer class and bound (ms).
struct time_split {
    double step_ms = std::nan("");
    std::string step_from;  // "end to end" or "sum of layers"
    std::map<std::string, double> by_bound;
    std::map<std::string, std::map<std::string, double>> by_class;
    [[nodiscard]] double total() const {
        double t = 0;
        for (const auto& [b, ms] : by_bound) t += ms;
        return t;
    }
    [[nodiscard]] double at(const char* bound) const { return by_bound.count(bound) ? by_bound.at(bound) : 0.0; }
    /// Compute leads: it takes more of the layers' time than memory and than the dispatches' fixed cost.
    [[nodiscard]] bool compute_bound() const { return at("compute") > at("memory") && at("compute") > at("overhead"); }
    [[nodiscard]] bool overhead_leads() const { return at("overhead") > at("memory") && at("overhead") >= at("compute"); }
    /// The share of the layers' time not judged compute, memory or overhead (ambiguous, mistrusted, disturbed).
    [[nodiscard]] double other() const {  // rounding can leave -1e-15 where nothing else is left: 0
        return std::max(0.0, total() - at("compute") - at("memory") - at("overhead"));
    }
    /// Whether the step's time and shares can be read: no more than 5% of its layers' time disturbed by other work
    /// (the timing protocol's own threshold for a sample), and for a prediction every layer predicted.
    [[nodiscard]] bool trusted() const { return total() > 0 && at("disturbed") <= 0.05 * total() && missing == 0; }
    int missing = 0;  // layers without a time (a prediction: not predicted)
};

struct point {
    i64 batch = 0, kv_len = 0, seq = 0, tokens = 0;  // tokens: what the step produces or reads (per step)
    core::cost totals;
    time_split measured, predicted;
    bool has_prediction = false;
    std::string state;  // "" or why the step has no time
};

/// The step's colour in the chart: the bound that takes most of the layers' time (compute, memory or overhead).
std::optional<core::bound_class> step_bound(const time_split& t) {
    if (!(t.total() > 0)) return std::nullopt;
    if (!t.trusted()) return core::bound_class::disturbed;
    if (t.compute_bound()) return core::bound_class::compute;
    return t.overhead_leads() ? core::bound_class::overhead : core::bound_class::memory;
}

std::string pct(double part, double whole) {
    return whole > 0 && std::isfinite(part) ? report::fixed(100 * part / whole, 0) + "%" : "-";
}

/// "memory 71%": a class's leading bound and its share of the step's layer time.
std::string class_cell(const time_split& t, const std::string& cls) {
    const auto it = t.by_class.find(cls);
    if (it == t.by_class.end()) return "-";
    double sum = 0, best = -1;
    std::string lead;
    for (const auto& [b, ms] : it->second) {
        sum += ms;
        if (ms > best) {
            best = ms;
            lead = b;
        }
    }
    return lead + " " + pct(sum, t.total());
}

time_split split_of(const profiler::profile_result& r) {
    time_split t;
    for (const auto& p : r.layers) {
        if (!p.has_time() || !p.roofline) continue;
        const std::string b(to_string(p.roofline->bound));
        t.by_bound[b] += p.time->stats.median;
        t.by_class[class_of(p.analysis)][b] += p.time->stats.median;
    }
    if (r.end_to_end && r.end_to_end_state == profiler::run_state::measured) {
        t.step_ms = r.end_to_end->stats.median;
        t.step_from = "end to end";
    } else {
        t.step_ms = r.sum_of_layers_ms;
        t.step_from = "sum of layers";
    }
    return t;
}

time_split split_of(const nlohmann::json& prediction, const core::model_analysis& a) {
    std::map<std::string, const core::layer_analysis*> by_name;
    for (const auto& la : a.layers) by_name[la.layer.name] = &la;
    time_split t;
    for (const auto& l : prediction.value("layers", nlohmann::json::array())) {
        const std::string name = l.value("name", "");
        if (!by_name.count(name)) continue;
        if (!l.contains("time") || !l["time"].is_object()) {
            ++t.missing;
            continue;
        }
        const double ms = l["time"].value("median_ms", 0.0);
        const std::string b = l.value("bound", "none");
        t.by_bound[b] += ms;
        t.by_class[class_of(*by_name[name])][b] += ms;
    }
    const auto& e = prediction.value("end_to_end", nlohmann::json::object());
    t.step_ms = e.contains("time") && e["time"].is_object() ? e["time"].value("median_ms", std::nan("")) : std::nan("");
    t.step_from = "predicted";
    return t;
}

core::model build(const transformer_sweep_options& s, i64 batch, i64 kv_len) {
    core::zoo_request q;
    q.batch = batch;
    q.phase = s.phase == "decode" ? core::transformer_phase::decode : core::transformer_phase::prefill;
    q.phase_given = true;
    if (q.phase == core::transformer_phase::decode) q.kv_len = kv_len;
    q.seq = s.seq;
    if (!s.hf_config.empty()) {
        const core::transformer_config c = io::read_hf_config(s.hf_config);
        return core::build_transformer(c, core::transformer_run_of(c.name, q, io::default_sequence(c)));
    }
    return core::build_zoo_model(s.model, q);
}

std::string tokens_per_s(const point& p, const time_split& t) {
    return t.step_ms > 0 && std::isfinite(t.step_ms) ? report::fixed(static_cast<double>(p.tokens) / (t.step_ms * 1e-3), 1)
                                                     : "-";
}

/// Whether a point's step can be read: it has a time, was not disturbed and, for a prediction, every layer predicted.
bool readable(const point& p, bool predicted) {
    const time_split& t = predicted ? p.predicted : p.measured;
    return p.state.empty() && (!predicted || p.has_prediction) && t.trusted();
}

std::optional<std::size_t> turn(const std::vector<point>& pts, bool predicted) {
    std::vector<std::optional<bool>> leads;
    for (const auto& p : pts)
        leads.push_back(readable(p, predicted) ? std::optional<bool>((predicted ? p.predicted : p.measured).compute_bound())
                                               : std::nullopt);
    return compute_turn(leads);
}

/// The sizes of the steps that cannot be read (disturbed by other work, or not all predicted), "1, 16"; "" if none.
std::string untrusted_sizes(const std::vector<point>& pts, bool predicted, bool over_batch) {
    std::string out;
    for (const auto& p : pts) {
        const time_split& t = predicted ? p.predicted : p.measured;
        if (!p.state.empty() || (predicted && !p.has_prediction) || t.trusted()) continue;
        out += (out.empty() ? "" : ", ") + std::to_string(over_batch ? p.batch : p.kv_len);
    }
    return out;
}

std::string turn_text(const std::vector<point>& pts, bool predicted, bool over_batch, const std::string& where) {
    const auto i = turn(pts, predicted);
    const std::string axis = over_batch ? "batch" : "--kv-len";
    const std::string untrusted = untrusted_sizes(pts, predicted, over_batch);
    const std::string caveat =
        untrusted.empty() ? ""
                          : "; not read: " + axis + " " + untrusted +
                                (predicted ? " (not every layer predicted: their source steps were disturbed)"
                                           : " (other work disturbed more than 5% of the step's layer time; a quieter "
                                             "machine or a rerun helps)");
    // the last size whose step can be read: what "up to" speaks of
    const point* last_read = nullptr;
    for (const auto& p : pts)
        if (readable(p, predicted)) last_read = &p;
    if (!i && !last_read)
        return "no step " + where + " can be read" + caveat + ": no bound is named";
    if (!i) {
        const point& last = *last_read;
        const time_split& t = predicted ? last.predicted : last.measured;
        const auto at = [&](const char* k) { return t.at(k); };
        // the step is named by what takes most of its time at the last size: on a small model the fixed cost of
        // each dispatch can outweigh both memory and compute
        const bool overhead = t.overhead_leads();
        std::string led;  // sizes where compute led before the lead went back: named, so "stays" is not read as "always"
        for (const auto& q : pts) {
            const time_split& qt = predicted ? q.predicted : q.measured;
            if (readable(q, predicted) && qt.compute_bound())
                led += (led.empty() ? "" : ", ") + std::to_string(over_batch ? q.batch : q.kv_len);
        }
        if (!led.empty()) led = "; compute led at " + axis + " " + led + " only";
        return std::string("the step stays ") + (overhead ? "overhead-bound " : "memory-bound ") + where + " up to " +
               axis + " " + std::to_string(over_batch ? last.batch : last.kv_len) +
               " (compute does not lead memory and overhead at the last size: " +
               (overhead ? "overhead " + pct(at("overhead"), t.total()) : "memory " + pct(at("memory"), t.total())) +
               led + ")" + caveat;
    }
    const point& p = pts[*i];
    const time_split& t = predicted ? p.predicted : p.measured;
    return "the step turns compute-bound " + where + " at " + axis + " " +
           std::to_string(over_batch ? p.batch : p.kv_len) + " (compute " + pct(t.at("compute"), t.total()) +
           " of the layers' time, memory " + pct(t.at("memory"), t.total()) + ")" + caveat;
}

std::string table(const std::string& subject, const std::vector<point>& pts, bool over_batch, const std::string& target) {
    report::text_table t;
    using al = report::text_table::align;
    t.add_column("batch", al::right);
    t.add_column("kv_len", al::right);
    t.add_column("step", al::right);
    t.add_column("tokens/s", al::right);
    for (const char* c : {"compute", "memory", "overhead", "other"}) t.add_column(c, al::right);
    for (const char* c : classes) t.add_column(c, al::left);
    if (!target.empty()) {
        t.add_column("predicted step", al::right);
        t.add_column("tokens/s", al::right);
        t.add_column("compute", al::right);
    }
    for (const auto& p : pts) {
        const time_split& m = p.measured;
        std::vector<std::string> row{std::to_string(p.batch), std::to_string(p.kv_len)};
        if (!p.state.empty()) {
            row.push_back(p.state);
            t.add_row(row);
            continue;
        }
        row.push_back(report::time_ms(m.step_ms) + (m.step_from == "end to end" ? "" : "+") + (m.trusted() ? "" : "!"));
        row.push_back(tokens_per_s(p, m));
        for (const char* b : {"compute", "memory", "overhead"}) row.push_back(pct(m.at(b), m.total()));
        row.push_back(pct(m.other(), m.total()));
        for (const char* c : classes) row.push_back(class_cell(m, c));
        if (!target.empty()) {
            row.push_back(p.has_prediction ? report::time_ms(p.predicted.step_ms) + (p.predicted.trusted() ? "" : "!") : "-");
            row.push_back(p.has_prediction ? tokens_per_s(p, p.predicted) : "-");
            row.push_back(p.has_prediction ? pct(p.predicted.by_bound.count("compute") ? p.predicted.by_bound.at("compute") : 0.0,
                                                 p.predicted.total())
                                           : "-");
        }
        t.add_row(row);
    }
    std::ostringstream o;
    o << "sweep of " << subject << "\n\n" << t.render() << "\n";
    o << "step: the end-to-end median (+: the sum of the layers' medians, where the pass was not measured clean; !: "
         "not to be trusted, other work disturbed more than 5% of its layers' time, or a prediction lacks layers); "
         "tokens/s: the tokens of a step (decode: one per sequence) over its time; compute/memory/overhead: shares of "
         "the layers' time by bound (other: ambiguous, mistrusted or disturbed); a class column: its leading bound and "
         "its share of the layers' time\n";
    o << turn_text(pts, false, over_batch, "here") << "\n";
    if (!target.empty()) o << turn_text(pts, true, over_batch, "on " + target + " (predicted from datasheet peaks and op-class "
                                                                "models, not measured)") << "\n";
    return o.str();
}

nlohmann::json split_json(const time_split& t) {
    return {{"step_ms", std::isfinite(t.step_ms) ? nlohmann::json(t.step_ms) : nlohmann::json(nullptr)},
            {"step_from", t.step_from},
            {"by_bound_ms", t.by_bound},
            {"by_class_ms", t.by_class},
            {"trusted", t.trusted()},
            {"layers_without_time", t.missing}};
}

/// What cannot be trusted in the sweep, one line each (stderr and the JSON's "warnings").
std::vector<std::string> sweep_warnings(const std::vector<point>& pts, bool over_batch, bool with_target) {
    std::vector<std::string> w;
    const std::string axis = over_batch ? "batch" : "--kv-len";
    if (const std::string u = untrusted_sizes(pts, false, over_batch); !u.empty())
        w.push_back("the steps at " + axis + " " + u + " were disturbed by other work (more than 5% of their layers' "
                    "time): their times and shares are not to be trusted and no bound is read from them; a quieter "
                    "machine or a rerun helps");
    if (with_target)
        if (const std::string u = untrusted_sizes(pts, true, over_batch); !u.empty())
            w.push_back("the predicted steps at " + axis + " " + u + " lack the layers whose source times were disturbed: "
                        "their sums are too low and no bound is read from them");
    return w;
}

}  // namespace

std::optional<std::size_t> compute_turn(const std::vector<std::optional<bool>>& compute_leads) {
    std::optional<std::size_t> at;
    for (std::size_t i = 0; i < compute_leads.size(); ++i) {
        if (!compute_leads[i]) continue;  // not readable: neither starts nor ends a run
        if (!*compute_leads[i]) at.reset();
        else if (!at) at = i;
    }
    return at;
}

std::vector<std::int64_t> parse_size_list(const std::string& text, const std::string& flag, std::int64_t minimum) {
    std::vector<std::int64_t> out;
    const std::string shown = core::printable(text);
    std::size_t start = 0;
    for (;;) {  // decimal sizes between commas: "1,,2", "5,", " 1", "+2" and "0x10" are not such a list
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string item = text.substr(start, comma - start);
        std::int64_t v = 0;
        const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (item.empty() || ec != std::errc() || end != item.data() + item.size() || (item.size() > 1 && item[0] == '0') ||
            v < minimum || v > (std::int64_t{1} << 40))
            throw usage_error(flag + " \"" + shown + "\": \"" + core::printable(item) + "\" is not a size from " +
                              std::to_string(minimum) + " to 2^40 (expected e.g. 1,8,32)");
        out.push_back(v);
        if (comma == text.size()) break;
        start = comma + 1;
    }
    // the sweep runs its sizes in order and reads "up to" the last: sorted; a size twice is a slip
    std::sort(out.begin(), out.end());
    for (std::size_t i = 1; i < out.size(); ++i)
        if (out[i] == out[i - 1])
            throw usage_error(flag + " \"" + shown + "\": " + std::to_string(out[i]) + " is given twice");
    return out;
}

namespace {

/// One step of the sweep measured (and predicted on the target): its point filled, its marks on the chart, its JSON.
nlohmann::json measure_step(point& p, const core::model_analysis& a, profiler::selection& sel,
                            const profiler::profile_options& o, const std::optional<report::prediction_target>& target,
                            bool decode, bool over_batch, bool quiet, report::chart& chart) {
    if (!quiet) spdlog::info("batch {}{}", p.batch, decode ? ", kv_len " + std::to_string(p.kv_len) : "");
    const profiler::profile_result r = profiler::profile_model(a, *sel.chosen, o);
    p.measured = split_of(r);
    if (!(p.measured.step_ms > 0)) p.state = "not measured";
    const std::string label = "batch " + std::to_string(p.batch) + (over_batch ? "" : ", kv " + std::to_string(p.kv_len));
    const double exec = static_cast<double>(p.totals.executed_flops()), bytes = static_cast<double>(p.totals.bytes);
    if (p.state.empty() && bytes > 0 && exec > 0)
        chart.points.push_back({label, exec / bytes, exec / (p.measured.step_ms * 1e6), p.measured.step_ms,
                                step_bound(p.measured), 0});
    nlohmann::json jp = {{"batch", p.batch}, {"kv_len", p.kv_len}, {"seq", p.seq}, {"tokens", p.tokens},
                         {"flops", p.totals.flops}, {"executed_flops", p.totals.executed_flops()},
                         {"bytes", p.totals.bytes}, {"measured", split_json(p.measured)}};
    if (target && p.state.empty()) {
        try {
            const nlohmann::json pred = report::predict_json(report::compare_run{label, report::profile_json(r, {})}, *target);
            p.predicted = split_of(pred, a);
            p.has_prediction = std::isfinite(p.predicted.step_ms);
            if (p.has_prediction && exec > 0 && bytes > 0)
                chart.points.push_back({label, exec / bytes, exec / (p.predicted.step_ms * 1e6), p.predicted.step_ms,
                                        step_bound(p.predicted), 1});
            jp["predicted"] = split_json(p.predicted);
        } catch (const std::exception& e) {
            jp["predicted"] = nullptr;
            jp["prediction_error"] = e.what();
        }
    }
    return jp;
}

/// The sweep's table or JSON through `out`, and its chart to --svg / --html.
void write_sweep(const transformer_sweep_options& s, const output_options& out, const std::string& subject,
                 const std::vector<point>& pts, const nlohmann::json& jpoints, bool over_batch,
                 const std::optional<report::prediction_target>& target, const profiler::selection& sel,
                 const report::chart& chart) {
    const std::string text = table(subject, pts, over_batch, target ? target->short_label : "");
    if (out.format() == output_format::json) {
        auto turn_json = [&](bool predicted) -> nlohmann::json {
            const auto i = turn(pts, predicted);
            if (!i) return nullptr;
            return {{"batch", pts[*i].batch}, {"kv_len", pts[*i].kv_len}};
        };
        nlohmann::json j = {{"schema", "ridgeline.transformer_sweep/1"},
                            {"subject", subject},
                            {"phase", s.phase},
                            {"over", over_batch ? "batch" : "kv_len"},
                            {"dtype", s.dtype},
                            {"command_line", command_line()},
                            {"device", report::device_json(sel.chosen->device())},
                            {"points", jpoints},
                            {"turns_compute_bound_at", turn_json(false)},
                            {"warnings", sweep_warnings(pts, over_batch, target.has_value())}};
        if (target) {
            j["target"] = {{"label", target->label}, {"datasheet", target->datasheet},
                           {"turns_compute_bound_at", turn_json(true)},
                           {"note", target->datasheet ? "predicted from datasheet peaks and op-class models, not measured"
                                                      : "predicted from the target's measured ceilings, not measured there"}};
        }
        out.emit(j.dump(2) + "\n");
    } else {
        out.emit(text);
    }
    out.echo_table([&] { return text; });
    if (!s.svg_path.empty() || !s.html_path.empty()) {
        const std::string svg = report::render_svg(chart);
        if (!s.svg_path.empty()) core::write_file_atomic(s.svg_path, svg);
        if (!s.html_path.empty())
            core::write_file_atomic(s.html_path, report::render_html("sweep of " + subject, svg,
                                                                       "<pre>" + report::pre_escape(text) + "</pre>"));
    }
}

}  // namespace

int run_transformer_sweep(const transformer_sweep_options& s, const output_options& out) {
    const bool decode = s.phase == "decode";
    if (decode && s.kv_lens.empty()) throw usage_error("sweep --phase decode needs --kv-len (one size, or a list)");
    if (!decode && !s.kv_lens.empty()) throw usage_error("--kv-len applies to --phase decode");
    if (s.batches.size() > 1 && s.kv_lens.size() > 1)
        throw usage_error("sweep over --batch or over --kv-len, not both (one of them a single size)");
    const bool over_batch = s.kv_lens.size() <= 1;
    const std::vector<i64> kv = s.kv_lens.empty() ? std::vector<i64>{0} : s.kv_lens;
    const core::dtype dt = core::parse_dtype(s.dtype);
    for (const std::string* path : {&out.output, &s.svg_path, &s.html_path})
        if (!path->empty()) core::check_output_path(*path);
    std::optional<report::prediction_target> target;
    if (!s.to.empty()) target = report::load_target(s.to);
    if (!s.hf_config.empty()) {  // what reading the config assumed, said once (a warning: under --quiet too)
        std::vector<std::string> notes;
        (void)io::read_hf_config(s.hf_config, &notes);
        for (const auto& n : notes) spdlog::warn("{}", n);
    }
    // every step built and counted first: a bad size or config fails now, not after the ceilings
    std::vector<point> pts;
    std::vector<core::model_analysis> analyses;
    for (i64 b : s.batches)
        for (i64 l : kv) {
            analyses.push_back(core::analyze(build(s, b, l), dt));
            point p;
            p.batch = b;
            p.kv_len = l;
            p.seq = analyses.back().run ? analyses.back().run->seq : 0;
            p.tokens = decode ? b : b * p.seq;
            p.totals = analyses.back().totals;
            pts.push_back(p);
        }
    auto sel = profiler::select_backend(s.device, s.threads);
    if (!sel.notice.empty() && !out.quiet) spdlog::info("{}", sel.notice);
    for (const auto& a : analyses) profiler::require_kv_cache_fits(a, *sel.chosen, s.max_memory_bytes);
    profiler::profile_options o;
    o.max_memory_bytes = s.max_memory_bytes;
    o.timing = s.quick ? backend_api::timing_options::quick() : backend_api::timing_options{};
    o.timing.cache = s.cache == "cold" ? backend_api::cache_mode::cold : backend_api::cache_mode::hot;
    try {
        o.ceilings = obtain_ceilings(*sel.chosen, s.recalibrate, s.quick, out.quiet).roofs_for_verdicts();
    } catch (const backend_api::unsupported& e) {
        spdlog::warn("no roofline verdicts: {}", e.what());
    }
    const std::string subject = analyses.front().model_name + " " + (decode ? "decode" : "prefill") + " on " + sel.chosen->name();
    report::chart chart;
    chart.title = "sweep of " + subject;
    chart.series.push_back(sel.chosen->name());
    chart.connect = true;
    chart.label_top = static_cast<int>(pts.size());
    if (o.ceilings)
        if (auto g = o.ceilings->compute_roof_gflops(dt))
            chart.roofs.push_back({std::string(core::to_string(dt)), *g, o.ceilings->bandwidth_gbs, 0, 0.0, {}});
    if (target) {
        chart.series.push_back(target->short_label + " (predicted)");
        if (auto g = target->ceilings.compute_roof_gflops(dt))
            chart.roofs.push_back({std::string(core::to_string(dt)), *g, target->ceilings.bandwidth_gbs, 1, 0.0, {}});
    }
    nlohmann::json jpoints = nlohmann::json::array();
    for (std::size_t i = 0; i < pts.size(); ++i)
        jpoints.push_back(measure_step(pts[i], analyses[i], sel, o, target, decode, over_batch, out.quiet, chart));
    for (const auto& w : sweep_warnings(pts, over_batch, target.has_value())) spdlog::warn("{}", w);
    write_sweep(s, out, subject, pts, jpoints, over_batch, target, sel, chart);
    if (std::none_of(pts.begin(), pts.end(), [](const point& p) { return p.state.empty(); }))
        throw core::error("no step could be measured on " + sel.chosen->name());
    return 0;
}

}  // namespace ridgeline::app
