#include "ridgeline/report/predict.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <tuple>
#include <stdexcept>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/file.hpp"
#include "ridgeline/core/predict.hpp"
#include "ridgeline/report/ceilings.hpp"
#include "ridgeline/report/format.hpp"

namespace ridgeline::report {


namespace {

constexpr std::string_view roofs_rule_method =
    "t = dispatch + the source's work x (m x memory ratio + (1 - m) x compute ratio), m the share of the work the "
    "memory floor accounts for on the source; a change of cache state adds the bytes from DRAM and the cold fixed "
    "cost (core::predict_time, docs/roofline.md)";
constexpr std::string_view class_models_method =
    "each layer's time by the GPU's op-class model of its kind, from its shapes alone (core/gpu_model.hpp, "
    "docs/roofline.md): GEMMs (linear, matmul, conv2d) as tiles in waves over the SMs, or a small-M kernel at up to "
    "16 rows, never faster than their bytes; streams (elementwise, norms, softmax, reductions) by their bytes at the "
    "attained bandwidth; attention as a flash kernel or PyTorch's math path; one launch each";

bool matrix_work(const std::string& op) { return op == "linear" || op == "conv2d" || op == "matmul"; }

std::string us(double ms) { return shortest(ms * 1000.0) + " us"; }

double positive(const std::map<std::string, double>& m, const std::string& key) {
    auto it = m.find(key);
    return it != m.end() && it->second > 0 && std::isfinite(it->second) ? it->second : 0.0;
}

}  // namespace

core::roofs roofs_on(const backend_api::ceilings& c, const std::string& op, const std::string& dt, std::int64_t bytes,
                     bool cold) {
    core::roofs r;
    const double peak = positive(c.peak_gflops, dt), fma = positive(c.fma_peak_gflops, dt);
    // like with like: matrix work at the compute roof (tensor cores on a GPU), the rest on the FMA units
    r.compute_gflops = matrix_work(op) || !(fma > 0) ? peak : fma;
    r.gemm_gflops = positive(c.gemm_gflops, dt);
    r.bandwidth_gbs = cold ? c.dram_roof_gbs(bytes) : c.bandwidth_for_working_set_gbs(bytes);
    // as the profiler judges a cold sample: one run after a flush, at the cold fixed cost where measured
    r.dispatch_ms = c.dispatch_ms(cold);
    r.compute_tolerance = c.compute_tolerance(dt);
    r.bandwidth_tolerance = c.bandwidth_tolerance();
    return r;
}

core::prediction_input prediction_input_for(const layer_record& layer, const core::roofs& source_roofs, bool source_cold,
                                            const backend_api::ceilings& target, const std::string& dt, bool target_cold) {
    core::prediction_input in;
    const std::string& op = layer.op;
    in.flops = static_cast<std::int64_t>(std::max(0.0, layer.executed_flops()));
    in.bytes = std::max<std::int64_t>(0, layer.bytes);
    if (layer.time) {
        in.median_ms = layer.time->median_ms;
        in.ci95_low_ms = layer.time->ci95_low_ms;
        in.ci95_high_ms = layer.time->ci95_high_ms;
    }
    in.source = source_roofs;
    in.target = roofs_on(target, op, dt, in.bytes, source_cold);
    if (target_cold != source_cold) {
        core::cache_shift s;
        s.to_cold = target_cold;
        s.level_gbs = target.bandwidth_for_working_set_gbs(in.bytes);
        // a single cold run moves its bytes at what one run after a flush attains, where measured
        s.dram_gbs = target.cold_run_bandwidth_gbs();
        s.hot_dispatch_ms = target.dispatch_overhead_ms;
        s.cold_dispatch_ms = target.cold_dispatch_overhead_ms;
        in.shift = s;
    }
    return in;
}

prediction_target datasheet_target(const core::datasheet_entry& e) {
    prediction_target t;
    t.entry = e;
    t.datasheet = true;
    t.gpu = e.device.rfind("NVIDIA", 0) == 0;
    t.label = std::string(e.device) + " (datasheet)";
    t.short_label = std::string(e.device);
    auto& c = t.ceilings;
    c.backend = "datasheet";
    c.device_name = std::string(e.device);
    c.fingerprint = "datasheet:" + std::string(e.key);
    c.source = backend_api::ceilings_source::datasheet;
    for (core::dtype dt : {core::dtype::fp32, core::dtype::tf32, core::dtype::fp16, core::dtype::bf16}) {
        const auto p = e.peak_tflops(dt);
        if (!p) continue;
        const std::string name(core::to_string(dt));
        c.peak_gflops[name] = *p * 1000.0;
        // a GPU does what is not matrix work on its FMA (CUDA) cores; a CPU's peaks are its FMA units already
        c.fma_peak_gflops[name] = t.gpu ? e.fp32_tflops * 1000.0 : *p * 1000.0;
        c.method["peak_gflops." + name] = "datasheet: " + std::string(e.source);
    }
    c.bandwidth_gbs = e.memory_bandwidth_gbs;
    c.method["bandwidth_gbs"] = "datasheet: " + std::string(e.source);
    c.dispatch_overhead_ms = t.gpu ? datasheet_gpu_dispatch_ms : datasheet_cpu_dispatch_ms;
    c.method["dispatch_overhead_ms"] = "assumed (a datasheet has none)";
    t.assumptions = {
        "predicted from datasheet peaks, not measured: " + core::describe_peaks(e),
        std::string("dispatch cost assumed ") + us(c.dispatch_overhead_ms) + " per layer (a datasheet has none; " +
            (t.gpu ? "a kernel launched through cuBLAS/cuDNN" : "a oneDNN primitive on a CPU") + ")"};
    t.roofs_rule_assumptions = {
        "no cache levels: every layer's bytes move at the memory bandwidth, " + shortest(e.memory_bandwidth_gbs) +
            " GB/s (pessimistic for working sets that fit a cache)",
        t.gpu ? "matrix work (linear, conv2d, matmul) at the tensor-core peak of its data type (fp32: the FMA peak), "
                "everything else at the fp32 FMA peak"
              : "every layer at the CPU's peak of its data type"};
    return t;
}

prediction_target load_target(const std::string& spec) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const bool looks_like_a_file = spec.find('/') != std::string::npos || fs::path(spec).extension() == ".json";
    // a bare name is a datasheet entry first, so a folder named like a key (./h100/) does not hide the key
    if (!looks_like_a_file) {
        try {
            return datasheet_target(core::datasheet_by_name(spec));
        } catch (const std::invalid_argument&) {
        }
    }
    if (!fs::exists(spec, ec)) {
        if (looks_like_a_file)
            throw core::error("predict --to: \"" + spec + "\" does not exist (a ceilings or profile JSON file, "
                                     "or a datasheet entry: predict --list-targets)");
        try {
            return datasheet_target(core::datasheet_by_name(spec));
        } catch (const std::invalid_argument& e) {
            throw core::error(std::string("predict --to: ") + e.what());
        }
    }
    const std::string text = core::read_regular_file(spec, "\"" + core::printable(spec) + "\"");
    core::check_json_text(text, "\"" + core::printable(spec) + "\"");
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw core::error("\"" + spec + "\" is not valid JSON: " + core::without_json_exception_tag(e.what()));
    }
    const std::string schema = j.contains("schema") && j["schema"].is_string() ? j["schema"].get<std::string>() : "";
    const nlohmann::json* ce = nullptr;
    if (schema == "ridgeline.ceilings/2" || schema == profiler::ceilings_schema)
        ce = &j;
    else if (schema.rfind("ridgeline.ceilings/", 0) == 0)
        throw core::error("\"" + spec + "\" is ceilings of a schema this ridgeline does not know (\"" + schema +
                                 "\"; it reads ridgeline.ceilings/2 and " + profiler::ceilings_schema + ")");
    else if (schema.rfind("ridgeline.profile/", 0) == 0 && j.contains("device") && j["device"].is_object() &&
             j["device"].contains("ceilings") && j["device"]["ceilings"].is_object())
        ce = &j["device"]["ceilings"];
    else if (schema.rfind("ridgeline.profile/", 0) == 0)
        throw core::error("\"" + spec + "\" is a profile report without ceilings (profiled with --no-roofline?); "
                                 "give the target's ceilings: ridgeline ceilings --format json --output FILE");
    else
        throw core::error("\"" + spec + "\" is neither ceilings nor a profile report (schema \"" + schema +
                                 "\"; write one with `ridgeline ceilings --format json --output FILE`)");
    prediction_target t;
    try {
        t.ceilings = profiler::ceilings_from_json(*ce);
    } catch (const core::error& e) {
        throw core::error("\"" + spec + "\": " + e.what());
    }
    // disturbed first: a calibration that other work disturbed can hold values no device has (an 8 ms dispatch
    // cost, the VM's time slice), and the reason to give is the disturbance
    if (t.ceilings.disturbed)
        throw core::error("\"" + spec + "\" has disturbed ceilings (other work pushed them down); measure the "
                                 "target's ceilings again on a quieter machine");
    if (const std::string why = backend_api::implausible_ceilings(t.ceilings); !why.empty())
        throw core::error("\"" + spec + "\" has ceilings no device has: " + why);
    t.gpu = t.ceilings.backend.rfind("cuda", 0) == 0;
    t.entry = core::find_datasheet(t.ceilings.device_name);
    t.label = fs::path(spec).filename().string() + " (" + t.ceilings.backend +
              (t.ceilings.device_name.empty() ? "" : ", " + t.ceilings.device_name) + ", measured)";
    t.short_label = fs::path(spec).filename().string() + " (" + t.ceilings.backend + ")";
    return t;
}

std::optional<core::gpu_spec> gpu_spec_for(const backend_api::ceilings& c, const std::string& dt) {
    const core::dtype d = core::parse_dtype(dt);
    const auto entry = core::find_datasheet(c.device_name);
    if (c.source == backend_api::ceilings_source::datasheet || c.backend == "datasheet") {
        if (!entry || entry->sms <= 0) return std::nullopt;  // a CPU's datasheet
        return core::gpu_spec_of(*entry, d, c.dispatch_overhead_ms);
    }
    if (c.backend.rfind("cuda", 0) != 0) return std::nullopt;
    // without its SM count and architecture the waves and the attention kernel would be guesses (1 SM: every GEMM one
    // wave long): refused by name rather than predicted from a made-up GPU
    if (!entry || entry->sms <= 0)
        throw core::error("the GPU \"" + c.device_name +
                          "\" has no datasheet entry: the op-class models need its SM count and architecture (the "
                          "GPUs known: predict --list-targets)");
    core::gpu_spec s;
    s.name = c.device_name;
    s.sms = entry->sms;
    const auto gemm = c.gemm_gflops.find(dt);
    const auto peak = c.peak_gflops.find(dt);
    s.matrix_gflops = gemm != c.gemm_gflops.end() ? gemm->second : peak != c.peak_gflops.end() ? peak->second : 0.0;
    s.vector_gflops = c.fma_peak_gflops.count("fp32") ? c.fma_peak_gflops.at("fp32") : s.matrix_gflops;
    s.memory_gbs = c.bandwidth_gbs;
    s.gemm_fraction = 1.0;  // measured: what a GEMM attains already
    s.memory_fraction = 1.0;
    s.launch_ms = c.dispatch_overhead_ms;
    const int cc = entry->compute_capability;
    s.flash_attention = (d == core::dtype::fp16 || d == core::dtype::bf16) && cc >= 80;
    s.flash_fraction = cc >= 90 ? core::flash_fraction_hopper : core::flash_fraction_ampere;
    return s;
}

std::optional<core::gpu_estimate> class_estimate(const layer_record& l, const std::string& dt, const core::gpu_spec& s,
                                                 std::string& why) {
    core::op o;
    try {
        o = core::parse_op(l.layer);
    } catch (const core::error& e) {
        why = "its layer string cannot be read (" + std::string(e.what()) + "): no op-class model";
        return std::nullopt;
    }
    if (l.input_shapes.empty() || l.output_shape.rank() == 0) {
        why = "the report gives no shapes for it: no op-class model";
        return std::nullopt;
    }
    // a fused group is modelled as its producer (the layer string), reading the producer's inputs (the first of the
    // group's) and moving the group's bytes: its post-ops run in the producer's epilogue
    std::vector<core::shape> inputs = l.input_shapes;
    std::int64_t expected_flops = l.flops;
    if (!l.fused.empty()) {
        const int arity = std::visit([](const auto& op) { return std::decay_t<decltype(op)>::min_inputs; }, o);
        if (static_cast<std::size_t>(arity) > inputs.size()) {
            why = "its group reads fewer inputs than its producer takes: no op-class model";
            return std::nullopt;
        }
        inputs.resize(static_cast<std::size_t>(arity));
        expected_flops = l.fused.front().flops;
    }
    // the shapes must be the ones its counts were made from: an edited report's shapes would model another layer
    // (a 64x3x512x512 input under a 1x3x32x32 conv's FLOPs), and shapes past int64 would wrap
    try {
        const core::model_analysis a = core::analyze(core::single_layer_model(o, inputs), core::parse_dtype(dt));
        const std::int64_t flops = a.layers.at(0).cost.flops;
        if (flops != expected_flops || a.layers.at(0).output_shape != l.output_shape) {
            why = "its shapes give " + with_commas(flops) + " FLOPs and an output of " +
                  a.layers.at(0).output_shape.to_string() + ", its counts " + with_commas(expected_flops) + " and " +
                  l.output_shape.to_string() + ": the report's shapes and counts disagree (edited?)";
            return std::nullopt;
        }
    } catch (const core::error& e) {
        why = "its layer string and shapes cannot be analysed (" + std::string(e.what()) + "): no op-class model";
        return std::nullopt;
    }
    core::cost c;
    c.macs = l.macs;
    c.flops = l.flops;
    c.bytes = l.bytes;
    c.skipped_macs = l.macs - l.executed_macs;
    return core::estimate_on_gpu(o, inputs, l.output_shape, core::parse_dtype(dt), c, s);
}

namespace {

/// What predict_json carries from layer to layer: the source and the target, and the sums of the predicted layers.
struct prediction_pass {
    const profile_record& report;
    const prediction_target& target;
    std::string dtype;
    bool source_cold = false, use_cold = false;
    std::optional<backend_api::ceilings> source_ceilings;
    double src_sum = 0, pred_sum = 0, same_state_sum = 0, low_sum = 0, high_sum = 0, base_sum = 0;
    double unpredicted_ms = 0;  // timed on the source but not predicted (disturbed, mistrusted)
    double floor_sum = 0;       // the target's dispatch cost plus floor, summed: no pass is faster
    int changes = 0;
    int disturbed_sources = 0;  // predicted layers (a GPU's, from their shapes) whose source time was disturbed
    nlohmann::json layers = nlohmann::json::array(), missing = nlohmann::json::array();
    /// The target is a GPU and the source is not: each layer's time comes from the GPU's op-class models
    /// (core/gpu_model.hpp), not from the efficiency it reached on the source.
    std::optional<core::gpu_spec> gpu{};
};

/// A layer's time by the op-class model of the GPU target, as a prediction: the model's time, an interval of
/// core::class_model_error either side, the naive baseline kept for comparison; empty (and the reason in `why`)
/// where the report's layer string or shapes cannot be read.
std::optional<core::prediction> class_prediction(const layer_record& l, const core::prediction_input& in,
                                                 const prediction_pass& pass, std::string& model, std::string& why) {
    const auto est = class_estimate(l, pass.dtype, *pass.gpu, why);
    if (!est) return std::nullopt;
    const core::gpu_estimate& e = *est;
    core::prediction p = core::predict_time(in);  // for the baseline and the floors, not the time
    p.time_ms = e.time_ms;
    p.low_ms = e.time_ms / (1 + core::class_model_error);
    p.high_ms = e.time_ms * (1 + core::class_model_error);
    p.efficiency = std::nan("");
    p.memory_share = e.memory_ms >= e.compute_ms ? 1.0 : 0.0;
    p.cache_shift_ms = 0;
    p.reason = e.detail + " (the GPU's " + e.model + " model, not the source's efficiency)";
    model = e.model;
    return p;
}

/// One source layer predicted on the target: appended to pass.layers and summed, or to pass.missing with the reason.
void predict_layer(const layer_record& l, prediction_pass& pass) {
    const std::string& name = l.name;
    const std::string& op = l.op;
    const std::string& dt = pass.dtype;
    auto skip = [&](const std::string& why) { pass.missing.push_back({{"name", name}, {"op", op}, {"reason", why}}); };
    if (!l.time) {
        skip(l.state == "view" ? "a view: no time on either device"
                               : "no time on the source" + (l.reason.empty() ? "" : " (" + l.reason + ")"));
        return;
    }
    if (l.disturbed() && !pass.gpu) {
        pass.unpredicted_ms += std::max(0.0, l.time->median_ms);
        skip("its time on the source was disturbed by other work");
        return;
    }
    if (l.bound == "mistrusted" && !pass.gpu) {
        pass.unpredicted_ms += std::max(0.0, l.time->median_ms);
        skip("its time beats the source's roofs (mistrusted): no efficiency to carry over");
        return;
    }
    const double flops = std::max(0.0, l.executed_flops());
    const auto bytes = static_cast<double>(std::max<std::int64_t>(0, l.bytes));
    core::roofs source_roofs = l.roofs;
    if (!(source_roofs.compute_gflops > 0) && !(source_roofs.bandwidth_gbs > 0) && pass.source_ceilings)
        source_roofs = roofs_on(*pass.source_ceilings, op, dt, static_cast<std::int64_t>(bytes), pass.source_cold);
    const auto& target = pass.target.ceilings;
    core::prediction_input in = prediction_input_for(l, source_roofs, pass.source_cold, target, dt, pass.use_cold);
    if (flops > 0 && !(in.target.compute_gflops > 0)) return skip("the target has no " + dt + " compute peak");
    if (!(in.source.compute_gflops > 0) && !(in.source.bandwidth_gbs > 0) && !pass.gpu)
        return skip("the source report has no roofs for it (profiled with --no-roofline, or its ceilings were disturbed)");
    std::string model, why;
    std::optional<core::prediction> predicted = core::predict_time(in);
    if (pass.gpu) predicted = class_prediction(l, in, pass, model, why);
    if (!predicted) return skip(why);
    const core::prediction& p = *predicted;
    if (p.rule == core::prediction_rule::none && !pass.gpu) return skip(p.reason);
    if (model.empty()) model = std::string(core::to_string(p.rule));
    // the roofs the layer is judged against on the target, in the cache state it is judged in
    const core::roofs judged = roofs_on(target, op, dt, in.bytes, pass.use_cold);
    // judged on the predicted time itself: the interval is the rule's uncertainty, not a measurement's CI
    const core::roofline_point target_point = core::classify(in.flops, in.bytes, p.time_ms, p.time_ms, p.time_ms, judged);
    // the end-to-end pass is flushed once, not per layer: it is predicted from the layers timed like the source
    core::prediction_input same_state = in;
    same_state.shift.reset();
    const double same_state_ms = in.shift && !pass.gpu ? core::predict_time(same_state).time_ms : p.time_ms;
    const std::string& source_bound = l.bound;
    const std::string target_bound(core::to_string(target_point.bound));
    // a disturbed source time is no measurement (the GPU's time came from the shapes): no speedup from it, and
    // "disturbed" is no bound to have changed from
    const bool source_disturbed = l.disturbed();
    if (source_disturbed) ++pass.disturbed_sources;
    const bool changed = !source_bound.empty() && !source_disturbed && source_bound != target_bound;
    pass.changes += changed;
    pass.src_sum += in.median_ms;
    pass.floor_sum += judged.dispatch_ms + p.target_floor_ms;
    pass.pred_sum += p.time_ms;
    pass.same_state_sum += same_state_ms;
    pass.low_sum += p.low_ms;
    pass.high_sum += p.high_ms;
    pass.base_sum += std::isfinite(p.baseline_ms) ? p.baseline_ms : p.time_ms;
    auto or_null = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    pass.layers.push_back({
        {"name", name},
        {"op", op},
        {"macs", l.macs},
        {"executed_macs", l.executed_macs},
        {"flops", l.flops},
        {"bytes", l.bytes},
        {"source_time", {{"median_ms", in.median_ms}, {"ci95_low_ms", in.ci95_low_ms}, {"ci95_high_ms", in.ci95_high_ms}}},
        {"source_bound", source_bound.empty() ? nlohmann::json(nullptr) : nlohmann::json(source_bound)},
        {"source_roof_fraction", l.roof_fraction ? nlohmann::json(*l.roof_fraction) : nlohmann::json(nullptr)},
        {"time",
         {{"median_ms", p.time_ms}, {"ci95_low_ms", p.low_ms}, {"ci95_high_ms", p.high_ms}, {"predicted", true},
          {"disturbed", false}}},
        {"speedup", source_disturbed ? nlohmann::json(nullptr) : nlohmann::json(in.median_ms / p.time_ms)},
        {"baseline_ms", or_null(p.baseline_ms)},
        {"floor_ms", p.target_floor_ms},
        {"compute_floor_ms", judged.compute_gflops > 0 ? flops / (judged.compute_gflops * 1e6) : 0.0},
        {"memory_floor_ms", judged.bandwidth_gbs > 0 ? bytes / (judged.bandwidth_gbs * 1e6) : 0.0},
        {"achieved_gflops", flops > 0 ? nlohmann::json(flops / (p.time_ms * 1e6)) : nlohmann::json(nullptr)},
        {"achieved_gbs", bytes > 0 ? nlohmann::json(bytes / (p.time_ms * 1e6)) : nlohmann::json(nullptr)},
        // as a profile shows it: an overhead-bound layer's against its dispatch cost, any other's against its floor
        {"roof_fraction", target_point.bound == core::bound_class::overhead && judged.dispatch_ms > 0
                              ? std::min(1.0, judged.dispatch_ms / p.time_ms)
                              : p.target_floor_ms / p.time_ms},
        {"bound", target_bound},
        {"bound_reason", target_point.reason},
        {"bound_changed", changed},
        {"floor_changes", p.bound_changes},
        {"rule", model},
        {"efficiency", or_null(p.efficiency)},
        {"reason", p.reason},
        {"memory_share", p.memory_share},
        {"cache_shift_ms", p.cache_shift_ms},
        {"roofs",
         {{"compute_gflops", judged.compute_gflops},
          {"gemm_gflops", judged.gemm_gflops},
          {"bandwidth_gbs", judged.bandwidth_gbs},
          {"dispatch_ms", judged.dispatch_ms},
          {"compute_tolerance", judged.compute_tolerance},
          {"bandwidth_tolerance", judged.bandwidth_tolerance},
          {"compute_checked", true}}}});
    if (!l.fused.empty()) {  // a group: its label and members, as the source's report has them (compare reads them)
        nlohmann::json members = nlohmann::json::array();
        for (const auto& m : l.fused)
            members.push_back({{"name", m.name}, {"op", m.op}, {"layer", m.layer}, {"rule", m.rule}, {"macs", m.macs},
                               {"flops", m.flops}, {"bytes", m.bytes}});
        pass.layers.back()["label"] = l.label;
        pass.layers.back()["fused"] = members;
    }
}

/// The change of cache state of the whole pass (core::pass_cache_shift_ms): a pass flushed once (cold) pays the cold
/// fixed cost once and fetches every distinct byte (parameters, buffers, input, activations) from DRAM instead of the
/// level the whole working set fits in, unless the hot pass could not keep them in the cache either. Its time (0
/// without a change) and how it was found, for the end-to-end's "how".
std::pair<double, std::string> pass_shift_of(const prediction_pass& pass) {
    if (pass.use_cold == pass.source_cold) return {0.0, ""};
    const bool use_cold = pass.use_cold;
    const auto& c = pass.target.ceilings;
    core::pass_cache_change change;
    change.distinct_bytes = pass.report.distinct_bytes;
    change.capacity_bytes = c.hot_cache_capacity_bytes();
    change.level_gbs = c.bandwidth_for_working_set_gbs(static_cast<std::int64_t>(change.distinct_bytes));
    change.cold_gbs = c.cold_run_bandwidth_gbs();
    change.hot_dispatch_ms = c.dispatch_overhead_ms;
    change.cold_dispatch_ms = c.cold_dispatch_overhead_ms;
    double shift = 0;
    if (const double s = core::pass_cache_shift_ms(change); std::isfinite(s)) shift = (use_cold ? 1 : -1) * s;
    const bool fits = core::pass_stays_cached(change.distinct_bytes, change.capacity_bytes);
    const std::string bytes = si(change.distinct_bytes, "B");
    const std::string kept =
        change.capacity_bytes < 0
            ? "what the target's hot cache holds is unknown (no working-set sweep): taken to hold them"
            : "a pass keeps " + si(core::pass_cache_share * static_cast<double>(change.capacity_bytes), "B") +
                  " in the target's hot cache, " + shortest(core::pass_cache_share) + " of the " +
                  si(static_cast<double>(change.capacity_bytes), "B") + " it holds";
    // the direction: a cold pass pays what a hot one saves
    return {shift,
            std::string("; ") + (use_cold ? "a cold pass pays the cold fixed cost once" : "a hot pass saves the cold fixed cost") +
                (fits ? std::string(use_cold ? " and fetches its distinct bytes (" : " and the fetch of its distinct bytes (") +
                            bytes + (use_cold ? ") from DRAM once (" : ") from DRAM (") + kept + ")"
                      : "; its distinct bytes (" + bytes + ") exceed what stays cached (" + kept +
                            "), so a hot pass fetches them from DRAM too") +
                " (" + (shift >= 0 ? "+" : "") + time_ms(shift) + ")"};
}

/// The end to end on the target (core::predict_end_to_end): the predicted layers plus the source's gap beyond its
/// layers, scaled; with a cache shift, from the layers timed like the source plus the pass's one change of fixed cost.
nlohmann::json predicted_end_to_end(const prediction_pass& pass) {
    const double src_e2e = pass.report.end_to_end_ms();  // NaN where the source's pass was disturbed: nothing to scale
    const bool src_e2e_disturbed = pass.report.end_to_end_state == "disturbed";
    if (pass.gpu)  // the layers' kernels one after another: a CPU's time between its layers says nothing of a GPU's
        return {{"time", {{"median_ms", pass.pred_sum}, {"ci95_low_ms", pass.low_sum}, {"ci95_high_ms", pass.high_sum},
                          {"predicted", true}}},
                {"source_ms", std::isfinite(src_e2e) ? nlohmann::json(src_e2e) : nlohmann::json(nullptr)},
                {"baseline_ms", pass.base_sum},
                {"how", "the sum of the predicted layers, each its kernels' launches and time by the GPU's op-class "
                        "models (the source's time between its layers is a CPU's and is not carried over)"}};
    const auto [pass_shift, pass_how] = pass_shift_of(pass);
    // layers timed on the source but not predicted (disturbed, mistrusted) are part of its end-to-end time, not
    // of the gap: they are taken to scale as the predicted layers do
    const double ratio = pass.src_sum > 0 ? pass.same_state_sum / pass.src_sum : std::nan("");
    const double e2e_pred = core::predict_end_to_end(src_e2e, pass.src_sum + pass.unpredicted_ms,
                                                     pass.same_state_sum + pass.unpredicted_ms * ratio);
    if (std::isfinite(e2e_pred) && std::isfinite(e2e_pred + pass_shift)) {
        // never faster than the target's fixed costs and floors of the predicted layers
        const double predicted = std::max(e2e_pred + pass_shift, pass.floor_sum);
        std::string how = "the predicted layers plus the source's end-to-end time beyond its layers' sum, scaled by the "
                          "layers' speedup to the power " + shortest(core::gap_exponent);
        if (pass.unpredicted_ms > 0)
            how += "; the layers timed but not predicted (" + time_ms(pass.unpredicted_ms) +
                   " on the source) are scaled as the predicted ones";
        how += pass_how;
        return {{"time",
                 {{"median_ms", predicted},
                  {"ci95_low_ms", std::min(predicted, predicted * (pass.low_sum / pass.pred_sum))},
                  {"ci95_high_ms", std::max(predicted, predicted * (pass.high_sum / pass.pred_sum))},
                  {"predicted", true}}},
                {"source_ms", src_e2e},
                {"baseline_ms", src_e2e * (pass.base_sum / pass.src_sum)},
                {"how", how}};
    }
    return {{"time", {{"median_ms", pass.pred_sum}, {"ci95_low_ms", pass.low_sum}, {"ci95_high_ms", pass.high_sum},
                      {"predicted", true}}},
            {"source_ms", nullptr},
            {"baseline_ms", pass.base_sum},
            {"how", std::isfinite(src_e2e) && src_e2e > 0
                        ? "the sum of the predicted layer times (the end-to-end prediction did not fit in a double)"
                        : src_e2e_disturbed
                              ? "the sum of the predicted layer times (the source's end-to-end pass was disturbed by "
                                "other work: not a measurement to scale)"
                              : "the sum of the predicted layer times (the source has no end-to-end time)"}};
}

/// The layers the end to end leaves out: those not predicted that are not views (a view has no time anywhere), with
/// their time on the source where they have one.
struct left_out {
    int layers = 0;
    int timed = 0;     // of them, those with a time on the source
    double ms = 0;     // their time there
};
left_out left_out_of(const prediction_pass& pass) {
    left_out out;
    for (const auto& l : pass.report.layers) {
        if (l.state == "view") continue;
        const bool predicted = std::any_of(pass.layers.begin(), pass.layers.end(),
                                           [&](const nlohmann::json& p) { return p["name"] == l.name; });
        if (predicted) continue;
        ++out.layers;
        if (l.time) {
            ++out.timed;
            out.ms += std::max(0.0, l.time->median_ms);
        }
    }
    return out;
}

/// Whether the pass fits the target's memory: what it holds at once (weights, buffers, KV cache, input, activations
/// at their peak, workspace; the source report's "memory") against the datasheet entry's memory. Null where either is
/// unknown.
nlohmann::json memory_fit(const prediction_pass& pass) {
    const auto& entry = pass.target.entry;
    if (!pass.report.memory || !entry || !(entry->memory_gb > 0)) return nullptr;
    const memory_record& m = *pass.report.memory;
    const double target = entry->memory_gb * static_cast<double>(1LL << 30);
    const double needed = m.resident_bytes();
    const bool fits = needed <= target;
    auto gib = [](double b) {  // binary units, as the datasheet's memory sizes are
        constexpr double k = 1024.0;
        return b >= 0.1 * k * k * k ? fixed(b / (k * k * k), 2) + " GiB"
               : b >= 0.1 * k * k   ? fixed(b / (k * k), 1) + " MiB"
                                    : fixed(b / k, 1) + " KiB";
    };
    const std::string text =
        "the pass needs " + gib(needed) + " (weights " + gib(m.weight_bytes()) + ", KV cache " +
        gib(m.kv_cache_bytes) + ", activations at their peak " + gib(m.peak_activation_bytes + m.input_bytes) +
        (m.workspace_bytes > 0 ? ", workspace " + gib(m.workspace_bytes) : std::string()) + ") " +
        (fits ? "of the target's " + gib(target) : "and does not fit the target's " + gib(target) +
                                                        ": a real run needs a smaller batch, a shorter cache, another "
                                                        "data type or more devices");
    auto count = [](double b) { return static_cast<std::int64_t>(b); };  // bytes, written as counts
    return {{"needed_bytes", count(needed)},
            {"weights_bytes", count(m.weight_bytes())},
            {"kv_cache_bytes", count(m.kv_cache_bytes)},
            {"activation_bytes", count(m.peak_activation_bytes + m.input_bytes)},
            {"workspace_bytes", count(m.workspace_bytes)},
            {"target_bytes", count(target)},
            {"fits", fits},
            {"text", text}};
}

}  // namespace

nlohmann::json predict_json(const compare_run& source, const prediction_target& target, std::optional<bool> cold) {
    const profile_record& j = source.report;
    prediction_pass pass{j, target, j.dtype, j.cold, cold.value_or(j.cold), j.ceilings};
    // another class of device: a GPU predicted from a CPU's profile takes each layer's time from the GPU's op-class
    // models (a CPU's fraction of its roofs is not a GPU's)
    if (j.backend.rfind("cuda", 0) != 0) pass.gpu = gpu_spec_for(target.ceilings, j.dtype);
    for (const auto& l : j.layers) predict_layer(l, pass);
    const auto& missing = pass.missing;
    if (pass.layers.empty())
        throw core::error("predict: no layer of " + source.label + " can be predicted (" +
                          (missing.empty() ? std::string("it has no layers")
                                           : std::to_string(missing.size()) + " not predicted; the first, " +
                                                 missing[0]["name"].get<std::string>() + ": " +
                                                 missing[0]["reason"].get<std::string>()) +
                          ")");
    nlohmann::json out = {{"schema", "ridgeline.prediction/1"},
                          {"model", j.model},
                          {"source", j.source},
                          {"dtype", pass.dtype},
                          {"batch", j.batch ? nlohmann::json(*j.batch) : nlohmann::json(nullptr)}};
    if (j.json.contains("pass") && j.json["pass"].is_object()) out["pass"] = j.json["pass"];  // the pass predicted
    nlohmann::json assumptions = target.assumptions;
    if (!pass.gpu)
        for (const auto& a : target.roofs_rule_assumptions) assumptions.push_back(a);
    if (pass.gpu)
        assumptions.push_back(
            "another class of device: each layer's time from the GPU's op-class models, not from the fraction of its "
            "roofs it reached on the source: GEMMs as tiles in waves over " + std::to_string(pass.gpu->sms) + " SMs at " +
            fixed(100 * pass.gpu->gemm_fraction, 0) + "% of the matrix peak, streams at " +
            fixed(100 * pass.gpu->memory_fraction, 0) + "% of the bandwidth, " +
            (pass.gpu->flash_attention ? "attention as a flash kernel at " + fixed(100 * pass.gpu->flash_fraction, 0) +
                                             "% of the matrix peak"
                                       : std::string("attention as its math path (no flash kernel for this dtype)")) +
            ", " + us(pass.gpu->launch_ms) + " a launch; interval the time / " + shortest(1 + core::class_model_error) +
            " to x " + shortest(1 + core::class_model_error) + " (assumed: not yet measured on a GPU; docs/roofline.md)");
    if (pass.use_cold != pass.source_cold)
        assumptions.push_back(std::string("the source was timed with a ") + (pass.source_cold ? "cold" : "hot") +
                              " cache; the target is judged with a " + (pass.use_cold ? "cold" : "hot") + " one" +
                              (target.ceilings.cold_dispatch_overhead_ms > 0 && target.ceilings.cold_bandwidth_gbs > 0
                                   ? ""
                                   : " (the target has no cold ceilings: its bytes move at its DRAM bandwidth and its "
                                     "fixed cost is the hot one, so the cache state changes little here)"));
    out["prediction"] = {{"from", source.label},
                         {"from_device", j.device_name},
                         {"to", target.label},
                         {"datasheet", target.datasheet},
                         {"assumptions", assumptions},
                         {"models", pass.gpu ? "op-class" : "roofs"},
                         {"rule_error", pass.gpu ? core::class_model_error : core::prediction_error},
                         {"method", pass.gpu ? std::string(class_models_method) : std::string(roofs_rule_method)}};
    out["prediction"]["memory"] = memory_fit(pass);
    out["device"] = {{"backend", target.ceilings.backend},
                     {"name", target.ceilings.device_name},
                     {"ceilings", profiler::ceilings_json(target.ceilings)}};
    out["timing"] = {{"mode", pass.use_cold ? "cold" : "hot"}};
    out["layers"] = pass.layers;
    out["not_predicted"] = missing;
    out["totals"] = {{"source_ms", pass.src_sum},         {"predicted_ms", pass.pred_sum},
                     {"predicted_low_ms", pass.low_sum},   {"predicted_high_ms", pass.high_sum},
                     {"baseline_ms", pass.base_sum},       {"layers_predicted", pass.layers.size()},
                     {"layers_not_predicted", missing.size()}, {"bound_changes", pass.changes},
                     {"disturbed_sources", pass.disturbed_sources}};
    out["end_to_end"] = predicted_end_to_end(pass);
    // a sum of predicted layers that leaves some out is a part of the pass, not the pass
    const left_out lo = left_out_of(pass);
    const bool summed = pass.gpu || !out["end_to_end"]["source_ms"].is_number();
    out["end_to_end"]["partial"] = summed && lo.layers > 0;
    out["end_to_end"]["layers_left_out"] = summed ? lo.layers : 0;
    out["end_to_end"]["layers_left_out_timed"] = summed ? lo.timed : 0;
    out["end_to_end"]["left_out_source_ms"] = summed ? lo.ms : 0.0;
    // a source interrupted before it measured every layer is a part of the pass: said in the prediction too
    out["prediction"]["source_complete"] = j.json.value("complete", true);
    return out;
}

std::string disturbed_text(int layers) {
    return std::to_string(layers) + " layer(s) of the source were disturbed by other work: their source times are no "
           "measurement, so their speedups are not shown (-); their times on the GPU come from their shapes";
}

std::string partial_text(const nlohmann::json& p) {
    const auto& e = p["end_to_end"];
    const int n = e["layers_left_out"].get<int>(), timed = e.value("layers_left_out_timed", 0);
    return "the end to end leaves out " + std::to_string(n) + " layer(s) not predicted (listed with their reasons; " +
           (timed == 0 ? std::string(n == 1 ? "it has no time" : "none has a time") + " on the source"
                       : std::to_string(timed) + " of them took " + time_ms(e["left_out_source_ms"].get<double>()) +
                             " on the source") +
           ")";
}

namespace {

std::string interval(const nlohmann::json& t) {
    return time_ms(t["ci95_low_ms"].get<double>()) + "-" + time_ms(t["ci95_high_ms"].get<double>());
}

}  // namespace

std::string predict_table(const nlohmann::json& p) {
    std::ostringstream o;
    const auto& pr = p["prediction"];
    o << "predict " << p["model"].get<std::string>() << " (" << p["dtype"].get<std::string>() << "): from "
      << pr["from"].get<std::string>() << " to " << pr["to"].get<std::string>() << ", " << p["timing"]["mode"].get<std::string>()
      << " cache\n";
    const bool class_models = pr.value("models", "roofs") == "op-class";
    for (const auto& a : pr["assumptions"]) o << "  assumed: " << a.get<std::string>() << "\n";
    const std::string from_device = pr["from_device"].is_string() ? pr["from_device"].get<std::string>() : "";
    o << "columns: source, bound and %roof as measured on " << (from_device.empty() ? "the source" : from_device)
      << "; predicted, interval, speedup (source / predicted), target bound and rule on the target\n\n";
    text_table t;
    using al = text_table::align;
    using fit = text_table::fit;
    for (auto [h, a, f] : std::initializer_list<std::tuple<const char*, al, fit>>{
             {"layer", al::left, {0, true, false}}, {"op", al::left, {3, false, false}}, {"source", al::right, {}},
             {"bound", al::left, {2, false, false}}, {"%roof", al::right, {1, false, false}},
             {"predicted", al::right, {}}, {"interval", al::right, {}}, {"speedup", al::right, {}},
             {"target bound", al::left, {}}, {"rule", al::left, {}}})
        t.add_column(h, a, f);
    auto pct = [](const nlohmann::json& v) { return v.is_number() ? fixed(100 * v.get<double>(), 0) + "%" : std::string("-"); };
    for (const auto& l : p["layers"]) {
        const std::string sb = l["source_bound"].is_string() ? l["source_bound"].get<std::string>() : "-";
        const std::string tb = l["bound"].get<std::string>();
        t.add_row({l.value("label", l["name"].get<std::string>()), l["op"].get<std::string>(), time_ms(l["source_time"]["median_ms"].get<double>()),
                   sb, pct(l["source_roof_fraction"]), time_ms(l["time"]["median_ms"].get<double>()), interval(l["time"]),
                   l["speedup"].is_number() ? fixed(l["speedup"].get<double>(), 2) + "x" : std::string("-"),
                   (l["bound_changed"].get<bool>() ? sb + " -> " + tb : tb) +
                       (!class_models && l["floor_changes"].get<bool>() ? " !" : ""),
                   l["rule"].get<std::string>()});
    }
    o << t.render() << "\n";
    const auto& e = p["end_to_end"];
    const auto& tot = p["totals"];
    o << "end to end: ";
    if (e["source_ms"].is_number())
        o << "source " << time_ms(e["source_ms"].get<double>()) << ", ";
    o << "predicted " << time_ms(e["time"]["median_ms"].get<double>()) << " (interval " << interval(e["time"]) << ")";
    if (e["source_ms"].is_number())
        o << ", speedup " << fixed(e["source_ms"].get<double>() / e["time"]["median_ms"].get<double>(), 2) << "x";
    o << "; the naive baseline (each source time scaled by the ratio of the two devices' floors) "
      << time_ms(e["baseline_ms"].get<double>()) << "\n";
    if (e.value("partial", false)) o << "PARTIAL: " << partial_text(p) << "\n";
    o << "layers: " << tot["layers_predicted"].get<int>() << " predicted, sum " << time_ms(tot["source_ms"].get<double>())
      << " -> " << time_ms(tot["predicted_ms"].get<double>()) << "; " << tot["bound_changes"].get<int>() << " change bound"
      << (class_models ? "" : "; !: the larger floor is compute on one device and memory on the other (least certain)")
      << "\n";
    if (pr.contains("memory") && pr["memory"].is_object()) o << "memory: " << pr["memory"]["text"].get<std::string>() << "\n";
    if (const int d = tot.value("disturbed_sources", 0); d > 0) o << "DISTURBED: " << disturbed_text(d) << "\n";
    if (!p["not_predicted"].empty()) {
        o << "not predicted (" << p["not_predicted"].size() << "):";
        int shown = 0;
        for (const auto& m : p["not_predicted"]) {
            if (shown++ == 6) {
                o << " ...";
                break;
            }
            o << (shown > 1 ? ";" : "") << " " << m["name"].get<std::string>() << " (" << m["reason"].get<std::string>() << ")";
        }
        o << "\n";
    }
    if (class_models)
        o << "method: " << pr["method"].get<std::string>() << "; intervals: the model's time / "
          << shortest(1 + pr["rule_error"].get<double>()) << " to x " << shortest(1 + pr["rule_error"].get<double>())
          << " (assumed: not yet measured on a GPU)\n";
    else
        o << "method: t = dispatch + the source's work scaled by the floors (memory-bound: damped); intervals: the "
             "source's 95% CI through the rule, widened by the rule's measured error ("
          << fixed(100 * pr["rule_error"].get<double>(), 0) << "%, the 90th percentile: about 9 in 10 real times fall "
          << "inside); docs/roofline.md\n";
    if (pr["datasheet"].get<bool>()) o << "predicted from datasheet peaks, not measured\n";
    return wrap_lines(o.str());
}

std::string predict_table_html(const nlohmann::json& p) {
    std::ostringstream o;
    o << "<p>from " << xml_escape(p["prediction"]["from"].get<std::string>()) << " to "
      << xml_escape(p["prediction"]["to"].get<std::string>()) << "</p>\n<ul>";
    for (const auto& a : p["prediction"]["assumptions"]) o << "<li>" << xml_escape(a.get<std::string>()) << "</li>";
    o << "</ul>\n<table class=\"compare\"><thead><tr><th>layer</th><th>source</th><th>predicted</th><th>interval</th>"
         "<th>speedup</th><th>bound</th></tr></thead><tbody>\n";
    for (const auto& l : p["layers"]) {
        const std::string sb = l["source_bound"].is_string() ? l["source_bound"].get<std::string>() : "-";
        const std::string tb = l["bound"].get<std::string>();
        o << "<tr><td>" << xml_escape(l.value("label", l["name"].get<std::string>())) << "</td><td>"
          << time_ms(l["source_time"]["median_ms"].get<double>()) << "</td><td>" << time_ms(l["time"]["median_ms"].get<double>())
          << "</td><td>" << xml_escape(interval(l["time"])) << "</td><td>"
          << (l["speedup"].is_number() ? fixed(l["speedup"].get<double>(), 2) + "x" : std::string("-")) << "</td><td>"
          << xml_escape((l["bound_changed"].get<bool>() ? sb + " -> " + tb : tb) + (l["floor_changes"].get<bool>() ? " !" : ""))
          << "</td></tr>\n";
    }
    o << "</tbody></table>\n";
    const auto& e = p["end_to_end"];
    o << "<p>end to end: " << (e["source_ms"].is_number() ? "source " + time_ms(e["source_ms"].get<double>()) + ", " : "")
      << "predicted " << time_ms(e["time"]["median_ms"].get<double>()) << " (interval " << xml_escape(interval(e["time"]))
      << "); " << p["not_predicted"].size() << " layer(s) not predicted"
      << (e.value("partial", false) ? " (PARTIAL: the end to end leaves out " + std::to_string(e["layers_left_out"].get<int>()) +
                                          " of them)"
                                    : std::string())
      << "</p>\n";
    if (p["prediction"].contains("memory") && p["prediction"]["memory"].is_object())
        o << "<p>memory: " << xml_escape(p["prediction"]["memory"]["text"].get<std::string>()) << "</p>\n";
    if (p["prediction"]["datasheet"].get<bool>()) o << "<p>predicted from datasheet peaks, not measured</p>\n";
    return o.str();
}

std::string datasheet_targets_table() {
    text_table t;
    t.add_column("key", text_table::align::left);
    t.add_column("device", text_table::align::left);
    t.add_column("peaks", text_table::align::left);
    for (const auto& e : core::datasheet())
        t.add_row({std::string(e.key), std::string(e.device), core::describe_peaks(e)});
    return t.render() +
           "\npredict --to KEY (or the device name, or a prefix of exactly one); or --to FILE: a ceilings JSON "
           "(ridgeline ceilings --format json --output FILE) or a profile JSON from the target\n";
}

}  // namespace ridgeline::report
