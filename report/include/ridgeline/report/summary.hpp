#pragma once
// The analytic summary of a model (no timing): JSON ("ridgeline.summary/1", docs/json-schema.md),
// a console table and CSV. Field names are stable: later schemas extend them, never rename.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ridgeline/core/model.hpp"
#include "ridgeline/report/view.hpp"

namespace ridgeline::report {

/// A node of an imported model (ONNX) that did not become a layer, and why (--skip-unsupported).
struct skipped_node {
    std::string name;
    std::string op_type;
    std::string reason;
};

/// Where a report came from; written into every JSON report.
struct run_info {
    std::string command_line;  // the exact command line, for reproducibility
    std::string source;        // "zoo:resnet18", "layer:conv2d:...", "file:model.json", "onnx:resnet18.onnx"
    std::vector<skipped_node> skipped_nodes;  // "skipped_nodes" in JSON, a footer line in tables
    std::vector<skipped_node> folded_nodes{}; // "folded_nodes" in JSON (ONNX constant folding), a footer count
    double load_average = -1;                 // the 1-minute load average at the start (profile; < 0: unknown)
    std::vector<std::string> warnings{};      // what was warned on stderr, kept in the JSON report ("warnings")
    view_options view{};                      // profile: --group-by, --sort, --top (JSON "view" and "groups")
};

/// [{"name", "op_type", "reason"}, ...].
nlohmann::json skipped_nodes_json(const std::vector<skipped_node>& skipped);

/// "skipped 2 ONNX node(s) that are not layers: Resize \"/up/Resize\" (reason); ...\n", or "" when none.
std::string skipped_nodes_footer(const std::vector<skipped_node>& skipped);

/// "folded 31 ONNX node(s) into constants when the file was read (Constant 18, Shape 4, Gather 4, ...; JSON
/// lists them as folded_nodes)\n", or "" when none.
std::string folded_nodes_footer(const std::vector<skipped_node>& folded);

/// The "conventions" block: how params, buffers, macs, flops and bytes are counted.
nlohmann::json conventions_json(core::dtype dt);

/// JSON of one layer: name, op, layer (canonical string), inputs, input_shapes, output_shape, params,
/// buffers, macs, flops, bytes, arithmetic_intensity (null for views).
nlohmann::json layer_json(const core::layer_analysis& l);

/// {"params", "buffers", "macs", "flops", "bytes", "arithmetic_intensity"}.
nlohmann::json totals_json(const core::cost& c);

/// {"schema": "ridgeline.summary/1", "ridgeline_version", "model", "source", "command_line", "batch",
///  "dtype", "inputs", "outputs", "conventions", "totals", "layers": [...]}.
nlohmann::json summary_json(const core::model_analysis& a, const run_info& info);

/// One row per layer (name, op, output shape, params, MACs, FLOPs, bytes, intensity) and a totals row.
/// `skipped`: nodes of an imported model left out, listed in a footer line.
std::string summary_table(const core::model_analysis& a, const std::vector<skipped_node>& skipped = {},
                          const std::vector<skipped_node>& folded = {});

/// CSV with the per-layer JSON fields, one header line.
std::string summary_csv(const core::model_analysis& a);

/// "1x3x224x224" list joined by ';' (CSV) — helper shared by reporters.
std::string shapes_text(const core::shapes& s);

/// The model's inputs for a report's header: "input 1x3x224x224" for one input, "inputs a 1x4, b 1x4" for
/// several (their names in the JSON either way).
std::string inputs_text(const std::vector<core::model_input>& inputs);
/// "model llama-3-8b (decode step over a KV cache of 1024 tokens)": a report's first words.
std::string model_heading(const core::model_analysis& a);

/// "fused as a deployment runs it: 20 fused groups: ...\n" for a model core::fuse rewrote; empty otherwise.
std::string fusion_line(const core::model_analysis& a);
/// {"phase", "batch", "seq", "kv_len", "kv_cache_bytes"} of a transformer's pass, or null.
nlohmann::json pass_json(const core::model_analysis& a);

}  // namespace ridgeline::report
