#pragma once
// A layer: a named op with named input tensors, and the layer-string grammar.
//
// Layer string grammar (docs: README "Layer strings"):
//   layer   := op [ ":" attr { "," attr } ]
//   attr    := key "=" value
//   value   := integer | integer "x" integer ... | "true" | "false" | number | word
// Keys are PyTorch's argument names; omitted keys take PyTorch's defaults. Examples:
//   conv2d:in_channels=16,out_channels=32,kernel_size=3,stride=2,padding=1,bias=false
//   linear:in_features=1024,out_features=512
//   max_pool2d:kernel_size=3,stride=2,padding=1
// to_string() prints the canonical form (keys in declaration order, defaults omitted); parsing that
// form gives an equal layer, so a canonical string prints back the same.

#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ridgeline/core/ops.hpp"

namespace ridgeline::core {

/// Every op ridgeline knows. Adding an op: see ops.hpp.
using op = std::variant<linear, matmul, embedding, conv2d, batch_norm2d, layer_norm, relu, relu6, gelu, tanh_op,
                        sigmoid, scale, softmax, add, mul, max_pool2d, avg_pool2d, adaptive_avg_pool2d, concat,
                        flatten, reshape, transpose, slice, hardswish, hardsigmoid, silu, parameter, erf_op, sqrt_op,
                        exp_op, neg, pow_op, sub, div, mean_op, sum_op, amax, pad, interpolate, where_op, expand,
                        rms_norm, rotary, attention, kv_cache>;

/// Kind names of every op, in the order of `op` ("linear", "matmul", ...).
const std::vector<std::string_view>& op_kinds();

/// Kind name of an op ("conv2d").
std::string_view kind_of(const op& o);

/// Parses `kind` with attributes; `name` is used in error messages only. Throws parse_error for an
/// unknown kind (listing the known ones) or bad attribute.
op make_op(std::string_view kind, const std::vector<attribute>& attrs, std::string_view name = {});

/// Parses a whole layer string "conv2d:in_channels=16,...". Throws parse_error.
op parse_op(std::string_view text, std::string_view name = {});

/// Canonical attributes of an op (defaults omitted).
std::vector<attribute> attributes_of(const op& o);

/// Canonical layer string.
std::string to_string(const op& o);

/// A layer of a model: its name (unique in the model, as PyTorch's module path "layer1.0.conv1"),
/// its op, and the names of the tensors it reads (model inputs or other layers' names).
/// `tied` maps a parameter name of this layer ("weight") to a shared tensor name ("wte.weight"): a tied
/// tensor counts once in the model's totals (GPT-2's LM head shares the token embedding).
struct layer {
    std::string name;
    core::op op;
    std::vector<std::string> inputs;
    std::map<std::string, std::string> tied;
};

/// Error prefix of a layer: `conv2d "layer1.0.conv1"`.
std::string where(const layer& l);

/// Checks arity, infers the output shape and validates every rule of the op against `in`.
/// Throws invalid_layer (or overflow_error) starting with where(l).
shape infer_shape(const layer& l, const shapes& in);

/// Parameters and buffers of the op (names without the layer prefix).
std::vector<param_spec> parameters_of(const op& o);

/// Full cost of one layer given its input shapes and output shape (from infer_shape).
cost cost_of(const layer& l, const shapes& in, const shape& out, dtype dt);

/// True for a layer that reads no tensor: a parameter, or an embedding that holds its ids (`indices`).
bool reads_no_input(const op& o);

/// True for ops that move no data (flatten, reshape, transpose, slice, parameter). All but parameter read
/// one input, whose storage they share.
bool is_view(const op& o);

/// True for matrix work, what a device's matrix units run (tensor cores on an NVIDIA GPU, AMX tiles on a CPU that
/// has them; cuBLAS, cuDNN and oneDNN route these there): conv2d, linear, matmul and attention (its two products).
/// Every other op is vector work (CUDA cores, the CPU's vector FMA units), judged against the FMA peak where that
/// lies below the data type's roof (the profiler's roofs_for).
bool matrix_work(const op& o);

}  // namespace ridgeline::core
