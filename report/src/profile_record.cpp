#include "ridgeline/report/profile_record.hpp"

#include <cmath>
#include <limits>

#include "ridgeline/core/error.hpp"
#include "ridgeline/profiler/ceilings_store.hpp"

namespace ridgeline::report {

namespace {

// a time beyond this (11.6 days per layer) is not a measurement: a hand-edited or corrupted report
constexpr double max_time_ms = 1e9;

/// Every string value below `j` through core::printable (the depth is bounded: core::check_json_text).
void sanitize_strings(nlohmann::json& j) {
    if (j.is_string()) {
        j = core::printable(j.get_ref<const std::string&>());
    } else if (j.is_structured()) {
        for (auto& v : j) sanitize_strings(v);
    }
}

/// Every field compare and predict read has the type a profile report gives it (docs/json-schema.md), so a
/// hand-edited or foreign file fails here with the field's path rather than deep inside with a JSON library error.
void check_fields(const std::string& where, const nlohmann::json& j) {
    auto expect = [&](bool ok, const std::string& field, const char* what, const nlohmann::json& got) {
        if (ok) return;
        // the type, or the value when it is a scalar (never dump() a container: it may be nested 100,000 deep)
        std::string shown = got.is_primitive() ? got.dump() : std::string(got.type_name());
        if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
        throw core::error(where + ": " + field + ": expected " + what + ", got " + shown);
    };
    for (const char* k : {"model", "dtype", "source"})
        if (j.contains(k)) expect(j[k].is_string(), std::string("$.") + k, "a string", j[k]);
    if (j.contains("dtype")) {
        const nlohmann::json& d = j["dtype"];
        expect(d == "fp32" || d == "tf32" || d == "fp16" || d == "bf16", "$.dtype", "fp32, tf32, fp16 or bf16", d);
    }
    // a time is a positive, finite number of milliseconds, at most max_time_ms: anything else was not measured
    auto expect_time = [&](const nlohmann::json& v, const std::string& field) {
        expect(v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0 && v.get<double>() <= max_time_ms,
               field, "a positive number of milliseconds (at most 1e9)", v);
    };
    if (j.contains("batch")) expect(j["batch"].is_number_integer(), "$.batch", "an integer", j["batch"]);
    if (j.contains("pass") && !j["pass"].is_null()) {  // a transformer's pass: compare keeps to one, predict copies it
        const auto& p = j["pass"];
        expect(p.is_object(), "$.pass", "an object or null", p);
        const nlohmann::json phase = p.value("phase", nlohmann::json(nullptr));
        expect(phase == "prefill" || phase == "decode", "$.pass.phase", "\"prefill\" or \"decode\"", phase);
        for (const char* k : {"batch", "seq", "kv_len", "kv_cache_bytes"})
            if (p.contains(k))
                expect(p[k].is_number_integer() && p[k].get<std::int64_t>() >= 0, std::string("$.pass.") + k,
                       "an integer >= 0", p[k]);
        // the pass's length: a prefill's tokens, a decode step's cache (a pass without it would read as 0 tokens)
        const char* length = phase == "decode" ? "kv_len" : "seq";
        expect(p.contains(length), std::string("$.pass.") + length, "an integer >= 0 (the pass's length)",
               p.value(length, nlohmann::json(nullptr)));
    }
    if (j.contains("end_to_end")) {
        expect(j["end_to_end"].is_object(), "$.end_to_end", "an object", j["end_to_end"]);
        const auto& e = j["end_to_end"];
        if (e.contains("time") && !e["time"].is_null()) {
            expect(e["time"].is_object(), "$.end_to_end.time", "an object or null", e["time"]);
            expect_time(e["time"].contains("median_ms") ? e["time"]["median_ms"] : nlohmann::json(nullptr),
                        "$.end_to_end.time.median_ms");
        }
    }
    if (j.contains("device") && j["device"].is_object())
        for (const char* k : {"name", "backend"})
            if (j["device"].contains(k))
                expect(j["device"][k].is_string(), std::string("$.device.") + k, "a string", j["device"][k]);
    if (j.contains("timing")) expect(j["timing"].is_object(), "$.timing", "an object", j["timing"]);
    if (j.contains("memory") && !j["memory"].is_null()) {  // predict weighs the pass against the target's memory
        expect(j["memory"].is_object(), "$.memory", "an object or null", j["memory"]);
        for (const char* k : {"parameter_bytes", "buffer_bytes", "kv_cache_bytes", "input_bytes",
                              "total_activation_bytes", "peak_activation_bytes", "workspace_bytes"})
            if (j["memory"].contains(k))
                expect(j["memory"][k].is_number() && std::isfinite(j["memory"][k].get<double>()) &&
                           j["memory"][k].get<double>() >= 0 && j["memory"][k].get<double>() < 9.2e18,
                       std::string("$.memory.") + k, "a count of bytes (a non-negative integer below 2^63)",
                       j["memory"][k]);
    }
    if (j.contains("device")) {
        const auto& d = j["device"];
        expect(d.is_object(), "$.device", "an object", d);
        if (d.contains("threads"))
            expect(d["threads"].is_number_integer() && d["threads"].get<std::int64_t>() >= 0 &&
                       d["threads"].get<std::int64_t>() <= 4096,
                   "$.device.threads", "an integer from 0 to 4096", d["threads"]);
        if (d.contains("ceilings")) {
            const auto& ce = d["ceilings"];
            expect(ce.is_object(), "$.device.ceilings", "an object", ce);
            if (ce.contains("peak_gflops")) {
                expect(ce["peak_gflops"].is_object(), "$.device.ceilings.peak_gflops", "an object", ce["peak_gflops"]);
                for (auto it = ce["peak_gflops"].begin(); it != ce["peak_gflops"].end(); ++it)
                    expect(it.value().is_number(), "$.device.ceilings.peak_gflops." + it.key(), "a number", it.value());
            }
        }
    }
    for (std::size_t i = 0; i < j["layers"].size(); ++i) {
        const auto& l = j["layers"][i];
        const std::string at = "$.layers[" + std::to_string(i) + "]";
        expect(l.is_object(), at, "an object", l);
        // counts are non-negative integers that fit in int64 (the report writes them so)
        for (const char* k : {"flops", "bytes", "macs", "executed_macs"})
            if (l.contains(k) && !l[k].is_null())
                expect(l[k].is_number() && std::isfinite(l[k].get<double>()) && l[k].get<double>() >= 0 &&
                           l[k].get<double>() < 9.2e18,
                       at + "." + k, "a count (a non-negative integer below 2^63)", l[k]);
        expect(l.contains("name") && l["name"].is_string(), at + ".name", "a string", l.value("name", nlohmann::json(nullptr)));
        if (l.contains("bound")) expect(l["bound"].is_string() || l["bound"].is_null(), at + ".bound", "a string or null", l["bound"]);
        if (l.contains("roofs")) {
            expect(l["roofs"].is_object() || l["roofs"].is_null(), at + ".roofs", "an object or null", l["roofs"]);
            if (l["roofs"].is_object())
                for (const char* k : {"compute_gflops", "bandwidth_gbs"})
                    if (l["roofs"].contains(k))
                        expect(l["roofs"][k].is_number(), at + ".roofs." + k, "a number", l["roofs"][k]);
        }
        if (l.contains("time")) {
            const auto& t = l["time"];
            expect(t.is_object() || t.is_null(), at + ".time", "an object or null", t);
            if (t.is_object() && t.contains("disturbed"))
                expect(t["disturbed"].is_boolean(), at + ".time.disturbed", "true or false", t["disturbed"]);
            if (t.is_object())
                for (const char* k : {"median_ms", "ci95_low_ms", "ci95_high_ms"})
                    expect_time(t.contains(k) ? t[k] : nlohmann::json(nullptr), at + ".time." + k);
        }
    }
}


std::string text(const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : std::string();
}

double number(const nlohmann::json& j, const char* key, double fallback = 0) {
    return j.is_object() && j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : fallback;
}

/// A count as the report writes it (an integer below 2^63: check_fields), 0 where absent.
std::int64_t count(const nlohmann::json& j, const char* key) {
    if (!j.contains(key) || !j.at(key).is_number()) return 0;
    const auto& v = j.at(key);
    return v.is_number_integer() ? v.get<std::int64_t>() : static_cast<std::int64_t>(v.get<double>());
}

std::optional<time_record> time_of(const nlohmann::json& t) {
    if (!t.is_object()) return std::nullopt;
    return time_record{number(t, "median_ms"), number(t, "ci95_low_ms"), number(t, "ci95_high_ms"),
                       t.value("disturbed", false)};
}

/// The roofs a layer was judged against (its "roofs" object; zeros where absent, tolerances where given).
core::roofs roofs_of(const nlohmann::json& l) {
    core::roofs r;
    if (!l.contains("roofs") || !l.at("roofs").is_object()) return r;
    const auto& j = l.at("roofs");
    auto get = [&](const char* k) {
        const double v = number(j, k);
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

layer_record layer_of(const nlohmann::json& l) {
    layer_record r;
    r.name = text(l, "name");
    r.op = text(l, "op");
    r.state = text(l, "state");
    r.reason = text(l, "reason");
    r.bound = text(l, "bound");
    r.macs = count(l, "macs");
    r.executed_macs = l.contains("executed_macs") && l.at("executed_macs").is_number() ? count(l, "executed_macs") : r.macs;
    r.flops = count(l, "flops");
    r.bytes = count(l, "bytes");
    if (l.contains("time")) r.time = time_of(l.at("time"));
    if (l.contains("roof_fraction") && l.at("roof_fraction").is_number()) r.roof_fraction = l.at("roof_fraction").get<double>();
    if (l.contains("achieved_gflops") && l.at("achieved_gflops").is_number())
        r.achieved_gflops = l.at("achieved_gflops").get<double>();
    r.roofs = roofs_of(l);
    r.layer = text(l, "layer");
    // the shapes as the report writes them (lists of dimensions >= 1); one that is not leaves them empty
    auto shape_of = [](const nlohmann::json& dims, core::shape& out) {
        if (!dims.is_array()) return false;
        std::vector<std::int64_t> d;
        for (const auto& v : dims) {
            if (!v.is_number_integer() || v.get<std::int64_t>() < 1) return false;
            d.push_back(v.get<std::int64_t>());
        }
        out = core::shape(d);
        return true;
    };
    if (l.contains("input_shapes") && l.at("input_shapes").is_array())
        for (const auto& dims : l.at("input_shapes")) {
            core::shape in;
            if (!shape_of(dims, in)) {
                r.input_shapes.clear();
                break;
            }
            r.input_shapes.push_back(in);
        }
    if (l.contains("output_shape") && !shape_of(l.at("output_shape"), r.output_shape)) r.output_shape = core::shape{};
    return r;
}

/// A transformer's pass, where the report names one of a known phase.
std::optional<core::transformer_run> pass_of(const nlohmann::json& j) {
    if (!j.contains("pass") || !j.at("pass").is_object()) return std::nullopt;
    const auto& p = j.at("pass");
    const std::string phase = text(p, "phase");
    if (phase != "prefill" && phase != "decode") return std::nullopt;
    auto integer = [&](const char* k) {
        return p.contains(k) && p.at(k).is_number_integer() ? p.at(k).get<std::int64_t>() : std::int64_t{0};
    };
    core::transformer_run r;
    r.phase = phase == "decode" ? core::transformer_phase::decode : core::transformer_phase::prefill;
    r.batch = integer("batch");
    r.seq = integer("seq");
    r.kv_len = integer("kv_len");
    return r;
}

/// The schema: a profile (/1 or /2) or a prediction; throws naming the report otherwise.
void check_schema(const nlohmann::json& j, const std::string& where) {
    const std::string schema = text(j, "schema");
    if (schema == "ridgeline.prediction/1") return;
    if (schema.rfind("ridgeline.profile/", 0) != 0)
        throw core::error(where + " is not a ridgeline profile report (schema \"" + schema +
                          "\"; write one with `ridgeline profile --format json --output FILE`)");
    if (schema != "ridgeline.profile/1" && schema != "ridgeline.profile/2")
        throw core::error(where + " is a profile report of a schema this ridgeline does not know (\"" + schema +
                          "\"; it reads ridgeline.profile/1 and /2)");
}

}  // namespace

bool layer_record::disturbed() const {
    return core::parse_bound(bound) == core::bound_class::disturbed || (time && time->disturbed);
}

double profile_record::end_to_end_ms() const {
    if (!end_to_end_state.empty() && end_to_end_state != "measured") return std::nan("");
    if (!end_to_end || end_to_end->disturbed) return std::nan("");
    return end_to_end->median_ms;
}

std::string profile_record::pass_text() const {
    return pass ? core::describe(*pass) + ", batch " + std::to_string(pass->batch) : std::string();
}

const layer_record* profile_record::layer(const std::string& name) const {
    for (const auto& l : layers)
        if (l.name == name) return &l;
    return nullptr;
}

profile_record profile_from_json(nlohmann::json j, const std::string& where) {
    check_schema(j, where);
    if (!j.contains("layers") || !j["layers"].is_array()) throw core::error(where + " has no layers");
    check_fields(where, j);
    sanitize_strings(j);
    profile_record r;
    r.schema = text(j, "schema");
    r.prediction = r.schema == "ridgeline.prediction/1";
    r.model = text(j, "model");
    r.source = text(j, "source");
    if (const std::string dt = text(j, "dtype"); !dt.empty()) {
        r.dtype = dt;
        r.dtype_given = true;
    }
    if (j.contains("batch") && j["batch"].is_number_integer()) r.batch = j["batch"].get<std::int64_t>();
    r.pass = pass_of(j);
    if (j.contains("device") && j["device"].is_object()) {
        const auto& d = j["device"];
        r.device_name = text(d, "name");
        r.backend = text(d, "backend");
        r.threads = d.contains("threads") ? d["threads"].get<int>() : 0;
        if (d.contains("ceilings") && d["ceilings"].is_object()) {
            try {
                r.ceilings = profiler::ceilings_from_json(d["ceilings"]);
            } catch (const core::error&) {  // ceilings this ridgeline cannot read: predicted from the layers' roofs
            }
        }
    }
    r.timing_mode = j.contains("timing") ? text(j["timing"], "mode") : std::string();
    r.cold = r.timing_mode == "cold";
    for (const auto& l : j["layers"]) r.layers.push_back(layer_of(l));
    if (j.contains("end_to_end") && j["end_to_end"].is_object()) {
        r.end_to_end_state = text(j["end_to_end"], "state");
        if (j["end_to_end"].contains("time")) r.end_to_end = time_of(j["end_to_end"]["time"]);
    }
    if (j.contains("memory") && j["memory"].is_object()) {
        const auto& m = j["memory"];
        for (const char* k : {"parameter_bytes", "buffer_bytes", "input_bytes", "total_activation_bytes"})
            if (const double v = number(m, k); v > 0) r.distinct_bytes += v;
        r.memory = memory_record{number(m, "parameter_bytes"), number(m, "buffer_bytes"), number(m, "kv_cache_bytes"),
                                 number(m, "input_bytes"),     number(m, "peak_activation_bytes"),
                                 number(m, "workspace_bytes")};
    }
    r.json = std::move(j);
    return r;
}

}  // namespace ridgeline::report
