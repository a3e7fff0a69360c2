// ONNX import, attention: scaled dot-product attention as exporters spell it out (PyTorch 1.13 exports
// F.scaled_dot_product_attention and Hugging Face's eager attention of BERT, GPT-2, OPT and Llama alike):
//   MatMul(q, kT) -> [Div or Mul by a scalar] -> [Add of a constant mask | Where(constant condition, x, fill)]
//   -> Softmax(last axis) -> MatMul(., v)
// becomes one `attention` layer: is_causal when the mask is the causal one (Hugging Face's alignment, query i at
// position Skv - Sq + i), no mask when it is all zeros, otherwise the mask as an additive held buffer.
// And RMSNorm as exported (LlamaRMSNorm, torch.nn.RMSNorm before its own op):
//   Pow(x, 2) -> ReduceMean(last axis, keepdims) -> Add(eps) -> Sqrt -> Div(1, .) (or Reciprocal) -> Mul(x, .)
//   -> [Mul by a weight of the last dim]
// becomes one `rms_norm` layer. And rotary embeddings in the rotate-half form (modeling_llama.apply_rotary_pos_emb):
//   Add(Mul(x, cos), Mul(Concat(Neg(Slice(x, D/2:)), Slice(x, :D/2)), sin))
// with cos and sin the default rope type's tables at positions 0..S-1 becomes one `rotary` layer of that theta.
#include <cmath>
#include <optional>

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

/// The theta whose rotary tables (core::rotary::make_tables of the default rope type, positions 0..S-1) `cos` and
/// `sin` hold for x [.., S, D], or nullopt when they are something else (another rope type, an offset, data absent).
/// theta comes from the lowest frequency: at position 1 its angle is inv_freq[D/2 - 1] = theta^(-(D - 2)/D), which
/// float32 holds to 1e-7 of itself (derived from modeling_rope_utils' default inv_freq = 1 / theta^(2i/D)).
std::optional<double> rotary_theta(const constant& cos, const constant& sin, std::int64_t s, std::int64_t d) {
    for (const constant* c : {&cos, &sin}) {
        if (c->integer || c->absent || c->dims.size() < 2 || c->dims[c->dims.size() - 1] != d ||
            c->dims[c->dims.size() - 2] != s || static_cast<std::int64_t>(c->values.size()) != s * d)
            return std::nullopt;
    }
    double theta = 10000.0;  // one frequency (D = 2) or one position: every theta gives the same tables
    if (s >= 2 && d >= 4) {
        const std::size_t i = static_cast<std::size_t>(d / 2 - 1), at = static_cast<std::size_t>(d) + i;
        const double f = std::atan2(static_cast<double>(sin.values[at]), static_cast<double>(cos.values[at]));
        if (!(f > 0 && f < 1)) return std::nullopt;
        theta = std::exp(-std::log(f) * static_cast<double>(d) / (2.0 * static_cast<double>(i)));
        if (!std::isfinite(theta) || !(theta > 1)) return std::nullopt;
        // as the config wrote it (10000, 500000): the fewest significant digits within 1e-4 of the estimate
        for (int digits = 1; digits <= 6; ++digits) {
            const double unit = std::pow(10.0, std::floor(std::log10(theta)) - (digits - 1));
            if (const double r = std::round(theta / unit) * unit; std::fabs(r - theta) <= 1e-4 * theta) {
                theta = r;
                break;
            }
        }
    }
    core::rotary rope;
    rope.theta = theta;
    const auto t = rope.make_tables(d, s);
    // float32 angles position x inv_freq: an inv_freq one ulp apart moves the angle at position p by p x 6e-8
    const double tolerance = 1e-4 + 1e-7 * static_cast<double>(s);
    for (std::size_t k = 0; k < t.cos.size(); ++k)
        if (std::fabs(t.cos[k] - cos.values[k]) > tolerance || std::fabs(t.sin[k] - sin.values[k]) > tolerance)
            return std::nullopt;
    return theta;
}

}  // namespace

void importer::find_rotaries() {
    // anchored at the Add; operands of Add and the Muls in either order, every intermediate read once, x [B, H, S, D]
    const auto& g = graph().proto.graph();
    auto producer = [&](const std::string& t, const char* op) -> int {
        auto p = graph().producer.find(t);
        if (p == graph().producer.end() || g.node(p->second).op_type() != op || built_.fused.count(p->second) ||
            consts_.folded.count(p->second) || g.node(p->second).output_size() < 1)
            return -1;
        return only_reader(t, g.node(graph().readers.at(t).at(0)).op_type()) >= 0 ? p->second : -1;
    };
    auto constant_at = [&](const onnx::NodeProto& n, const std::string& t) -> constant_ptr {
        return !t.empty() && (consts_.values.count(t) || graph().initializer.count(t)) ? resolve(n, t).c : nullptr;
    };
    auto last_axis = [](std::int64_t axis) { return axis == -1 || axis == 3; };
    // Slice(x) of the last axis over [D/2, D) (upper) or [0, D/2), step 1
    auto half_of = [&](int i, const std::string& x, std::int64_t d, bool upper) {
        const auto& n = g.node(i);
        if (n.input_size() < 1 || n.input(0) != x) return false;
        for (int k = 1; k < n.input_size(); ++k)
            if (!known(n.input(k))) return false;
        slice_arguments a;
        try {
            a = slice_args(n);
        } catch (const unsupported&) {
            return false;
        }
        if (a.starts.size() != 1 || !last_axis(a.axes[0]) || a.steps[0] != 1) return false;
        const std::int64_t start = a.starts[0] < 0 ? a.starts[0] + d : a.starts[0];
        const std::int64_t end = a.ends[0] < 0 ? a.ends[0] + d : std::min(a.ends[0], d);
        return upper ? start == d / 2 && end == d : start == 0 && end == d / 2;
    };
    for (int a = 0; a < g.node_size(); ++a) {
        const auto& add = g.node(a);
        if (add.op_type() != "Add" || add.input_size() != 2 || add.output_size() < 1 || built_.fused.count(a) || consts_.folded.count(a))
            continue;
        for (int order = 0; order < 2; ++order) {
            const int mc = producer(add.input(order), "Mul"), ms = producer(add.input(1 - order), "Mul");
            if (mc < 0 || ms < 0 || g.node(mc).input_size() != 2 || g.node(ms).input_size() != 2) continue;
            std::string x;  // x * cos
            constant_ptr cos;
            for (int k = 0; k < 2 && !cos; ++k)
                if (!known(g.node(mc).input(k)))
                    if ((cos = constant_at(g.node(mc), g.node(mc).input(1 - k)))) x = g.node(mc).input(k);
            if (!cos) continue;
            std::vector<std::int64_t> xd;
            try {
                xd = static_dims(x);
            } catch (const not_foldable&) {
                continue;
            }
            if (xd.size() != 4 || xd[3] < 2 || xd[3] % 2 != 0) continue;
            int cat = -1;  // rotate_half(x) * sin
            constant_ptr sin;
            for (int k = 0; k < 2 && !sin; ++k)
                if ((cat = producer(g.node(ms).input(k), "Concat")) >= 0) sin = constant_at(g.node(ms), g.node(ms).input(1 - k));
            if (!sin) continue;
            const auto& cn = g.node(cat);
            if (cn.input_size() != 2 || !last_axis(attr_int(cn, "axis", 0))) continue;
            const int neg = producer(cn.input(0), "Neg"), lower = producer(cn.input(1), "Slice");
            const int upper = neg < 0 || g.node(neg).input_size() != 1 ? -1 : producer(g.node(neg).input(0), "Slice");
            if (upper < 0 || lower < 0 || !half_of(upper, x, xd[3], true) || !half_of(lower, x, xd[3], false)) continue;
            const auto theta = rotary_theta(*cos, *sin, xd[2], xd[3]);
            if (!theta) continue;
            const std::vector<int> nodes{mc, ms, cat, neg, upper, lower, a};
            const int first = *std::min_element(nodes.begin(), nodes.end());
            for (int k : nodes)
                if (k != first) built_.fused.insert(k);
            // named in the Add's scope with its suffix ("/layers.0/Add_1" -> "/layers.0/rotary_1"): the same name
            // whatever order the nodes come in
            const std::string add_name = node_name(add);
            const std::string leaf = add_name.substr(add_name.rfind('/') == std::string::npos ? 0 : add_name.rfind('/') + 1);
            const std::string suffix = leaf.rfind("Add_", 0) == 0 ? leaf.substr(3) : std::string();
            built_.found_at[first] = {x, add.output(0), add_name, "rotary" + suffix, "rotary", "rotary embedding",
                                {{"theta", number_text(*theta)}}};
            break;
        }
    }
}

bool importer::attention_pattern(const onnx::NodeProto& mm) {
    const auto& g = graph().proto.graph();
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
        if (other == cur || (!consts_.values.count(other) && !graph().initializer.count(other))) continue;
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
        if (other == cur || (!consts_.values.count(other) && !graph().initializer.count(other))) return false;
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
    const std::int64_t axis = attr_int(g.node(sm), "axis", graph().opset >= 13 ? -1 : 1);
    if (axis != -1 && axis != 3) return false;
    nodes.push_back(sm);
    const int pv = only_reader(g.node(sm).output(0), "MatMul");
    if (!one_output(pv) || g.node(pv).input_size() != 2 || g.node(pv).input(0) != g.node(sm).output(0)) return false;
    value v = input(g.node(pv), 1);
    if (v.k != source::activation) return false;
    const core::shape vs = shape_of(v.tensor);
    if (vs.rank() != 4 || vs[2] != skv || vs[0] != qs[0] || qs[1] % vs[1] != 0 || kts[1] != vs[1]) return false;
    nodes.push_back(pv);
    // keys [B, KVH, Skv, D]: the kv heads before repeat_kv (grouped-query heads written out), or kT transposed back
    // (a view of a view)
    std::string k;
    if (!read_past_repeat_kv(mm, g.node(pv), k, v.tensor)) {
        onnx::NodeProto keys;
        keys.set_name(node_name(mm) + "/keys");
        k = emit(keys, make("transpose", {{"dim0", "2"}, {"dim1", "3"}}, keys.name()), {kt.tensor});
    }
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

importer::repeat_kv_match importer::repeat_kv_of(const std::string& t) {
    const auto& g = graph().proto.graph();
    auto made_by = [&](const std::string& tensor, const char* op) -> int {
        auto p = graph().producer.find(tensor);
        if (p == graph().producer.end() || g.node(p->second).op_type() != op || g.node(p->second).input_size() < 1) return -1;
        return only_reader(tensor, g.node(graph().readers.at(tensor).at(0)).op_type()) >= 0 ? p->second : -1;
    };
    const int reshape = made_by(t, "Reshape");
    const int expand = reshape < 0 ? -1 : made_by(g.node(reshape).input(0), "Expand");
    const int unsqueeze = expand < 0 ? -1 : made_by(g.node(expand).input(0), "Unsqueeze");
    if (unsqueeze < 0) return {};
    std::vector<std::int64_t> axes, x, e, out;
    try {
        axes = attr_or_input_ints(g.node(unsqueeze), "axes", 1, "Unsqueeze's axes");
        x = static_dims(g.node(unsqueeze).input(0));
        e = static_dims(g.node(expand).output(0));
        out = static_dims(t);
    } catch (const unsupported&) {
        return {};
    } catch (const not_foldable&) {
        return {};
    }
    if (axes != std::vector<std::int64_t>{2} || x.size() != 4 || e.size() != 5 || out.size() != 4) return {};
    // [B, KVH, S, D] -> [B, KVH, G, S, D] -> [B, KVH*G, S, D]
    if (e[0] != x[0] || e[1] != x[1] || e[3] != x[2] || e[4] != x[3] || e[2] < 1) return {};
    if (out != std::vector<std::int64_t>{x[0], x[1] * e[2], x[2], x[3]}) return {};
    return {g.node(unsqueeze).input(0), e[2], {unsqueeze, expand, reshape}};
}

bool importer::read_past_repeat_kv(const onnx::NodeProto& mm, const onnx::NodeProto& pv, std::string& keys,
                                   std::string& values) {
    const auto& g = graph().proto.graph();
    const auto t = graph().producer.find(mm.input(1));  // kT = Transpose(repeat_kv(k), perm 0 1 3 2)
    if (t == graph().producer.end() || g.node(t->second).op_type() != "Transpose" || g.node(t->second).input_size() != 1 ||
        attr_ints(g.node(t->second), "perm", {}) != std::vector<std::int64_t>{0, 1, 3, 2} ||
        only_reader(mm.input(1), "MatMul") < 0)
        return false;
    const repeat_kv_match k = repeat_kv_of(g.node(t->second).input(0)), v = repeat_kv_of(pv.input(1));
    if (k.x.empty() || v.x.empty() || k.repeat != v.repeat || !built_.act.count(k.x) || !built_.act.count(v.x)) return false;
    keys = built_.act.at(k.x);
    values = built_.act.at(v.x);
    // the copies (the expands, their views and kT) are left unread: dropped at the end of the import
    std::vector<std::string> copies{built_.act.at(mm.input(1))};
    for (const auto* r : {&k, &v})
        for (int i : r->nodes)
            if (built_.act.count(g.node(i).output(0))) copies.push_back(built_.act.at(g.node(i).output(0)));
    for (const auto& c : copies)
        if (built_.orphans.insert(c).second) built_.orphans_now.push_back(c);
    return true;
}

void importer::drop_orphans() {
    auto& layers = built_.model.layers();
    std::set<std::string> dropped;
    for (bool again = !built_.orphans.empty(); again;) {
        again = false;
        std::set<std::string> read;
        for (const auto& l : layers)
            if (!dropped.count(l.name)) read.insert(l.inputs.begin(), l.inputs.end());
        for (const auto& l : layers)
            if (built_.orphans.count(l.name) && !dropped.count(l.name) && !read.count(l.name)) again = dropped.insert(l.name).second || again;
    }
    if (dropped.empty()) return;
    std::vector<std::size_t> index(layers.size());
    std::vector<bool> gone(layers.size());
    std::vector<core::layer> kept;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        index[i] = kept.size();
        gone[i] = dropped.count(layers[i].name) > 0;
        if (!gone[i]) kept.push_back(std::move(layers[i]));
    }
    std::vector<param_use> uses;  // the dropped copies hold no parameters; the others move up
    for (auto& u : built_.uses)
        if (!gone[u.layer]) {
            u.layer = index[u.layer];
            uses.push_back(std::move(u));
        }
    built_.uses = std::move(uses);
    layers = std::move(kept);
}

bool importer::rms_norm_pattern(const onnx::NodeProto& pow) {
    const auto& g = graph().proto.graph();
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
    if (!consts_.values.count(eps_name) && !graph().initializer.count(eps_name)) return false;
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
        if (wt != out && (consts_.values.count(wt) || graph().initializer.count(wt))) {
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
