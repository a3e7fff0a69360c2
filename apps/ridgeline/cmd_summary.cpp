// `ridgeline summary`: the analytic cost of a model or one layer (no device needed).
#include <cstdio>
#include <memory>

#include <spdlog/spdlog.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "ridgeline/report/summary.hpp"

namespace ridgeline::app {

namespace {
struct summary_command {
    model_options model;
    output_options out;

    int run() const {
        const built_model m = model.build();
        const core::model_analysis a = model.analyze(m.model);
        report::run_info info{command_line(), model.source(), m.skipped, m.folded};
        info.warnings = m.warnings;  // --shapes-only: the counts are exact, say so anyway
        for (const auto& w : m.warnings) spdlog::warn("{}", w);  // warnings reach stderr under --quiet too
        if (out.format() == output_format::json)
            out.emit(report::summary_json(a, info).dump(2) + "\n");
        else if (out.format() == output_format::csv)
            out.emit(report::summary_csv(a));
        else
            out.emit(report::summary_table(a, m.skipped, m.folded));
        out.echo_table([&] { return report::summary_table(a, m.skipped, m.folded); });
        return 0;
    }
};
}  // namespace

void register_summary(CLI::App& cli, runner_list& runners) {
    auto [cmd, sub] = add_command<summary_command>(cli, runners, "summary", "Parameters, MACs, FLOPs, bytes and arithmetic intensity per layer");
    cmd->model.add_to(*sub);
    cmd->model.add_fuse_to(*sub);
    cmd->out.add_to(*sub);
    sub->footer(
        "Examples:\n"
        "  ridgeline summary --model resnet50 --batch 8\n"
        "  ridgeline summary --layer \"conv2d:in_channels=16,out_channels=32,kernel_size=3,stride=2,padding=1,bias=false\" "
        "--input 1x16x64x64\n"
        "  ridgeline summary --model bert_base --input 1x384 --format json --output bert.json");
}

}  // namespace ridgeline::app
