#pragma once
// ONNX import: an .onnx file (ONNX's own loader and shape inference; Debian's libonnx-dev) as a core::model
// plus the file's weights. No ONNX or protobuf type appears here, so a build without ONNX compiles
// against this header too; there import_onnx() throws "this build has no ONNX support".
//
// Nodes map to layers (docs/model-format.md, "ONNX import", has the full table): Conv -> conv2d,
// Gemm and MatMul with a constant B -> linear (MatMul + Add of a constant bias fuses into one linear),
// MatMul of two activations -> matmul, BatchNormalization -> batch_norm2d, Relu, Sigmoid, Tanh, Softmax,
// Clip [0, 6] -> relu6 (Clip [0, inf) -> relu), Gelu and its erf decomposition Div/Erf/Add/Mul/Mul
// (pattern-matched) -> gelu, MaxPool, AveragePool, GlobalAveragePool, Add, Mul (Mul or Div by a scalar
// constant -> scale), Concat, Flatten, Reshape, Transpose (a permutation that is not one swap becomes a
// chain of transposes), LayerNormalization, Gather of a constant table by int64 ids -> embedding; Identity,
// Dropout and Constant produce no layer.
//
// Weights: every initializer a layer uses, keyed by backend_api::param_key. An initializer used by several
// layers (directly or through Identity nodes) is tied (layer.tied) under its ONNX name, so it counts
// once. Gemm with transB=0 and MatMul weights are transposed into linear's [out, in] layout.
// Shapes: a symbolic batch dimension (dimension 0) takes `batch` (default 1); any other symbolic
// dimension needs the input's full shape in `inputs`.
// Errors (core::error, one line, starting with the file name): unreadable, truncated or corrupted files,
// missing external data files, symbolic dimensions without a shape, and, unless skip_unsupported, the
// list of every node that cannot be imported (op type, node name, reason).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ridgeline/backend_api/tensor.hpp"
#include "ridgeline/core/model.hpp"

namespace ridgeline::io {

/// True when this build reads ONNX files (RIDGELINE_HAVE_ONNX).
bool have_onnx();

struct onnx_options {
    std::vector<core::shape> inputs;   // full shapes of the graph's inputs, in order (initializers excluded)
    std::optional<std::int64_t> batch; // dimension 0 of every input
    bool skip_unsupported = false;     // import the rest instead of failing on nodes that cannot be mapped
    /// A float initializer whose external data file does not exist is imported by its shape alone (its weights
    /// are left out of onnx_model::weights, so backends use seeded random ones) instead of being an error.
    /// Integer initializers (shapes, indices) must still be readable. For graph-only files such as
    /// tests/data/onnx/*.onnx, whose weights are not committed.
    bool shapes_only = false;
};

/// A node that was left out (--skip-unsupported), or one that needs no layer of its own.
struct skipped_node {
    std::string name;     // the ONNX node name ("" in the file becomes "<op_type>_<index>")
    std::string op_type;  // "Resize", or "com.microsoft.FusedConv" for another domain
    std::string reason;
};

struct onnx_model {
    core::model model;
    /// The initializers layers use, by backend_api::param_key, as float.
    std::shared_ptr<backend_api::graph_data> weights;
    /// Nodes that became no layer and are not no-ops: those left out with skip_unsupported, and nodes
    /// that compute only on integers (Shape, Gather of a shape: shape arithmetic), which are never errors
    /// by themselves. A left-out node's output, when ONNX shape inference knows its shape, becomes a model
    /// input so the layers after it are still profiled.
    std::vector<skipped_node> skipped;
    /// Nodes evaluated when the file was read, before any layer was made (constant folding: Constant,
    /// Shape, Gather/Concat/Unsqueeze/Cast/Range of known values, arithmetic on constants; io/src/onnx_fold.cpp
    /// has the list): no layer, no cost, and never an error. reason: "folded into a constant of shape 4".
    std::vector<skipped_node> folded;
    /// With shapes_only: the initializers whose external data was absent (their layers get seeded random
    /// weights); empty otherwise.
    std::vector<std::string> absent_initializers;
};

/// Reads `file`. Throws core::error as described above.
onnx_model import_onnx(const std::filesystem::path& file, const onnx_options& options = {});

}  // namespace ridgeline::io
