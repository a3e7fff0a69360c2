#pragma once
// Roofline classification of a measured layer (docs/roofline.md).
//
// Sources: S. Williams, A. Waterman, D. Patterson, "Roofline: an insightful visual performance model for
// multicore architectures", CACM 52(4), 2009 (attainable FLOP/s = min(peak, intensity x bandwidth));
// Y. Wang, C. Yang, S. Farrell et al., "Time-based Roofline for Deep Learning Performance Analysis",
// arXiv:2009.04598, 2020 (the roofs as times, plus a fixed-overhead term).
//
// The roofs are the device's own measured ceilings (backend_api::ceilings): the compute roof of a data type is
// the highest measured compute ceiling (on the CPU the register-resident FMA kernel's issue peak, as the
// Empirical Roofline Toolkit and Intel Advisor take it; a library GEMM is a lower ceiling, shown but never the
// roof), the bandwidth roof is that of the level the layer's working set fits (or DRAM), and the dispatch
// cost is the backend's smallest op.
//
// The rule, in order, for a layer whose kernel must execute `flops` (its executed FLOPs: padding taps
// excluded) and move `bytes`, measured at `median` with 95% CI [ci_low, ci_high]:
//   compute_ms = flops / compute roof; memory_ms = bytes / bandwidth roof; floor_ms = max of the two;
//   roof_fraction = floor_ms / median.
//   1. "none"       : the layer computes and moves nothing (a view), or has no time.
//   2. "mistrusted" : even the slow end of the CI beats a roof by more than that roof's tolerance:
//                     compute_ms > ci_high x (1 + compute_tolerance), or the same for memory. A roof is an
//                     upper bound on what the device does; a layer above it means the time, a count or a
//                     ceiling is wrong, and no achieved rate should be believed. The tolerances come from the
//                     ceilings' measured spread (backend_api::ceilings::compute_tolerance). Where the kernel
//                     does fewer multiplies than any count (Winograd, FFT: compute_checked false) only the
//                     memory roof can mistrust it. Within the tolerance a layer reads as at the roof.
//   3. "overhead"   : roof_fraction < 0.5 and the median is at most 4 x the dispatch overhead: fixed cost
//                     dominates. If the time's CI straddles that 4 x dispatch threshold (and the
//                     roof_fraction test holds): "ambiguous".
//   4. "ambiguous"  : the ridge point lies within +-10% of the layer's intensity (the two floors are
//                     within about 10% of each other), so the bound could go either way.
//   5. "compute" if compute_ms >= memory_ms, else "memory".
// A layer whose time is disturbed by other work (backend_api::timing_result::disturbed) is not classified at
// all: the Profiler gives it the bound "disturbed".

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ridgeline::core {

/// A layer's place on the roofline (the rule above). Written as its name (to_string) only at output.
enum class bound_class { compute, memory, overhead, ambiguous, mistrusted, disturbed, none };

/// "compute", "memory", "overhead", "ambiguous", "mistrusted", "disturbed", "none".
std::string_view to_string(bound_class b);
/// The bound named `s` (as to_string writes it), or nothing: for reports read back (compare).
std::optional<bound_class> parse_bound(std::string_view s);
std::ostream& operator<<(std::ostream& os, bound_class b);

struct roofs {
    double compute_gflops = 0;       // the compute roof of the layer's data type (the highest measured ceiling)
    double bandwidth_gbs = 0;        // the memory roof of the level the layer's working set fits (or DRAM)
    double dispatch_ms = 0;          // the backend's fixed cost per op
    double compute_tolerance = 0.02;    // a time may beat compute_ms by this fraction and read as at the roof
    double bandwidth_tolerance = 0.02;  // the same for memory_ms
    bool compute_checked = true;     // false: the algorithm does fewer multiplies than counted (Winograd, FFT)
    double gemm_gflops = 0;          // the library GEMM's attained rate: a lower ceiling, for the report only
};

struct roofline_point {
    double compute_ms = 0;
    double memory_ms = 0;
    double floor_ms = 0;
    double hard_floor_ms = 0;  // below this, even with the tolerances, the time is impossible (mistrusted)
    double roof_fraction = 0;  // floor / median; NaN without a time
    bound_class bound = bound_class::none;
    std::string reason;        // one line: why this bound
    /// The deciding rule as a short code, for tables (rule_legend explains them): "C>M" compute (the compute floor
    /// is the larger), "M>C" memory, "<=4D" overhead (within 4x the dispatch cost), "~4D" ambiguous (the CI
    /// straddles 4x the dispatch cost), "~ridge" ambiguous (within 10% of the ridge point), ">C" / ">M" mistrusted
    /// (beats the compute / memory roof), "-" none.
    std::string rule;
    /// The two bounds an ambiguous layer lies between (overhead and compute or memory; compute and memory); empty
    /// otherwise.
    std::vector<bound_class> candidates;
};

/// One line explaining roofline_point::rule's codes (for a table's footnote).
std::string_view rule_legend();

inline constexpr double overhead_roof_fraction = 0.5;
inline constexpr double overhead_dispatch_multiple = 4.0;
inline constexpr double ridge_tolerance = 0.10;

/// The tolerance of a roof from the relative spread of its measurement (backend_api::ceilings::spread: how far
/// the median sample lies from the best): 2% plus that spread, at most 10%.
double roof_tolerance(double spread);

/// Classifies a layer that must execute `flops` and move `bytes`, measured at `median_ms` with 95% CI
/// [ci_low_ms, ci_high_ms]. Roofs that are zero or missing make the corresponding floor 0.
roofline_point classify(std::int64_t flops, std::int64_t bytes, double median_ms, double ci_low_ms, double ci_high_ms,
                        const roofs& r);

}  // namespace ridgeline::core
