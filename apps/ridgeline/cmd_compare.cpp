// `ridgeline compare A.json B.json [...]`: profile reports side by side.
#include <cstdio>
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "ridgeline/core/file.hpp"
#include "ridgeline/report/compare.hpp"
#include "ridgeline/report/format.hpp"

namespace ridgeline::app {

namespace {
struct compare_command {
    std::vector<std::string> files;
    std::string svg_path, html_path;
    output_options out;

    int run() const {
        if (files.size() < 2) throw usage_error("compare needs at least two profile reports (JSON files)");
        std::vector<report::compare_run> runs;
        for (const auto& f : files) runs.push_back(report::load_run(f));
        const nlohmann::json c = report::compare_json(runs);
        out.emit(out.format() == output_format::json ? c.dump(2) + "\n" : report::compare_table(c));
        out.echo_table([&] { return report::compare_table(c); });
        if (!svg_path.empty() || !html_path.empty()) {
            const report::chart ch = report::compare_chart(runs);
            const std::string svg = report::render_svg(ch);
            if (!svg_path.empty()) core::write_file_atomic(svg_path, svg);
            if (!html_path.empty())
                core::write_file_atomic(html_path, report::render_html(ch.title, svg, report::compare_table_html(c), "",
                                                                         report::compare_table(c)));
        }
        return 0;
    }
};
}  // namespace

void register_compare(CLI::App& cli, runner_list& runners) {
    auto [cmd, sub] = add_command<compare_command>(cli, runners, "compare", "Profile reports of the same model side by side (the first is the baseline)");
    // a missing file is reported when it is read, in ridgeline's own words (core::read_regular_file), exit 1
    sub->add_option("reports", cmd->files, "Profile JSON files (ridgeline profile --format json --output FILE)");
    add_chart_options(*sub, cmd->svg_path, cmd->html_path, "Write one roofline chart with every run's roofs and points",
                      "Write a self-contained HTML page: the chart beside the comparison");
    cmd->out.add_to(*sub, {"table", "json"});
}

}  // namespace ridgeline::app
