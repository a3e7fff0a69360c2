#pragma once
// Host-side tensors: the values a backend is given (inputs, weights) and gives back (outputs), always
// as float in logical row-major order (NCHW for images), whatever layout or data type the backend uses.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ridgeline/core/dtype.hpp"
#include "ridgeline/core/model.hpp"
#include "ridgeline/core/shape.hpp"

namespace ridgeline::backend_api {

struct host_tensor {
    core::shape dims;
    std::vector<float> data;  // dims.numel() values, row-major; token ids are stored as exact floats
};

/// Host values of a graph: every model input by its name, and every parameter tensor by its key
/// (param_key below). Backends and the reference read the same values.
struct graph_data {
    std::map<std::string, host_tensor> tensors;
};

/// Key of a layer's parameter tensor in graph_data: the tied name when tied ("transformer.wte.weight"),
/// else "<layer name>.<param name>" ("layer1.0.conv1.weight").
std::string param_key(const core::layer& l, const std::string& param);

/// A convolution's weights and bias with an eval BatchNorm after it folded in: the values a deployment engine loads
/// (ONNX Runtime's ConvBNFusion, TensorRT), so the pair runs as one convolution.
struct folded_conv {
    host_tensor weight;  // the convolution's [out_channels, in_channels / groups, kh, kw]
    host_tensor bias;    // [out_channels]
};

/// BatchNorm(eval) after a convolution, folded (PyTorch's torch.nn.utils.fusion.fuse_conv_bn_eval, by way of
/// fuse_conv_bn_weights): s[c] = gamma[c] / sqrt(running_var[c] + eps); W'[c] = W[c] * s[c] (every weight of output
/// channel c); b'[c] = (b[c] - running_mean[c]) * s[c] + beta[c]. `bias` empty: the convolution has none (b = 0);
/// `gamma` and `beta` empty: the batch norm has no affine transform (gamma = 1, beta = 0). Computed in double from the
/// float values, rounded once to float. Throws core::error when a vector's length is not weight's first dimension,
/// or when running_var[c] + eps is not above 0 (or is NaN) in some channel c: the batch norm divides by zero there
/// and has no folded form (the message names the channel).
folded_conv fold_batch_norm(const host_tensor& weight, const std::vector<float>& bias, const std::vector<float>& mean,
                            const std::vector<float>& var, const std::vector<float>& gamma,
                            const std::vector<float>& beta, double eps);

/// The same for a conv2d layer and the batch_norm2d layer after it, their tensors read from `data` by param_key.
/// Throws core::error naming the layer when `conv_layer` is not a conv2d or `bn_layer` not a batch_norm2d, and the
/// first overload's errors prefixed with the batch norm's name.
folded_conv fold_batch_norm(const graph_data& data, const core::layer& conv_layer, const core::layer& bn_layer);

/// `t` broadcast to `dims` as Tensor.expand does (leading dimensions added, a dimension of size 1 repeated),
/// materialised row-major: the output of a core::parameter layer with `expand`. Throws core::error when the
/// shapes do not broadcast.
host_tensor broadcast_to(const host_tensor& t, const core::shape& dims);

/// Rounds every value to the nearest value representable in `dt` (round to nearest even): bf16 keeps
/// 8 mantissa bits, fp16 10 (with its range), tf32 10; fp32 is unchanged.
void round_to(std::vector<float>& values, core::dtype dt);

/// Seeded random values for every input and parameter of `graph` (never all zeros):
/// activations uniform in [-1, 1]; weights uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)] so activations
/// stay of order one through deep models; biases like weights; BatchNorm gamma and running variance
/// in [0.5, 1.5], beta and running mean in [-0.5, 0.5]; LayerNorm gamma in [0.5, 1.5], beta in [-0.5, 0.5];
/// token ids uniform integers in [0, num_embeddings of their embedding). Values are rounded to `dt`.
/// The same seed and graph give the same values. Parameters found in `given` (by param_key: a model's
/// real weights, e.g. from an ONNX file) are used instead of random ones, rounded to `dt`; a given tensor
/// with the wrong element count is a core::error naming the layer.
graph_data make_graph_data(const core::model_analysis& graph, core::dtype dt, std::uint64_t seed,
                           const graph_data* given = nullptr);

/// A one-layer graph of `l`: its inputs become model inputs "in0", "in1", ... (token ids for embedding),
/// so a backend can prepare and time the layer in isolation. Parameter keys stay those of the full model.
/// Inputs that share storage in the model (add(x, x); matmul(x, transpose(x)), views resolved to their source) stay
/// shared: one model input for the source, and the view layers between it and the inputs copied before the layer, so
/// the layer reads what it reads in the model (and what its `bytes` count, docs/conventions.md).
core::model_analysis single_layer_graph(const core::layer_analysis& l, const core::model_analysis& parent);

}  // namespace ridgeline::backend_api
