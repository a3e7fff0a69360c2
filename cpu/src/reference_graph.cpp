// The reference loops over a whole graph (reference.hpp): every layer in order, a fused group as its members.
#include <map>
#include <string>
#include <vector>

#include "ridgeline/backend_api/tensor.hpp"
#include "ridgeline/core/fusion.hpp"
#include "ridgeline/cpu/reference.hpp"

namespace ridgeline::cpu {

namespace {

/// One layer's parameters in `data`, by the op's names for them.
std::map<std::string, const backend_api::host_tensor*> params_of(const core::layer& l, const backend_api::graph_data& data) {
    std::map<std::string, const backend_api::host_tensor*> params;
    for (const auto& p : core::parameters_of(l.op)) params[p.name] = &data.tensors.at(backend_api::param_key(l, p.name));
    return params;
}

/// A fused group (core/fusion.hpp) run as its members, one after another: what the group is verified against.
/// `inputs` are the group's; each member after the producer reads the previous member's output and, for a sum, its
/// operand from outside the group.
backend_api::host_tensor run_members(const core::layer_analysis& group,
                                     const std::vector<const backend_api::host_tensor*>& inputs,
                                     const backend_api::graph_data& data) {
    const core::layer_analysis& producer = group.fused.front();
    std::vector<const backend_api::host_tensor*> in(inputs.begin(),
                                                    inputs.begin() + static_cast<std::ptrdiff_t>(producer.layer.inputs.size()));
    backend_api::host_tensor value = reference_forward(producer.layer, in, params_of(producer.layer, data), producer.output_shape);
    for (std::size_t k = 1; k < group.fused.size(); ++k) {
        const core::layer_analysis& m = group.fused[k];
        const auto outside = core::outside_operand(group, k);
        in.clear();
        for (const auto& t : m.layer.inputs)
            in.push_back(t == group.fused[k - 1].layer.name ? &value : inputs.at(outside.value()));
        backend_api::host_tensor next = reference_forward(m.layer, in, params_of(m.layer, data), m.output_shape);
        value = std::move(next);
    }
    return value;
}

}  // namespace

std::vector<backend_api::host_tensor> reference_graph_outputs(const core::model_analysis& graph,
                                                           const backend_api::graph_data& data) {
    std::map<std::string, backend_api::host_tensor> values;  // every layer's output by name
    auto lookup = [&](const std::string& name) -> const backend_api::host_tensor* {
        const auto it = values.find(name);
        return it != values.end() ? &it->second : &data.tensors.at(name);
    };
    for (const auto& la : graph.layers) {
        std::vector<const backend_api::host_tensor*> inputs;
        for (const auto& t : la.layer.inputs) inputs.push_back(lookup(t));
        values[la.layer.name] = la.fused.empty()
                                    ? reference_forward(la.layer, inputs, params_of(la.layer, data), la.output_shape)
                                    : run_members(la, inputs, data);
    }
    std::vector<backend_api::host_tensor> out;
    for (const auto& o : graph.outputs) out.push_back(*lookup(o));
    return out;
}

}  // namespace ridgeline::cpu
