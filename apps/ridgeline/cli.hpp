#pragma once
// One `ridgeline` command line run in this process: what the binary's main does, and what the Python module
// (python/ridgeline_module.cpp) calls for each of its functions.

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ridgeline::app {

/// Runs `args` (args[0] the program's name, then the command and its options, as a shell passes them) and returns
/// the exit code: 0 ok, 2 a usage mistake, 1 any other error. `report` receives what the command would write to
/// standard output (the report, an echoed table) instead of standard output, when given; `error` receives the
/// one-line error message (without the "ridgeline: error: " prefix) instead of standard error, when given.
/// Warnings and progress still go to standard error. Not thread-safe: one run at a time per process.
int run_cli(const std::vector<std::string>& args, std::function<void(std::string_view)> report = {},
            std::function<void(const std::string&)> error = {});

/// The long options of `command` ("--quick"), each with whether it is a flag (takes no value); empty for an unknown
/// command. The Python module turns True into a flag only where the option is one.
std::vector<std::pair<std::string, bool>> long_options(const std::string& command);

}  // namespace ridgeline::app
