#pragma once
// Roofline classification of a measured layer (docs/roofline.md).
//
// Sources: S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful visual performance model for
// multicore architectures", CACM 52(4), 2009 (attainable FLOP/s = min(peak, intensity x bandwidth));
// Y. Wang, C. Yang, S. Farrell et al., "Time-based Roofline for Deep Learning Performance Analysis",
// arXiv:2009.04598, 2020 (the roofs as times, plus a fixed-overhead term).
//
// The rule, in order:
//   compute_ms = flops / compute roof; memory_ms = bytes / bandwidth roof; floor_ms = max of the two;
//   roof_fraction = floor_ms / median.
//   1. "none"       : the layer computes and moves nothing (a view), or has no time.
//   2. "mistrusted" : the whole 95% CI of the time lies below the hard floor: max(flops / instruction
//                     peak, bytes / (2 x bandwidth roof)). The compute and bandwidth roofs are what real
//                     kernels attain (a GEMM, STREAM triad) and a well-tuned layer may beat them a little
//                     (roof_fraction > 1); beating the issue peak, or the measured bandwidth twice over,
//                     means the time, a count or a ceiling is wrong: no achieved rate should be believed.
//   3. "overhead"   : roof_fraction < 0.5 and the median is at most 4 x the dispatch overhead: fixed cost
//                     dominates. If the time's CI straddles that 4 x dispatch threshold (and the
//                     roof_fraction test holds): "ambiguous".
//   4. "ambiguous"  : the ridge point lies within +-10% of the layer's intensity (the two floors are
//                     within about 10% of each other), so the bound could go either way.
//   5. "compute" if compute_ms >= memory_ms, else "memory".

#include <cstdint>
#include <string>

namespace ridgeline::core {

struct roofs {
    double compute_gflops = 0;  // compute roof for the layer's data type (what a large GEMM attains)
    double issue_peak_gflops = 0;  // instruction-issue peak (FMA kernel / datasheet); 0: the compute roof
    double bandwidth_gbs = 0;   // memory roof for the layer's working set (or DRAM)
    double dispatch_ms = 0;     // the backend's fixed cost per op
};

struct roofline_point {
    double compute_ms = 0;
    double memory_ms = 0;
    double floor_ms = 0;
    double hard_floor_ms = 0;  // below this, the time is impossible (mistrusted)
    double roof_fraction = 0;  // floor / median; NaN without a time
    std::string bound;         // compute, memory, overhead, ambiguous, mistrusted, none
    std::string reason;        // one line: why this bound
};

inline constexpr double overhead_roof_fraction = 0.5;
inline constexpr double overhead_dispatch_multiple = 4.0;
inline constexpr double ridge_tolerance = 0.10;
inline constexpr double bandwidth_hard_factor = 2.0;

/// Classifies a layer with `flops` and `bytes`, measured at `median_ms` with 95% CI [ci_low_ms, ci_high_ms].
/// Roofs that are zero or missing make the corresponding floor 0.
roofline_point classify(std::int64_t flops, std::int64_t bytes, double median_ms, double ci_low_ms, double ci_high_ms,
                        const roofs& r);

}  // namespace ridgeline::core
