#pragma once
// Weight statistics of a model's real weights (`ridgeline weights`): how large the weights are and how
// many are near zero (how much magnitude pruning could remove). JSON schema "ridgeline.weights/1"
// (docs/json-schema.md) and a console table.
//
// Weights are the parameters named "weight" (convolution and linear kernels, embedding tables, norm
// gammas) and the trainable values of parameter layers (ViT's class token and position embedding); biases are those named "bias" (norm betas included), reported apart. Buffers (BatchNorm running
// statistics) are not weights and are left out. A tensor shared by several layers (tied) appears in each
// layer's row and once in the model's totals.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ridgeline/backend_api/tensor.hpp"
#include "ridgeline/core/model.hpp"
#include "ridgeline/report/summary.hpp"

namespace ridgeline::report {

/// Statistics of a set of values w_1..w_n.
/// NaN and infinite values are counted apart (non_finite) and left out of every other statistic; with no
/// finite value at all, those are NaN (null in JSON).
struct weight_stats {
    std::int64_t count = 0;       // every value, finite or not
    std::int64_t non_finite = 0;  // NaN or infinite: a broken checkpoint, reported, never averaged in
    double mean_abs = 0;  // (1/n) sum |w_i|
    double stddev = 0;    // population standard deviation of w: sqrt((1/n) sum (w_i - mean)^2) (NumPy's np.std)
    double min = 0;       // of w (signed)
    double max = 0;
    // percentiles of |w|, linear interpolation between order statistics (Hyndman & Fan type 7, NumPy's
    // default): p at rank h = (n - 1) * q, x[floor h] + (h - floor h) * (x[floor h + 1] - x[floor h])
    double p10_abs = 0, p25_abs = 0, p50_abs = 0, p75_abs = 0, p90_abs = 0;
    // share (0..1) of |w| strictly below 1e-3, 1e-2, 1e-1
    double below_1e_3 = 0, below_1e_2 = 0, below_1e_1 = 0;
};

/// Throws core::error for an empty set.
weight_stats compute_weight_stats(const std::vector<float>& values);

struct layer_weight_stats {
    std::string layer;
    std::string op;
    std::vector<std::string> weight_tensors;  // keys in graph_data (backend_api::param_key)
    std::vector<std::string> bias_tensors;
    std::optional<weight_stats> weights;
    std::optional<weight_stats> biases;
};

struct weights_report {
    std::string model;
    std::vector<layer_weight_stats> layers;  // layers with a weight or a bias, in topological order
    std::optional<weight_stats> weights;     // every distinct weight tensor once
    std::optional<weight_stats> biases;
    std::int64_t weight_tensors = 0;         // distinct tensors
    std::int64_t bias_tensors = 0;
};

/// Statistics over `values` (the model's weights by param_key). A parameter missing from `values` is a
/// core::error naming the layer and the key.
weights_report weight_statistics(const core::model_analysis& a, const backend_api::graph_data& values);

/// {"schema": "ridgeline.weights/1", "ridgeline_version", "model", "source", "command_line",
///  "skipped_nodes", "totals": {"weights": stats|null, "biases": stats|null}, "layers": [{"name", "op",
///  "weights": stats|null, "biases": stats|null}]}; stats are {"count", "mean_abs", "std", "min", "max",
///  "p10_abs", "p25_abs", "p50_abs", "p75_abs", "p90_abs", "below_1e-3", "below_1e-2", "below_1e-1"}.
nlohmann::json weights_json(const weights_report& r, const run_info& info);

/// Two rows per layer (weight, bias) and the model's totals; shares below thresholds in percent.
std::string weights_table(const weights_report& r, const std::vector<skipped_node>& skipped = {});

}  // namespace ridgeline::report
