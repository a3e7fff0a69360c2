#pragma once
// The roofline chart: log-log axes (arithmetic intensity in FLOP/B, performance in GFLOP/s, both of the
// executed FLOPs), the compute roof (solid) and the library GEMM (dashed, a lower ceiling), the DRAM roof and
// every cache level's roof that judged a layer, the ridge point, one point per layer coloured by its bound
// (mistrusted and disturbed layers have no rate and no point), the largest layers by time labelled without
// overlap. SVG for files, and one self-contained offline HTML page with the chart beside a table.

#include <optional>
#include <string>
#include <vector>

#include "ridgeline/profiler/profiler.hpp"

namespace ridgeline::report {

struct chart_point {
    std::string label;
    double intensity = 0;  // FLOP/B
    double gflops = 0;     // achieved
    double time_ms = 0;
    std::optional<core::bound_class> bound;  // none known: "unknown" in the chart
    int series = 0;
};

struct cache_roof {
    std::string level;  // "L1", "L2", "L3"
    double gbs = 0;
};

struct chart_roof {
    std::string label;  // "fp32"
    double peak_gflops = 0;    // the compute roof (the FMA peak on the CPU)
    double bandwidth_gbs = 0;  // DRAM
    int series = 0;
    double gemm_gflops = 0;    // the library GEMM: a lower ceiling, drawn dashed (0: none)
    /// The cache levels' bandwidth roofs (with a hot cache, where layers were judged against them), each named
    /// by its level ("L1", "L2", ...), fastest first, drawn as thinner diagonals (the cache-aware roofline).
    std::vector<cache_roof> caches;
    double dispatch_ms = 0;  // the fixed cost of one op: the time panel's overhead floor (0: not known)
};

/// The cache levels' roofs of `c` to draw when any of `judged` (the bandwidth roofs layers were judged against)
/// is above the DRAM roof (a hot cache): each level of cache_level_bytes whose roof (level_roof_gbs) is above the
/// DRAM roof, named L1, L2, ... in order on a CPU (derived: cpu_ceilings lists L1d, then L2 where an L3 follows,
/// then the last level) and L2 on a GPU (its one level); fastest first. None for a cold cache or without levels.
std::vector<cache_roof> cache_roofs(const backend_api::ceilings& c, const std::vector<double>& judged);

struct chart {
    std::string title;
    std::vector<std::string> series;  // one per device / run
    std::vector<chart_roof> roofs;
    std::vector<chart_point> points;
    bool connect = false;  // draw each series' points joined in order (sweeps)
    int label_top = 8;     // label the N largest points by time
    /// A sweep's fitted time, t = fit_t0_ms + FLOPs / fit_gflops (drawn in the time panel; 0: none).
    double fit_t0_ms = 0, fit_gflops = 0;
};

/// Adds a profile's roofs (its data type's) and measured layers (those with a time, flops, bytes and a rate
/// that is shown) as series `series`.
void add_profile(chart& c, const profiler::profile_result& r, const std::string& series_name);

/// The chart as a standalone SVG document: the roofline, and under it the time panel (each point's median against
/// its executed FLOPs, with each roof's compute floor and overhead floor, the time-based roofline of Wang et al.,
/// arXiv 2009.04598). Every point is a <circle class="point ..."> (or other marker for later series) with a
/// data-layer attribute and a <title> tooltip; its twin in the time panel has class "time-point".
std::string render_svg(const chart& c);

/// One self-contained HTML page (inline SVG and CSS, no network): title, `facts_html` (the run's headline: end to
/// end, totals, warnings; may be empty), the chart, `table_html` (an HTML table or a <pre>) beside it, and
/// `report_text` (the command's table report as the terminal shows it, with every footer: end to end, totals,
/// warnings, the CIs; may be empty) under them.
std::string render_html(const std::string& title, const std::string& svg, const std::string& table_html,
                        const std::string& facts_html = "", const std::string& report_text = "");

/// HTML table of a profile's layers (name, op, median, CI95, GFLOP/s, GB/s, bound, % of roof).
std::string profile_table_html(const profiler::profile_result& r);
/// A profile's headline for its HTML page: the end to end (median, CI, samples, or why there is none), the sum of
/// the layers' medians, the time by bound, the totals and every warning.
std::string profile_facts_html(const profiler::profile_result& r, const std::vector<std::string>& warnings);

/// Escapes &, <, >, " for HTML/XML text and attributes.
std::string xml_escape(const std::string& s);
/// Preformatted text (a table) for a <pre> element: each line escaped as xml_escape does, the newlines kept.
std::string pre_escape(const std::string& text);

}  // namespace ridgeline::report
