#include "ridgeline/core/fusion.hpp"

#include <map>
#include <variant>

#include "ridgeline/core/checked.hpp"
#include "ridgeline/core/error.hpp"

namespace ridgeline::core {

std::string_view to_string(fusion_rule r) {
    switch (r) {
        case fusion_rule::fold_batch_norm:
            return "fold batch norm";
        case fusion_rule::sum_post_op:
            return "sum post-op";
        case fusion_rule::activation_post_op:
            break;
    }
    return "activation post-op";
}

bool is_fusion_producer(const op& o) {
    return std::holds_alternative<conv2d>(o) || std::holds_alternative<linear>(o) || std::holds_alternative<matmul>(o);
}

bool is_fusable_activation(const op& o) {
    return std::holds_alternative<relu>(o) || std::holds_alternative<relu6>(o) || std::holds_alternative<gelu>(o) ||
           std::holds_alternative<silu>(o) || std::holds_alternative<hardswish>(o) ||
           std::holds_alternative<sigmoid>(o) || std::holds_alternative<tanh_op>(o);
}

fusion_rule rule_of(const layer_analysis& group, std::size_t k) {
    if (k == 0 || k >= group.fused.size())
        throw error(where(group.layer) + ": fused member " + std::to_string(k) + " of " +
                    std::to_string(group.fused.size()) + " has no rule (the producer is member 0)");
    const op& o = group.fused[k].layer.op;
    if (std::holds_alternative<batch_norm2d>(o)) return fusion_rule::fold_batch_norm;
    if (std::holds_alternative<add>(o)) return fusion_rule::sum_post_op;
    return fusion_rule::activation_post_op;
}

std::optional<std::size_t> outside_operand(const layer_analysis& group, std::size_t k) {
    if (rule_of(group, k) != fusion_rule::sum_post_op) return std::nullopt;
    std::size_t index = group.fused.front().layer.inputs.size();
    for (std::size_t j = 1; j < k; ++j)
        if (rule_of(group, j) == fusion_rule::sum_post_op) ++index;
    return index;
}

namespace {

/// Which group (by index) each layer joins; a layer that joins none has none.
std::vector<std::vector<std::size_t>> find_groups(const model_analysis& a) {
    std::map<std::string, int> readers;  // reads of each tensor, a model output counting as one
    for (const auto& la : a.layers)
        for (const auto& t : la.layer.inputs) ++readers[t];
    for (const auto& o : a.outputs) ++readers[o];
    std::vector<std::vector<std::size_t>> groups;
    std::map<std::string, std::size_t> tail;  // a group's last member's output -> the group
    for (std::size_t i = 0; i < a.layers.size(); ++i) {
        const layer_analysis& la = a.layers[i];
        const auto& in = la.layer.inputs;
        // the group whose tail is input j, where the tail has no other reader
        auto extends = [&](std::size_t j) -> std::optional<std::size_t> {
            const auto it = tail.find(in[j]);
            if (it == tail.end() || readers[in[j]] != 1) return std::nullopt;
            if (groups[it->second].size() > max_post_ops) return std::nullopt;  // the producer and max_post_ops more
            return it->second;
        };
        std::optional<std::size_t> g;
        if (std::holds_alternative<batch_norm2d>(la.layer.op) && in.size() == 1) {
            g = extends(0);
            if (g && (groups[*g].size() != 1 || !std::holds_alternative<conv2d>(a.layers[groups[*g][0]].layer.op)))
                g.reset();
        } else if (is_fusable_activation(la.layer.op) && in.size() == 1) {
            g = extends(0);
        } else if (std::holds_alternative<add>(la.layer.op) && in.size() == 2 && in[0] != in[1] &&
                   la.input_shapes[0] == la.output_shape && la.input_shapes[1] == la.output_shape) {
            // one sum a group, and none after an activation (ONNX Runtime's Conv+Add(+Act) takes the activation after
            // the sum only; oneDNN 2.6 runs an eltwise before a sum on its scalar reference kernel for some convolutions)
            auto takes_sum = [&](const std::vector<std::size_t>& members) {
                for (std::size_t m : members)
                    if (std::holds_alternative<add>(a.layers[m].layer.op) || is_fusable_activation(a.layers[m].layer.op))
                        return false;
                return true;
            };
            for (std::size_t j = 0; j < 2 && !g; ++j) {
                g = extends(j);
                if (g && !takes_sum(groups[*g])) g.reset();
            }
        }
        if (g) {
            tail.erase(a.layers[groups[*g].back()].layer.name);
            groups[*g].push_back(i);
            tail[la.layer.name] = *g;
        } else if (is_fusion_producer(la.layer.op)) {
            groups.push_back({i});
            tail[la.layer.name] = groups.size() - 1;
        }
    }
    return groups;
}

/// The group of `members` (indices into a.layers) as one row, inputs not yet renamed.
layer_analysis make_group(const model_analysis& a, const std::vector<std::size_t>& members) {
    const std::int64_t size = size_bytes(a.data_type);
    layer_analysis g;
    g.layer = a.layers[members.front()].layer;
    g.input_shapes = a.layers[members.front()].input_shapes;
    g.output_shape = a.layers[members.back()].output_shape;
    for (std::size_t m : members) g.fused.push_back(a.layers[m]);
    for (std::size_t k = 0; k < g.fused.size(); ++k) {
        const layer_analysis& m = g.fused[k];
        g.cost += m.cost;
        if (k == 0) continue;
        const layer_analysis& previous = g.fused[k - 1];
        // the tensor between the two members is written and read inside the kernel
        g.cost.bytes -= checked::mul(2 * previous.output_shape.numel(), size, "bytes");
        if (std::holds_alternative<batch_norm2d>(m.layer.op)) {
            // its vectors are folded into the weights and the bias the convolution reads
            g.cost.bytes -= checked::mul(m.cost.params + m.cost.buffers, size, "bytes");
            const auto& conv = std::get<conv2d>(g.fused.front().layer.op);
            if (!conv.bias) g.cost.bytes += checked::mul(conv.out_channels, size, "bytes");
        }
        for (std::size_t j = 0; j < m.layer.inputs.size(); ++j)
            if (m.layer.inputs[j] != previous.layer.name) {
                g.layer.inputs.push_back(m.layer.inputs[j]);
                g.input_shapes.push_back(m.input_shapes[j]);
            }
    }
    return g;
}

}  // namespace

model_analysis fuse(const model_analysis& a) {
    const std::vector<std::vector<std::size_t>> groups = find_groups(a);
    std::vector<const std::vector<std::size_t>*> group_of(a.layers.size(), nullptr);
    std::map<std::string, std::string> renamed;  // a group's last member -> the group (its producer's name)
    for (const auto& g : groups) {
        if (g.size() < 2) continue;
        for (std::size_t m : g) group_of[m] = &g;
        renamed[a.layers[g.back()].layer.name] = a.layers[g.front()].layer.name;
    }
    auto rename = [&](std::vector<std::string>& names) {
        for (auto& n : names)
            if (const auto it = renamed.find(n); it != renamed.end()) n = it->second;
    };
    model_analysis f;
    f.model_name = a.model_name;
    f.data_type = a.data_type;
    f.batch = a.batch;
    f.inputs = a.inputs;
    f.run = a.run;
    f.fusion_applied = true;
    f.outputs = a.outputs;
    rename(f.outputs);
    for (std::size_t i = 0; i < a.layers.size(); ++i) {
        const auto* g = group_of[i];
        if (g && g->back() != i) continue;  // a member: the group stands at its last member's place
        layer_analysis row = g ? make_group(a, *g) : a.layers[i];
        rename(row.layer.inputs);
        f.totals += row.cost;
        f.layers.push_back(std::move(row));
    }
    f.totals.params = a.totals.params;  // tied tensors count once: the analysis' own totals
    f.totals.buffers = a.totals.buffers;
    return f;
}

std::string group_label(const layer_analysis& la) {
    const std::string& producer = la.layer.name;
    std::string label = producer;
    for (std::size_t k = 1; k < la.fused.size(); ++k) {
        const std::string& n = la.fused[k].layer.name;
        // the prefix the two names share, up to its last separator ("layer1.0.", "/layer1/layer1.0/"): a path's
        // folders where the name is a path (an ONNX node's), never a dot inside a folder's name ("features.0.")
        std::size_t common = 0;
        while (common < n.size() && common < producer.size() && n[common] == producer[common]) ++common;
        const char* separators = n.find('/') != std::string::npos ? "/" : ".";
        const std::size_t cut = n.find_last_of(separators, common == 0 ? 0 : common - 1);
        const std::size_t keep = common == 0 || cut == std::string::npos ? 0 : cut + 1;
        label += "+" + (keep < n.size() ? n.substr(keep) : n);
    }
    return label;
}

std::string input_labels(const model_analysis& a, const layer_analysis& layer) {
    std::string out;
    for (const auto& name : layer.layer.inputs) {
        std::string shown = name;
        for (const auto& la : a.layers)
            if (!la.fused.empty() && la.layer.name == name) shown = group_label(la);
        out += (out.empty() ? "" : ";") + shown;
    }
    return out;
}

model_analysis unfuse(const model_analysis& a) {
    std::map<std::string, std::string> renamed;  // a group (its producer's name) -> its last member's
    for (const auto& la : a.layers)
        if (!la.fused.empty()) renamed[la.layer.name] = la.fused.back().layer.name;
    model_analysis u = a;
    u.fusion_applied = false;
    if (renamed.empty()) return u;
    u.layers.clear();
    auto rename = [&](std::vector<std::string>& names) {
        for (auto& n : names)
            if (const auto it = renamed.find(n); it != renamed.end()) n = it->second;
    };
    for (const auto& la : a.layers) {
        if (la.fused.empty()) {
            u.layers.push_back(la);
            rename(u.layers.back().layer.inputs);
            continue;
        }
        // the members keep the names they read before fuse (the rows outside were renamed to their groups)
        for (const auto& m : la.fused) u.layers.push_back(m);
    }
    rename(u.outputs);
    u.totals = {};
    for (const auto& la : u.layers) u.totals += la.cost;
    u.totals.params = a.totals.params;
    u.totals.buffers = a.totals.buffers;
    return u;
}

std::string describe_fusion(const model_analysis& fused) {
    int folded = 0, sums = 0, activations = 0, groups = 0;
    for (const auto& la : fused.layers) {
        if (la.fused.empty()) continue;
        ++groups;
        for (std::size_t k = 1; k < la.fused.size(); ++k) switch (rule_of(la, k)) {
                case fusion_rule::fold_batch_norm:
                    ++folded;
                    break;
                case fusion_rule::sum_post_op:
                    ++sums;
                    break;
                case fusion_rule::activation_post_op:
                    ++activations;
                    break;
            }
    }
    if (groups == 0) return fused.fusion_applied ? "nothing to fuse (no layer matches a rule of core/fusion.hpp)" : "";
    auto count = [](int n, const std::string& one, const std::string& many) {
        return std::to_string(n) + " " + (n == 1 ? one : many);
    };
    std::vector<std::string> parts;
    if (folded) parts.push_back(count(folded, "batch norm folded", "batch norms folded"));
    if (activations) parts.push_back(count(activations, "activation", "activations") + " as post-ops");
    if (sums) parts.push_back(count(sums, "residual add", "residual adds") + " as sum post-ops");
    std::string s = count(groups, "fused group", "fused groups") + ": ";
    for (std::size_t i = 0; i < parts.size(); ++i) s += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
    return s;
}

}  // namespace ridgeline::core
