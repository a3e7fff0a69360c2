// Advice where the profile's evidence supports it (advice.hpp).
#include "ridgeline/report/advice.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "ridgeline/report/format.hpp"
#include "ridgeline/report/profile.hpp"

namespace ridgeline::report {

namespace {

/// Clean evidence: a layer measured, not disturbed, with a verdict.
bool clean(const profiler::layer_profile& p) {
    return p.has_time() && !p.time->disturbed && p.roofline && p.roofline->bound != core::bound_class::disturbed &&
           p.roofline->bound != core::bound_class::mistrusted;
}

std::string pct(double f) { return fixed(100.0 * f, 0) + "%"; }

/// The index of each layer by name and how many layers read each tensor.
struct graph_facts {
    std::map<std::string, std::size_t> at;
    std::map<std::string, int> readers;
    explicit graph_facts(const profiler::profile_result& r) {
        for (std::size_t i = 0; i < r.layers.size(); ++i) {
            at[r.layers[i].analysis.layer.name] = i;
            for (const auto& in : r.layers[i].analysis.layer.inputs) ++readers[in];
        }
    }
    /// The layer that `p` reads alone, when it reads one layer's output that nothing else reads; else null.
    const profiler::layer_profile* sole_producer(const profiler::profile_result& r, const profiler::layer_profile& p) const {
        const auto& inputs = p.analysis.layer.inputs;
        if (inputs.size() != 1) return nullptr;
        const auto it = at.find(inputs[0]);
        const auto rd = readers.find(inputs[0]);
        if (it == at.end() || rd == readers.end() || rd->second != 1) return nullptr;
        return &r.layers[it->second];
    }
};

bool is_activation(const std::string& kind) {
    for (const char* k : {"relu", "relu6", "gelu", "silu", "sigmoid", "tanh", "hardswish"})
        if (kind == k) return true;
    return false;
}

/// "bn1, layer1.0.bn1, layer1.0.bn2 and 17 more"
std::string some_of(const std::vector<std::string>& names) {
    std::string s;
    for (std::size_t i = 0; i < names.size() && i < 3; ++i) s += (i ? ", " : "") + names[i];
    if (names.size() > 3) s += " and " + std::to_string(names.size() - 3) + " more";
    return s;
}

/// fold_norm and post_op: layers a deployment engine merges into their producers, one advice for each rule.
void fusion_rules(const profiler::profile_result& r, std::vector<advice>& out) {
    const graph_facts g(r);
    advice fold{"fold_norm", {}, 0, ""}, post{"post_op", {}, 0, ""};
    for (const auto& p : r.layers) {
        if (!clean(p)) continue;
        const std::string kind(core::kind_of(p.analysis.layer.op));
        const profiler::layer_profile* prod = g.sole_producer(r, p);
        if (!prod) continue;
        const std::string pk(core::kind_of(prod->analysis.layer.op));
        advice* a = kind == "batch_norm2d" && pk == "conv2d"                                  ? &fold
                    : is_activation(kind) && (pk == "conv2d" || pk == "linear") ? &post
                                                                                               : nullptr;
        if (!a) continue;
        a->layers.push_back(p.analysis.layer.name);
        a->time_ms += p.time->stats.median;
    }
    const double sum = r.sum_of_layers_ms;
    auto share = [&](double ms) { return time_ms(ms) + (sum > 0 ? ", " + pct(ms / sum) + " of the layers' time" : ""); };
    // "20 batch norms (bn1, ... and 17 more) follow"
    auto follow = [](const advice& a, std::string_view noun) {
        return counted(static_cast<std::int64_t>(a.layers.size()), noun) + " (" + some_of(a.layers) +
               (a.layers.size() == 1 ? ") follows" : ") follow");
    };
    if (!fold.layers.empty()) {
        fold.text = follow(fold, "batch norm") +
                    " a convolution that nothing else reads: a deployment engine (ONNX Runtime, TensorRT, oneDNN's "
                    "graph API) folds them into its weights, and their " + share(fold.time_ms) + ", with them";
        out.push_back(fold);
    }
    if (!post.layers.empty()) {
        post.text = follow(post, "activation") +
                    " a convolution or linear layer that nothing else reads: run as its post-op (oneDNN, cuDNN, a "
                    "cuBLASLt epilogue) their passes over memory, " + share(post.time_ms) + ", go";
        out.push_back(post);
    }
}

/// overhead: the fixed cost sets a large share of the time.
void overhead_rule(const profiler::profile_result& r, std::vector<advice>& out) {
    std::vector<std::string> names;
    double ms = 0;
    for (const auto& p : r.layers)
        if (clean(p) && p.roofline->bound == core::bound_class::overhead) {
            names.push_back(p.analysis.layer.name);
            ms += p.time->stats.median;
        }
    if (r.sum_of_layers_ms <= 0 || ms < 0.2 * r.sum_of_layers_ms) return;
    out.push_back({"overhead", names, ms,
                   counted(static_cast<std::int64_t>(names.size()), "layer") +
                       (names.size() == 1 ? " is" : " are") + " overhead-bound, " +
                       pct(ms / r.sum_of_layers_ms) + " of the layers' time: their fixed cost, not their work, sets it; "
                       "a larger batch spreads it over more work" +
                       (r.device.kind == backend_api::device_kind::gpu ? ", and graph replay (--graph) removes launches"
                                                                      : "")});
}

/// memory_headroom and compute_headroom: a layer far under its roof that matters.
void headroom_rules(const profiler::profile_result& r, std::vector<advice>& out) {
    if (r.sum_of_layers_ms <= 0) return;
    for (const auto& p : r.layers) {
        if (!clean(p) || !p.measured_as.empty()) continue;  // a twin's measurement is its first occurrence's
        const double t = p.time->stats.median, share = t / r.sum_of_layers_ms;
        const double roof = shown_rates(p).roof_fraction;
        if (share < 0.05 || !std::isfinite(roof) || roof >= 0.5) continue;
        const std::string& name = p.analysis.layer.name;
        if (p.roofline->bound == core::bound_class::memory)
            out.push_back({"memory_headroom", {name}, t,
                           name + " is memory-bound at " + pct(roof) + " of its roof with " + pct(share) +
                               " of the time: its kernel (" + (p.implementation.empty() ? "?" : p.implementation) +
                               ") leaves bandwidth unused; a kernel with streaming stores, or one layout throughout, "
                               "would move the same bytes faster"});
        else if (p.roofline->bound == core::bound_class::compute)
            out.push_back({"compute_headroom", {name}, t,
                           name + " is compute-bound at " + pct(roof) + " of its roof with " + pct(share) +
                               " of the time: its implementation (" +
                               (p.implementation.empty() ? "?" : p.implementation) +
                               ") reaches half the peak or less; another algorithm or layout, or the GEMM ceiling is "
                               "the realistic roof for it"});
    }
}

}  // namespace

std::vector<advice> advise(const profiler::profile_result& r, std::size_t most) {
    std::vector<advice> out;
    fusion_rules(r, out);
    overhead_rule(r, out);
    headroom_rules(r, out);
    std::stable_sort(out.begin(), out.end(), [](const advice& a, const advice& b) { return a.time_ms > b.time_ms; });
    if (out.size() > most) out.resize(most);
    return out;
}

nlohmann::json advice_json(const std::vector<advice>& a) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& x : a)
        out.push_back({{"rule", x.rule}, {"layers", x.layers}, {"time_ms", x.time_ms}, {"text", x.text}});
    return out;
}

std::string advice_text(const std::vector<advice>& a) {
    if (a.empty()) return "";
    std::string out = "advice (the most time at stake first; report/advice.hpp has the rules):\n";
    for (const auto& x : a) out += "  " + x.rule + ": " + x.text + "\n";
    return out;
}

}  // namespace ridgeline::report
