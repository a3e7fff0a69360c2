#pragma once
// Pieces shared by the subcommands of the `ridgeline` command line.

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/backend_api/tensor.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/model.hpp"
#include "ridgeline/report/summary.hpp"

namespace ridgeline::app {

/// A command-line mistake found after parsing (conflicting or missing options): exit code 2.
class usage_error : public core::error {
public:
    using core::error::error;
};

/// A model as built from the command line: the graph, the file's real weights (ONNX; null otherwise,
/// and then backends use random ones) and the ONNX nodes left out. Converts to core::model for code that
/// only needs the graph.
struct built_model {
    core::model model;
    std::shared_ptr<const backend_api::graph_data> weights;
    std::vector<report::skipped_node> skipped;
    std::vector<report::skipped_node> folded;  // ONNX nodes evaluated into constants when the file was read
    /// What the report must say about the model's source (--shapes-only: initializers imported by their shape, random
    /// weights; --hf-config: a head built as another, sizes from the class defaults); commands warn with it on stderr
    /// and keep it in the JSON report's "warnings".
    std::vector<std::string> warnings;

    operator const core::model&() const { return model; }  // NOLINT(google-explicit-constructor)
};

/// Where the model comes from: --model NAME | --hf-config FILE | --layer STRING | --model-file FILE.json |
/// --onnx FILE.onnx (exactly one); with --input, --batch, --dtype, --skip-unsupported for ONNX, and for a transformer
/// (a built-in one or --hf-config) --phase prefill|decode, --seq and --kv-len.
struct model_options {
    std::string model;
    std::string hf_config;
    std::string layer;
    std::string model_file;
    std::string onnx;
    std::string phase;                     // "", prefill or decode
    std::optional<std::int64_t> seq;       // prefill tokens per sequence
    std::optional<std::int64_t> kv_len;    // decode: tokens in the KV cache
    bool shapes_only = false;
    bool skip_unsupported = false;
    std::vector<std::string> inputs;
    std::optional<std::int64_t> batch;
    std::string dtype = "fp32";
    bool fuse = false;  // --fuse: the model as a deployment engine runs it (core/fusion.hpp)

    void add_to(CLI::App& cmd);
    /// --fuse, for the commands that take it (summary, profile, predict).
    void add_fuse_to(CLI::App& cmd);
    /// The model analysed in `dt` (data_type() by default), rewritten by core::fuse under --fuse.
    [[nodiscard]] core::model_analysis analyze(const core::model& m, std::optional<core::dtype> dt = std::nullopt) const;
    /// Builds the model; throws usage_error for option mistakes and core::error for bad models and files.
    [[nodiscard]] built_model build() const;
    /// Whether the model is a transformer that takes --phase (a built-in transformer or --hf-config).
    [[nodiscard]] bool transformer() const;
    [[nodiscard]] core::dtype data_type() const;
    /// "zoo:resnet18", "hf-config:<path>", "layer:<canonical string>", "file:<path>" or "onnx:<path>".
    [[nodiscard]] std::string source() const;
};

/// --format table|json|csv and --output FILE.
/// The report formats of --format (a command offers some of them).
enum class output_format { table, json, csv };

struct output_options {
    std::string format_name = "table";  // as given to --format (checked against the command's formats)
    std::string output;
    bool quiet = false;
    void add_to(CLI::App& cmd, const std::vector<std::string>& formats = {"table", "json", "csv"});
    [[nodiscard]] output_format format() const {
        return format_name == "json" ? output_format::json : format_name == "csv" ? output_format::csv : output_format::table;
    }
    /// Writes `content` to --output (atomically) or to stdout.
    void emit(const std::string& content) const;
    /// The rule of every command: when the report went to --output in another format than the table, the table
    /// still goes to stdout, unless --quiet. `table` is made only then.
    void echo_table(const std::function<std::string()>& table) const;
};

/// "4096", "64kB", "512MB", "8GB" (powers of 1000, as the reports print sizes; the "B" may be left out), "8GiB"
/// (powers of 1024) -> bytes.
/// Throws usage_error for anything else, or a value that does not fit in int64.
std::int64_t parse_bytes(const std::string& text);
/// A CLI11 check that the option is a byte count parse_bytes reads (an empty value is not).
CLI::Validator byte_count();

/// A CLI11 check for --device: a name the registry knows (profiler::device_name_error), so that a misspelt device
/// is a usage error (exit 2) before anything runs.
CLI::Validator device_name();

/// A CLI11 check for a file to write (--output, --svg, --html): not an empty name.
CLI::Validator file_name();

/// --svg FILE and --html FILE, in that order, each checked by file_name: the roofline chart and the
/// self-contained HTML page a command also writes, with the command's own help text for each.
void add_chart_options(CLI::App& cmd, std::string& svg_path, std::string& html_path, const std::string& svg_help,
                       const std::string& html_help);

/// A CLI11 check for a real-valued option: a finite number in [lo, hi]. (CLI::Range alone lets "nan"
/// through, since every comparison with NaN is false.)
CLI::Validator finite_range(double lo, double hi);

/// A CLI11 check for an unsigned 64-bit option (a seed): decimal digits only, at most 2^64 - 1. (CLI11
/// alone turns "-1" and 2^64 into 2^64 - 1 without a word.)
CLI::Validator unsigned_64();

/// An integer option written in decimal digits, within [lo, hi] (CLI::Range would also take "0x10" and "010").
CLI::Validator integer_range(std::int64_t lo, std::int64_t hi);

/// " (--batch, --input)": the flags of a request_error's fields (core::request_error::fields), "" for none.
std::string flags_of(const std::vector<std::string>& fields);

/// The exact command line, shell-quoted where needed.
const std::string& command_line();
/// Where a command's report goes (what the binary writes to standard output): stdout, or the sink run_cli was
/// given (the Python module's buffer). write_report writes and flushes.
void set_report_sink(std::function<void(std::string_view)> sink);
bool report_sink_set();
void write_report(std::string_view text);
void set_command_line(int argc, char** argv);

}  // namespace ridgeline::app
