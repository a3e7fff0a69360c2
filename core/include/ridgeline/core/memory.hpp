#pragma once
// Memory of a forward pass and an estimate of training cost, from the analysis alone.
//
// Activation liveness (derived): executing layers in the analysis' topological order, a tensor is live
// from the step that produces it (model inputs: from the start) until the last step that reads it.
// A view (flatten, reshape, transpose, slice) allocates nothing: it aliases its source, whose life is
// extended to the view's last reader. A kv_cache's output is its buffer (buffer_bytes, kv_cache_bytes), not an activation. The peak is the largest sum of live tensor bytes at any step,
// counting the step's inputs and its output together (no in-place reuse).

#include <cstdint>
#include <string>
#include <vector>

#include "ridgeline/core/model.hpp"

namespace ridgeline::core {

struct memory_summary {
    std::int64_t parameter_bytes = 0;        // distinct trainable tensors at the data type's size
    std::int64_t buffer_bytes = 0;           // distinct non-trainable tensors (the KV cache among them)
    /// The KV cache of a decode step: every kv_cache layer's buffer (keys and values of every layer), which
    /// is 2 * layers * kv_heads * head_dim * (past + new tokens) * batch * the data type's size.
    std::int64_t kv_cache_bytes = 0;
    std::int64_t input_bytes = 0;            // model inputs (token ids at 8 bytes)
    std::vector<std::int64_t> activation_bytes;  // per layer (analysis order): its output, 0 for views
    std::int64_t total_activation_bytes = 0;     // sum of activation_bytes
    std::int64_t peak_activation_bytes = 0;      // largest live set, inputs included
    std::string peak_at;                         // layer at which the peak occurs
};

memory_summary memory_of(const model_analysis& a);

/// Training cost estimate, labelled as an estimate wherever it is shown:
/// backward flops = 2 x forward for linear, conv2d and matmul (gradients of input and weight), 1 x forward
/// for every other op; gradient memory = parameter memory; optimizer state = 0 (SGD), 1 x (SGD with
/// momentum) or 2 x (Adam/AdamW) parameter memory; activations kept for backward = every layer output.
struct training_estimate {
    std::int64_t forward_flops = 0;
    std::int64_t backward_flops = 0;
    std::int64_t step_flops = 0;  // forward + backward
    std::int64_t gradient_bytes = 0;
    std::int64_t sgd_state_bytes = 0;
    std::int64_t momentum_state_bytes = 0;
    std::int64_t adam_state_bytes = 0;
    std::int64_t saved_activation_bytes = 0;
};

training_estimate estimate_training(const model_analysis& a, const memory_summary& m);

}  // namespace ridgeline::core
