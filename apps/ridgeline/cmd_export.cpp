// `ridgeline export`: a model (built-in, ONNX, JSON or one layer) written in the JSON model format.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "ridgeline/core/file.hpp"
#include "ridgeline/io/model_file.hpp"
#include "ridgeline/report/format.hpp"

namespace ridgeline::app {

namespace {
struct export_command {
    model_options model;
    std::string output;

    int run() const {
        const built_model m = model.build();
        (void)core::analyze(m.model, model.data_type());  // never write a model that does not analyze
        if (!m.skipped.empty())
            spdlog::warn("{} ONNX node(s) were left out and are not in the exported model", m.skipped.size());
        for (const auto& w : m.warnings) spdlog::warn("{}", w);
        const std::string content = io::model_json(m.model).dump(2) + "\n";
        if (output.empty()) {
            write_report(content);
        } else {
            core::write_file_atomic(output, content);
        }
        return 0;
    }
};
}  // namespace

void register_export(CLI::App& cli, runner_list& runners) {
    auto [cmd, sub] = add_command<export_command>(cli, runners, "export", "Write a model in ridgeline's JSON model format (docs/model-format.md)");
    cmd->model.add_to(*sub);
    sub->add_option("--output,-o", cmd->output, "Write to FILE (atomically) instead of standard output")
        ->check(file_name());
    sub->footer(
        "Examples:\n"
        "  ridgeline export --model resnet18 --output resnet18.json\n"
        "  ridgeline export --onnx model.onnx --batch 8 --output model.json   (the graph; weights are not exported)\n"
        "  ridgeline summary --model-file resnet18.json");
}

}  // namespace ridgeline::app
