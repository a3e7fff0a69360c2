// `ridgeline predict --from REPORT.json --to TARGET`: a model's layers on a device you do not have.
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>

#include <spdlog/spdlog.h>

#include "cli_common.hpp"
#include "ridgeline/core/fusion.hpp"
#include "ridgeline/core/file.hpp"
#include "ridgeline/core/error.hpp"
#include "commands.hpp"
#include "ridgeline/core/model.hpp"
#include "ridgeline/report/format.hpp"
#include "ridgeline/report/predict.hpp"

namespace ridgeline::app {

namespace {

struct predict_command {
    model_options model;
    std::string from, to, cache, html_path, svg_path;
    bool list_targets = false;
    bool dtype_given = false;
    output_options out;
    CLI::App* sub_ = nullptr;

    /// With a model given, the report must be of it: same layers, same counts (a report of another model or
    /// input would predict the wrong thing without a word).
    void check_model(const report::compare_run& source) const {
        const report::profile_record& j = source.report;
        const std::string& dtype = j.dtype;
        // fused: it has groups, or says what --fuse did ("fusion": nothing to fuse is still a fused profile)
        const bool report_fused = j.json.contains("fusion") ||
                                  std::any_of(j.layers.begin(), j.layers.end(),
                                              [](const report::layer_record& l) { return !l.fused.empty(); });
        if (model.fuse && !report_fused)
            throw usage_error("predict: --fuse, but \"" + from + "\" was profiled without it (a prediction keeps the "
                              "source's rows: profile with --fuse to predict the fused model)");
        if (dtype_given && model.dtype != dtype)
            throw usage_error("predict: --dtype " + model.dtype + ", but \"" + from + "\" was profiled in " + dtype +
                              " (a prediction keeps the source's data type)");
        if (model.model.empty() && model.hf_config.empty() && model.layer.empty() && model.model_file.empty() &&
            model.onnx.empty()) {
            if (!model.inputs.empty() || model.batch || !model.phase.empty() || model.seq || model.kv_len)
                throw usage_error("predict: --input, --batch, --phase, --seq and --kv-len describe a model given with "
                                  "--model, --hf-config, --layer, --model-file or --onnx (without one, the report's "
                                  "model and pass are predicted)");
            return;
        }
        // built-in models and layer strings are named the same everywhere (file paths may not be)
        const std::string ours = model.source();
        const bool named = ours.rfind("zoo:", 0) == 0 || ours.rfind("layer:", 0) == 0;
        if (named && !j.source.empty() && j.source != ours)
            throw core::error("predict: \"" + from + "\" profiles " + j.source + ", not " + ours);
        const built_model m = model.build();
        // a fused report is of the fused model, with or without --fuse here
        core::model_analysis a = core::analyze(m.model, core::parse_dtype(dtype));
        if (report_fused) a = core::fuse(a);
        std::map<std::string, const core::layer_analysis*> by_name;
        for (const auto& l : a.layers) by_name[l.layer.name] = &l;
        const std::string what = model.source();
        const std::string theirs = j.source.empty() ? std::string("?") : j.source;
        std::set<std::string> in_report;
        for (const auto& l : j.layers) in_report.insert(l.name);
        for (const auto& l : a.layers)
            if (!in_report.count(l.layer.name))
                throw core::error("predict: " + what + " has the layer \"" + l.layer.name + "\", which \"" + from +
                                  "\" does not (the report profiles " + theirs + ")");
        for (const auto& l : j.layers) {
            auto it = by_name.find(l.name);
            if (it == by_name.end())
                throw core::error("predict: \"" + from + "\" has the layer \"" + l.name + "\", which " + what +
                                  " does not (the report profiles " + theirs + ")");
            for (const char* k : {"flops", "bytes"}) {
                const bool flops = std::string(k) == "flops";
                const std::int64_t mine = flops ? it->second->cost.flops : it->second->cost.bytes;
                const std::int64_t in_file = flops ? l.flops : l.bytes;
                if (in_file != mine)
                    throw core::error("predict: layer \"" + l.name + "\" has " + std::to_string(in_file) + " " + k +
                                      " in \"" + from + "\" but " + std::to_string(mine) + " in " + what +
                                      " (another input, batch or model; the report profiles " + theirs +
                                      (j.batch ? ", batch " + std::to_string(*j.batch) : std::string()) + ")");
            }
        }
    }

    int run() {
        if (list_targets) {
            out.emit(report::datasheet_targets_table());
            return 0;
        }
        if (from.empty()) throw usage_error("predict needs --from REPORT.json (ridgeline profile --format json --output FILE)");
        if (to.empty())
            throw usage_error("predict needs --to TARGET: a ceilings JSON file, a profile JSON from the target, or a "
                              "datasheet entry (--list-targets)");
        const report::compare_run source = report::load_run(from);
        if (source.report.prediction)
            throw core::error("predict --from: \"" + from + "\" is a prediction; predict from a measured profile report");
        dtype_given = sub_ && sub_->count("--dtype") > 0;
        check_model(source);
        const report::prediction_target target = report::load_target(to);
        std::optional<bool> cold;
        if (!cache.empty()) cold = cache == "cold";
        const nlohmann::json p = report::predict_json(source, target, cold);
        // warnings, even under --quiet: what makes the prediction less than the pass it claims to be
        if (!p["prediction"]["source_complete"].get<bool>())
            spdlog::warn("\"{}\" was interrupted before every layer was measured: its prediction is of part of the pass",
                         from);
        if (p["end_to_end"]["partial"].get<bool>()) spdlog::warn("{}", report::partial_text(p));
        if (const int d = p["totals"]["disturbed_sources"].get<int>(); d > 0) spdlog::warn("{}", report::disturbed_text(d));
        if (const auto& m = p["prediction"]["memory"]; m.is_object() && !m["fits"].get<bool>())
            spdlog::warn("{}", m["text"].get<std::string>());  // a pass that cannot run there
        out.emit(out.format() == output_format::json ? p.dump(2) + "\n" : report::predict_table(p));
        out.echo_table([&] { return report::predict_table(p); });
        if (!svg_path.empty() || !html_path.empty()) {
            report::compare_run predicted{target.short_label + " (predicted)", p};
            report::chart ch = report::compare_chart({source, predicted});
            ch.title = "predict " + p["model"].get<std::string>();
            const std::string svg = report::render_svg(ch);
            if (!svg_path.empty()) core::write_file_atomic(svg_path, svg);
            if (!html_path.empty())
                core::write_file_atomic(html_path, report::render_html("predict " + p["model"].get<std::string>(), svg,
                                                                         report::predict_table_html(p), "",
                                                                         report::predict_table(p)));
        }
        return 0;
    }
};

}  // namespace

void register_predict(CLI::App& cli, runner_list& runners) {
    auto [cmd, sub] = add_command<predict_command>(cli, runners,
        "predict", "A model's layers on a device you do not have: from a profile here and the other device's roofs");
    sub->add_option("--from", cmd->from, "Profile JSON from the device at hand (ridgeline profile --format json --output FILE)");
    sub->add_option("--to", cmd->to,
                    "The target: a ceilings JSON measured there (ridgeline ceilings --format json --output FILE), a "
                    "profile JSON from there, or a datasheet entry (--list-targets)");
    sub->add_flag("--list-targets", cmd->list_targets, "Print the datasheet entries --to accepts");
    sub->add_option("--cache", cmd->cache, "Judge the target with a hot or cold cache (default: the source's)")
        ->check(CLI::IsMember({"hot", "cold"}));
    add_chart_options(*sub, cmd->svg_path, cmd->html_path,
                      "Write a roofline chart with both devices' roofs and each layer's point",
                      "Write a self-contained HTML page: the chart beside the prediction");
    cmd->model.add_to(*sub);
    cmd->model.add_fuse_to(*sub);
    cmd->sub_ = sub;
    cmd->out.add_to(*sub, {"table", "json"});
}

}  // namespace ridgeline::app
