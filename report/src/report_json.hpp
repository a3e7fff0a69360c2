#pragma once
// Reading a profile report's layers back (compare, predict): the fields both need, read the same way.

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "ridgeline/core/model.hpp"
#include "ridgeline/core/roofline.hpp"

namespace ridgeline::report::detail {

/// The number at `key`, or NaN when absent or not a number.
inline double num(const nlohmann::json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j.at(key).is_number()) return std::nan("");
    return j.at(key).get<double>();
}

/// The string at `key`, or "" when absent or not a string.
inline std::string str(const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : std::string();
}

/// Whether a layer's time was disturbed by other work (profile schema 2: time.disturbed, bound "disturbed").
inline bool disturbed(const nlohmann::json& layer) {
    if (core::parse_bound(str(layer, "bound")) == core::bound_class::disturbed) return true;
    return layer.contains("time") && layer.at("time").is_object() && layer.at("time").value("disturbed", false);
}

/// The end-to-end median of a report, in ms, where it is a measurement or a prediction; NaN where the pass was not
/// timed or was disturbed (`end_to_end.state` "disturbed", or a time marked disturbed: other work took its samples,
/// and it is never used as a measurement).
inline double end_to_end_ms(const nlohmann::json& report) {
    if (!report.is_object() || !report.contains("end_to_end") || !report.at("end_to_end").is_object()) return std::nan("");
    const auto& e = report.at("end_to_end");
    if (const std::string state = str(e, "state"); !state.empty() && state != "measured") return std::nan("");
    if (!e.contains("time") || !e.at("time").is_object() || e.at("time").value("disturbed", false)) return std::nan("");
    return num(e.at("time"), "median_ms");
}

/// A transformer report's pass in words ("decode step over a KV cache of 1024 tokens, batch 4"; core::describe), or ""
/// when the report has none (a CNN, a layer) or its "pass" is not an object of a known phase.
inline std::string pass_text(const nlohmann::json& report) {
    if (!report.is_object() || !report.contains("pass") || !report.at("pass").is_object()) return "";
    const auto& p = report.at("pass");
    auto integer = [&](const char* k) {
        return p.contains(k) && p.at(k).is_number_integer() ? p.at(k).get<std::int64_t>() : std::int64_t{0};
    };
    core::transformer_run r;
    const std::string phase = str(p, "phase");
    if (phase == "decode") r.phase = core::transformer_phase::decode;
    else if (phase != "prefill") return "";
    r.batch = integer("batch");
    r.seq = integer("seq");
    r.kv_len = integer("kv_len");
    return core::describe(r) + ", batch " + std::to_string(r.batch);
}

/// Whether the layer has a time object (measured, or predicted).
inline bool timed(const nlohmann::json& layer) { return layer.contains("time") && layer.at("time").is_object(); }

/// The FLOPs the layer's kernel executes (profile/2: padding taps excluded; a profile/1 report has no
/// executed_macs, and then all of them).
inline double executed_flops(const nlohmann::json& layer) {
    const double macs = num(layer, "macs");
    const double executed_macs = layer.contains("executed_macs") ? num(layer, "executed_macs") : macs;
    return num(layer, "flops") - 2.0 * (std::isfinite(macs - executed_macs) ? macs - executed_macs : 0.0);
}

/// The roofs a layer was judged against (its "roofs" object; zeros where absent).
inline core::roofs judged_roofs(const nlohmann::json& layer) {
    core::roofs r;
    if (!layer.contains("roofs") || !layer.at("roofs").is_object()) return r;
    const auto& j = layer.at("roofs");
    auto get = [&](const char* k) {
        const double v = num(j, k);
        return std::isfinite(v) && v > 0 ? v : 0.0;
    };
    r.compute_gflops = get("compute_gflops");
    r.bandwidth_gbs = get("bandwidth_gbs");
    r.dispatch_ms = get("dispatch_ms");
    r.gemm_gflops = get("gemm_gflops");
    if (const double t = get("compute_tolerance"); t > 0) r.compute_tolerance = t;
    if (const double t = get("bandwidth_tolerance"); t > 0) r.bandwidth_tolerance = t;
    return r;
}

}  // namespace ridgeline::report::detail
