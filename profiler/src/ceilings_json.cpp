// Device ceilings as JSON and back (ceilings_store.hpp).
#include "ridgeline/profiler/ceilings_store.hpp"

#include <chrono>
#include <climits>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "ridgeline/backend_api/disturbance.hpp"
#include "ridgeline/config.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/datasheet.hpp"
#include "ridgeline/core/file.hpp"
#include "ridgeline/core/format.hpp"

namespace ridgeline::profiler {

using core::fixed;
using core::si;
using core::time_ms;

nlohmann::json ceilings_json(const backend_api::ceilings& c) {
    nlohmann::json ridge = nlohmann::json::object();
    for (const auto& [dt, g] : c.peak_gflops)
        if (c.bandwidth_gbs > 0) ridge[dt] = g / c.bandwidth_gbs;
    nlohmann::json sweep = nlohmann::json::array();
    for (const auto& [bytes, gbs] : c.working_set_gbs) sweep.push_back({bytes, gbs});
    nlohmann::json sheet = nullptr;
    if (auto e = core::find_datasheet(c.device_name)) {
        sheet = {{"device", std::string(e->device)},
                 {"fp32_tflops", e->fp32_tflops},
                 {"tf32_tflops", e->tf32_tflops},
                 {"fp16_tflops", e->fp16_tflops},
                 {"bf16_tflops", e->bf16_tflops},
                 {"memory_bandwidth_gbs", e->memory_bandwidth_gbs},
                 {"source", std::string(e->source)}};
    }
    nlohmann::json compute_tolerance = nlohmann::json::object();
    for (const auto& [dt, g] : c.peak_gflops) compute_tolerance[dt] = c.compute_tolerance(dt);
    return {{"schema", std::string(ceilings_schema)},
            {"backend", c.backend},
            {"device_name", c.device_name},
            {"datasheet", sheet},
            {"fingerprint", c.fingerprint},
            {"peak_gflops", c.peak_gflops},
            {"gemm_gflops", c.gemm_gflops},
            {"fma_peak_gflops", c.fma_peak_gflops},
            {"fma_peak_by_isa_gflops", c.fma_peak_by_isa_gflops},
            {"bandwidth_gbs", c.bandwidth_gbs},
            {"copy_gbs", c.copy_gbs},
            {"triad_gbs", c.triad_gbs},
            {"device_copy_gbs", c.device_copy_gbs},
            {"read_gbs", c.read_gbs},
            {"stream_bytes", c.stream_bytes},
            {"working_set_gbs", sweep},
            {"ridge_point", ridge},
            {"dispatch_overhead_ms", c.dispatch_overhead_ms},
            {"cold_dispatch_overhead_ms", c.cold_dispatch_overhead_ms},
            {"cold_bandwidth_gbs", c.cold_bandwidth_gbs},
            {"launch_overhead_ms", c.launch_overhead_ms},
            {"last_level_cache_bytes", c.last_level_cache_bytes},
            {"cache_level_bytes", c.cache_level_bytes},
            {"dram_level_bytes", c.dram_level_bytes()},
            {"spread", c.spread},
            {"tolerance", {{"compute", compute_tolerance}, {"bandwidth", c.bandwidth_tolerance()}}},
            {"measured_under",
             {{"quick", c.quick},
              {"disturbed", c.disturbed},
              {"disturbed_ceilings", c.disturbed_ceilings},
              {"stolen_fraction", c.stolen_fraction},
              {"load_average", c.load_average >= 0 ? nlohmann::json(c.load_average) : nlohmann::json(nullptr)}}},
            {"measured_at", c.measured_at},
            {"ridgeline_version", c.ridgeline_version},
            {"source", std::string(backend_api::to_string(c.source))},
            {"method", c.method}};
}

backend_api::ceilings ceilings_from_json(const nlohmann::json& j) {
    backend_api::ceilings c;
    if (!j.is_object()) throw core::error(std::string("ceilings: expected a JSON object, got ") + j.type_name());
    // each field read on its own, so that a wrong type names the field and what it holds
    auto wrong = [](const std::string& path, const nlohmann::json& v) {
        std::string shown = v.dump();
        if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
        return core::error("ceilings: field \"" + path + "\" has the wrong type (" + v.type_name() +
                                  (shown == v.type_name() ? "" : " " + shown) + ")");
    };
    // a map of numbers, or an array of integers: the entry at fault is named ("peak_gflops.fp32", "cache_level_bytes[1]")
    auto numbers = [&](const std::string& key, bool required = false) {
        std::map<std::string, double> m;
        if (!j.contains(key)) {
            if (required) throw core::error("ceilings: missing field \"" + key + "\"");
            return m;
        }
        const nlohmann::json& v = j.at(key);
        if (!v.is_object()) throw wrong(key, v);
        for (const auto& [k, x] : v.items()) {
            if (!x.is_number()) throw wrong(key + "." + k, x);
            m[k] = x.get<double>();
        }
        return m;
    };
    auto integer = [&](const std::string& path, const nlohmann::json& v) {
        if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX))
            throw core::error("ceilings: field \"" + path + "\" must be an integer of int64 (got " + v.dump() + ")");
        return v.get<std::int64_t>();
    };
    auto get = [&](const std::string& key, auto fallback, bool required = false) {
        using T = decltype(fallback);
        if (!j.contains(key)) {
            if (required) throw core::error("ceilings: missing field \"" + key + "\"");
            return fallback;
        }
        try {
            return j.at(key).get<T>();
        } catch (const nlohmann::json::exception&) {
            throw wrong(key, j.at(key));
        }
    };
    c.backend = get("backend", std::string(), true);
    c.fingerprint = get("fingerprint", std::string(), true);
    c.device_name = get("device_name", std::string());
    c.peak_gflops = numbers("peak_gflops", true);
    c.gemm_gflops = numbers("gemm_gflops");
    c.fma_peak_gflops = numbers("fma_peak_gflops");
    c.fma_peak_by_isa_gflops = numbers("fma_peak_by_isa_gflops");
    c.bandwidth_gbs = get("bandwidth_gbs", 0.0, true);
    c.copy_gbs = get("copy_gbs", 0.0);
    c.triad_gbs = get("triad_gbs", 0.0);
    c.device_copy_gbs = get("device_copy_gbs", 0.0);
    c.read_gbs = get("read_gbs", 0.0);
    if (j.contains("stream_bytes")) c.stream_bytes = integer("stream_bytes", j.at("stream_bytes"));
    const nlohmann::json sweep = get("working_set_gbs", nlohmann::json::array());
    if (!sweep.is_array()) throw wrong("working_set_gbs", sweep);
    for (std::size_t i = 0; i < sweep.size(); ++i) {
        const nlohmann::json& p = sweep[i];
        if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number())
            throw core::error("ceilings: field \"working_set_gbs[" + std::to_string(i) +
                                     "]\" must be [bytes, GB/s], an integer and a number (got " + p.dump() + ")");
        c.working_set_gbs.emplace_back(integer("working_set_gbs[" + std::to_string(i) + "][0]", p[0]), p[1].get<double>());
    }
    c.dispatch_overhead_ms = get("dispatch_overhead_ms", 0.0, true);
    c.launch_overhead_ms = get("launch_overhead_ms", 0.0);
    c.cold_dispatch_overhead_ms = get("cold_dispatch_overhead_ms", 0.0);
    c.cold_bandwidth_gbs = get("cold_bandwidth_gbs", 0.0);
    if (j.contains("last_level_cache_bytes")) c.last_level_cache_bytes = integer("last_level_cache_bytes", j.at("last_level_cache_bytes"));
    if (j.contains("cache_level_bytes")) {
        const nlohmann::json& levels = j.at("cache_level_bytes");
        if (!levels.is_array()) throw wrong("cache_level_bytes", levels);
        for (std::size_t i = 0; i < levels.size(); ++i)
            c.cache_level_bytes.push_back(integer("cache_level_bytes[" + std::to_string(i) + "]", levels[i]));
    }
    c.measured_at = get("measured_at", std::string());
    c.ridgeline_version = get("ridgeline_version", std::string());
    {
        const auto source_text = get("source", std::string("measured"));
        const auto source = backend_api::parse_ceilings_source(source_text);
        if (!source) throw wrong("source", j.at("source"));
        c.source = *source;
    }
    c.method = get("method", std::map<std::string, std::string>{});
    c.spread = numbers("spread");
    if (j.contains("measured_under") && j.at("measured_under").is_object()) {
        const auto& m = j.at("measured_under");
        try {
            c.quick = m.value("quick", false);
            c.disturbed = m.value("disturbed", false);
            c.disturbed_ceilings = m.value("disturbed_ceilings", std::vector<std::string>{});
            c.stolen_fraction = m.value("stolen_fraction", 0.0);
        } catch (const nlohmann::json::exception&) {
            throw wrong("measured_under", m);
        }
        c.load_average = m.contains("load_average") && m.at("load_average").is_number() ? m.at("load_average").get<double>() : -1.0;
    }
    return c;
}

}  // namespace ridgeline::profiler
