#pragma once
// A layer's time on a device where it was not measured, from its time on one where it was (docs/roofline.md,
// "Predicting another device"). The one method behind `ridgeline predict` and the "predicted" column of
// `ridgeline compare`, so the two cannot disagree.
//
// Sources: the time-based roofline with a fixed-overhead term (Y. Wang, C. Yang, S. Farrell et al., "Time-based
// Roofline for Deep Learning Performance Analysis", arXiv:2009.04598, 2020: time = overhead + work at a fraction
// of the roofs); Habitat (G. X. Yu, Y. Gao, P. Golikov, G. Pekhimenko, "Habitat: A Runtime-Based Computational
// Performance Predictor for Deep Learning Training", USENIX ATC 2021), which scales each measured kernel by the
// ratio of the two devices' roofs and reports about 12% average error for training iterations.
//
// The model of a layer's time on a device with roofs (compute P, bandwidth B of the level its working set fits,
// dispatch cost d):
//     t = d + floor / e,   floor = max(flops / P, bytes / B)
// where e (0 < e <= 1, the layer's efficiency) is how close the layer's own work comes to the roofs. The rule:
//   1. "roofs"    : t_source > d_source: the work part, w = t_source - d_source (never below floor_source: e <= 1),
//                   is split by what accounts for it on the source: the share m = min(1, memory_floor_source / w)
//                   that its memory floor explains at the full bandwidth roof scales with the memory floors'
//                   ratio, the rest with the compute floors' ratio (or the compute roofs' where the layer counts
//                   no FLOPs):
//                       t_target = d_target + w x (m x memory_ratio + (1 - m) x compute_ratio)
//                   never below d_target + floor_target. A GEMM at its compute roof (m near 0) keeps its efficiency
//                   against the compute roof; a copy at its bandwidth roof (m near 1) against the bandwidth roof;
//                   a gelu that reaches 6% of its bandwidth roof on a CPU is in-core work (the polynomial of erf)
//                   and follows the compute roof. Derived: time as the sum of a memory part and an in-core part,
//                   as in the additive roofline models Habitat's wave scaling refines; no fitted constant (the
//                   fitted exponent on the memory ratio it replaces did not survive another VM: docs/performance.md).
//   2. "dispatch" : t_source <= d_source (the layer is all fixed cost, or has no floor): t_target = d_target +
//                   floor_target (the target's fixed cost, the work at its roofs).
//   3. "bound changes" (a flag, not a rule): the larger floor is compute on one device and memory on the other
//                   (or the reverse); the efficiency measured against one resource is assumed for the other, so
//                   such a prediction is the least certain and is flagged.
// A change of cache state (the source timed hot, the target judged cold, or the reverse; cache_shift): the layer's
// bytes move from DRAM instead of the cache level its working set fits, on top of the work (a single run after a
// flush cannot overlap first-touch misses with compute), and its fixed cost is the cold one:
//     t_cold = t_hot + bytes / B_dram - bytes / B_level + (d_cold - d_hot)     (t_hot from the rule above)
// The interval: the rule applied to the source's 95% CI bounds, widened by the rule's measured relative error
// (prediction_error: low / (1 + err), high x (1 + err)).
//
// The end-to-end pass (predict_end_to_end): the predicted layers plus the source's gap between its end-to-end
// time and its layers' sum (activations and weights arriving from further away than in a layer's own timing,
// reorders, the threads' start between layers), scaled by the layers' speedup to the power gap_exponent. A change
// of cache state changes the pass once (pass_cache_shift_ms), not by the sum of its layers' shifts: in one pass a
// layer reads its input from the cache its producer just wrote it to.
//
// The naive baseline (what the validation compares against, bench/predict.sh): t_target = t_source x
// floor_target / floor_source, the time scaled by the ratio of the roofs with no fixed cost.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ridgeline/core/roofline.hpp"

namespace ridgeline::core {

/// The rule applied (the list above).
enum class prediction_rule { roofs, dispatch, none };

/// "roofs", "dispatch", "none".
std::string_view to_string(prediction_rule r);

/// The relative error of the rule measured by bench/predict.sh on this repository's validation: the 90th
/// percentile of the held-out models' per-layer |predicted / measured - 1| (975 layers: resnet50 and mobilenet_v2,
/// 1 <-> 2 threads and hot -> cold; docs/performance.md, "Predicting another device"), rounded up: 53.9% on
/// 2026-12-05 on the Xeon VM, where two rounds of one profile differed by 6-22% per layer (46.4% on 2026-12-02).
/// Every predicted interval is widened by it, so about 9 in 10 layers' real times fall inside.
inline constexpr double prediction_error = 0.54;

/// The exponent of the end-to-end gap's scaling; fitted on resnet18 and bert_base (bench/predict.sh, a grid of 0.05
/// steps; docs/performance.md), checked on resnet50 and mobilenet_v2.
inline constexpr double gap_exponent = 0.7;

/// The target judged with another cache state than the source was timed with.
struct cache_shift {
    bool to_cold = true;           // hot source -> cold target (false: cold source -> hot target)
    double level_gbs = 0;          // the target's bandwidth of the level the working set fits (hot)
    double dram_gbs = 0;           // the target's bandwidth of one run after a flush (else its DRAM roof)
    double hot_dispatch_ms = 0;    // the target's dispatch cost with a hot cache
    double cold_dispatch_ms = 0;   // and with a cold one (0: unknown, taken as the hot one)
};

struct prediction_input {
    std::int64_t flops = 0;  // executed FLOPs (padding taps excluded), as the roofline judges them
    std::int64_t bytes = 0;  // minimal bytes moved
    double median_ms = 0;    // measured on the source
    double ci95_low_ms = 0;
    double ci95_high_ms = 0;
    roofs source;  // the roofs the layer was judged against on the source
    roofs target;  // the roofs it would be judged against on the target, timed like the source (same cache state)
    std::optional<cache_shift> shift;  // the target judged with the other cache state
};

struct prediction {
    double time_ms = 0;     // predicted median on the target
    double low_ms = 0;      // interval: the source's CI through the rule, widened by prediction_error
    double high_ms = 0;
    double baseline_ms = 0; // the naive baseline (time x floor ratio); NaN without floors
    double source_floor_ms = 0;
    double target_floor_ms = 0;
    double efficiency = 0;  // e measured on the source (NaN for the dispatch rule)
    prediction_rule rule = prediction_rule::none;
    bool bound_changes = false;  // the larger floor is a different resource on the two devices
    double memory_share = 0;     // m of rule 1: the share of the source's work its memory floor accounts for
    double cache_shift_ms = 0;   // what the cache change added (negative: removed)
    std::string reason;          // one line: which rule and why
};

/// Predicts the layer's time on the target. Rule "none" (time NaN) when the source has no positive median or
/// the target no roofs at all; otherwise every field is finite and 0 < low <= time <= high.
prediction predict_time(const prediction_input& in, double rule_error = prediction_error);

/// The end-to-end time on the target: predicted_layers_ms + (source_end_to_end_ms - source_layers_ms) x
/// (predicted_layers_ms / source_layers_ms)^gap_exponent, where the source's end-to-end time exceeds its layers'
/// sum; otherwise the end-to-end time scaled by the layers' ratio. NaN without positive inputs.
double predict_end_to_end(double source_end_to_end_ms, double source_layers_ms, double predicted_layers_ms);

/// The whole pass's change of cache state.
struct pass_cache_change {
    double distinct_bytes = 0;        // D: every distinct byte of a pass (parameters, buffers, input, activations)
    std::int64_t capacity_bytes = -1;  // C: what the target's hot cache holds (ceilings::hot_cache_capacity_bytes);
                                       // 0: nothing; -1: unknown, every pass taken to fit
    double level_gbs = 0;             // the target's hot bandwidth for a working set of D bytes
    double cold_gbs = 0;              // what one run after a flush moves on the target
    double hot_dispatch_ms = 0;       // the target's fixed cost with a hot cache
    double cold_dispatch_ms = 0;      // and with a cold one (0: unknown, taken as the hot one)
};

/// The share of what the hot cache holds (ceilings::hot_cache_capacity_bytes) that a model's pass keeps there from
/// one pass to the next. Fitted on resnet18 and bert_base (bench/predict.sh, docs/performance.md): resnet18's 80 MB
/// pass, 0.8 of the 100 MB the VM's cache held that day, ran 2% slower cold, not the 16% of fetching its bytes
/// again, so the share is below 0.8 (bert_base's 554 MB is beyond any); 0.5 is the middle of what the fit allows.
inline constexpr double pass_cache_share = 0.5;

/// What a change from a hot to a cold cache adds to one pass on the target, in ms (cold -> hot takes the same off):
///     shift = (d_cold - d_hot) + max(0, D / B_cold - D / B_level)   where D <= pass_cache_share x C (or C unknown)
///     shift = (d_cold - d_hot)                                      otherwise
/// A pass that fits pays its fixed cost once cold and fetches each distinct byte from DRAM once instead of from the
/// level it fits. A pass larger than what the cache keeps finds none of its bytes there even hot: it reads them in
/// the same order every pass, and a cyclic access larger than an LRU cache evicts every line before its reuse
/// (the thrashing pattern of A. Jaleel, K. B. Theobald, S. C. Steely Jr., J. Emer, "High Performance Cache
/// Replacement Using Re-Reference Interval Prediction (RRIP)", ISCA 2010), so the hot pass already streams them
/// from DRAM and the cold one adds only its fixed cost. Why a share and not all of C: the pass's weights,
/// activations, workspace and code compete in the cache with each other and, on a shared machine, with other
/// tenants; the sweep measures one array set alone. On a shared VM the cold end to end is the least certain
/// prediction (docs/performance.md: resnet50's cold pass ran 2% faster than its hot one on one day, 14% slower on
/// the next). NaN where an input is not finite or negative; the bandwidth term is 0 where a bandwidth is unknown.
double pass_cache_shift_ms(const pass_cache_change& c);

/// Whether a pass of `distinct_bytes` stays in a hot cache that holds `capacity_bytes` (-1: unknown, taken as yes):
/// distinct_bytes <= pass_cache_share x capacity_bytes.
bool pass_stays_cached(double distinct_bytes, std::int64_t capacity_bytes);

}  // namespace ridgeline::core
