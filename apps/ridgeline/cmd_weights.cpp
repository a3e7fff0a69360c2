// `ridgeline weights`: statistics of a model file's real weights (magnitudes, percentiles, near-zero shares).
#include <cstdio>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "ridgeline/report/weights.hpp"

namespace ridgeline::app {

namespace {
struct weights_command {
    model_options model;
    output_options out;

    int run() const {
        if (model.onnx.empty())
            throw usage_error("`weights` reads a model's real weights: give --onnx FILE (--model, --layer and "
                              "--model-file have no weights)");
        if (model.shapes_only)
            throw usage_error("`weights` reports the file's real weights; --shapes-only imports without them");
        const built_model m = model.build();
        const core::model_analysis a = core::analyze(m.model, core::dtype::fp32);
        const report::weights_report r = report::weight_statistics(a, *m.weights);
        const report::run_info info{command_line(), model.source(), m.skipped, m.folded};
        if (out.format() == output_format::json)
            out.emit(report::weights_json(r, info).dump(2) + "\n");
        else
            out.emit(report::weights_table(r, m.skipped));
        out.echo_table([&] { return report::weights_table(r, m.skipped); });
        return 0;
    }
};
}  // namespace

void register_weights(CLI::App& cli, runner_list& runners) {
    auto [cmd, sub] = add_command<weights_command>(cli, runners, "weights", "Statistics of a model file's real weights, per layer and in total");
    cmd->model.add_to(*sub);
    cmd->out.add_to(*sub, {"table", "json"});
    sub->footer(
        "Per layer and for the whole model (weights and biases apart): count, mean |w|, std, min, max, the 10/25/50/75/90th\n"
        "percentiles of |w| and the share of |w| below 1e-3, 1e-2 and 1e-1.\n"
        "Examples:\n"
        "  ridgeline weights --onnx resnet18.onnx\n"
        "  ridgeline weights --onnx resnet18.onnx --format json --output resnet18-weights.json");
}

}  // namespace ridgeline::app
