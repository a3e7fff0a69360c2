// One `ridgeline` command line, run in this process (cli.hpp): the binary's main and the Python module call it.
// Exit codes: 0 ok, 2 usage error, 1 any other error (errors are one line on stderr, or to the caller's sink).

#include <CLI/CLI.hpp>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>

#include "cli.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "ridgeline/config.hpp"
#include "ridgeline/git_revision.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/suggest.hpp"
#include "ridgeline/report/format.hpp"

namespace {

std::function<void(const std::string&)> g_error_sink;

/// Every error and warning line through core::printable, the last guard: a name from a file (a config, a report, an
/// ONNX node) that reached a message unescaped still cannot move the terminal's cursor or reorder the line.
void print_error(const std::string& message) {
    if (g_error_sink)
        g_error_sink(ridgeline::core::printable(message));
    else
        std::fprintf(stderr, "ridgeline: error: %s\n", ridgeline::core::printable(message).c_str());
}

/// spdlog's %* flag: the message, printable.
class printable_message : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
        const std::string shown = ridgeline::core::printable(std::string_view(msg.payload.data(), msg.payload.size()));
        dest.append(shown.data(), shown.data() + shown.size());
    }
    [[nodiscard]] std::unique_ptr<custom_flag_formatter> clone() const override {
        return spdlog::details::make_unique<printable_message>();
    }
};

std::string one_line(std::string s) {
    for (auto& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

/// What other tools call a flag ridgeline spells another way: checked only where `sub` has the flag suggested.
const std::map<std::string, std::string>& flag_synonyms() {
    static const std::map<std::string, std::string> m = {
        {"--fast", "--quick"},           {"--gpu", "--device cuda"},     {"--cpu", "--device cpu"},
        {"--json", "--format json"},     {"--csv", "--format csv"},      {"--out", "--output"},
        {"--batch-size", "--batch"},     {"--batchsize", "--batch"},     {"--bs", "--batch"},
        {"--seq-len", "--seq"},
        {"--sequence-length", "--seq"},  {"--kv-cache", "--kv-len"},     {"--context", "--kv-len"},
        {"--config", "--hf-config"},     {"--iterations", "--min-samples"}, {"--repeat", "--min-samples"},
        {"--runs", "--min-samples"},     {"--precision", "--dtype"},     {"--onnx-file", "--onnx"},
        {"--target", "--to"},            {"--source", "--from"}};
    return m;
}

/// " (did you mean \"--quick\"?)" for an option `sub` does not have, from its own long options (by spelling) or
/// the synonyms other tools use; "" when nothing is close.
std::string flag_guess(const CLI::App& sub, const std::string& given) {
    const std::string flag = given.substr(0, given.find('='));
    std::vector<std::string> longs;
    for (const CLI::Option* o : sub.get_options())
        for (const auto& l : o->get_lnames()) longs.push_back("--" + l);
    const auto syn = flag_synonyms().find(flag);
    if (syn != flag_synonyms().end()) {
        const std::string base = syn->second.substr(0, syn->second.find(' '));
        if (std::find(longs.begin(), longs.end(), base) != longs.end()) return " (did you mean \"" + syn->second + "\"?)";
    }
    return ridgeline::core::did_you_mean(flag, longs);
}

/// " (--sort is an option of `ridgeline profile`)": the commands that have `flag`, where `sub` has nothing close.
std::string other_commands_with(const CLI::App& cli, const CLI::App& sub, const std::string& flag) {
    std::string owners;
    for (const CLI::App* other : cli.get_subcommands({})) {
        if (other == &sub) continue;
        for (const CLI::Option* o : other->get_options())
            for (const auto& l : o->get_lnames())
                if ("--" + l == flag && owners.find("`ridgeline " + other->get_name() + "`") == std::string::npos)
                    owners += (owners.empty() ? "" : ", ") + ("`ridgeline " + other->get_name() + "`");
    }
    return owners.empty() ? "" : " (" + flag + " is an option of " + owners + ")";
}

/// An unknown option of a subcommand, named with the closest one it has (or the commands that have it); "" for any
/// other parse error.
std::string unknown_option_message(const CLI::App& cli) {
    for (const CLI::App* sub : cli.get_subcommands()) {
        for (const std::string& extra : sub->remaining()) {
            if (extra.size() < 2 || extra[0] != '-') continue;
            std::string guess = flag_guess(*sub, extra);
            if (guess.empty()) guess = other_commands_with(cli, *sub, extra.substr(0, extra.find('=')));
            return "unknown option \"" + extra.substr(0, 60) + "\"" + guess + " (see `ridgeline " + sub->get_name() +
                   " --help`)";
        }
    }
    return "";
}

/// --help and --version: their text where the report goes (standard output, or run_cli's sink).
int print_exit(const CLI::App& cli, const CLI::Error& e) {
    std::ostringstream out, err;
    const int rc = cli.exit(e, out, err);
    ridgeline::app::write_report(out.str());
    if (!err.str().empty()) std::fputs(err.str().c_str(), stderr);
    return rc;
}

/// The "ridgeline" logger on stderr, made once per process: "ridgeline: warning: ...", printable.
void use_ridgeline_logger() {
    if (auto existing = spdlog::get("ridgeline")) {
        spdlog::set_default_logger(existing);
        return;
    }
    auto logger = spdlog::stderr_color_mt("ridgeline");
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<printable_message>('*').set_pattern("ridgeline: %^%l%$: %*");
    logger->set_formatter(std::move(formatter));
    spdlog::set_default_logger(logger);
}

/// The parse and the run (argc, argv as main's).
int run_parsed(int argc, char** argv) {
    using namespace ridgeline;
    app::set_command_line(argc, argv);
    use_ridgeline_logger();
    report::set_table_width(report::default_table_width);  // a previous call's --wide does not carry over

    CLI::App cli("ridgeline: how long each layer takes on this device, how far that is from what the hardware "
                 "allows, and what holds it back",
                 "ridgeline");
    std::string version = std::string("ridgeline ") + RIDGELINE_VERSION;
    if (std::string(RIDGELINE_GIT_REVISION).size()) version += std::string(" (git ") + RIDGELINE_GIT_REVISION + ")";
    cli.set_version_flag("--version,-V", version);
    cli.require_subcommand(1);
    cli.fallthrough(false);

    std::vector<std::function<int()>> runners;
    app::register_commands(cli, runners);

    if (argc > 1 && argv[1][0] != '-') {
        const std::string first = argv[1];
        bool known = false;
        for (const auto* sub : cli.get_subcommands({})) known = known || sub->get_name() == first;
        if (!known) {
            std::string names;
            for (const auto* sub : cli.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
            print_error("unknown command \"" + first + "\" (commands: " + names + ")");
            return 2;
        }
    }
    try {
        cli.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return print_exit(cli, e);
    } catch (const CLI::CallForAllHelp& e) {
        return print_exit(cli, e);
    } catch (const CLI::CallForVersion& e) {
        return print_exit(cli, e);
    } catch (const CLI::ExtrasError& e) {
        if (const std::string m = unknown_option_message(cli); !m.empty()) {
            print_error(m);
            return 2;
        }
        std::string hint = "ridgeline --help";
        for (const auto* sub : cli.get_subcommands()) hint = "ridgeline " + sub->get_name() + " --help";
        print_error(one_line(e.what()) + " (see `" + hint + "`)");
        return 2;
    } catch (const CLI::ConversionError& e) {
        // CLI11 says "Could not convert: --fuse = banana" for a switch given a value it cannot read as true or false
        std::string hint = "ridgeline --help";
        for (const auto* sub : cli.get_subcommands()) hint = "ridgeline " + sub->get_name() + " --help";
        const std::string what = e.what(), lead = "Could not convert: ";
        const std::size_t eq = what.find(" = ");
        bool is_switch = false;
        if (what.rfind(lead, 0) == 0 && eq != std::string::npos)
            for (const auto* sub : cli.get_subcommands())
                for (const CLI::Option* o : sub->get_options())
                    for (const auto& l : o->get_lnames())
                        is_switch |= "--" + l == what.substr(lead.size(), eq - lead.size()) && o->get_expected_max() == 0;
        if (is_switch)
            print_error(what.substr(lead.size(), eq - lead.size()) + " is a switch: give it alone, or =true or =false; "
                        "got \"" + one_line(what.substr(eq + 3)).substr(0, 60) + "\" (see `" + hint + "`)");
        else
            print_error(one_line(what) + " (see `" + hint + "`)");
        return 2;
    } catch (const CLI::ParseError& e) {
        std::string hint = "ridgeline --help";
        for (const auto* sub : cli.get_subcommands()) hint = "ridgeline " + sub->get_name() + " --help";
        print_error(one_line(e.what()) + " (see `" + hint + "`)");
        return 2;
    }
    try {
        for (std::size_t i = 0; i < runners.size(); ++i)
            if (runners[i]) {
                const int rc = runners[i]();
                if (rc >= 0) {
                    // a report that did not reach stdout (a full disk, a closed pipe) is an error, not a success
                    std::cout.flush();
                    if (!app::report_sink_set() && (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout))) {
                        print_error(std::string("cannot write to standard output: ") + std::strerror(errno));
                        return 1;
                    }
                    return rc;
                }
            }
        print_error("no command given (see `ridgeline --help`)");
        return 2;
    } catch (const app::usage_error& e) {
        print_error(one_line(e.what()));
        return 2;
    } catch (const core::request_error& e) {  // a phase, sequence, batch or input the model cannot take
        print_error(one_line(e.what()) + app::flags_of(e.fields()));
        return 2;
    } catch (const std::exception& e) {
        print_error(one_line(e.what()));
        return 1;
    }
}

}  // namespace

namespace ridgeline::app {

int run_cli(const std::vector<std::string>& args, std::function<void(std::string_view)> report,
            std::function<void(const std::string&)> error) {
    std::vector<std::string> copy = args;
    if (copy.empty()) copy.emplace_back("ridgeline");
    std::vector<char*> argv;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    set_report_sink(std::move(report));
    g_error_sink = std::move(error);
    int rc = 1;
    try {
        rc = run_parsed(static_cast<int>(copy.size()), argv.data());
    } catch (...) {
        set_report_sink({});
        g_error_sink = {};
        throw;
    }
    set_report_sink({});
    g_error_sink = {};
    return rc;
}

std::vector<std::pair<std::string, bool>> long_options(const std::string& command) {
    CLI::App cli;
    std::vector<std::function<int()>> runners;
    register_commands(cli, runners);
    std::vector<std::pair<std::string, bool>> options;
    for (const CLI::App* sub : cli.get_subcommands({}))
        if (sub->get_name() == command)
            for (const CLI::Option* o : sub->get_options())
                for (const auto& l : o->get_lnames()) options.emplace_back("--" + l, o->get_expected_max() == 0);
    return options;
}

}  // namespace ridgeline::app
