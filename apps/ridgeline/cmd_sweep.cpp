// `ridgeline sweep`: one layer (or a whole model) over growing batch sizes, the points moving along the
// roofline, and a fit time = t0 + flops / throughput (least squares over the sizes) giving the fixed
// overhead t0 and the asymptotic throughput.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

#include "ceilings_source.hpp"
#include "cli_common.hpp"
#include "sweep_transformer.hpp"
#include "commands.hpp"
#include "ridgeline/core/file.hpp"
#include "ridgeline/profiler/profiler.hpp"
#include "ridgeline/profiler/registry.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/zoo.hpp"
#include "ridgeline/report/ceilings.hpp"
#include "ridgeline/report/chart.hpp"
#include "ridgeline/report/format.hpp"
#include "ridgeline/report/profile.hpp"

namespace ridgeline::app {

namespace {

/// One batch size: its profile in the record every report reads (profiler::layer_profile), so the sweep shows
/// the rates and %roof profile shows (report::shown_rates): none for a disturbed or mistrusted time, GFLOP/s from
/// the executed FLOPs. For a model the record is its end-to-end pass, counted as the whole model (totals).
struct sweep_point {
    std::int64_t batch = 0;
    profiler::layer_profile profile;

    [[nodiscard]] const core::cost& cost() const { return profile.analysis.cost; }
    [[nodiscard]] bool measured() const { return profile.has_time(); }
    [[nodiscard]] const backend_api::timing_result& time() const { return *profile.time; }
};

struct sweep_fit {
    bool valid = false;
    double t0_ms = 0;
    double throughput_gflops = 0;
    double r2 = 0;
};

/// Ordinary least squares of median time (ms) on executed FLOPs (as the rates count them), over the measured
/// points whose rate is shown (not disturbed by other work, not beating a roof).
sweep_fit fit(const std::vector<sweep_point>& pts) {
    std::vector<std::pair<double, double>> xy;
    for (const auto& p : pts)
        if (p.measured() && !report::shown_rates(p.profile).hidden)
            xy.emplace_back(static_cast<double>(p.cost().executed_flops()), p.time().stats.median);
    sweep_fit f;
    if (xy.size() < 2) return f;
    double mx = 0, my = 0;
    for (auto [x, y] : xy) {
        mx += x;
        my += y;
    }
    mx /= static_cast<double>(xy.size());
    my /= static_cast<double>(xy.size());
    double sxx = 0, sxy = 0, syy = 0;
    for (auto [x, y] : xy) {
        sxx += (x - mx) * (x - mx);
        sxy += (x - mx) * (y - my);
        syy += (y - my) * (y - my);
    }
    if (!(sxx > 0) || !(sxy > 0)) return f;
    const double slope = sxy / sxx;  // ms per FLOP
    f.valid = true;
    f.t0_ms = my - slope * mx;
    f.throughput_gflops = 1e-6 / slope;
    f.r2 = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1.0;
    return f;
}

std::vector<std::int64_t> parse_batches(const std::string& text) { return parse_size_list(text, "--batch", 1); }

struct sweep_command {
    std::string model, layer, batches = "1,8,32,128,512", device = "auto", dtype = "fp32", cache = "hot";
    std::string hf_config, phase, kv_lens, to, max_memory;
    std::optional<std::int64_t> seq;
    std::vector<std::string> inputs;
    int threads = 0;
    bool quick = false, recalibrate = false;
    std::string svg_path, html_path;
    output_options out;

    core::model build(std::int64_t b) const {
        if (!model.empty()) {
            std::optional<core::shape> in;
            if (!inputs.empty()) {
                in = core::parse_shape(inputs[0]);
                (*in)[0] = b;
            }
            return core::build_zoo_model(model, in, in ? std::nullopt : std::optional<std::int64_t>(b));
        }
        const core::op o = core::parse_op(layer);
        std::vector<core::shape> shapes;
        for (const auto& s : inputs) {
            core::shape sh = core::parse_shape(s);
            sh[0] = b;
            shapes.push_back(sh);
        }
        if (shapes.empty()) {
            if (const auto* l = std::get_if<core::linear>(&o))
                shapes.push_back(core::shape{b, l->in_features});
            else
                throw usage_error("--layer " + std::string(core::kind_of(o)) +
                                  " needs --input (its dimension 0 is replaced by each batch size)");
        }
        return core::single_layer_model(o, shapes, {}, "sweep");
    }

    /// A model's end-to-end pass as one record: its totals as the cost, judged against the roofs of its whole
    /// working set (the DRAM roof with a cold cache).
    static profiler::layer_profile whole_model(const core::model_analysis& a, backend_api::backend& b,
                                               const profiler::profile_options& o,
                                               const std::optional<backend_api::ceilings>& ceil, core::dtype dt) {
        auto mo = o;
        mo.per_layer = false;
        const auto r = profiler::profile_model(a, b, mo);
        profiler::layer_profile p;
        p.analysis = core::layer_analysis{{}, {}, {}, a.totals, {}};
        p.analysis.layer.name = a.model_name;
        p.state = r.end_to_end ? profiler::run_state::measured : r.end_to_end_state;
        p.reason = r.end_to_end_reason;
        if (!r.end_to_end) return p;
        p.time = *r.end_to_end;
        if (ceil) {
            core::roofs whole = profiler::roofs_for(a.layers.back(), dt, *ceil, o.timing.cache);
            whole.bandwidth_gbs = profiler::model_bandwidth_gbs(a, *ceil, o.timing.cache);  // not the sum's roof
            p.roofs_used = whole;
            p.roofline = profiler::judge(a.totals, *p.time, whole);
        } else if (p.time->disturbed) {
            p.roofline = profiler::judge(a.totals, *p.time, {});
        }
        return p;
    }

    int run() const {
        if (!phase.empty() || !hf_config.empty()) return run_transformer();
        if (!kv_lens.empty() || seq || !to.empty() || !max_memory.empty())
            throw usage_error(std::string(!kv_lens.empty() ? "--kv-len" : seq ? "--seq" : !to.empty() ? "--to" : "--max-memory") +
                              " applies to a transformer's sweep (--model NAME or --hf-config FILE with --phase)");
        if (model.empty() == layer.empty())
            throw usage_error(model.empty() ? "give --layer STRING or --model NAME" : "--model and --layer cannot be used together");
        const auto sizes = parse_batches(batches);
        for (const std::string* path : {&out.output, &svg_path, &html_path})
            if (!path->empty()) core::check_output_path(*path);  // fail now, not after the sweep
        const core::dtype dt = core::parse_dtype(dtype);
        // every batch size's model built and counted before anything is measured: a bad --layer, --input or
        // batch fails now, not after minutes of ceilings
        std::vector<core::model_analysis> analyses;
        for (std::int64_t b : sizes) analyses.push_back(core::analyze(build(b), dt));
        auto sel = profiler::select_backend(device, threads);
        if (!sel.notice.empty() && !out.quiet) spdlog::info("{}", sel.notice);
        profiler::profile_options o;
        o.timing = quick ? backend_api::timing_options::quick() : backend_api::timing_options{};
        o.timing.cache = cache == "cold" ? backend_api::cache_mode::cold : backend_api::cache_mode::hot;
        std::optional<backend_api::ceilings> ceil;
        try {
            ceil = obtain_ceilings(*sel.chosen, recalibrate, quick, out.quiet).roofs_for_verdicts();
        } catch (const backend_api::unsupported& e) {
            spdlog::warn("no roofline verdicts: {}", e.what());
        }
        o.ceilings = ceil;
        std::vector<sweep_point> pts;
        std::string name;
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            const std::int64_t b = sizes[i];
            if (!out.quiet) spdlog::info("batch {}", b);
            const core::model_analysis& a = analyses[i];
            name = a.model_name == "sweep" ? core::to_string(a.layers.at(0).layer.op) : a.model_name;
            sweep_point p;
            p.batch = b;
            if (!layer.empty()) {
                p.profile = profiler::profile_layer(a.layers.at(0), a, *sel.chosen, o);
            } else {
                p.profile = whole_model(a, *sel.chosen, o, ceil, dt);
            }
            pts.push_back(std::move(p));
        }
        const sweep_fit f = fit(pts);
        if (out.format() == output_format::json)
            out.emit(json_report(name, sel.chosen->device(), pts, f, ceil).dump(2) + "\n");
        else
            out.emit(table(name, pts, f));
        out.echo_table([&] { return table(name, pts, f); });
        if (!svg_path.empty() || !html_path.empty()) {
            report::chart c = chart(name, sel.chosen->name(), pts, ceil, dt, o.timing.cache);
            if (f.valid && f.throughput_gflops > 0) {  // the fitted time, drawn in the time panel
                c.fit_t0_ms = f.t0_ms;
                c.fit_gflops = f.throughput_gflops;
            }
            const std::string svg = report::render_svg(c);
            if (!svg_path.empty()) core::write_file_atomic(svg_path, svg);
            if (!html_path.empty())
                core::write_file_atomic(html_path, report::render_html("sweep of " + name + " on " + sel.chosen->name(), svg,
                                                                         "<pre>" + report::pre_escape(table(name, pts, f)) + "</pre>"));
        }
        // the report is written; like profile, a sweep with no time at all is an error for scripts
        if (std::none_of(pts.begin(), pts.end(), [](const sweep_point& p) { return p.measured(); }))
            throw core::error("no batch size could be measured on " + sel.chosen->name() +
                                     (pts.empty() || pts.front().profile.reason.empty() ? std::string()
                                                                                         : ": " + pts.front().profile.reason));
        return 0;
    }

    int run_transformer() const {
        if (!layer.empty()) throw usage_error("--phase sweeps a transformer: --model NAME or --hf-config FILE, not --layer");
        if (model.empty() == hf_config.empty())
            throw usage_error(model.empty() ? "give --model NAME or --hf-config FILE" : "--model and --hf-config cannot be used together");
        if (!inputs.empty()) throw usage_error("a transformer's sweep takes --batch, --seq and --kv-len, not --input");
        // every field named (a new one that is not set here is a warning), parsed in this order
        const transformer_sweep_options s{
            .model = model,
            .hf_config = hf_config,
            .phase = phase.empty() ? "prefill" : phase,
            .device = device,
            .dtype = dtype,
            .cache = cache,
            .to = to,
            .batches = parse_batches(batches),
            .kv_lens = kv_lens.empty() ? std::vector<std::int64_t>{} : parse_size_list(kv_lens, "--kv-len", 0),
            .seq = seq,
            .threads = threads,
            .quick = quick,
            .recalibrate = recalibrate,
            .max_memory_bytes = max_memory.empty() ? 0 : parse_bytes(max_memory),
            .svg_path = svg_path,
            .html_path = html_path};
        return run_transformer_sweep(s, out);
    }

    nlohmann::json json_report(const std::string& name, const backend_api::device_info& dev,
                               const std::vector<sweep_point>& pts, const sweep_fit& f,
                               const std::optional<backend_api::ceilings>& ceil) const {
        nlohmann::json j = {{"schema", "ridgeline.sweep/1"},
                            {"subject", name},
                            {"source", model.empty() ? "layer:" + layer : "zoo:" + model},
                            {"command_line", command_line()},
                            {"dtype", dtype},
                            {"device", report::device_json(dev)}};
        auto number_or_null = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
        nlohmann::json jp = nlohmann::json::array();
        for (const auto& p : pts) {
            const core::cost& c = p.cost();
            nlohmann::json e = {{"batch", p.batch}, {"flops", c.flops}, {"executed_flops", c.executed_flops()},
                                {"bytes", c.bytes}, {"macs", c.macs}, {"state", std::string(to_string(p.profile.state))},
                                {"reason", p.profile.reason}};
            auto ai = c.arithmetic_intensity();
            e["arithmetic_intensity"] = ai ? nlohmann::json(*ai) : nlohmann::json(nullptr);
            const report::layer_rates shown = report::shown_rates(p.profile);
            if (p.measured()) {
                e["time"] = report::time_json(p.time());
                e["achieved_gflops"] = number_or_null(shown.gflops);
            }
            if (p.profile.roofline) {
                e["bound"] = std::string(to_string(p.profile.roofline->bound));
                e["roof_fraction"] = number_or_null(shown.roof_fraction);
                e["roof_fraction_measured"] = number_or_null(shown.hidden ? std::nan("") : p.profile.roofline->roof_fraction);
            }
            jp.push_back(e);
        }
        j["points"] = jp;
        j["fit"] = f.valid ? nlohmann::json{{"t0_ms", f.t0_ms}, {"throughput_gflops", f.throughput_gflops}, {"r2", f.r2}}
                           : nlohmann::json(nullptr);
        if (ceil) j["device"]["ceilings"] = profiler::ceilings_json(*ceil);
        return j;
    }

    static report::chart chart(const std::string& name, const std::string& backend_name,
                               const std::vector<sweep_point>& pts, const std::optional<backend_api::ceilings>& ceil,
                               core::dtype dt, backend_api::cache_mode cache) {
        report::chart c;
        c.title = "sweep of " + name + " on " + backend_name;
        c.series.push_back(backend_name);
        c.connect = true;
        c.label_top = static_cast<int>(pts.size());
        const std::string dtype(core::to_string(dt));
        if (ceil)
            if (auto g = ceil->compute_roof_gflops(dt)) {
                report::chart_roof roof{dtype, *g, ceil->bandwidth_gbs, 0, 0.0, {}, 0.0};
                roof.dispatch_ms = ceil->dispatch_ms(cache == backend_api::cache_mode::cold);
                if (ceil->gemm_gflops.count(dtype) && ceil->gemm_gflops.at(dtype) < *g) roof.gemm_gflops = ceil->gemm_gflops.at(dtype);
                std::vector<double> judged;
                for (const auto& p : pts)
                    if (p.profile.roofline)
                        judged.push_back(profiler::roofs_for(core::layer_analysis{{}, {}, {}, p.cost(), {}}, dt, *ceil, cache).bandwidth_gbs);
                roof.caches = report::cache_roofs(*ceil, judged);
                c.roofs.push_back(roof);
            }
        for (const auto& p : pts) {
            const report::layer_rates shown = report::shown_rates(p.profile);
            if (!p.measured() || shown.hidden || p.cost().bytes <= 0 || p.cost().executed_flops() <= 0) continue;
            c.points.push_back({"batch " + std::to_string(p.batch),
                                static_cast<double>(p.cost().executed_flops()) / static_cast<double>(p.cost().bytes),
                                shown.gflops, p.time().stats.median,
                                p.profile.roofline ? std::optional(p.profile.roofline->bound) : std::nullopt, 0});
        }
        return c;
    }

    static std::string table(const std::string& name, const std::vector<sweep_point>& pts, const sweep_fit& f) {
        report::text_table t;
        using al = report::text_table::align;
        for (auto [h, a] : std::initializer_list<std::pair<const char*, al>>{
                 {"batch", al::right}, {"FLOPs", al::right}, {"bytes", al::right}, {"FLOP/B", al::right},
                 {"median", al::right}, {"GFLOP/s", al::right}, {"bound", al::left}, {"%roof", al::right}})
            t.add_column(h, a);
        for (const auto& p : pts) {
            auto ai = p.cost().arithmetic_intensity();
            std::vector<std::string> row{std::to_string(p.batch), report::si(static_cast<double>(p.cost().flops)),
                                         report::si(static_cast<double>(p.cost().bytes), "B"), ai ? report::fixed(*ai, 2) : "-"};
            if (p.measured()) {
                // as profile shows them (report::shown_rates): no rate for a time other work disturbed or one that
                // beats a roof, GFLOP/s of the executed FLOPs, %roof as judged
                const report::layer_rates shown = report::shown_rates(p.profile);
                row.push_back(report::time_ms(p.time().stats.median) + (p.time().disturbed ? "!" : ""));
                row.push_back(shown.hidden ? std::string("?") : report::fixed(shown.gflops, 2));
                row.push_back(p.profile.roofline ? std::string(to_string(p.profile.roofline->bound)) : std::string());
                row.push_back(std::isfinite(shown.roof_fraction) ? report::fixed(100 * shown.roof_fraction, 0) + "%"
                                                                 : std::string());
            } else {
                row.push_back(std::string(to_string(p.profile.state)) + (p.profile.reason.empty() ? "" : ": " + p.profile.reason));
            }
            t.add_row(row);
        }
        std::ostringstream o;
        o << "sweep of " << name << "\n\n" << t.render() << "\n";
        o << "GFLOP/s counts executed FLOPs (the FLOPs column less the padding taps a kernel skips), as profile does\n";
        const auto disturbed = std::count_if(pts.begin(), pts.end(), [](const sweep_point& p) {
            return p.measured() && p.time().disturbed;
        });
        if (disturbed > 0)
            o << "! " << disturbed << " batch size(s) disturbed by other work (fewer clean samples than the minimum): no "
              << "rate, no verdict, left out of the fit\n";
        if (f.valid)
            o << "fit time = t0 + executed flops / throughput: t0 = " << report::time_ms(f.t0_ms)
              << " (fixed overhead), throughput = " << report::fixed(f.throughput_gflops, 2)
              << " GFLOP/s (asymptotic), r^2 = " << report::fixed(f.r2, 4) << "\n";
        else
            o << "fit: needs at least two measured sizes whose time grows with the work\n";
        return o.str();
    }
};

}  // namespace

void register_sweep(CLI::App& cli, runner_list& runners) {
    auto [cmd, sub] = add_command<sweep_command>(cli, runners, "sweep", "One layer or model over growing batch sizes: the roofline path and a fit");
    sub->add_option("--layer,-l", cmd->layer, "One layer as a string (see README, Layer strings)");
    sub->add_option("--model,-m", cmd->model, "A built-in model (its end-to-end time is swept)");
    sub->add_option("--hf-config", cmd->hf_config, "A Hugging Face config.json (a transformer; with --phase)");
    sub->add_option("--phase", cmd->phase, "A transformer's step: prefill or decode; each batch size (or --kv-len) is "
                                           "profiled layer by layer, with where the step turns compute-bound")
        ->check(CLI::IsMember({"prefill", "decode"}));
    sub->add_option("--kv-len", cmd->kv_lens, "Decode: tokens in the KV cache, one size or a list (then one --batch)");
    sub->add_option("--seq", cmd->seq, "Prefill: tokens per sequence")
        ->check(integer_range(1, std::int64_t{1} << 40));
    sub->add_option("--to", cmd->to, "With --phase: also predict each step on this device (a datasheet entry or a "
                                     "ceilings JSON; see `ridgeline predict --list-targets`)");
    sub->add_option("--input,-i", cmd->inputs, "Input shape(s); dimension 0 is replaced by each batch size "
                                               "(optional for linear: batch x in_features)");
    sub->add_option("--batch,-b", cmd->batches, "Comma-separated batch sizes (default 1,8,32,128,512)");
    sub->add_option("--device,-d", cmd->device, "auto, cpu, cpu-ref, cuda, cuda:N")
        ->check(device_name());
    sub->add_option("--dtype", cmd->dtype, "fp32, tf32, fp16, bf16")->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}));
    sub->add_option("--threads,-t", cmd->threads, "CPU threads")->check(integer_range(0, 4096));
    sub->add_option("--cache", cmd->cache, "hot or cold")->check(CLI::IsMember({"hot", "cold"}));
    sub->add_flag("--quick", cmd->quick, "A fast look (see profile --quick)");
    sub->add_flag("--recalibrate", cmd->recalibrate, "Measure the device's ceilings again");
    sub->add_option("--max-memory", cmd->max_memory,
                    "With --phase: memory the run may use (default: what the device has free); a KV cache larger than "
                    "this is refused before anything runs, a step that does not fit skips its end-to-end pass")
        ->check(byte_count());
    add_chart_options(*sub, cmd->svg_path, cmd->html_path, "Write the roofline chart of the sweep as SVG",
                      "Write a self-contained HTML page of the sweep");
    cmd->out.add_to(*sub, {"table", "json"});
    sub->footer("Examples:\n  ridgeline sweep --layer \"linear:in_features=256,out_features=256\" --batch 1,8,32,128,512\n"
                "  ridgeline sweep --model llama-3.2-1b --phase decode --kv-len 1024 --batch 1,4,16,64,256 --to h100");
}

}  // namespace ridgeline::app
