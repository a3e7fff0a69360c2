// ONNX import, elementwise ops: unary activations, Clip, Gelu (and PyTorch's erf decomposition), Add/Mul/...
#include "onnx_importer.hpp"

namespace ridgeline::io::onnx_detail {

void importer::unary(const onnx::NodeProto& n, const std::string& kind) {
    const std::string x = activation(n, 0);
    map_output(n.output(0), emit(n, make(kind, {}, node_name(n)), {x}));
}

void importer::hard_sigmoid(const onnx::NodeProto& n) {
    // ONNX: max(0, min(1, alpha * x + beta)), defaults 0.2 and 0.5; torch.nn.Hardsigmoid exports 1/6 and 0.5
    const double alpha = attr_float(n, "alpha", 0.2), beta = attr_float(n, "beta", 0.5);
    if (!(std::fabs(alpha - 1.0 / 6.0) <= 1e-6) || !(beta == 0.5))  // NaN is neither
        throw unsupported{"HardSigmoid with alpha " + number_text(alpha) + " and beta " + number_text(beta) +
                          "; ridgeline's hardsigmoid is PyTorch's (alpha 1/6, beta 0.5)"};
    unary(n, "hardsigmoid");
}

void importer::sigmoid_node(const onnx::NodeProto& n) {
    // x * Sigmoid(x), read once (PyTorch's export of nn.SiLU before opset 24 has no SiLU op): one silu
    const int mul = only_reader(n.output(0), "Mul");
    if (mul >= 0 && n.input_size() == 1) {
        const auto& m = proto_.graph().node(mul);
        const std::string& other = m.input_size() == 2 ? (m.input(0) == n.output(0) ? m.input(1) : m.input(0)) : "";
        if (other == n.input(0) && other != n.output(0)) {
            const std::string x = activation(n, 0);
            map_output(m.output(0), emit(n, make("silu", {}, node_name(n)), {x}));
            fuse(mul);
            return;
        }
    }
    unary(n, "sigmoid");
}

void importer::clip(const onnx::NodeProto& n) {
    const std::string x = activation(n, 0);
    double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
    if (opset_ < 11) {
        lo = attr_float(n, "min", lo);
        hi = attr_float(n, "max", hi);
    } else {
        if (has_input(n, 1)) lo = scalar_of(*constant_input(n, 1));
        if (has_input(n, 2)) hi = scalar_of(*constant_input(n, 2));
    }
    const bool no_max = hi >= static_cast<double>(std::numeric_limits<float>::max());
    std::string kind;
    if (lo == 0 && hi == 6)
        kind = "relu6";
    else if (lo == 0 && no_max)
        kind = "relu";
    else
        throw unsupported{"Clip to [" + number_text(lo) + ", " + number_text(hi) +
                          "]; ridgeline maps Clip [0, 6] to relu6 and Clip [0, inf) to relu, nothing else"};
    map_output(n.output(0), emit(n, make(kind, {}, node_name(n)), {x}));
}

void importer::gelu_node(const onnx::NodeProto& n) {
    const std::string approximate = attr_string(n, "approximate", "none");
    if (approximate != "none" && approximate != "tanh")
        throw unsupported{"approximate \"" + approximate + "\" is not supported"};
    const std::string x = activation(n, 0);
    std::vector<core::attribute> a;
    if (approximate == "tanh") a.push_back({"approximate", "tanh"});
    map_output(n.output(0), emit(n, make("gelu", a, node_name(n)), {x}));
}

int importer::only_reader(const std::string& t, const std::string& op) const {
    if (graph_outputs_.count(t)) return -1;
    auto r = readers_.find(t);
    if (r == readers_.end() || r->second.size() != 1) return -1;
    return proto_.graph().node(r->second[0]).op_type() == op ? r->second[0] : -1;
}

bool importer::scalar_near(const onnx::NodeProto& n, const std::string& t, double v) {
    if (!const_.count(t) && !initializer_.count(t)) return false;
    const auto c = resolve(n, t).c;
    return c->size() == 1 && !c->absent && std::fabs(scalar_of(*c) - v) <= 1e-4 * std::max(1.0, std::fabs(v));
}

std::vector<int> importer::gelu_pattern(const onnx::NodeProto& div) {
    const auto& g = proto_.graph();
    if (div.input_size() != 2 || !scalar_near(div, div.input(1), std::sqrt(2.0))) return {};
    const std::string& x = div.input(0);
    const int erf = only_reader(div.output(0), "Erf");
    if (erf < 0) return {};
    const int add = only_reader(g.node(erf).output(0), "Add");
    if (add < 0) return {};
    const auto& an = g.node(add);
    const std::string& one = an.input(0) == g.node(erf).output(0) ? an.input(1) : an.input(0);
    if (!scalar_near(an, one, 1.0)) return {};
    const int mul1 = only_reader(an.output(0), "Mul");
    if (mul1 < 0) return {};
    const auto& m1 = g.node(mul1);
    const std::string& m1_other = m1.input(0) == an.output(0) ? m1.input(1) : m1.input(0);
    if (m1_other != x) return {};
    const int mul2 = only_reader(m1.output(0), "Mul");
    if (mul2 < 0) return {};
    const auto& m2 = g.node(mul2);
    const std::string& half = m2.input(0) == m1.output(0) ? m2.input(1) : m2.input(0);
    if (!scalar_near(m2, half, 0.5)) return {};
    return {erf, add, mul1, mul2};
}

void importer::binary(const onnx::NodeProto& n, int index) {
    (void)index;
    const std::string& op = n.op_type();
    if (n.input_size() != 2) throw unsupported{op + " with " + std::to_string(n.input_size()) + " inputs"};
    if (op == "Div") {
        if (auto nodes = gelu_pattern(n); !nodes.empty()) {
            const std::string x = activation(n, 0);
            // name it after the scope the five nodes share ("/mlp/act/Div" -> "/mlp/act/Gelu")
            std::string name = node_name(n);
            const auto slash = name.rfind('/');
            name = slash == std::string::npos ? "Gelu_" + std::to_string(current_index_)
                                              : name.substr(0, slash + 1) + "Gelu";
            onnx::NodeProto named = n;
            named.set_name(name);
            const std::string l = emit(named, make("gelu", {}, name), {x});
            map_output(proto_.graph().node(nodes.back()).output(0), l);
            for (int k : nodes) fuse(k);
            return;
        }
    }
    value a = input(n, 0), b = input(n, 1);
    for (const auto* v : {&a, &b})
        if (v->k == source::unavailable) throw unsupported{"reads " + v->why, !v->producer_listed};
    if (a.k == source::activation && b.k == source::activation) {
        if (op == "Div") throw unsupported{"Div of two activations: ridgeline has no division layer"};
        map_output(n.output(0), emit(n, make(op == "Add" ? "add" : "mul", {}, node_name(n)), {a.tensor, b.tensor}));
        return;
    }
    if (a.k == source::constant && b.k == source::constant)
        throw unsupported{op + " of two constants (fold it before export)"};
    const value& act = a.k == source::activation ? a : b;
    const value& con = a.k == source::activation ? b : a;
    if (op != "Add" && con.c->size() == 1 && !(op == "Div" && a.k == source::constant)) {
        const double c = scalar_of(*con.c);
        if (op == "Div" && c == 0) throw unsupported{"Div by the constant 0"};
        const double factor = op == "Div" ? 1.0 / c : c;
        map_output(n.output(0), emit(n, make("scale", {{"factor", number_text(factor)}}, node_name(n)), {act.tensor}));
        return;
    }
    throw unsupported{op + " with a constant of shape " + con.c->shape_text() + "; ridgeline maps " +
                      (op == "Add" ? "Add of two activations (or a bias after MatMul)"
                                   : op + " of two activations or by a scalar constant (to scale)")};
}

}  // namespace ridgeline::io::onnx_detail
