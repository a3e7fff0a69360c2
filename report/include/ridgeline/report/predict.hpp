#pragma once
// `ridgeline predict`: where a model would sit on a device you do not have, from a profile on the device at hand
// and the other device's roofs (its measured ceilings, or a datasheet entry). The per-layer method is
// core::predict_time (docs/roofline.md, "Predicting another device"); this file applies it to a profile report
// and writes the result.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ridgeline/backend_api/ceilings.hpp"
#include "ridgeline/core/datasheet.hpp"
#include "ridgeline/core/gpu_model.hpp"
#include "ridgeline/core/predict.hpp"
#include "ridgeline/report/chart.hpp"
#include "ridgeline/report/compare.hpp"

namespace ridgeline::report {

/// The device predicted for: its ceilings, and how they were obtained.
struct prediction_target {
    backend_api::ceilings ceilings;
    std::string label;          // "NVIDIA H100 SXM5 80GB (datasheet)", "cpu2.json (cpu, Xeon ..., measured)"
    std::string short_label;    // for a chart's legend: "NVIDIA H100 SXM5 80GB", "cpu2.json (cpu)"
    bool datasheet = false;     // peaks from a datasheet, not measured
    bool gpu = false;           // the device kind, for the assumptions a datasheet needs
    std::vector<std::string> assumptions;  // one line each: what was assumed where the target has no measurement
    /// What the roofs' rule (core::predict_time) assumes of a datasheet target beyond `assumptions`: how its roofs
    /// stand in for measured ones. Not printed where the GPU's op-class models take each layer's time instead.
    std::vector<std::string> roofs_rule_assumptions;
    /// The datasheet entry of the target (a datasheet target, or a measured one whose device it names): the SM count
    /// and architecture the op-class models of a GPU need.
    std::optional<core::datasheet_entry> entry;
};

/// Dispatch cost assumed for a datasheet target, which has none (ms): a GPU kernel launched through a library
/// (cuBLAS, cuDNN: launch plus host work, a few microseconds), a CPU primitive through oneDNN.
inline constexpr double datasheet_gpu_dispatch_ms = 0.005;
inline constexpr double datasheet_cpu_dispatch_ms = 0.002;

/// A datasheet entry as a target: peaks per data type (tensor-core peaks for matrix work in tf32/fp16/bf16,
/// the fp32 FMA peak for everything else), the memory bandwidth as the only bandwidth roof (no cache levels),
/// the dispatch cost above; each assumption stated.
prediction_target datasheet_target(const core::datasheet_entry& e);

/// `spec` is a file (a ceilings JSON from `ridgeline ceilings --format json --output`, or a profile JSON whose
/// device ceilings are used) or a datasheet entry's key or name (core::datasheet_by_name). Throws
/// core::error naming the file or the name and what is wrong.
prediction_target load_target(const std::string& spec);

/// The roofs a layer of kind `op` would be judged against on `c`: the compute roof of `dt` for matrix work
/// (linear, conv2d, matmul) and the FMA peak of `dt` for the rest where the ceilings have one (else the compute roof);
/// the bandwidth of the level a working set of `bytes` fits (`cold`: DRAM); the dispatch cost.
core::roofs roofs_on(const backend_api::ceilings& c, const std::string& op, const std::string& dt, std::int64_t bytes,
                     bool cold);

/// The input of core::predict_time for one layer of a profile report: its counts and source time, the roofs it
/// was judged against on the source (timed with a cold cache or not), and the roofs it would be judged against
/// on `target` timed the same way, with the cache shift when the target is judged with the other cache state.
/// predict and compare both build their inputs here.
core::prediction_input prediction_input_for(const layer_record& layer, const core::roofs& source_roofs, bool source_cold,
                                            const backend_api::ceilings& target, const std::string& dt, bool target_cold);

/// The op-class models' figures (core::gpu_spec) of a GPU given by its ceilings, for layers in `dt`: a datasheet
/// GPU's (core::gpu_spec_of, its dispatch cost as the launch) or a GPU's measured ceilings (its GEMM ceiling and
/// bandwidth as attained, its SM count and architecture from the datasheet entry its name matches); empty where the
/// ceilings are not a GPU's. Throws core::error naming the GPU when measured ceilings name a GPU without an entry.
/// predict and compare both take a GPU's layer times from it when the source is not a GPU.
std::optional<core::gpu_spec> gpu_spec_for(const backend_api::ceilings& c, const std::string& dt);

/// The time of `layer` (a report's layer: its layer string and shapes) on the GPU `s` by its op-class model; empty,
/// with the reason in `why`, where the layer string or the shapes cannot be read.
std::optional<core::gpu_estimate> class_estimate(const layer_record& layer, const std::string& dt,
                                                 const core::gpu_spec& s, std::string& why);

/// {"schema": "ridgeline.prediction/1", "model", "source", "dtype", "batch", "prediction": {"from", "to",
///  "datasheet", "assumptions", "rule_error", "method"}, "device": {"backend", "name", "ceilings"}, "timing":
///  {"mode"}, "layers": [{"name", "op", "macs", "executed_macs", "flops", "bytes", "source_time", "source_bound",
///  "time": {"median_ms", "ci95_low_ms", "ci95_high_ms", "predicted": true}, "baseline_ms", "floor_ms",
///  "achieved_gflops", "roof_fraction", "bound", "bound_changed", "floor_changes", "rule", "reason", "roofs"}],
///  "not_predicted": [{"name", "reason"}], "totals": {...}, "end_to_end": {"time": {"median_ms"}, "how"}}
/// A layer without a clean time on the source (not measured, a view, disturbed) is listed in not_predicted.
/// `cold`: judge the target with a cold cache (default: the source's cache mode). Throws core::error when
/// the source has no layer to predict from.
nlohmann::json predict_json(const compare_run& source, const prediction_target& target, std::optional<bool> cold = {});

std::string predict_table(const nlohmann::json& prediction);
/// "the end to end leaves out 3 layer(s) not predicted (...)": what a partial end to end lacks (end_to_end.partial).
std::string partial_text(const nlohmann::json& prediction);
/// "N layer(s) of the source were disturbed ...": predicted from their shapes, no speedup (totals.disturbed_sources).
std::string disturbed_text(int layers);
std::string predict_table_html(const nlohmann::json& prediction);

/// The datasheet entries, one per line: key, device, peaks, bandwidth.
std::string datasheet_targets_table();

}  // namespace ridgeline::report
