// `ridgeline profile`: every layer timed on a backend, verified against the reference, next to its costs.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <optional>
#include <signal.h>
#include <cstdio>
#include <memory>

#include "ceilings_source.hpp"
#include "ridgeline/core/file.hpp"
#include "ridgeline/core/error.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "ridgeline/profiler/registry.hpp"
#include "ridgeline/cpu/cpu_info.hpp"
#include "ridgeline/report/chart.hpp"
#include "ridgeline/report/format.hpp"
#include "ridgeline/report/profile.hpp"
#include "ridgeline/report/trace.hpp"

namespace ridgeline::app {

namespace {

std::string counted_cpus(int n) { return std::to_string(n) + (n == 1 ? " CPU" : " CPUs"); }

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

extern "C" void on_signal(int sig) {
    g_signal.store(sig);
    g_stop.store(true);
    std::signal(sig, SIG_DFL);  // a second Ctrl-C ends the process at once
}

/// While it lives, SIGINT and SIGTERM stop the run cleanly (what was measured is reported, marked incomplete);
/// the handlers before it come back after it (a shell's default, or the Python interpreter's, whose Ctrl-C must
/// keep raising KeyboardInterrupt when ridgeline runs inside it). Each run starts with the stop flag clear.
class stop_on_signals {
public:
    stop_on_signals() {
        g_stop.store(false);
        g_signal.store(0);
        struct sigaction sa {};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int_);
        sigaction(SIGTERM, &sa, &old_term_);
    }
    ~stop_on_signals() {
        sigaction(SIGINT, &old_int_, nullptr);
        sigaction(SIGTERM, &old_term_, nullptr);
    }
    stop_on_signals(const stop_on_signals&) = delete;
    stop_on_signals& operator=(const stop_on_signals&) = delete;

private:
    struct sigaction old_int_ {}, old_term_ {};
};

/// Progress on stderr: a bar redrawn in place on a terminal, plain log lines otherwise.
class progress_printer {
public:
    explicit progress_printer(bool quiet) : quiet_(quiet), tty_(::isatty(2) == 1) {}
    ~progress_printer() { finish(); }

    void operator()(const profiler::progress_event& e) {
        if (quiet_) return;
        const std::string eta = e.eta_s >= 0 ? "  ETA " + report::fixed(e.eta_s, 0) + " s" : "";
        if (tty_) {
            const int width = 24;
            const int filled = e.total ? static_cast<int>(width * e.index / e.total) : 0;
            std::string bar(static_cast<std::size_t>(filled), '#');
            bar.resize(width, '.');
            std::string name = e.name.size() > 40 ? e.name.substr(0, 37) + "..." : e.name;
            std::fprintf(stderr, "\r\033[K[%s] %zu/%zu %s%s", bar.c_str(), std::min(e.index + 1, e.total), e.total,
                         name.c_str(), eta.c_str());
            std::fflush(stderr);
            drawn_ = true;
        } else {
            spdlog::info("[{}/{}] {}{}", std::min(e.index + 1, e.total), e.total, e.name, eta);
        }
    }

    void finish() {
        if (drawn_) std::fprintf(stderr, "\r\033[K");
        drawn_ = false;
    }

private:
    bool quiet_;
    bool tty_;
    bool drawn_ = false;
};

struct profile_command {
    model_options model;
    output_options out;
    std::string device = "auto";
    int threads = 0;
    bool quick = false;
    bool no_verify = false;
    bool no_end_to_end = false;
    bool no_fusion_savings = false;
    bool every_layer = false;
    bool graph = false;
    bool no_roofline = false;
    std::string svg_path;
    std::string group_by, sort;  // --group-by, --sort (report/view.hpp)
    std::string trace_path;      // --trace FILE.json[.gz]
    CLI::App* sub_ = nullptr;    // to tell a flag given empty from one not given
    std::int64_t top = 0;        // --top; 0: every row
    std::string html_path;
    bool recalibrate = false;
    std::string max_memory;
    std::string cache = "hot";
    std::uint64_t seed = 20261130;
    backend_api::timing_options timing;
    CLI::Option* warmup = nullptr;
    CLI::Option* warmup_ms = nullptr;
    CLI::Option* min_samples = nullptr;
    CLI::Option* min_time = nullptr;
    CLI::Option* max_noise = nullptr;
    CLI::Option* max_time = nullptr;
    backend_api::timing_options given;

    backend_api::timing_options timing_settings() const {
        backend_api::timing_options t = quick ? backend_api::timing_options::quick() : backend_api::timing_options{};
        if (warmup->count()) t.warmup_runs = given.warmup_runs;
        if (warmup_ms->count()) t.warmup_ms = given.warmup_ms;
        if (min_samples->count()) t.min_samples = given.min_samples;
        if (min_time->count()) t.min_time_s = given.min_time_s;
        if (max_noise->count()) t.max_noise = given.max_noise;
        if (max_time->count()) t.max_time_s = given.max_time_s;
        t.cache = cache == "cold" ? backend_api::cache_mode::cold : backend_api::cache_mode::hot;
        return t;
    }

    /// --group-by, --sort and --top as the report's view; checked before anything is measured.
    [[nodiscard]] report::view_options view() const {
        report::view_options v;
        if (sub_ && sub_->count("--group-by")) v = report::parse_group_by(group_by);
        if (sub_ && sub_->count("--sort")) v.sort = report::parse_sort(sort);
        if (top > 0) v.top = static_cast<std::size_t>(top);
        // the roofs' verdicts are what these read: without them they would show the model's order in silence
        if (no_roofline && v.sort == report::sort_key::roof)
            throw usage_error("--sort roof orders by the roofs, which --no-roofline leaves out");
        if (no_roofline && v.group == report::group_key::bound)
            throw usage_error("--group-by bound groups by the roofline's verdicts, which --no-roofline leaves out");
        return v;
    }

    /// The report in its format (stdout or --output), the chart (--svg, --html), the echoed table and the trace.
    void write_reports(const profiler::profile_result& r, const built_model& m, const report::run_info& info) const {
        const report::view_options& shown = info.view;
        std::string content;
        if (out.format() == output_format::json)
            content = report::profile_json(r, info).dump(2) + "\n";
        else if (out.format() == output_format::csv)
            content = report::profile_csv(r, shown);
        else
            content = report::profile_table(r, m.skipped, m.folded, shown);
        out.emit(content);
        if (!svg_path.empty() || !html_path.empty()) {
            report::chart c;
            c.title = r.analysis.model_name + " on " + r.device.backend + " (" + r.device.name + "), " +
                      std::string(core::to_string(r.analysis.data_type));
            report::add_profile(c, r, r.device.backend);
            const std::string svg = report::render_svg(c);
            if (!svg_path.empty()) core::write_file_atomic(svg_path, svg);
            if (!html_path.empty())
                core::write_file_atomic(html_path,
                                        report::render_html(c.title, svg, report::profile_table_html(r),
                                                            report::profile_facts_html(r, report::profile_warnings(r)),
                                                            report::profile_table(r, m.skipped, m.folded, shown)));
        }
        out.echo_table([&] { return report::profile_table(r, m.skipped, m.folded, shown); });
        if (!trace_path.empty()) {
            const nlohmann::json trace = report::chrome_trace(r);
            report::write_trace(trace_path, trace);
            if (r.trace.empty())
                spdlog::warn("the trace \"{}\" holds no pass: {}", trace_path,
                             trace["otherData"]["note"].get<std::string>());
        }
    }

    int run() {
        const report::view_options shown = view();
        const std::int64_t memory_limit = max_memory.empty() ? 0 : parse_bytes(max_memory);
        if (!trace_path.empty() && no_end_to_end)
            throw usage_error("--trace records the end-to-end pass, which --no-end-to-end leaves out");
        for (const std::string* path : {&out.output, &svg_path, &html_path, &trace_path})
            if (!path->empty()) core::check_output_path(*path);  // fail now, not after minutes of measuring
        const built_model m = model.build();
        const core::model_analysis a = model.analyze(m.model);
        auto sel = profiler::select_backend(device, threads);
        if (!sel.notice.empty() && !out.quiet) spdlog::info("{}", sel.notice);
        // other work on the machine is measured per sample (docs/timing.md): the thread count stays what the user
        // asked for (default: every CPU this process may use), so two runs use the same cached ceilings
        std::vector<std::string> warnings = m.warnings;  // --shapes-only
        for (const auto& w : m.warnings) spdlog::warn("{}", w);  // warnings reach stderr under --quiet too
        const double load = sel.chosen->device().kind == backend_api::device_kind::cpu ? cpu::load_average() : -1.0;
        if (const int cpus = cpu::host_cpu().logical_cpus;
            sel.chosen->device().kind == backend_api::device_kind::cpu && cpus > 0 && sel.chosen->device().threads > cpus) {
            warnings.push_back(std::to_string(sel.chosen->device().threads) + " threads on " + counted_cpus(cpus) +
                               ": the team shares CPUs with itself, and its own threads' waits count as other work "
                               "(samples disturbed, ceilings not cached); --threads " + std::to_string(cpus) +
                               " uses them all");
            spdlog::warn("{}", warnings.back());
        }
        const backend_api::device_info dev = sel.chosen->device();
        profiler::require_kv_cache_fits(a, *sel.chosen, memory_limit);  // before the ceilings take their seconds

        profiler::profile_options o;
        o.timing = timing_settings();
        o.verify = !no_verify;
        o.end_to_end = !no_end_to_end;
        // what fusing saves, on the backend that runs groups as one kernel (oneDNN's post-ops); not for one layer
        o.fusion_savings = !no_fusion_savings && !model.fuse && model.layer.empty() && sel.chosen->name() == "cpu";
        o.graph_replay = graph;
        o.trace_passes = trace_path.empty() ? 0 : 20;
        o.every_layer = every_layer;
        o.seed = seed;
        o.weights = m.weights;  // the file's real weights (ONNX); random where null
        o.stop = &g_stop;
        o.max_memory_bytes = memory_limit;
        // from here on SIGINT/SIGTERM stop the run cleanly (the ceilings measurement included): what was
        // measured is reported and written, marked incomplete
        std::optional<stop_on_signals> stop_guard(std::in_place);
        if (!no_roofline) {
            try {
                profiler::obtained_ceilings got = obtain_ceilings(*sel.chosen, recalibrate, quick, out.quiet, &g_stop);
                warnings.insert(warnings.end(), got.warnings.begin(), got.warnings.end());
                const bool disturbed = got.ceilings.disturbed;
                o.ceilings = std::move(got).roofs_for_verdicts();
                if (disturbed)
                    o.no_ceilings_reason = "the ceilings measured now were disturbed by other work (roofs it pushed down "
                                           "would make every verdict wrong; a quieter machine helps)";
            } catch (const backend_api::unsupported& e) {
                spdlog::warn("no roofline verdicts: {}", e.what());
                o.no_ceilings_reason = e.what();
            } catch (const backend_api::ceilings_interrupted&) {
                // nothing cached; profile_model sees the stop flag and measures nothing
                o.no_ceilings_reason = "interrupted while the ceilings were measured";
            }
        } else {
            o.no_ceilings_reason = "not asked for (--no-roofline)";
        }
        progress_printer progress(out.quiet);
        o.on_progress = [&](const profiler::progress_event& e) { progress(e); };
        const profiler::profile_result r = profiler::profile_model(a, *sel.chosen, o);
        stop_guard.reset();
        progress.finish();
        if (r.ceilings_raised && r.ceilings) {
            // the raised sweep points are what the machine did: later runs start from them
            try {
                profiler::save_cached_ceilings(*r.ceilings);
            } catch (const std::exception& e) {
                spdlog::warn("the raised ceilings were not cached: {}", e.what());
            }
        }

        // what other work did to this run (disturbed layers, the end-to-end pass), on stderr and in the report
        for (const auto& w : report::profile_warnings(r)) {
            spdlog::warn("{}", w);
            warnings.push_back(w);
        }
        report::run_info info{command_line(), model.source(), m.skipped, m.folded};
        info.load_average = load;
        info.warnings = warnings;
        info.view = shown;
        write_reports(r, m, info);
        if (!r.complete) {
            const int sig = g_signal.load();
            spdlog::warn("interrupted: {} layer(s) not measured; the report is marked incomplete", r.not_measured.size());
            return sig == SIGTERM ? 143 : 130;
        }
        // the report is written; the exit code tells scripts whether the numbers can be used
        std::size_t measured = 0, work = 0;
        std::string failed, declined;
        for (const auto& p : r.layers) {
            if (p.state == profiler::run_state::view) continue;
            ++work;
            if (p.has_time()) ++measured;
            if (p.state == profiler::run_state::failed) {
                // the first failure with its reason (the rest by name): the rule broken is on stderr, not only
                // in the table
                failed += failed.empty() ? p.analysis.layer.name + " (" + (p.reason.empty() ? p.verification.message : p.reason) + ")"
                                         : ", " + p.analysis.layer.name;
            }
            if (declined.empty() && (p.state == profiler::run_state::unsupported || p.state == profiler::run_state::skipped)) declined = p.reason;
        }
        if (r.end_to_end_verification.state == profiler::verification_state::failed)
            failed += (failed.empty() ? "" : ", ") + std::string("the end-to-end pass (") +
                      r.end_to_end_verification.message + ")";
        if (!failed.empty()) throw core::error("verification or execution failed for: " + failed);
        if (work > 0 && measured == 0)
            throw core::error("no layer could be measured on " + dev.backend + " in " + model.dtype +
                                     (declined.empty() ? std::string() : ": " + declined));
        return 0;
    }
};

}  // namespace

void register_profile(CLI::App& cli, runner_list& runners) {
    auto [cmd, sub] = add_command<profile_command>(cli, runners, "profile", "Time every layer on a device, verified against the reference");
    cmd->sub_ = sub;
    cmd->model.add_to(*sub);
    cmd->model.add_fuse_to(*sub);
    sub->add_option("--device,-d", cmd->device, "auto (the best available), cpu, cpu-ref, cuda, cuda:N")
        ->check(device_name());
    sub->add_option("--threads,-t", cmd->threads, "CPU threads (default: every CPU this process may use)")
        ->check(integer_range(0, 4096));
    cmd->warmup = sub->add_option("--warmup", cmd->given.warmup_runs, "Warm-up runs before the first sample (default 3)")
                      ->check(integer_range(0, 1000000));
    cmd->warmup_ms = sub->add_option("--warmup-ms", cmd->given.warmup_ms, "Minimum warm-up time in ms (default 20)")
                         ->check(finite_range(0.0, 3.6e6));
    cmd->min_samples = sub->add_option("--min-samples", cmd->given.min_samples, "Minimum samples per layer (default 10)")
                           ->check(integer_range(1, 1000000));
    cmd->min_time = sub->add_option("--min-time", cmd->given.min_time_s, "Minimum sampling time per layer in s (default 0.05)")
                        ->check(finite_range(0.0, 3600.0));
    cmd->max_noise = sub->add_option("--max-noise", cmd->given.max_noise,
                                     "Stop when the 95% CI of the median is narrower than this fraction of it (default 0.02)")
                         ->check(finite_range(1e-6, 1.0));
    cmd->max_time = sub->add_option("--max-time", cmd->given.max_time_s, "Maximum sampling time per layer in s (default 2)")
                        ->check(finite_range(1e-3, 3600.0));
    sub->add_option("--cache", cmd->cache, "hot: repeated runs over the same buffers; cold: evict the last-level cache "
                                           "before every sample (one run per sample)")
        ->check(CLI::IsMember({"hot", "cold"}));
    sub->add_flag("--quick", cmd->quick, "A fast look: >= 5 samples, 5% noise target, <= 0.2 s per layer");
    sub->add_flag("--no-verify", cmd->no_verify, "Do not compare outputs with the reference");
    sub->add_flag("--no-end-to-end", cmd->no_end_to_end, "Do not time the whole forward pass");
    sub->add_flag("--no-fusion-savings", cmd->no_fusion_savings,
                  "Do not time the groups a deployment would fuse (each once as one kernel, and the fused end to end; "
                  "on the oneDNN backend, without --fuse)");
    sub->add_flag("--every-layer", cmd->every_layer,
                  "Measure every layer; by default a layer identical to one measured before (op, attributes, input "
                  "shapes, dtype) reports that measurement, marked '=' (then twins must agree: docs/roofline.md)");
    sub->add_flag("--graph", cmd->graph,
                  "Also time the forward pass replayed as one CUDA Graph (cuda only): the difference to the "
                  "end-to-end time is launch overhead");
    sub->add_option("--seed", cmd->seed, "Seed of the random inputs and weights")->check(unsigned_64());
    sub->add_option("--max-memory", cmd->max_memory,
                    "Skip (with the reason) any layer needing more than this many bytes, e.g. 512MB, 8GB (powers of "
                    "1000) or 8GiB (of 1024); a KV cache larger than this is refused (default: what the device has free)")
        ->check(byte_count());
    add_chart_options(*sub, cmd->svg_path, cmd->html_path, "Also write the roofline chart as an SVG file",
                      "Also write one self-contained HTML page: the chart beside the table");
    sub->add_option("--trace", cmd->trace_path,
                    "Also write the end-to-end pass as Chrome trace events (Perfetto, chrome://tracing): a slice per "
                    "layer per traced pass; gzip when FILE ends in .gz")
        ->check(file_name());
    sub->add_option("--group-by", cmd->group_by,
                    "One row per group: op, module (layer1.0.conv1 -> layer1), module:N (the first N dotted parts), "
                    "block (the numbered block: layer1.0, transformer.h.3) or bound; JSON adds \"groups\"");
    sub->add_option("--sort", cmd->sort,
                    "Order of the rows: model (default), time (longest first), roof (furthest below its roof first), "
                    "name");
    sub->add_option("--top", cmd->top, "Only the first N rows (after --sort), with a line for what the rest take")
        ->check(integer_range(1, 1000000000));
    sub->add_flag("--no-roofline", cmd->no_roofline, "Do not measure or use the device's ceilings (no bound verdicts)");
    sub->add_flag("--recalibrate", cmd->recalibrate, "Measure the device's ceilings again instead of using the cache");
    cmd->out.add_to(*sub);
    sub->footer(
        "Examples:\n"
        "  ridgeline profile --model resnet18\n"
        "  ridgeline profile --model resnet50 --quick --format json --output resnet50.json\n"
        "  ridgeline profile --layer \"linear:in_features=1024,out_features=512\" --input 64x1024 --threads 1\n"
        "Exit codes: 0 ok, 1 error, 2 usage, 130/143 interrupted (partial report written, \"complete\": false)");
}

}  // namespace ridgeline::app
