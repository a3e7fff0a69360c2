// `ridgeline ceilings`: the device's own roofs, measured on it and cached.
#include <cstdio>
#include <memory>

#include "ceilings_source.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "ridgeline/core/file.hpp"
#include "ridgeline/profiler/registry.hpp"
#include "ridgeline/report/ceilings.hpp"

namespace ridgeline::app {

namespace {
struct ceilings_command {
    std::string device = "auto";
    int threads = 0;
    bool recalibrate = false;
    bool quick = false;
    output_options out;

    int run() const {
        if (!out.output.empty()) core::check_output_path(out.output);  // fail now, not after seconds of measuring
        auto sel = profiler::select_backend(device, threads);
        if (!sel.notice.empty() && !out.quiet) std::fprintf(stderr, "ridgeline: info: %s\n", sel.notice.c_str());
        const backend_api::ceilings c = obtain_ceilings(*sel.chosen, recalibrate, quick, out.quiet).ceilings;
        if (out.format() == output_format::json)
            out.emit(profiler::ceilings_json(c).dump(2) + "\n");
        else
            out.emit(report::ceilings_table(c));
        out.echo_table([&] { return report::ceilings_table(c); });
        return 0;
    }
};
}  // namespace

void register_ceilings(CLI::App& cli, runner_list& runners) {
    auto [cmd, sub] = add_command<ceilings_command>(cli, runners, "ceilings", "Measure the device's peak FLOP/s, bandwidth and dispatch overhead");
    sub->add_option("--device,-d", cmd->device, "auto (the best available), cpu, cuda, cuda:N")
        ->check(device_name());
    sub->add_option("--threads,-t", cmd->threads, "CPU threads (default: every CPU this process may use)")
        ->check(integer_range(0, 4096));
    sub->add_flag("--recalibrate", cmd->recalibrate, "Measure again even when cached");
    sub->add_flag("--quick", cmd->quick, "Smaller problems and fewer samples");
    cmd->out.add_to(*sub, {"table", "json"});
    sub->footer("The ceilings are cached per device fingerprint in $XDG_CACHE_HOME/ridgeline/ceilings (or "
                "~/.cache/ridgeline/ceilings); `profile` uses them for its roofline verdicts.");
}

}  // namespace ridgeline::app
