#include "ridgeline/core/memory.hpp"

#include <map>
#include <vector>

#include "ridgeline/core/checked.hpp"

namespace ridgeline::core {

memory_summary memory_of(const model_analysis& a) {
    memory_summary m;
    const std::int64_t esize = size_bytes(a.data_type);
    m.parameter_bytes = checked::mul(a.totals.params, esize, "parameter bytes");
    m.buffer_bytes = checked::mul(a.totals.buffers, esize, "buffer bytes");

    // storage: the tensor that owns the bytes (views map to their source's storage)
    std::map<std::string, std::string> storage;
    std::map<std::string, std::int64_t> bytes;      // per storage
    std::map<std::string, std::size_t> last_use;    // per storage: last step reading it
    std::map<std::string, std::size_t> first_step;  // per storage: step producing it (0 for inputs)
    for (const auto& in : a.inputs) {
        storage[in.name] = in.name;
        const std::int64_t b = checked::mul(in.dims.numel(), in.indices ? index_size_bytes : esize, "input bytes");
        bytes[in.name] = b;
        m.input_bytes = checked::add(m.input_bytes, b, "input bytes");
        first_step[in.name] = 0;
        last_use[in.name] = 0;
    }
    for (std::size_t i = 0; i < a.layers.size(); ++i) {
        const auto& la = a.layers[i];
        const std::size_t step = i + 1;
        for (const auto& t : la.layer.inputs) last_use[storage.at(t)] = step;
        const bool cache = std::holds_alternative<kv_cache>(la.layer.op);
        if (cache) {  // the KV cache's output is its buffer: counted in buffer_bytes and kv_cache_bytes
            const std::int64_t b = checked::mul(la.output_shape.numel(), esize, "KV cache bytes");
            m.kv_cache_bytes = checked::add(m.kv_cache_bytes, b, "KV cache bytes");
        }
        if ((is_view(la.layer.op) && la.layer.inputs.empty()) || cache) {  // a parameter, a cache: not activations
            storage[la.layer.name] = la.layer.name;
            bytes[la.layer.name] = 0;
            first_step[la.layer.name] = step;
            last_use[la.layer.name] = step;
            m.activation_bytes.push_back(0);
        } else if (is_view(la.layer.op)) {
            storage[la.layer.name] = storage.at(la.layer.inputs.at(0));
            m.activation_bytes.push_back(0);
        } else {
            storage[la.layer.name] = la.layer.name;
            const std::int64_t b = checked::mul(la.output_shape.numel(), esize, "activation bytes");
            bytes[la.layer.name] = b;
            first_step[la.layer.name] = step;
            last_use[la.layer.name] = step;
            m.activation_bytes.push_back(b);
            m.total_activation_bytes = checked::add(m.total_activation_bytes, b, "activation bytes");
        }
    }
    // model outputs stay live to the end
    for (const auto& o : a.outputs) last_use[storage.at(o)] = a.layers.size();
    // live bytes at each step: each storage adds its bytes from its first step to its last use (a difference
    // array, linear in the layers: a sum over every storage at every step took minutes for thousands of layers)
    std::vector<std::int64_t> delta(a.layers.size() + 2, 0);
    for (const auto& [name, b] : bytes) {
        delta[first_step[name]] = checked::add(delta[first_step[name]], b, "live bytes");
        delta[last_use[name] + 1] = checked::sub(delta[last_use[name] + 1], b, "live bytes");
    }
    std::int64_t live = 0;
    for (std::size_t step = 0; step <= a.layers.size(); ++step) {
        live = checked::add(live, delta[step], "live bytes");
        if (live > m.peak_activation_bytes) {
            m.peak_activation_bytes = live;
            m.peak_at = step == 0 ? std::string("(inputs)") : a.layers[step - 1].layer.name;
        }
    }
    return m;
}

training_estimate estimate_training(const model_analysis& a, const memory_summary& m) {
    training_estimate t;
    for (const auto& la : a.layers) {
        const bool heavy = std::holds_alternative<linear>(la.layer.op) || std::holds_alternative<conv2d>(la.layer.op) ||
                           std::holds_alternative<matmul>(la.layer.op);
        t.forward_flops = checked::add(t.forward_flops, la.cost.flops, "forward flops");
        t.backward_flops = checked::add(t.backward_flops, checked::mul(heavy ? 2 : 1, la.cost.flops, "backward flops"),
                                        "backward flops");
    }
    t.step_flops = checked::add(t.forward_flops, t.backward_flops, "training step flops");
    t.gradient_bytes = m.parameter_bytes;
    t.sgd_state_bytes = 0;
    t.momentum_state_bytes = m.parameter_bytes;
    t.adam_state_bytes = checked::mul(2, m.parameter_bytes, "adam state bytes");
    t.saved_activation_bytes = m.total_activation_bytes;
    return t;
}

}  // namespace ridgeline::core
