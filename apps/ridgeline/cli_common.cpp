#include "cli_common.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>

#include "ridgeline/core/fusion.hpp"
#include "ridgeline/core/file.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/zoo.hpp"
#include "ridgeline/profiler/registry.hpp"
#include "ridgeline/io/hf_config.hpp"
#include "ridgeline/io/model_file.hpp"
#include "ridgeline/io/onnx_import.hpp"
#include "ridgeline/report/format.hpp"

namespace ridgeline::app {

namespace {
std::string g_command_line;
std::function<void(std::string_view)> g_report_sink;
}  // namespace

void set_report_sink(std::function<void(std::string_view)> sink) { g_report_sink = std::move(sink); }
bool report_sink_set() { return static_cast<bool>(g_report_sink); }
void write_report(std::string_view text) {
    if (g_report_sink) {
        g_report_sink(text);
        return;
    }
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
}

void set_command_line(int argc, char** argv) {
    std::string s;
    for (int i = 0; i < argc; ++i) {
        std::string a = argv[i];
        const bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`;&|<>()*?[]{}!#") == std::string::npos;
        if (!plain) {
            std::string q = "'";
            for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
            a = q + "'";
        }
        s += (i ? " " : "") + a;
    }
    g_command_line = s;
}

const std::string& command_line() { return g_command_line; }

CLI::Validator finite_range(double lo, double hi) {
    return CLI::Validator(
        [lo, hi](std::string& text) -> std::string {
            double v = 0;
            try {
                std::size_t used = 0;
                v = std::stod(text, &used);
                if (used != text.size()) return "\"" + text + "\" is not a number";
            } catch (const std::exception&) {
                return "\"" + text + "\" is not a number";
            }
            if (!std::isfinite(v)) return "\"" + text + "\" is not a finite number";
            if (v < lo || v > hi)
                return "value " + text + " is not in [" + CLI::detail::to_string(lo) + " - " + CLI::detail::to_string(hi) + "]";
            return {};
        },
        "FINITE in [" + CLI::detail::to_string(lo) + " - " + CLI::detail::to_string(hi) + "]");
}

std::string flags_of(const std::vector<std::string>& fields) {
    static const std::map<std::string, std::string> flag = {{"batch", "--batch"}, {"input", "--input"},
                                                            {"phase", "--phase"}, {"seq", "--seq"},
                                                            {"kv_len", "--kv-len"}, {"model", "--model"},
                                                            {"group-by", "--group-by"}, {"sort", "--sort"},
                                                            {"onnx", "--onnx"}, {"model-file", "--model-file"},
                                                            {"hf-config", "--hf-config"},
                                                            {"shapes-only", "--shapes-only"}};
    std::string out;
    for (const auto& f : fields) {
        const auto it = flag.find(f);
        out += (out.empty() ? " (" : ", ") + (it != flag.end() ? it->second : f);
    }
    return out.empty() ? out : out + ")";
}

CLI::Validator integer_range(std::int64_t lo, std::int64_t hi) {
    return CLI::Validator(
        [lo, hi](std::string& text) -> std::string {
            // decimal only, as the layer strings' integers (CLI11 alone would read "0x10" as 16 and "010" as 8)
            std::int64_t v = 0;
            const char* first = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
            const auto [end, ec] = std::from_chars(first, text.data() + text.size(), v);
            if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
                (text.size() > 1 && first[0] == '0'))
                return "\"" + core::printable(text) + "\" is not a decimal integer";
            if (v < lo || v > hi) return "value " + text + " is not in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]";
            return {};
        },
        "INT in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]");
}

CLI::Validator unsigned_64() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            std::uint64_t v = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (text.empty() || ec != std::errc() || end != text.data() + text.size())
                return "\"" + text + "\" is not an integer in [0, 18446744073709551615]";
            return {};
        },
        "UINT64");
}

std::int64_t parse_bytes(const std::string& text) {
    std::size_t i = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    const std::string digits = text.substr(0, i);
    std::string unit = text.substr(i);
    for (auto& ch : unit) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    // as the reports print sizes: kB, MB, GB, TB (and k, M, G, T) are powers of 1000; KiB, MiB, GiB, TiB of 1024
    bool binary = false;
    if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "IB") {
        unit.resize(unit.size() - 2);
        binary = true;
    } else if (!unit.empty() && unit.back() == 'B') {
        unit.pop_back();
    }
    int power = 0;
    if (unit == "K") power = 1;
    else if (unit == "M") power = 2;
    else if (unit == "G") power = 3;
    else if (unit == "T") power = 4;
    else if (!unit.empty()) power = -1;
    if (digits.empty() || power < 0 || digits.size() > 18 || (binary && power == 0))
        throw usage_error("invalid byte count \"" + core::printable(text) +
                          "\" (expected e.g. 4096, 512MB, 8GB, or 8GiB for 8 x 2^30)");
    std::int64_t v = std::stoll(digits);
    if (v <= 0) throw usage_error("byte count \"" + text + "\" must be > 0");
    for (int k = 0; k < power; ++k) {
        const std::int64_t base = binary ? 1024 : 1000;
        if (v > INT64_MAX / base) throw usage_error("byte count \"" + text + "\" does not fit in int64");
        v *= base;
    }
    return v;
}

CLI::Validator device_name() {
    return CLI::Validator([](std::string& s) { return profiler::device_name_error(s); }, "DEVICE");
}

CLI::Validator byte_count() {
    return CLI::Validator(
        [](std::string& s) {
            try {
                (void)parse_bytes(s);
            } catch (const std::exception& e) {
                return std::string(e.what());
            }
            return std::string();
        },
        "BYTES");
}

void model_options::add_to(CLI::App& cmd) {
    cmd.add_option("--model,-m", model, "Built-in model by name (see `ridgeline models`)");
    cmd.add_option("--hf-config", hf_config,
                   "A Hugging Face config.json (model_type bert, gpt2, opt, llama, mistral or qwen2): the transformer "
                   "it describes, with random weights")
        ->check(file_name());
    cmd.add_option("--phase", phase, "Transformers: prefill (the prompt, --seq tokens; the default) or decode (one new "
                                     "token per sequence over a KV cache of --kv-len tokens)")
        ->check(CLI::IsMember({"prefill", "decode"}));
    cmd.add_option("--seq", seq, "Transformers, prefill: tokens per sequence (default: the model's, see `ridgeline models`)")
        ->check(integer_range(1, std::int64_t{1} << 40));
    cmd.add_option("--kv-len", kv_len, "Transformers, decode: tokens already in the KV cache per sequence")
        ->check(integer_range(0, std::int64_t{1} << 40));
    cmd.add_option("--layer,-l", layer,
                   "One layer as a string, e.g. \"conv2d:in_channels=16,out_channels=32,kernel_size=3\"");
    cmd.add_option("--model-file", model_file, "A model in ridgeline's JSON model format (docs/model-format.md)")
        ->check(file_name());
    cmd.add_option("--onnx", onnx, "An ONNX model file; its weights are used (ONNX import: docs/model-format.md)")
        ->check(file_name());
    cmd.add_flag("--skip-unsupported", skip_unsupported,
                 "ONNX: leave out nodes that cannot be imported (listed in the report) instead of failing");
    cmd.add_flag("--shapes-only", shapes_only,
                 "ONNX: import float initializers whose external data file is absent by their shape alone (seeded "
                 "random weights; counts stay exact), e.g. the graph-only files in tests/data/onnx");
    cmd.add_option("--input,-i", inputs,
                   "Full input shape, batch included (e.g. 8x3x160x160; token ids: 1x128); repeat for layers "
                   "with several inputs");
    cmd.add_option("--batch,-b", batch, "Batch size (replaces dimension 0 of the default input)")
        ->check(integer_range(1, std::int64_t{1} << 40));
    cmd.add_option("--dtype", dtype, "Data type for bytes (and compute): fp32, tf32, fp16, bf16")
        ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}));
}

core::dtype model_options::data_type() const { return core::parse_dtype(dtype); }

void model_options::add_fuse_to(CLI::App& cmd) {
    cmd.add_flag("--fuse", fuse,
                 "The model as a deployment engine runs it: batch norms folded into the convolution before them, residual "
                 "adds and activations as the producer's post-ops; each group one row (docs/conventions.md)");
}

core::model_analysis model_options::analyze(const core::model& m, std::optional<core::dtype> dt) const {
    core::model_analysis a = core::analyze(m, dt ? *dt : data_type());
    return fuse ? core::fuse(a) : a;
}

std::string model_options::source() const {
    if (!model.empty()) return "zoo:" + model;
    if (!hf_config.empty()) return "hf-config:" + hf_config;
    if (!model_file.empty()) return "file:" + model_file;
    if (!onnx.empty()) return "onnx:" + onnx;
    return "layer:" + core::to_string(core::parse_op(layer));
}

bool model_options::transformer() const {
    if (!hf_config.empty()) return true;
    for (const auto& e : core::zoo_models())
        if (e.name == model) return e.transformer;
    return false;
}

built_model model_options::build() const {
    std::vector<std::string> given;
    if (!model.empty()) given.push_back("--model");
    if (!hf_config.empty()) given.push_back("--hf-config");
    if (!layer.empty()) given.push_back("--layer");
    if (!model_file.empty()) given.push_back("--model-file");
    if (!onnx.empty()) given.push_back("--onnx");
    if (given.empty())
        throw usage_error("give a model: --model NAME, --hf-config FILE, --layer STRING, --model-file FILE or --onnx FILE "
                          "(see `ridgeline models`)");
    if (given.size() > 1) throw usage_error(given[0] + " and " + given[1] + " cannot be used together");
    if (skip_unsupported && onnx.empty()) throw usage_error("--skip-unsupported applies to --onnx only");
    if (shapes_only && onnx.empty()) throw usage_error("--shapes-only applies to --onnx only");
    if ((!phase.empty() || seq || kv_len) && model.empty() && hf_config.empty())
        throw usage_error(std::string(!phase.empty() ? "--phase" : seq ? "--seq" : "--kv-len") +
                          " applies to a transformer (--model NAME of one, or --hf-config FILE)");
    std::vector<core::shape> shapes;
    for (const auto& s : inputs) {
        try {
            shapes.push_back(core::parse_shape(s));
        } catch (const core::parse_error& e) {
            throw usage_error(std::string("--input: ") + e.what());
        }
    }
    core::zoo_request request;
    request.batch = batch;
    request.phase = phase == "decode" ? core::transformer_phase::decode : core::transformer_phase::prefill;
    request.phase_given = !phase.empty();
    request.seq = seq;
    request.kv_len = kv_len;
    if (!hf_config.empty()) {
        if (shapes.size() > 1) throw usage_error("--hf-config takes one --input, got " + std::to_string(shapes.size()));
        if (!shapes.empty()) request.input = shapes[0];
        std::vector<std::string> notes;
        const core::transformer_config c = io::read_hf_config(hf_config, &notes);
        const core::transformer_run run = core::transformer_run_of(c.name, request, io::default_sequence(c));
        built_model b{core::build_transformer(c, run), nullptr, {}, {}, {}};
        try {  // counts that overflow int64 name the config's sizes, not only the first layer they break in
            (void)core::analyze(b.model, core::dtype::fp32);  // fp32: the widest bytes any dtype counts
        } catch (const core::overflow_error& e) {
            throw core::overflow_error(std::string(e.what()) + " (" + core::printable(hf_config) +
                                       ": hidden_size " + std::to_string(c.hidden_size) + ", intermediate_size " +
                                       std::to_string(c.intermediate_size) + ", vocab_size " +
                                       std::to_string(c.vocab_size) + ", " + std::to_string(c.num_layers) +
                                       " layers, " + core::describe(run) + " at batch " + std::to_string(run.batch) +
                                       ": too large to count)");
        }
        b.warnings = std::move(notes);
        for (auto& n : core::pass_notes(c, *b.model.run())) b.warnings.push_back(std::move(n));
        return b;
    }
    if (!model_file.empty()) return {io::read_model_file(model_file, io::input_overrides{shapes, batch}), nullptr, {}, {}, {}};
    if (!onnx.empty()) {
        io::onnx_model m = io::import_onnx(onnx, io::onnx_options{shapes, batch, skip_unsupported, shapes_only});
        built_model b{std::move(m.model), std::move(m.weights), {}, {}, {}};
        for (auto& s : m.skipped) b.skipped.push_back({s.name, s.op_type, s.reason});
        for (auto& s : m.folded) b.folded.push_back({s.name, s.op_type, s.reason});
        if (!m.absent_initializers.empty())
            b.warnings.push_back("--shapes-only: " + std::to_string(m.absent_initializers.size()) +
                                 " initializer(s) have no data (their external data file is absent; first \"" +
                                 m.absent_initializers.front() +
                                 "\"): their layers use seeded random weights; the counts are exact, computed values "
                                 "and weight statistics are not the model's");
        return b;
    }
    if (!model.empty()) {
        if (shapes.size() > 1) throw usage_error("--model takes one --input, got " + std::to_string(shapes.size()));
        if (!shapes.empty()) request.input = shapes[0];
        built_model b{core::build_zoo_model(model, request), nullptr, {}, {}, {}};
        if (const auto* t = core::find_named_transformer(model); t && b.model.run())
            b.warnings = core::pass_notes(t->config, *b.model.run());
        return b;
    }
    core::op o;
    try {
        o = core::parse_op(layer);
    } catch (const core::error& e) {
        throw usage_error(e.what());  // the layer string is what the user typed: a usage mistake, exit 2
    }
    if (std::holds_alternative<core::parameter>(o))
        throw usage_error("--layer " + layer + ": a parameter reads no input and computes nothing (0 flops, 0 bytes); "
                          "use it in a model file (docs/model-format.md), where other layers read it");
    if (const auto* e = std::get_if<core::embedding>(&o); e && !e->indices.empty())
        throw usage_error("--layer " + layer + ": an embedding that holds its ids (indices) reads no input; use it in a "
                          "model file (docs/model-format.md), or give the same lookup its ids as input: --layer "
                          "embedding:num_embeddings=" + std::to_string(e->num_embeddings) +
                          ",embedding_dim=" + std::to_string(e->embedding_dim) + " --input " +
                          core::shape(e->indices).to_string());
    if (shapes.empty())
        throw usage_error("--layer needs --input with the full input shape, batch included (e.g. --input 1x16x64x64)");
    if (batch) {
        for (auto& s : shapes) {
            if (s[0] != *batch)
                throw usage_error("--batch " + std::to_string(*batch) + " disagrees with the batch dimension of --input " +
                                  s.to_string());
        }
    }
    built_model b{core::single_layer_model(o, shapes), nullptr, {}, {}, {}};
    try {  // a layer string that does not fit its --input is a usage mistake too (exit 2), found here once
        (void)core::analyze(b.model, data_type());
    } catch (const core::error& e) {
        throw usage_error(e.what());
    }
    return b;
}

CLI::Validator file_name() {
    // an empty name would read as "not given" and send the report to stdout (or nowhere) without a word
    return CLI::Validator([](const std::string& v) { return v.empty() ? std::string("an empty file name") : std::string(); },
                          "FILE");
}

void add_chart_options(CLI::App& cmd, std::string& svg_path, std::string& html_path, const std::string& svg_help,
                       const std::string& html_help) {
    cmd.add_option("--svg", svg_path, svg_help)->check(file_name());
    cmd.add_option("--html", html_path, html_help)->check(file_name());
}

void output_options::add_to(CLI::App& cmd, const std::vector<std::string>& formats) {
    cmd.add_option("--format,-f", format_name, "Output format")->check(CLI::IsMember(formats));
    cmd.add_option("--output,-o", output,
                   "Write the report to FILE (atomically); the table still goes to standard output unless --quiet")
        ->check(file_name());
    cmd.add_flag_callback("--wide", [] { report::set_table_width(0); },
                          "Every column of the tables and footnotes on one line each, however wide (default: fit 120 "
                          "columns, dropping count columns and eliding long names)");
    cmd.add_flag("--quiet,-q", quiet,
                 "No progress, notices or echoed table on the terminal (the report itself still goes to standard "
                 "output without --output; warnings and errors to stderr)");
}

void output_options::echo_table(const std::function<std::string()>& table) const {
    if (output.empty() || quiet || format() == output_format::table) return;
    write_report(table());
}

void output_options::emit(const std::string& content) const {
    if (output.empty()) {
        write_report(content);
    } else {
        core::write_file_atomic(output, content);
    }
}

}  // namespace ridgeline::app
