#include "ridgeline/report/profile_record.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>

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

/// Throws core::error naming a field's path, what it should be and what it is.
struct field_check {
    const std::string& where;

    void expect(bool ok, const std::string& field, const char* what, const nlohmann::json& got) const {
        if (ok) return;
        // the type, or the value when it is a scalar (never dump() a container: it may be nested 100,000 deep)
        std::string shown = got.is_primitive() ? got.dump() : std::string(got.type_name());
        if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
        throw core::error(where + ": " + field + ": expected " + what + ", got " + shown);
    }
    /// A time: a positive, finite number of milliseconds, at most max_time_ms (anything else was not measured).
    void expect_time(const nlohmann::json& v, const std::string& field) const {
        expect(v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0 && v.get<double>() <= max_time_ms,
               field, "a positive number of milliseconds (at most 1e9)", v);
    }
    /// A count: a non-negative integer below 2^63, as the report writes counts.
    void expect_count(const nlohmann::json& v, const std::string& field) const {
        expect(v.is_number_integer() && (v.is_number_unsigned() ? v.get<std::uint64_t>() < (std::uint64_t{1} << 63)
                                                                : v.get<std::int64_t>() >= 0),
               field, "a count (a non-negative integer below 2^63)", v);
    }
};

void check_pass(const field_check& c, const nlohmann::json& j) {
    if (!j.contains("pass") || j["pass"].is_null()) return;  // a transformer's pass: compare keeps to one, predict copies it
    const auto& p = j["pass"];
    c.expect(p.is_object(), "$.pass", "an object or null", p);
    const nlohmann::json phase = p.value("phase", nlohmann::json(nullptr));
    c.expect(phase == "prefill" || phase == "decode", "$.pass.phase", "\"prefill\" or \"decode\"", phase);
    for (const char* k : {"batch", "seq", "kv_len", "kv_cache_bytes"})
        if (p.contains(k))
            c.expect(p[k].is_number_integer() && p[k].get<std::int64_t>() >= 0, std::string("$.pass.") + k,
                     "an integer >= 0", p[k]);
    // the pass's length: a prefill's tokens, a decode step's cache (a pass without it would read as 0 tokens)
    const char* length = phase == "decode" ? "kv_len" : "seq";
    c.expect(p.contains(length), std::string("$.pass.") + length, "an integer >= 0 (the pass's length)",
             p.value(length, nlohmann::json(nullptr)));
}

void check_device(const field_check& c, const nlohmann::json& j) {
    if (!j.contains("device")) return;
    const auto& d = j["device"];
    c.expect(d.is_object(), "$.device", "an object", d);
    for (const char* k : {"name", "backend"})
        if (d.contains(k)) c.expect(d[k].is_string(), std::string("$.device.") + k, "a string", d[k]);
    if (d.contains("threads"))
        c.expect(d["threads"].is_number_integer() && d["threads"].get<std::int64_t>() >= 0 &&
                     d["threads"].get<std::int64_t>() <= 4096,
                 "$.device.threads", "an integer from 0 to 4096", d["threads"]);
    if (!d.contains("ceilings")) return;
    const auto& ce = d["ceilings"];
    c.expect(ce.is_object(), "$.device.ceilings", "an object", ce);
    if (ce.contains("peak_gflops")) {
        c.expect(ce["peak_gflops"].is_object(), "$.device.ceilings.peak_gflops", "an object", ce["peak_gflops"]);
        for (auto it = ce["peak_gflops"].begin(); it != ce["peak_gflops"].end(); ++it)
            c.expect(it.value().is_number(), "$.device.ceilings.peak_gflops." + it.key(), "a number", it.value());
    }
    // the device's backend and its ceilings' are one device: a cuda report with a CPU's ceilings was edited
    if (d.contains("backend") && ce.contains("backend") && ce["backend"].is_string()) {
        const bool gpu = d["backend"].get<std::string>().rfind("cuda", 0) == 0;
        const bool gpu_ceilings = ce["backend"].get<std::string>().rfind("cuda", 0) == 0;
        c.expect(gpu == gpu_ceilings, "$.device.ceilings.backend",
                 gpu ? "a GPU's (the report's device is one)" : "not a GPU's (the report's device is not one)",
                 ce["backend"]);
    }
}

/// What a pass holds (predict weighs it against the target's memory): counts, the KV cache one of the buffers.
void check_memory(const field_check& c, const nlohmann::json& j) {
    if (!j.contains("memory") || j["memory"].is_null()) return;
    const auto& m = j["memory"];
    c.expect(m.is_object(), "$.memory", "an object or null", m);
    for (const char* k : {"parameter_bytes", "buffer_bytes", "kv_cache_bytes", "input_bytes", "total_activation_bytes",
                          "peak_activation_bytes", "workspace_bytes"})
        if (m.contains(k)) c.expect_count(m[k], std::string("$.memory.") + k);
    if (m.contains("kv_cache_bytes") && m.contains("buffer_bytes"))
        c.expect(m["kv_cache_bytes"].get<double>() <= m["buffer_bytes"].get<double>(), "$.memory.kv_cache_bytes",
                 "at most $.memory.buffer_bytes (the KV cache is one of the buffers)", m["kv_cache_bytes"]);
}

void check_layer(const field_check& c, const nlohmann::json& l, const std::string& at) {
    c.expect(l.is_object(), at, "an object", l);
    // counts are non-negative integers that fit in int64 (the report writes them so)
    for (const char* k : {"flops", "bytes", "macs", "executed_macs"})
        if (l.contains(k) && !l[k].is_null())
            c.expect(l[k].is_number() && std::isfinite(l[k].get<double>()) && l[k].get<double>() >= 0 &&
                         l[k].get<double>() < 9.2e18,
                     at + "." + k, "a count (a non-negative integer below 2^63)", l[k]);
    c.expect(l.contains("name") && l["name"].is_string(), at + ".name", "a string", l.value("name", nlohmann::json(nullptr)));
    for (const char* k : {"op", "layer", "state"})
        if (l.contains(k)) c.expect(l[k].is_string(), at + "." + k, "a string", l[k]);
    if (l.contains("bound")) c.expect(l["bound"].is_string() || l["bound"].is_null(), at + ".bound", "a string or null", l["bound"]);
    if (l.contains("label")) c.expect(l["label"].is_string(), at + ".label", "a string", l["label"]);
    if (l.contains("fused")) {
        c.expect(l["fused"].is_array() && !l["fused"].empty(), at + ".fused", "a list of the group's members", l["fused"]);
        for (std::size_t k = 0; k < l["fused"].size(); ++k) {
            const nlohmann::json& m = l["fused"][k];
            const std::string mat = at + ".fused[" + std::to_string(k) + "]";
            c.expect(m.is_object(), mat, "an object", m);
            for (const char* f : {"name", "op", "layer", "rule"})
                c.expect(m.contains(f) && m[f].is_string(), mat + "." + f, "a string", m.value(f, nlohmann::json(nullptr)));
            for (const char* f : {"macs", "flops", "bytes"})
                c.expect(m.contains(f) && m[f].is_number_integer() && m[f].get<std::int64_t>() >= 0, mat + "." + f,
                         "a count (a non-negative integer below 2^63)", m.value(f, nlohmann::json(nullptr)));
        }
    }
    if (l.contains("roofs")) {
        c.expect(l["roofs"].is_object() || l["roofs"].is_null(), at + ".roofs", "an object or null", l["roofs"]);
        if (l["roofs"].is_object())
            for (const char* k : {"compute_gflops", "bandwidth_gbs"})
                if (l["roofs"].contains(k)) c.expect(l["roofs"][k].is_number(), at + ".roofs." + k, "a number", l["roofs"][k]);
    }
    // shapes: lists of dimensions >= 1 (the op-class models of a GPU read them)
    auto expect_shape = [&](const nlohmann::json& dims, const std::string& field) {
        c.expect(dims.is_array(), field, "a list of dimensions", dims);
        for (std::size_t d = 0; d < dims.size(); ++d)
            c.expect(dims[d].is_number_integer() && dims[d].get<std::int64_t>() >= 1 && dims[d].get<std::int64_t>() <= (std::int64_t{1} << 40),
                     field + "[" + std::to_string(d) + "]", "a dimension (an integer from 1 to 2^40)", dims[d]);
    };
    if (l.contains("input_shapes") && !l["input_shapes"].is_null()) {
        c.expect(l["input_shapes"].is_array(), at + ".input_shapes", "a list of shapes", l["input_shapes"]);
        for (std::size_t k = 0; k < l["input_shapes"].size(); ++k)
            expect_shape(l["input_shapes"][k], at + ".input_shapes[" + std::to_string(k) + "]");
    }
    if (l.contains("output_shape") && !l["output_shape"].is_null()) expect_shape(l["output_shape"], at + ".output_shape");
    if (!l.contains("time")) return;
    const auto& t = l["time"];
    c.expect(t.is_object() || t.is_null(), at + ".time", "an object or null", t);
    if (!t.is_object()) return;
    if (t.contains("disturbed")) c.expect(t["disturbed"].is_boolean(), at + ".time.disturbed", "true or false", t["disturbed"]);
    for (const char* k : {"median_ms", "ci95_low_ms", "ci95_high_ms"})
        c.expect_time(t.contains(k) ? t[k] : nlohmann::json(nullptr), at + ".time." + k);
    // an interval holds its median
    c.expect(t["ci95_low_ms"].get<double>() <= t["median_ms"].get<double>() &&
                 t["median_ms"].get<double>() <= t["ci95_high_ms"].get<double>(),
             at + ".time.median_ms", "within [ci95_low_ms, ci95_high_ms]", t["median_ms"]);
}

/// Every field compare and predict read has the type a profile report gives it (docs/json-schema.md), so a
/// hand-edited or foreign file fails here with the field's path rather than deep inside with a JSON library error.
void check_fields(const std::string& where, const nlohmann::json& j) {
    const field_check c{where};
    for (const char* k : {"model", "dtype", "source"})
        if (j.contains(k)) c.expect(j[k].is_string(), std::string("$.") + k, "a string", j[k]);
    if (j.contains("dtype")) {
        const nlohmann::json& d = j["dtype"];
        c.expect(d == "fp32" || d == "tf32" || d == "fp16" || d == "bf16", "$.dtype", "fp32, tf32, fp16 or bf16", d);
    }
    if (j.contains("batch")) c.expect(j["batch"].is_number_integer(), "$.batch", "an integer", j["batch"]);
    check_pass(c, j);
    if (j.contains("end_to_end")) {
        c.expect(j["end_to_end"].is_object(), "$.end_to_end", "an object", j["end_to_end"]);
        const auto& e = j["end_to_end"];
        if (e.contains("time") && !e["time"].is_null()) {
            c.expect(e["time"].is_object(), "$.end_to_end.time", "an object or null", e["time"]);
            c.expect_time(e["time"].contains("median_ms") ? e["time"]["median_ms"] : nlohmann::json(nullptr),
                          "$.end_to_end.time.median_ms");
        }
    }
    check_device(c, j);
    if (j.contains("timing")) c.expect(j["timing"].is_object(), "$.timing", "an object", j["timing"]);
    check_memory(c, j);
    std::set<std::string> names;  // two layers of one name would be compared and predicted as one
    for (std::size_t i = 0; i < j["layers"].size(); ++i) {
        const std::string at = "$.layers[" + std::to_string(i) + "]";
        check_layer(c, j["layers"][i], at);
        const std::string& name = j["layers"][i]["name"].get_ref<const std::string&>();
        c.expect(names.insert(name).second, at + ".name", "a name no other layer has", j["layers"][i]["name"]);
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
    if (l.contains("fused"))
        for (const auto& m : l.at("fused"))
            r.fused.push_back({text(m, "name"), text(m, "op"), text(m, "layer"), text(m, "rule"), count(m, "macs"),
                               count(m, "flops"), count(m, "bytes")});
    r.label = l.contains("label") ? text(l, "label") : r.name;
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
    if (schema.rfind("ridgeline.profile/", 0) != 0) {
        // say what it looks like, where it looks like another of ridgeline's files
        const std::string looks = j.contains("layers") && j.contains("inputs") ? "a model file, "
                                  : j.contains("model_type")                  ? "a Hugging Face config.json, "
                                  : schema.empty()                            ? ""
                                                                              : "schema \"" + schema + "\", ";
        throw core::error(where + " is not a ridgeline profile report (" + looks +
                          "write one with `ridgeline profile --format json --output FILE`)");
    }
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
        // a memory fit stands on every part: a report that lacks one has no fit (never a part taken as 0)
        bool whole = true;
        for (const char* k : {"parameter_bytes", "buffer_bytes", "kv_cache_bytes", "input_bytes", "peak_activation_bytes",
                              "workspace_bytes"})
            whole = whole && m.contains(k);
        if (whole)
            r.memory = memory_record{number(m, "parameter_bytes"), number(m, "buffer_bytes"), number(m, "kv_cache_bytes"),
                                     number(m, "input_bytes"),     number(m, "peak_activation_bytes"),
                                     number(m, "workspace_bytes")};
    }
    r.json = std::move(j);
    return r;
}

}  // namespace ridgeline::report
