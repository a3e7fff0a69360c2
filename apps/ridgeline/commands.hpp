#pragma once
// Subcommands. Each register_* adds its CLI11 subcommand and a runner that returns its exit code when
// that subcommand was given, or -1 when it was not.

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ridgeline::app {

using runner_list = std::vector<std::function<int()>>;

/// Adds the subcommand `name` and its runner: a `Command` holds the parsed options, its run() returns the exit code.
/// Returns the command (to bind options to) and the subcommand (to add them to).
template <class Command>
std::pair<std::shared_ptr<Command>, CLI::App*> add_command(CLI::App& cli, runner_list& runners, const std::string& name,
                                                           const std::string& description) {
    auto cmd = std::make_shared<Command>();
    CLI::App* sub = cli.add_subcommand(name, description);
    runners.push_back([cmd, sub]() { return sub->parsed() ? cmd->run() : -1; });
    return {cmd, sub};
}

void register_models(CLI::App& cli, runner_list& runners);
void register_summary(CLI::App& cli, runner_list& runners);
void register_profile(CLI::App& cli, runner_list& runners);
void register_ceilings(CLI::App& cli, runner_list& runners);
void register_compare(CLI::App& cli, runner_list& runners);
void register_predict(CLI::App& cli, runner_list& runners);
void register_sweep(CLI::App& cli, runner_list& runners);
void register_export(CLI::App& cli, runner_list& runners);
void register_weights(CLI::App& cli, runner_list& runners);

inline void register_commands(CLI::App& cli, runner_list& runners) {
    register_summary(cli, runners);
    register_profile(cli, runners);
    register_ceilings(cli, runners);
    register_compare(cli, runners);
    register_predict(cli, runners);
    register_sweep(cli, runners);
    register_models(cli, runners);
    register_export(cli, runners);
    register_weights(cli, runners);
}

}  // namespace ridgeline::app
