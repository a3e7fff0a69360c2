#include "ridgeline/backend_api/tensor.hpp"

#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/backend_api/require_supported.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "ridgeline/core/error.hpp"

namespace ridgeline::backend_api {

std::string param_key(const core::layer& l, const std::string& param) {
    auto it = l.tied.find(param);
    return it != l.tied.end() ? it->second : l.name + "." + param;
}

host_tensor broadcast_to(const host_tensor& t, const core::shape& dims) {
    const std::size_t rank = dims.rank(), lead = rank - std::min(rank, t.dims.rank());
    if (t.dims.rank() > rank) throw core::error("cannot expand " + t.dims.to_string() + " to " + dims.to_string());
    // the source stride of each output dimension: 0 where the source repeats
    std::vector<std::int64_t> stride(rank, 0);
    std::int64_t s = 1;
    for (std::size_t i = rank; i-- > lead;) {
        const std::int64_t d = t.dims[i - lead];
        if (d != 1 && d != dims[i]) throw core::error("cannot expand " + t.dims.to_string() + " to " + dims.to_string());
        stride[i] = d == 1 ? 0 : s;
        s *= d;
    }
    host_tensor out{dims, std::vector<float>(static_cast<std::size_t>(dims.numel()))};
    std::vector<std::int64_t> index(rank, 0);
    for (std::size_t k = 0; k < out.data.size(); ++k) {
        std::int64_t from = 0;
        for (std::size_t i = 0; i < rank; ++i) from += index[i] * stride[i];
        out.data[k] = t.data[static_cast<std::size_t>(from)];
        for (std::size_t i = rank; i-- > 0;) {  // next row-major index
            if (++index[i] < dims[i]) break;
            index[i] = 0;
        }
    }
    return out;
}

folded_conv fold_batch_norm(const host_tensor& weight, const std::vector<float>& bias, const std::vector<float>& mean,
                            const std::vector<float>& var, const std::vector<float>& gamma,
                            const std::vector<float>& beta, double eps) {
    if (weight.dims.rank() == 0) throw core::error("fold_batch_norm: the convolution's weight has no dimensions");
    const std::int64_t channels = weight.dims[0];
    const auto n = static_cast<std::size_t>(channels);
    auto check = [&](const std::vector<float>& v, const char* what, bool optional) {
        if ((optional && v.empty()) || v.size() == n) return;
        throw core::error(std::string("fold_batch_norm: ") + what + " has " + std::to_string(v.size()) +
                          " values for a convolution of " + std::to_string(channels) + " output channels");
    };
    check(bias, "the convolution's bias", true);
    check(mean, "running_mean", false);
    check(var, "running_var", false);
    check(gamma, "the batch norm's weight (gamma)", true);
    check(beta, "the batch norm's bias (beta)", true);
    std::vector<double> s(n);
    for (std::size_t c = 0; c < n; ++c) {
        const double g = gamma.empty() ? 1.0 : gamma[c];
        const double denominator = static_cast<double>(var[c]) + eps;
        s[c] = g / std::sqrt(denominator);
        if (!(denominator > 0) || !std::isfinite(s[c]))  // a NaN variance too
            throw core::error("running_var + eps is " + (std::ostringstream() << denominator).str() + " in channel " +
                              std::to_string(c) + ": the batch norm divides by zero or by a NaN there, so it has "
                              "no folded form (its output is infinite or NaN; without --fuse it runs as it is)");
    }
    folded_conv f{weight, host_tensor{core::shape({channels}), std::vector<float>(n)}};
    const std::size_t per_channel = n ? f.weight.data.size() / n : 0;
    for (std::size_t i = 0; i < f.weight.data.size(); ++i)
        f.weight.data[i] = static_cast<float>(f.weight.data[i] * s[i / per_channel]);
    for (std::size_t c = 0; c < n; ++c) {
        const double b = bias.empty() ? 0.0 : bias[c];
        const double shift = beta.empty() ? 0.0 : beta[c];
        f.bias.data[c] = static_cast<float>((b - mean[c]) * s[c] + shift);
    }
    return f;
}

folded_conv fold_batch_norm(const graph_data& data, const core::layer& conv_layer, const core::layer& bn_layer) {
    const auto* conv = std::get_if<core::conv2d>(&conv_layer.op);
    const auto* bn = std::get_if<core::batch_norm2d>(&bn_layer.op);
    if (!conv) throw core::error(core::where(conv_layer) + ": a batch norm folds into a conv2d only");
    if (!bn) throw core::error(core::where(bn_layer) + ": only a batch_norm2d folds into a convolution");
    auto param = [&](const core::layer& l, const std::string& name) -> const std::vector<float>& {
        return data.tensors.at(param_key(l, name)).data;
    };
    static const std::vector<float> none;
    try {
        return fold_batch_norm(data.tensors.at(param_key(conv_layer, "weight")), conv->bias ? param(conv_layer, "bias") : none,
                           param(bn_layer, "running_mean"), param(bn_layer, "running_var"),
                           bn->affine ? param(bn_layer, "weight") : none, bn->affine ? param(bn_layer, "bias") : none,
                           bn->eps);
    } catch (const core::error& e) {
        throw core::error(core::where(bn_layer) + ": " + e.what());
    }
}

namespace {

/// Round a float to `mantissa_bits` explicit mantissa bits, nearest-even (bf16: 7, fp16/tf32: 10).
float round_mantissa(float v, int mantissa_bits) {
    if (!std::isfinite(v)) return v;
    std::uint32_t u = std::bit_cast<std::uint32_t>(v);
    const int drop = 23 - mantissa_bits;
    const std::uint32_t lsb = (u >> drop) & 1u;
    const std::uint32_t bias = (1u << (drop - 1)) - 1u + lsb;
    u += bias;
    u &= ~((1u << drop) - 1u);
    return std::bit_cast<float>(u);
}

float round_fp16(float v) {
    if (!std::isfinite(v)) return v;
    const float a = std::fabs(v);
    if (a >= 65520.0f) return std::copysign(INFINITY, v);
    if (a < 6.103515625e-05f) {  // subnormal range: fixed step 2^-24
        const float step = 5.9604644775390625e-08f;
        return std::nearbyint(v / step) * step;
    }
    return round_mantissa(v, 10);
}

}  // namespace

void round_to(std::vector<float>& values, core::dtype dt) {
    switch (dt) {
        case core::dtype::fp32: return;
        case core::dtype::tf32:
            for (auto& v : values) v = round_mantissa(v, 10);
            return;
        case core::dtype::bf16:
            for (auto& v : values) v = round_mantissa(v, 7);
            return;
        case core::dtype::fp16:
            for (auto& v : values) v = round_fp16(v);
            return;
    }
}

namespace {

std::uint64_t mix(std::uint64_t seed, const std::string& name) {
    std::uint64_t h = seed ^ 0x9e3779b97f4a7c15ULL;
    for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ULL;
    return h;
}

std::vector<float> uniform(std::int64_t n, float lo, float hi, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = dist(rng);
    return v;
}

/// Fan-in of a weight tensor: product of all dims but the first (PyTorch's _calculate_fan_in_and_fan_out).
std::int64_t fan_in(const core::shape& s) {
    std::int64_t f = 1;
    for (std::size_t i = 1; i < s.rank(); ++i) f *= s[i];
    return f;
}

/// The parameters of layer `l` into `d` (random, or `given`'s where it has them): see make_graph_data.
void add_params(graph_data& d, const core::layer& l, core::dtype dt, std::uint64_t seed, const graph_data* given) {
    const auto params = core::parameters_of(l.op);
    std::int64_t weight_fan_in = 1;
    for (const auto& p : params)
        if (p.name == "weight") weight_fan_in = fan_in(p.dims);
    for (const auto& p : params) {
        const std::string key = param_key(l, p.name);
        if (d.tensors.count(key)) continue;  // tied: generated once
        if (given) {
            auto it = given->tensors.find(key);
            if (it != given->tensors.end()) {
                if (it->second.data.size() != static_cast<std::size_t>(p.dims.numel()))
                    throw core::error(core::where(l) + ": given " + p.name + " \"" + key + "\" has " +
                                      std::to_string(it->second.data.size()) + " values, expected " +
                                      std::to_string(p.dims.numel()));
                host_tensor t{p.dims, it->second.data};
                round_to(t.data, dt);
                d.tensors.emplace(key, std::move(t));
                continue;
            }
        }
        if (const auto* e = std::get_if<core::embedding>(&l.op); e && p.name == "indices") {
            // the ids an embedding holds: valid rows of its table
            std::mt19937_64 rng(mix(seed, key));
            std::uniform_int_distribution<std::int64_t> dist(0, e->num_embeddings - 1);
            host_tensor t{p.dims, std::vector<float>(static_cast<std::size_t>(p.dims.numel()))};
            for (auto& x : t.data) x = static_cast<float>(dist(rng));
            d.tensors.emplace(key, std::move(t));
            continue;
        }
        const bool norm = std::holds_alternative<core::batch_norm2d>(l.op) ||
                          std::holds_alternative<core::layer_norm>(l.op);
        float lo = -1.0f, hi = 1.0f;
        if (norm && (p.name == "weight" || p.name == "running_var")) {
            lo = 0.5f;
            hi = 1.5f;
        } else if (norm) {
            lo = -0.5f;
            hi = 0.5f;
        } else if (!std::holds_alternative<core::embedding>(l.op)) {
            const float bound = 1.0f / std::sqrt(static_cast<float>(std::max<std::int64_t>(1, weight_fan_in)));
            lo = -bound;
            hi = bound;
        }
        host_tensor t{p.dims, uniform(p.dims.numel(), lo, hi, mix(seed, key))};
        round_to(t.data, dt);
        d.tensors.emplace(key, std::move(t));
    }
}

}  // namespace

graph_data make_graph_data(const core::model_analysis& graph, core::dtype dt, std::uint64_t seed,
                           const graph_data* given) {
    graph_data d;
    // token-id inputs: the smallest table among the embeddings reading them bounds the ids
    std::map<std::string, std::int64_t> id_bound;
    for (const auto& la : graph.layers)
        if (const auto* e = std::get_if<core::embedding>(&la.layer.op))
            for (const auto& t : la.layer.inputs) {
                auto [it, inserted] = id_bound.emplace(t, e->num_embeddings);
                if (!inserted) it->second = std::min(it->second, e->num_embeddings);
            }
    for (const auto& in : graph.inputs) {
        host_tensor t{in.dims, {}};
        if (in.indices) {
            std::mt19937_64 rng(mix(seed, in.name));
            const std::int64_t bound = id_bound.count(in.name) ? id_bound[in.name] : 1;
            std::uniform_int_distribution<std::int64_t> dist(0, bound - 1);
            t.data.resize(static_cast<std::size_t>(in.dims.numel()));
            for (auto& x : t.data) x = static_cast<float>(dist(rng));
        } else {
            t.data = uniform(in.dims.numel(), -1.0f, 1.0f, mix(seed, in.name));
            round_to(t.data, dt);
        }
        d.tensors.emplace(in.name, std::move(t));
    }
    for (const auto& row : graph.layers)
        for (const core::layer_analysis* la : core::work_layers(row)) add_params(d, la->layer, dt, seed, given);
    return d;
}

core::model_analysis single_layer_graph(const core::layer_analysis& l, const core::model_analysis& parent) {
    core::model_analysis g;
    g.model_name = l.layer.name;
    g.data_type = parent.data_type;
    g.batch = parent.batch;
    const bool ids = std::holds_alternative<core::embedding>(l.layer.op);
    std::map<std::string, const core::layer_analysis*> producer;
    for (const auto& la : parent.layers) producer[la.layer.name] = &la;
    // a tensor's storage: the views that lead to it from their source (source first)
    auto source_of = [&](std::string t) {
        std::vector<const core::layer_analysis*> chain;
        for (auto it = producer.find(t);
             it != producer.end() && core::is_view(it->second->layer.op) && !it->second->layer.inputs.empty();
             it = producer.find(t)) {
            chain.insert(chain.begin(), it->second);
            t = it->second->layer.inputs.at(0);
        }
        return std::make_pair(t, chain);
    };
    auto shape_of = [&](const std::string& t) {
        if (auto it = producer.find(t); it != producer.end()) return it->second->output_shape;
        for (const auto& in : parent.inputs)
            if (in.name == t) return in.dims;
        throw core::invalid_layer(core::where(l.layer) + ": reads unknown tensor \"" + t + "\"");
    };
    auto new_input = [&](const core::shape& dims) {
        std::string name = "in" + std::to_string(g.inputs.size());
        while (producer.count(name) || name == l.layer.name) name += "_";  // never a name of the parent's layers
        g.inputs.push_back({name, dims, ids});
        return name;
    };
    std::map<std::string, int> uses;  // inputs per storage
    for (const auto& t : l.layer.inputs) ++uses[source_of(t).first];
    core::layer_analysis copy = l;
    copy.layer.inputs.clear();
    std::map<std::string, std::string> renamed;  // parent tensor -> its name here, for storage read twice
    for (std::size_t i = 0; i < l.input_shapes.size(); ++i) {
        const std::string& t = l.layer.inputs[i];
        const auto [source, chain] = source_of(t);
        if (uses[source] < 2) {
            copy.layer.inputs.push_back(new_input(l.input_shapes[i]));
            continue;
        }
        // storage read more than once (add(x, x), matmul(x, transpose(x))): one input, the views re-created on it,
        // so that the layer is timed reading what it reads in the model
        if (!renamed.count(source)) renamed[source] = new_input(shape_of(source));
        for (const core::layer_analysis* v : chain) {
            if (renamed.count(v->layer.name)) continue;
            core::layer_analysis view = *v;
            view.layer.inputs = {renamed.at(v->layer.inputs.at(0))};
            renamed[v->layer.name] = v->layer.name;
            g.layers.push_back(std::move(view));
        }
        copy.layer.inputs.push_back(renamed.at(t));
    }
    g.totals = l.cost;
    g.outputs = {l.layer.name};
    g.layers.push_back(std::move(copy));
    return g;
}

std::string device_fingerprint(const device_info& d) {
    std::string s = d.backend + "|" + d.name + "|" + std::to_string(d.cores) + " cores|" + std::to_string(d.threads) +
                    " threads|" + d.isa;
    for (const auto& [k, v] : d.details) s += "|" + k + "=" + v;
    return s;
}

void require_supported(const backend& b, const core::model_analysis& graph) {
    for (const auto& la : graph.layers) {
        const auto s = b.supports(la, graph.data_type);
        if (!s.supported) throw unsupported(s.reason);
    }
}

ceilings backend::measure_ceilings(const ceilings_options&) {
    throw unsupported("the " + name() + " backend does not measure ceilings");
}

}  // namespace ridgeline::backend_api
