// `ridgeline models`: the built-in model zoo.
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "ridgeline/core/zoo.hpp"
#include "ridgeline/report/format.hpp"

namespace ridgeline::app {

namespace {
struct models_command {
    output_options out;

    int run() const {
        if (out.format() == output_format::json) {
            nlohmann::json j = nlohmann::json::array();
            for (const auto& e : core::zoo_models()) {
                const auto a = core::analyze(core::build_zoo_model(e.name), core::dtype::fp32);
                j.push_back({{"name", e.name},
                             {"description", e.description},
                             {"default_input", e.default_input.dims()},
                             {"input_kind", e.token_input ? "token_ids" : "image_nchw"},
                             {"source", e.source},
                             {"phases", e.transformer ? (e.token_input && e.name.rfind("bert", 0) != 0
                                                             ? nlohmann::json{"prefill", "decode"}
                                                             : nlohmann::json{"prefill"})
                                                      : nlohmann::json::array()},
                             {"params", a.totals.params},
                             {"macs", a.totals.macs}});
            }
            out.emit(j.dump(2) + "\n");
            return 0;
        }
        using al = report::text_table::align;
        report::text_table t;
        t.add_column("model", al::left);
        t.add_column("default input", al::left);
        t.add_column("params", al::right);
        t.add_column("MACs", al::right);
        t.add_column("source", al::left, {0, true, false});  // elided in its middle where the row is too wide
        t.add_column("description", al::left, {0, false, true});  // the sentence wraps to fit 120 columns
        for (const auto& e : core::zoo_models()) {
            const auto a = core::analyze(core::build_zoo_model(e.name), core::dtype::fp32);
            t.add_row({e.name, e.default_input.to_string() + (e.token_input ? " (token ids)" : ""),
                       report::with_commas(a.totals.params), report::si(static_cast<double>(a.totals.macs)),
                       e.source, e.description});
        }
        out.emit(t.render());
        return 0;
    }
};
}  // namespace

void register_models(CLI::App& cli, runner_list& runners) {
    auto [cmd, sub] = add_command<models_command>(cli, runners, "models", "List the built-in models");
    cmd->out.add_to(*sub, {"table", "json"});
}

}  // namespace ridgeline::app
