#pragma once
// Pieces shared by the subcommands of the `ridgeline` command line.

#include <CLI/CLI.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ridgeline/core/model.hpp"
#include "ridgeline/report/summary.hpp"

namespace ridgeline::app {

/// A command-line mistake found after parsing (conflicting or missing options): exit code 2.
class usage_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Where the model comes from: --model NAME | --layer STRING; with --input, --batch, --dtype.
struct model_options {
    std::string model;
    std::string layer;
    std::vector<std::string> inputs;
    std::optional<std::int64_t> batch;
    std::string dtype = "fp32";

    void add_to(CLI::App& cmd);
    /// Builds the model; throws usage_error for option mistakes and core::error for bad models.
    [[nodiscard]] core::model build() const;
    [[nodiscard]] core::dtype data_type() const;
    /// "zoo:resnet18" or "layer:<canonical string>".
    [[nodiscard]] std::string source() const;
};

/// --format table|json|csv and --output FILE.
struct output_options {
    std::string format = "table";
    std::string output;
    bool quiet = false;
    void add_to(CLI::App& cmd, const std::vector<std::string>& formats = {"table", "json", "csv"});
    /// Writes `content` to --output (atomically) or to stdout.
    void emit(const std::string& content) const;
};

/// The exact command line, shell-quoted where needed.
const std::string& command_line();
void set_command_line(int argc, char** argv);

}  // namespace ridgeline::app
