// ONNX import, attention: scaled dot-product attention as exporters spell it out (PyTorch 1.13 exports
// F.scaled_dot_product_attention and Hugging Face's eager attention of BERT, GPT-2, OPT and Llama alike):
//   MatMul(q, kT) -> [Div or Mul by a scalar] -> [Add of a constant mask | Where(constant condition, x, fill)]
//   -> Softmax(last axis) -> MatMul(., v)
// becomes one `attention` layer: is_causal when the mask is the causal one (Hugging Face's alignment, query i at
// position Skv - Sq + i), no mask when it is all zeros, otherwise the mask as an additive held buffer.
// And RMSNorm as exported (LlamaRMSNorm, torch.nn.RMSNorm before its own op):
//   Pow(x, 2) -> ReduceMean(last axis, keepdims) -> Add(eps) -> Sqrt -> Div(1, .) (or Reciprocal) -> Mul(x, .)
//   -> [Mul by a weight of the last dim]
// becomes one `rms_norm` layer.
#include <cmath>

#include "onnx_importer.hpp"

namespace ridgeline::io::onnx_detail {

namespace {

/// Whether mask[i][j] (Sq x Skv, the last two dims of a broadcast [.., Sq, Skv]) keeps exactly the causal pairs.
template <class Keep>
bool causal_shape(std::int64_t sq, std::int64_t skv, Keep keep) {
    if (skv < sq) return false;
    for (std::int64_t i = 0; i < sq; ++i)
        for (std::int64_t j = 0; j < skv; ++j)
            if (keep(i, j) != (j <= skv - sq + i)) return false;
    return true;
}

}  // namespace

bool importer::attention_pattern(const onnx::NodeProto& mm) {
    const auto& g = proto_.graph();
    auto one_output = [&](int i) { return i >= 0 && g.node(i).output_size() >= 1; };
    if (mm.input_size() != 2 || mm.output_size() < 1) return false;
    value q = input(mm, 0), kt = input(mm, 1);
    if (q.k != source::activation || kt.k != source::activation) return false;
    const core::shape qs = shape_of(q.tensor), kts = shape_of(kt.tensor);
    if (qs.rank() != 4 || kts.rank() != 4 || kts[2] != qs[3]) return false;
    const std::int64_t sq = qs[2], skv = kts[3];
    std::vector<int> nodes;
    std::string cur = mm.output(0);
    double scale = 1.0;
    // the scale: Div by a scalar or Mul by one
    for (const char* op : {"Div", "Mul"}) {
        const int i = only_reader(cur, op);
        if (!one_output(i) || g.node(i).input_size() != 2) continue;
        const auto& n = g.node(i);
        const std::string& other = n.input(0) == cur ? n.input(1) : n.input(0);
        if (other == cur || (!const_.count(other) && !initializer_.count(other))) continue;
        const auto c = resolve(n, other).c;
        if (c->size() != 1 || c->absent || c->integer) continue;
        const double v = scalar_of(*c);
        if (std::string(op) == "Div" && n.input(0) != cur) continue;  // c / scores is no scale
        if (!(v != 0) || !std::isfinite(v)) continue;
        scale = std::string(op) == "Div" ? 1.0 / v : v;
        nodes.push_back(i);
        cur = n.output(0);
        break;
    }
    // the mask: an Add of a constant, or a Where with a constant condition and a scalar fill
    bool causal = false;
    constant_ptr additive;
    if (const int add = only_reader(cur, "Add"); one_output(add) && g.node(add).input_size() == 2) {
        const auto& n = g.node(add);
        const std::string& other = n.input(0) == cur ? n.input(1) : n.input(0);
        if (other == cur || (!const_.count(other) && !initializer_.count(other))) return false;
        const auto c = resolve(n, other).c;
        if (c->integer || c->absent || c->dims.size() < 2 || c->dims.back() != skv) return false;
        const std::int64_t rows = c->dims[c->dims.size() - 2];
        bool zeros = true;
        for (float v : c->values) zeros = zeros && v == 0.0f;
        // a causal 0 / very negative mask of every broadcast row
        const bool causal_mask = rows == sq && static_cast<std::int64_t>(c->size()) == sq * skv &&
                                 causal_shape(sq, skv, [&](std::int64_t i, std::int64_t j) {
                                     return c->values[static_cast<std::size_t>(i * skv + j)] > -1e4f;
                                 });
        causal = causal_mask && !zeros;
        if (!zeros && !causal) additive = c;
        nodes.push_back(add);
        cur = n.output(0);
    } else if (const int w = only_reader(cur, "Where"); one_output(w) && g.node(w).input_size() == 3) {
        const auto& n = g.node(w);
        value cond = input(n, 0);
        const bool x_first = n.input(1) == cur;
        value fill = input(n, x_first ? 2 : 1);
        if (cond.k != source::constant || !cond.c->integer || cond.c->absent) return false;
        if (fill.k != source::constant || fill.c->size() != 1 || fill.c->integer || fill.c->absent) return false;
        if (!(scalar_of(*fill.c) < -1e4)) return false;  // a large negative fill: masked out
        const auto& cd = cond.c->dims;
        if (cd.size() < 2 || cd.back() != skv || cd[cd.size() - 2] != sq ||
            static_cast<std::int64_t>(cond.c->ints.size()) != sq * skv)
            return false;
        // x where the condition holds (x first) or where it does not (fill first)
        causal = causal_shape(sq, skv, [&](std::int64_t i, std::int64_t j) {
            return (cond.c->ints[static_cast<std::size_t>(i * skv + j)] != 0) == x_first;
        });
        if (!causal) return false;  // another constant selection stays a where layer
        nodes.push_back(w);
        cur = n.output(0);
    }
    const int sm = only_reader(cur, "Softmax");
    if (!one_output(sm)) return false;
    const std::int64_t axis = attr_int(g.node(sm), "axis", opset_ >= 13 ? -1 : 1);
    if (axis != -1 && axis != 3) return false;
    nodes.push_back(sm);
    const int pv = only_reader(g.node(sm).output(0), "MatMul");
    if (!one_output(pv) || g.node(pv).input_size() != 2 || g.node(pv).input(0) != g.node(sm).output(0)) return false;
    value v = input(g.node(pv), 1);
    if (v.k != source::activation) return false;
    const core::shape vs = shape_of(v.tensor);
    if (vs.rank() != 4 || vs[2] != skv || vs[0] != qs[0] || qs[1] % vs[1] != 0 || kts[1] != vs[1]) return false;
    nodes.push_back(pv);
    // keys [B, KVH, Skv, D]: kT transposed back (a view of a view)
    onnx::NodeProto keys;
    keys.set_name(node_name(mm) + "/keys");
    const std::string k = emit(keys, make("transpose", {{"dim0", "2"}, {"dim1", "3"}}, keys.name()), {kt.tensor});
    std::vector<core::attribute> attrs;
    if (causal) attrs.push_back({"is_causal", "true"});
    if (std::fabs(scale - 1.0 / std::sqrt(static_cast<double>(qs[3]))) > 1e-6 * scale)
        attrs.push_back({"scale", number_text(scale)});
    std::vector<std::string> ins{q.tensor, k, v.tensor};
    if (additive) ins.push_back(held(additive->origin + "\x01mask", additive));
    // named after the scope the nodes share ("/attn/MatMul" -> "/attn/attention")
    onnx::NodeProto named;
    const std::string base = node_name(mm);
    named.set_name(base.substr(0, base.rfind('/') == std::string::npos ? 0 : base.rfind('/') + 1) + "attention");
    map_output(g.node(pv).output(0), emit(named, make("attention", attrs, named.name()), ins));
    for (int i : nodes) fuse(i);
    return true;
}

bool importer::rms_norm_pattern(const onnx::NodeProto& pow) {
    const auto& g = proto_.graph();
    auto one_output = [&](int i) { return i >= 0 && g.node(i).output_size() >= 1; };
    if (pow.input_size() != 2 || pow.output_size() < 1 || !scalar_near(pow, pow.input(1), 2.0)) return false;
    value x = input(pow, 0);
    if (x.k != source::activation) return false;
    const core::shape xs = shape_of(x.tensor);
    const auto rank = static_cast<std::int64_t>(xs.rank());
    std::vector<int> nodes;
    const int mean = only_reader(pow.output(0), "ReduceMean");
    if (!one_output(mean) || attr_int(g.node(mean), "keepdims", 1) != 1) return false;
    std::vector<std::int64_t> axes;
    try {
        axes = attr_or_input_ints(g.node(mean), "axes", 1, "ReduceMean's axes");
    } catch (const unsupported&) {
        return false;
    }
    if (axes.size() != 1 || (axes[0] != -1 && axes[0] != rank - 1)) return false;
    nodes.push_back(mean);
    const int add = only_reader(g.node(mean).output(0), "Add");
    if (!one_output(add) || g.node(add).input_size() != 2) return false;
    const auto& an = g.node(add);
    const std::string& eps_name = an.input(0) == g.node(mean).output(0) ? an.input(1) : an.input(0);
    if (!const_.count(eps_name) && !initializer_.count(eps_name)) return false;
    const auto eps = resolve(an, eps_name).c;
    if (eps->size() != 1 || eps->integer || eps->absent || !(scalar_of(*eps) >= 0)) return false;
    nodes.push_back(add);
    const int sq = only_reader(an.output(0), "Sqrt");
    if (!one_output(sq)) return false;
    nodes.push_back(sq);
    // 1 / sqrt: Div(1, .) or Reciprocal
    int inv = only_reader(g.node(sq).output(0), "Div");
    if (one_output(inv)) {
        const auto& dn = g.node(inv);
        if (dn.input_size() != 2 || dn.input(1) != g.node(sq).output(0) || !scalar_near(dn, dn.input(0), 1.0)) return false;
    } else {
        inv = only_reader(g.node(sq).output(0), "Reciprocal");
        if (!one_output(inv)) return false;
    }
    nodes.push_back(inv);
    const int scaled = only_reader(g.node(inv).output(0), "Mul");
    if (!one_output(scaled) || g.node(scaled).input_size() != 2) return false;
    const auto& sn = g.node(scaled);
    const std::string& other = sn.input(0) == g.node(inv).output(0) ? sn.input(1) : sn.input(0);
    if (other != pow.input(0)) return false;  // x times its inverse RMS
    nodes.push_back(scaled);
    std::string out = sn.output(0);
    // the weight: a Mul by a constant vector of the last dim
    constant_ptr weight;
    if (const int w = only_reader(out, "Mul"); one_output(w) && g.node(w).input_size() == 2) {
        const auto& wn = g.node(w);
        const std::string& wt = wn.input(0) == out ? wn.input(1) : wn.input(0);
        if (wt != out && (const_.count(wt) || initializer_.count(wt))) {
            const auto c = resolve(wn, wt).c;
            if (!c->integer && static_cast<std::int64_t>(c->size()) == xs[xs.rank() - 1]) {
                auto wd = derived(*c, "");
                wd->dims = {xs[xs.rank() - 1]};
                weight = wd;
                nodes.push_back(w);
                out = wn.output(0);
            }
        }
    }
    // named after the scope ("/norm/Pow" -> "/norm/RMSNorm")
    onnx::NodeProto named;
    const std::string base = node_name(pow);
    named.set_name(base.substr(0, base.rfind('/') == std::string::npos ? 0 : base.rfind('/') + 1) + "RMSNorm");
    std::vector<core::attribute> attrs{{"normalized_shape", std::to_string(xs[xs.rank() - 1])},
                                       {"eps", number_text(scalar_of(*eps))}};
    if (!weight) attrs.push_back({"elementwise_affine", "false"});
    std::vector<std::pair<std::string, constant_ptr>> params;
    if (weight) params.emplace_back("weight", weight);
    map_output(out, emit(named, make("rms_norm", attrs, named.name()), {x.tensor}, params));
    for (int i : nodes) fuse(i);
    return true;
}

}  // namespace ridgeline::io::onnx_detail
