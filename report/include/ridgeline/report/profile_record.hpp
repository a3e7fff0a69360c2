#pragma once
// A profile report read back (ridgeline.profile/1, /2, or a ridgeline.prediction/1 that carries its layers the same
// way): the one typed form compare and predict work on. profile_from_json checks every field they read against
// docs/json-schema.md and throws core::error naming the field's path ("$.layers[3].time.median_ms: expected a
// positive number of milliseconds (at most 1e9), got -1"), so a hand-edited or foreign file fails at once rather
// than deep inside with a JSON library error. Every string is escaped (core::printable) as it is read: a name with
// control characters cannot reach a terminal, and names compared across runs are escaped alike.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ridgeline/backend_api/ceilings.hpp"
#include "ridgeline/core/model.hpp"
#include "ridgeline/core/roofline.hpp"
#include "ridgeline/core/shape.hpp"

namespace ridgeline::report {

/// A time in milliseconds: the median and its 95% CI.
struct time_record {
    double median_ms = 0;
    double ci95_low_ms = 0;
    double ci95_high_ms = 0;
    bool disturbed = false;  // other work took its samples: not a measurement
};

struct layer_record {
    std::string name, op;
    std::string state;   // "measured", "view", "skipped", ... ("" where the report has none)
    std::string reason;  // why it has no time, where it has none
    std::string bound;   // "compute", "memory", ... ("" where none)
    std::int64_t macs = 0, executed_macs = 0, flops = 0, bytes = 0;  // executed_macs: macs in a profile/1 report
    std::optional<time_record> time;                        // measured (or predicted)
    std::optional<double> roof_fraction;
    std::optional<double> achieved_gflops;
    core::roofs roofs;  // the roofs it was judged against; zeros where the report has none
    std::string layer;  // its layer string ("conv2d:in_channels=3,..."): the op and its attributes
    std::vector<core::shape> input_shapes;
    core::shape output_shape;
    /// A fused group's member (core/fusion.hpp; the JSON's "fused"): the producer first (rule "producer").
    struct member {
        std::string name, op, layer, rule;
        std::int64_t macs = 0, flops = 0, bytes = 0;
    };
    std::vector<member> fused;  // empty for a plain layer
    std::string label;          // "layer1.0.conv2+bn2+add+relu" for a group (the JSON's "label"); else the name
    /// The FLOPs its kernel executes: flops less the padding taps' 2 x (macs - executed_macs).
    [[nodiscard]] double executed_flops() const {
        return static_cast<double>(flops) - 2.0 * (static_cast<double>(macs) - static_cast<double>(executed_macs));
    }
    /// Whether other work disturbed its time (bound "disturbed", or time.disturbed).
    [[nodiscard]] bool disturbed() const;
};

/// What a pass holds in memory (a profile's "memory", in bytes). The KV cache is one of the buffers (buffer_bytes
/// holds it; kv_cache_bytes says how much of them it is).
struct memory_record {
    double parameter_bytes = 0, buffer_bytes = 0, kv_cache_bytes = 0, input_bytes = 0, peak_activation_bytes = 0,
           workspace_bytes = 0;
    /// What the pass needs resident at once: parameters, buffers (the KV cache among them), the input, the
    /// activations at their peak and the backend's workspace.
    [[nodiscard]] double resident_bytes() const {
        return parameter_bytes + buffer_bytes + input_bytes + peak_activation_bytes + workspace_bytes;
    }
    /// Parameters and the buffers that are not the KV cache (BatchNorm's statistics, tables).
    [[nodiscard]] double weight_bytes() const {
        return parameter_bytes + (buffer_bytes > kv_cache_bytes ? buffer_bytes - kv_cache_bytes : 0.0);
    }
};

struct profile_record {
    std::string schema, model, source;
    std::string dtype = "fp32";  // "fp32" where the report names none (dtype_given false)
    bool dtype_given = false;
    bool prediction = false;  // ridgeline.prediction/1: its times are predicted
    std::optional<std::int64_t> batch;
    /// A transformer's pass (phase, batch, tokens); empty for a CNN, a layer, or a report written before passes.
    std::optional<core::transformer_run> pass;
    std::string device_name, backend;
    int threads = 0;
    std::optional<backend_api::ceilings> ceilings;  // where the report carries ceilings this ridgeline reads
    std::string timing_mode;                        // "hot", "cold" ("" where the report names none)
    bool cold = false;                              // timed with a cold cache (timing.mode "cold")
    std::vector<layer_record> layers;
    std::string end_to_end_state;  // "measured", "disturbed", "skipped", ... ("" where none)
    std::optional<time_record> end_to_end;
    /// Every distinct byte of a pass (parameters, buffers, input, activations: the report's "memory"), 0 unknown.
    double distinct_bytes = 0;
    /// The report's "memory" object; empty where it has none (a layer report of an older ridgeline, a prediction).
    std::optional<memory_record> memory;
    /// The report as read, every string escaped: for what is copied through whole (the device, the pass).
    nlohmann::json json;

    /// The end-to-end median in ms where it is a clean measurement or a prediction; NaN where the pass was not timed
    /// or was disturbed (never used as a measurement).
    [[nodiscard]] double end_to_end_ms() const;
    /// "decode step over a KV cache of 1024 tokens, batch 4" (core::describe), "" without a pass.
    [[nodiscard]] std::string pass_text() const;
    /// The layer named `name`, or null.
    [[nodiscard]] const layer_record* layer(const std::string& name) const;
};

/// Reads and checks a report; `where` names it in errors ("\"t1.json\""). Throws core::error.
profile_record profile_from_json(nlohmann::json report, const std::string& where);

}  // namespace ridgeline::report
