#pragma once
// The JSON model format ("ridgeline.model/1", docs/model-format.md, docs/model-format.schema.json): a DAG
// of named inputs with shapes and named layers whose attributes are those of the layer strings.
//
//   {"format": "ridgeline.model/1", "name": "tiny",
//    "inputs": [{"name": "image", "shape": [1, 3, 32, 32]}],
//    "layers": [{"name": "conv", "op": "conv2d", "in_channels": 3, "out_channels": 8, "kernel_size": 3},
//               {"name": "act", "op": "relu"},
//               {"name": "sum", "op": "add", "inputs": ["conv", "act"]}]}
//
// A layer without "inputs" reads the previous layer's output (the first layer: the first model input).
// Attribute values may be JSON numbers, booleans, strings or arrays of integers; each is converted to the
// layer-string text (3 -> "3", [3, 5] -> "3x5", false -> "false", 1e-05 -> "1e-05") and parsed by
// core::make_op, so a file and a layer string accept exactly the same attributes.
//
// Errors (core::parse_error for the file's structure and attributes, core::invalid_layer for the DAG and
// shape rules) are one line that starts with the file's label and the JSON path of the bad field:
//   model.json: $.layers[3].kernel_size: expected an integer or [h, w], got "x"
//   model.json: $.layers[2].inputs[0]: unknown tensor "conv9" (not a model input or a layer name)

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ridgeline/core/model.hpp"

namespace ridgeline::io {

/// The value of the "format" field that every file written by ridgeline carries.
inline constexpr std::string_view model_format_id = "ridgeline.model/1";

/// Shapes that replace the file's: `inputs` gives every model input's full shape, in the file's order;
/// `batch` replaces dimension 0 of every input. Both given and disagreeing is an error.
struct input_overrides {
    std::vector<core::shape> inputs;
    std::optional<std::int64_t> batch;
};

/// Builds a model from a parsed document and validates it completely (names, tensor references, cycles,
/// attributes, shapes: core::analyze is run once). `label` prefixes every error (usually the file name).
core::model parse_model_json(const nlohmann::json& doc, std::string_view label, const input_overrides& overrides = {});

/// The text of a model file as a JSON document. Stricter than JSON itself: a key written twice in one object
/// and a control character (U+0000 to U+001F) in a key or string are errors naming their JSON path, e.g.
/// `model.json: $.layers[1].stride: duplicate key "stride" (...)`. Throws core::parse_error prefixed with
/// `label`, also for invalid JSON ("not valid JSON: parse error at line L, column C: ...").
nlohmann::json parse_model_text(std::string_view text, std::string_view label);

/// Reads and validates a model file. Errors name the file: a missing or unreadable file, invalid JSON
/// (with line and column), or any error of parse_model_json.
core::model read_model_file(const std::filesystem::path& path, const input_overrides& overrides = {});

/// The model in the JSON model format, keys in a readable order (name, op, attributes, inputs, tied).
/// Attributes are canonical (defaults omitted). Reading it back gives the same layers and costs.
nlohmann::ordered_json model_json(const core::model& m);

/// A canonical attribute text as a JSON value: "3" -> 3, "3x5" -> [3, 5], "0x0x12x64" -> [0, 0, 12, 64],
/// "true" -> true, "1e-05" -> 1e-05, "same" -> "same".
nlohmann::ordered_json attribute_json(std::string_view text);

}  // namespace ridgeline::io
