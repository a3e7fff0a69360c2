// ONNX import, elementwise ops: unary activations, Clip, Gelu (and PyTorch's erf decomposition), Add/Mul/...
#include <numbers>

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
        const auto& m = graph().proto.graph().node(mul);
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
    if (graph().opset < 11) {
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
    if (graph().outputs.count(t)) return -1;
    auto r = graph().readers.find(t);
    if (r == graph().readers.end() || r->second.size() != 1) return -1;
    return graph().proto.graph().node(r->second[0]).op_type() == op ? r->second[0] : -1;
}

bool importer::scalar_near(const onnx::NodeProto& n, const std::string& t, double v) {
    if (!consts_.values.count(t) && !graph().initializer.count(t)) return false;
    const auto c = resolve(n, t).c;
    // relative: float32 holds these constants to 6e-8 of themselves; 0.0448 is not GELU's 0.044715
    return c->size() == 1 && !c->absent && std::fabs(scalar_of(*c) - v) <= 1e-6 * std::fabs(v);
}

std::vector<int> importer::gelu_pattern(const onnx::NodeProto& div) {
    const auto& g = graph().proto.graph();
    // every node of the pattern has its one output and two inputs (Erf: one): a malformed file's node with fewer is
    // no GELU (fuzz_onnx found an Add with no input read past its end)
    auto shaped = [&](int i, int inputs) {
        return g.node(i).output_size() >= 1 && g.node(i).input_size() == inputs;
    };
    if (div.input_size() != 2 || div.output_size() < 1 || !scalar_near(div, div.input(1), std::sqrt(2.0))) return {};
    const std::string& x = div.input(0);
    const int erf = only_reader(div.output(0), "Erf");
    if (erf < 0 || !shaped(erf, 1)) return {};
    const int add = only_reader(g.node(erf).output(0), "Add");
    if (add < 0 || !shaped(add, 2)) return {};
    const auto& an = g.node(add);
    const std::string& one = an.input(0) == g.node(erf).output(0) ? an.input(1) : an.input(0);
    if (!scalar_near(an, one, 1.0)) return {};
    const int mul1 = only_reader(an.output(0), "Mul");
    if (mul1 < 0 || !shaped(mul1, 2)) return {};
    const auto& m1 = g.node(mul1);
    const std::string& m1_other = m1.input(0) == an.output(0) ? m1.input(1) : m1.input(0);
    if (m1_other != x) return {};
    const int mul2 = only_reader(m1.output(0), "Mul");
    if (mul2 < 0 || !shaped(mul2, 2)) return {};
    const auto& m2 = g.node(mul2);
    const std::string& half = m2.input(0) == m1.output(0) ? m2.input(1) : m2.input(0);
    if (!scalar_near(m2, half, 0.5)) return {};
    return {erf, add, mul1, mul2};
}

void importer::binary(const onnx::NodeProto& n, int index) {
    (void)index;
    const std::string& op = n.op_type();
    if (n.input_size() != 2) throw unsupported{op + " has " + std::to_string(n.input_size()) + " input(s), it takes 2"};
    if (op == "Div") {
        if (auto nodes = gelu_pattern(n); !nodes.empty()) {
            const std::string x = activation(n, 0);
            // name it after the scope the five nodes share ("/mlp/act/Div" -> "/mlp/act/Gelu")
            std::string name = node_name(n);
            const auto slash = name.rfind('/');
            name = slash == std::string::npos ? "Gelu_" + std::to_string(built_.current_index)
                                              : name.substr(0, slash + 1) + "Gelu";
            onnx::NodeProto named = n;
            named.set_name(name);
            const std::string l = emit(named, make("gelu", {}, name), {x});
            map_output(graph().proto.graph().node(nodes.back()).output(0), l);
            for (int k : nodes) fuse(k);
            return;
        }
    }
    value a = input(n, 0), b = input(n, 1);
    for (const auto* v : {&a, &b})
        if (v->k == source::unavailable) throw unsupported{"reads " + v->why, !v->producer_listed};
    const std::string kind = op == "Add" ? "add" : op == "Mul" ? "mul" : op == "Sub" ? "sub" : "div";
    if (a.k == source::activation && b.k == source::activation) {
        map_output(n.output(0), emit(n, make(kind, {}, node_name(n)), {a.tensor, b.tensor}));
        return;
    }
    if (a.k == source::constant && b.k == source::constant)
        throw unsupported{op + " of two constants (fold it before export)"};
    const value& act = a.k == source::activation ? a : b;
    const value& con = a.k == source::activation ? b : a;
    if ((op == "Mul" || op == "Div") && con.c->size() == 1 && !(op == "Div" && a.k == source::constant)) {
        const double c = scalar_of(*con.c);
        if (op == "Div" && c == 0) throw unsupported{"Div by the constant 0"};
        const double factor = op == "Div" ? 1.0 / c : c;
        map_output(n.output(0), emit(n, make("scale", {{"factor", number_text(factor)}}, node_name(n)), {act.tensor}));
        return;
    }
    if (con.c->integer) throw unsupported{op + " with a constant of integers (" + con.c->shape_text() + ")"};
    // a tensor the model holds (ViT's position embedding, ConvNeXt's layer scale, a scalar such as GELU's 1): a
    // parameter layer, read in the node's operand order
    const std::string held_tensor = held(a.k == source::constant ? n.input(0) : n.input(1), con.c);
    const std::vector<std::string> xs =
        a.k == source::constant ? std::vector<std::string>{held_tensor, act.tensor} : std::vector<std::string>{act.tensor, held_tensor};
    map_output(n.output(0), emit(n, make(kind, {}, node_name(n)), xs));
}

void importer::pow_node(const onnx::NodeProto& n) {
    if (rms_norm_pattern(n)) return;  // x / sqrt(mean(x^2) + eps) * w: one rms_norm layer
    const std::string x = activation(n, 0);
    const auto e = constant_input(n, 1);
    if (e->size() != 1)
        throw unsupported{"Pow with an exponent of shape " + e->shape_text() + "; ridgeline maps one constant exponent"};
    const double v = scalar_of(*e);
    if (!std::isfinite(v)) throw unsupported{"Pow with the exponent " + number_text(v) + "; it must be finite"};
    map_output(n.output(0), emit(n, make("pow", {{"exponent", number_text(v)}}, node_name(n)), {x}));
}

void importer::where_node(const onnx::NodeProto& n) {
    // Where(mask, -inf, x): PyTorch's masked_fill of attention scores with a constant mask (a causal mask). With an
    // infinite fill, x + (mask ? -inf : 0) is the same tensor for every finite x: an add of a held buffer. Any
    // other Where with a constant condition (a finite fill such as HF GPT-2's finfo.min): a where layer reading
    // the condition as a held 0/1 buffer
    if (n.input_size() != 3) throw unsupported{"Where has " + std::to_string(n.input_size()) + " input(s), it takes 3"};
    value cond = input(n, 0), a = input(n, 1), b = input(n, 2);
    for (const auto* v : {&cond, &a, &b})
        if (v->k == source::unavailable) throw unsupported{"reads " + v->why, !v->producer_listed};
    if (cond.k != source::constant || !cond.c->integer)
        throw unsupported{"Where with a condition computed at run time; ridgeline maps a constant condition (a mask)"};
    const bool fill_first = a.k == source::constant && b.k == source::activation;
    const value* fill = fill_first ? &a : b.k == source::constant && a.k == source::activation ? &b : nullptr;
    const bool infinite = fill && fill->c->size() == 1 && !fill->c->integer && !fill->c->absent &&
                          std::isinf(fill->c->values.at(0));
    if (infinite) {
        const float v = fill->c->values.at(0);
        const value& x = fill_first ? b : a;
        const core::shape& xs = shape_of(x.tensor);
        const auto& cd = cond.c->dims;
        bool fits = cd.size() <= xs.rank();
        for (std::size_t i = 0; fits && i < cd.size(); ++i) {
            const std::int64_t d = cd[cd.size() - 1 - i];
            fits = d == 1 || d == xs[xs.rank() - 1 - i];
        }
        if (fits) {
            // the additive mask: fill where the condition picks the fill, 0 where it picks x
            auto mask = std::make_shared<constant>();
            mask->dims = cond.c->dims;
            mask->origin = node_name(n) + "/mask";  // its layer's name; not an initializer's (a buffer, tied to nothing)
            while (graph().initializer.count(mask->origin) || consts_.values.count(mask->origin)) mask->origin += "#";
            mask->absent = cond.c->absent;
            mask->values.resize(cond.c->ints.size());
            for (std::size_t k = 0; k < mask->values.size(); ++k)
                mask->values[k] = (cond.c->ints[k] != 0) == fill_first ? v : 0.0f;
            const std::string m = held(n.output(0) + "\x01mask", mask);  // a key no ONNX tensor has
            map_output(n.output(0), emit(n, make("add", {}, node_name(n)), {x.tensor, m}));
            return;
        }
    }
    // a where layer: constants held (a scalar as one element), the condition as 0/1
    auto operand = [&](const value& v, const std::string& tag) -> std::string {
        if (v.k == source::activation) return v.tensor;
        if (v.c->integer) throw unsupported{"Where choosing integers (" + v.c->shape_text() + ")"};
        if (!v.c->dims.empty()) return held(n.output(0) + "\x01" + tag, v.c);
        auto one = std::make_shared<constant>(*v.c);
        one->dims = {1};
        return held(n.output(0) + "\x01" + tag, one);
    };
    auto mask = std::make_shared<constant>();
    mask->dims = cond.c->dims.empty() ? std::vector<std::int64_t>{1} : cond.c->dims;
    mask->origin = node_name(n) + "/condition";
    while (graph().initializer.count(mask->origin) || consts_.values.count(mask->origin)) mask->origin += "#";
    mask->absent = cond.c->absent;
    for (const auto i : cond.c->ints) mask->values.push_back(i != 0 ? 1.0f : 0.0f);
    const std::string c = held(n.output(0) + "\x01condition", mask);
    const std::string x = operand(a, "input"), y = operand(b, "other");
    map_output(n.output(0), emit(n, make("where", {}, node_name(n)), {c, x, y}));
}

void importer::find_tanh_gelus() {
    // y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), as GPT-2's NewGELU and PyTorch's
    // F.gelu(approximate="tanh") before opset 20 are exported, anchored at the Tanh; operands of the commutative
    // ops in either order, every intermediate read once. The 0.5 may multiply x first or the product last.
    const auto& g = graph().proto.graph();
    auto other_of = [](const onnx::NodeProto& n, const std::string& t) -> std::string {
        if (n.input_size() != 2) return {};
        return n.input(0) == t ? n.input(1) : n.input(1) == t ? n.input(0) : std::string();
    };
    auto producer = [&](const std::string& t, const std::string& op) -> int {
        auto p = graph().producer.find(t);
        if (p == graph().producer.end() || g.node(p->second).op_type() != op || built_.fused.count(p->second) ||
            consts_.folded.count(p->second))
            return -1;
        return only_reader(t, g.node(graph().readers.at(t).at(0)).op_type()) >= 0 ? p->second : -1;
    };
    for (int t = 0; t < g.node_size(); ++t) {
        const auto& tanh = g.node(t);
        if (tanh.op_type() != "Tanh" || tanh.input_size() != 1 || built_.fused.count(t) || consts_.folded.count(t)) continue;
        const int scale = producer(tanh.input(0), "Mul");  // sqrt(2/pi) * inner
        if (scale < 0) continue;
        const auto& sn = g.node(scale);
        std::string inner;
        for (int k = 0; k < 2 && inner.empty(); ++k)
            if (scalar_near(sn, sn.input(k), std::sqrt(2.0 / std::numbers::pi))) inner = sn.input(1 - k);
        const int add = inner.empty() ? -1 : producer(inner, "Add");  // x + 0.044715 * x^3
        if (add < 0) continue;
        const auto& an = g.node(add);
        int cube_mul = -1, pow = -1;
        std::string x;
        for (int k = 0; k < 2 && pow < 0; ++k) {
            cube_mul = producer(an.input(k), "Mul");
            if (cube_mul < 0) continue;
            const auto& cm = g.node(cube_mul);
            for (int j = 0; j < 2 && pow < 0; ++j) {
                if (!scalar_near(cm, cm.input(j), 0.044715)) continue;
                const int p = producer(cm.input(1 - j), "Pow");
                if (p >= 0 && g.node(p).input_size() == 2 && g.node(p).input(0) == an.input(1 - k) &&
                    scalar_near(g.node(p), g.node(p).input(1), 3.0)) {
                    pow = p;
                    x = an.input(1 - k);
                }
            }
        }
        if (pow < 0) continue;
        const int one = only_reader(tanh.output(0), "Add");  // 1 + tanh
        if (one < 0 || !scalar_near(g.node(one), other_of(g.node(one), tanh.output(0)), 1.0)) continue;
        const int outer = only_reader(g.node(one).output(0), "Mul");
        if (outer < 0) continue;
        const std::string b = other_of(g.node(outer), g.node(one).output(0));
        std::vector<int> nodes{pow, cube_mul, add, scale, t, one, outer};
        int last = outer;
        if (b == x) {  // (x * (1 + tanh)) * 0.5
            const int half = only_reader(g.node(outer).output(0), "Mul");
            if (half < 0 || !scalar_near(g.node(half), other_of(g.node(half), g.node(outer).output(0)), 0.5)) continue;
            nodes.push_back(half);
            last = half;
        } else {  // (0.5 * x) * (1 + tanh)
            const int half = producer(b, "Mul");
            if (half < 0 || other_of(g.node(half), x).empty() ||
                !scalar_near(g.node(half), other_of(g.node(half), x), 0.5))
                continue;
            nodes.push_back(half);
        }
        const int first = *std::min_element(nodes.begin(), nodes.end());
        for (int k : nodes)
            if (k != first) built_.fused.insert(k);
        built_.found_at[first] = {x, g.node(last).output(0), tanh.name(), "Gelu", "gelu", "tanh GELU",
                            {{"approximate", "tanh"}}};
    }
}

void importer::emit_found(const onnx::NodeProto& n, const found_pattern& m) {
    onnx::NodeProto reader = n;  // reads x (convert() marks the pattern's output unavailable when this fails)
    reader.clear_input();
    reader.add_input(m.x);
    const std::string x = activation(reader, 0);
    // name it after the scope the nodes share ("/mlp/act/Tanh" -> "/mlp/act/Gelu")
    const auto slash = m.scope_of.rfind('/');
    onnx::NodeProto named = n;
    named.set_name(slash == std::string::npos ? m.name + "_" + std::to_string(built_.current_index)
                                              : m.scope_of.substr(0, slash + 1) + m.name);
    map_output(m.output, emit(named, make(m.kind, m.attrs, named.name()), {x}));
}

// ------------------------------------------------------------------ the ONNX op types converted here

void importer::add_elementwise_converters(converter_map& table) {
    add_converter(table, "Relu", [](importer& i, const onnx::NodeProto& n, int) { i.unary(n, "relu"); });
    add_converter(table, "Sigmoid", [](importer& i, const onnx::NodeProto& n, int) { i.sigmoid_node(n); });
    add_converter(table, "HardSwish", [](importer& i, const onnx::NodeProto& n, int) { i.unary(n, "hardswish"); });
    add_converter(table, "HardSigmoid", [](importer& i, const onnx::NodeProto& n, int) { i.hard_sigmoid(n); });
    add_converter(table, "Tanh", [](importer& i, const onnx::NodeProto& n, int) { i.unary(n, "tanh"); });
    add_converter(table, "Clip", [](importer& i, const onnx::NodeProto& n, int) { i.clip(n); });
    add_converter(table, "Gelu", [](importer& i, const onnx::NodeProto& n, int) { i.gelu_node(n); });
    add_converter(table, "Add", [](importer& i, const onnx::NodeProto& n, int index) { i.binary(n, index); });
    add_converter(table, "Mul", [](importer& i, const onnx::NodeProto& n, int index) { i.binary(n, index); });
    add_converter(table, "Sub", [](importer& i, const onnx::NodeProto& n, int index) { i.binary(n, index); });
    add_converter(table, "Div", [](importer& i, const onnx::NodeProto& n, int index) { i.binary(n, index); });
    add_converter(table, "Pow", [](importer& i, const onnx::NodeProto& n, int) { i.pow_node(n); });
    add_converter(table, "Erf", [](importer& i, const onnx::NodeProto& n, int) { i.unary(n, "erf"); });
    add_converter(table, "Sqrt", [](importer& i, const onnx::NodeProto& n, int) { i.unary(n, "sqrt"); });
    add_converter(table, "Exp", [](importer& i, const onnx::NodeProto& n, int) { i.unary(n, "exp"); });
    add_converter(table, "Neg", [](importer& i, const onnx::NodeProto& n, int) { i.unary(n, "neg"); });
    add_converter(table, "Where", [](importer& i, const onnx::NodeProto& n, int) { i.where_node(n); });
}

}  // namespace ridgeline::io::onnx_detail
