#pragma once
// Reference loops: the correctness oracle for every op of the cost model. Plain C++, no vendor library.
// Each op is computed as PyTorch defines it, accumulating in double, from float inputs; the result is
// returned as float. Slow but simple enough to check by eye.

#include <map>
#include <string>
#include <vector>

#include "ridgeline/backend_api/tensor.hpp"
#include "ridgeline/core/layer.hpp"

namespace ridgeline::cpu {

/// Output of layer `l` for the given inputs (row-major, logical layout: NCHW for images) and parameters
/// (by parameter name without the layer prefix: "weight", "bias", "running_mean", "running_var").
/// `out_shape` is the shape core::infer_shape gives. Views (flatten, reshape, transpose, slice) return
/// the selected elements in row-major order of the output. Embedding inputs are token ids stored as floats.
/// A max-pooling window with no real input element gives -inf, as in PyTorch. Token ids must be integers
/// in [0, num_embeddings) (exact as floats up to 2^24).
/// Throws backend_api::backend_error naming the layer when an input or parameter is missing or has the wrong
/// element count, when `out_shape` is not what core::infer_shape gives, or when a token id is invalid.
backend_api::host_tensor reference_forward(const core::layer& l, const std::vector<const backend_api::host_tensor*>& inputs,
                                        const std::map<std::string, const backend_api::host_tensor*>& params,
                                        const core::shape& out_shape);

/// Every layer of `graph` in order on the reference loops, from the model inputs and parameters in `data`: the
/// graph's outputs (graph.outputs order). A fused group (core/fusion.hpp) runs as its members, one after another. Leaves the OpenMP thread count as it is (constructing a cpu-ref backend
/// sets it), so a profiler may verify on it between timings. Throws what reference_forward throws.
std::vector<backend_api::host_tensor> reference_graph_outputs(const core::model_analysis& graph,
                                                           const backend_api::graph_data& data);

}  // namespace ridgeline::cpu
