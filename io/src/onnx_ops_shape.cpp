// ONNX import, views and data movement: Identity/Dropout, Constant, Concat, Flatten, Reshape, Softmax,
// LayerNormalization, Gather.
#include "onnx_importer.hpp"

namespace ridgeline::io::onnx_detail {

void importer::pass_through(const onnx::NodeProto& n) {
    only_first_output(n);
    if (n.op_type() == "Dropout" && has_input(n, 2)) {
        // training mode drops nothing at ratio 0 (the default is 0.5): the identity, as Swin's attention
        // dropout exports with p = 0 (torch.nn.functional.dropout(..., training=True) in its forward)
        value tm = input(n, 2);
        const bool inference = tm.k == source::constant && scalar_of(*tm.c) == 0;
        bool ratio_zero = false;
        if (has_input(n, 1)) {
            value ratio = input(n, 1);
            ratio_zero = ratio.k == source::constant && scalar_of(*ratio.c) == 0;
        }
        if (!inference && !ratio_zero)
            throw unsupported{"training_mode is not a constant false and the ratio not a constant 0; ridgeline models "
                              "inference"};
    }
    value v = input(n, 0);
    if (v.k == source::activation)
        map_output(n.output(0), v.tensor);
    else if (v.k == source::constant)
        consts_.values[n.output(0)] = v.c;
    else
        throw unsupported{"reads \"" + n.input(0) + "\", " + v.why, !v.producer_listed};
}

void importer::constant_node(const onnx::NodeProto& n) {
    auto c = std::make_shared<constant>();
    c->origin = n.output(0);
    if (const auto* a = attr(n, "value")) {
        consts_.values[n.output(0)] = decode(a->t(), n.output(0));
        return;
    }
    if (const auto* a = attr(n, "value_float"))
        c->values = {a->f()};
    else if (const auto* b = attr(n, "value_floats")) {
        c->values.assign(b->floats().begin(), b->floats().end());
        c->dims = {static_cast<std::int64_t>(c->values.size())};
    } else if (const auto* d = attr(n, "value_int")) {
        c->integer = true;
        c->ints = {d->i()};
    } else if (const auto* e = attr(n, "value_ints")) {
        c->integer = true;
        c->ints.assign(e->ints().begin(), e->ints().end());
        c->dims = {static_cast<std::int64_t>(c->ints.size())};
    } else
        throw unsupported{"a Constant without a numeric value (sparse or string constants are not supported)"};
    consts_.values[n.output(0)] = c;
}

void importer::concat(const onnx::NodeProto& n) {
    std::vector<std::string> xs;
    for (int i = 0; i < n.input_size(); ++i) xs.push_back(operand(n, i));  // ViT's class token is a parameter
    if (!attr(n, "axis")) throw unsupported{"axis is missing"};
    map_output(n.output(0),
               emit(n, make("concat", {{"dim", std::to_string(attr_int(n, "axis", 1))}}, node_name(n)), xs));
}

void importer::flatten(const onnx::NodeProto& n) {
    const std::string x = activation(n, 0);
    const auto& s = shape_of(x);
    const auto r = static_cast<std::int64_t>(s.rank());
    std::int64_t axis = attr_int(n, "axis", 1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r)
        throw unsupported{"axis " + std::to_string(attr_int(n, "axis", 1)) + " is out of range for rank " +
                          std::to_string(r)};
    if (axis == 1 && r >= 2) {
        map_output(n.output(0), emit(n, make("flatten", {{"start_dim", "1"}}, node_name(n)), {x}));
        return;
    }
    // ONNX Flatten is always 2-D: [prod(dims before axis), prod(dims from axis)]
    std::int64_t rows = 1;
    for (std::int64_t i = 0; i < axis; ++i) rows *= s[static_cast<std::size_t>(i)];
    map_output(n.output(0), emit(n, make("reshape", {{"shape", std::to_string(rows) + "x-1"}}, node_name(n)), {x}));
}

void importer::reshape(const onnx::NodeProto& n) {
    const std::string x = activation(n, 0);
    std::vector<std::int64_t> target;
    value sv = input(n, 1);
    if (sv.k == source::constant && sv.c->integer) {
        target = sv.c->ints;
        if (attr_int(n, "allowzero", 0) && std::find(target.begin(), target.end(), 0) != target.end())
            throw unsupported{"allowzero=1 with a 0 in the shape (a dimension of size 0)"};
    } else if (auto s = graph().dims.find(n.output(0)); s != graph().dims.end()) {
        target = s->second;  // the shape is computed at run time, but shape inference knows the result
    } else {
        throw unsupported{"the target shape \"" + n.input(1) +
                          "\" is computed at run time and ONNX shape inference could not resolve it"};
    }
    if (target.empty()) throw unsupported{"reshape to a scalar"};
    map_output(n.output(0), emit(n, make("reshape", {{"shape", join_ints(target)}}, node_name(n)), {x}));
}

void importer::softmax(const onnx::NodeProto& n) {
    const std::string x = activation(n, 0);
    const auto r = static_cast<std::int64_t>(shape_of(x).rank());
    std::int64_t axis = attr_int(n, "axis", graph().opset >= 13 ? -1 : 1);
    if (axis < 0) axis += r;
    if (graph().opset < 13 && axis != r - 1)
        throw unsupported{"Softmax before opset 13 normalises over all dimensions from axis " + std::to_string(axis) +
                          " on; ridgeline's softmax normalises over one dimension"};
    map_output(n.output(0), emit(n, make("softmax", {{"dim", std::to_string(axis)}}, node_name(n)), {x}));
}

void importer::layer_norm(const onnx::NodeProto& n) {
    only_first_output(n);
    const std::string x = activation(n, 0);
    const auto& s = shape_of(x);
    const auto r = static_cast<std::int64_t>(s.rank());
    std::int64_t axis = attr_int(n, "axis", -1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r)
        throw unsupported{"axis " + std::to_string(attr_int(n, "axis", -1)) + " is out of range"};
    std::vector<std::int64_t> normalized(s.dims().begin() + axis, s.dims().end());
    const auto scale = constant_input(n, 1);
    std::vector<core::attribute> at{{"normalized_shape", join_ints(normalized)},
                                    {"eps", number_text(attr_float(n, "epsilon", 1e-5))}};
    std::vector<std::pair<std::string, constant_ptr>> params = {{"weight", scale}};
    if (has_input(n, 2))
        params.emplace_back("bias", constant_input(n, 2));
    else  // no B: the weight alone, as nn.LayerNorm(bias=False); nothing counted for a bias that is not there
        at.push_back({"bias", "false"});
    map_output(n.output(0), emit(n, make("layer_norm", at, node_name(n)), {x}, params));
}

void importer::gather(const onnx::NodeProto& n) {
    value data = input(n, 0);
    if (data.k == source::unavailable) throw unsupported{"reads " + data.why, !data.producer_listed};
    if (data.k == source::activation && has_input(n, 1) && known(n.input(1))) return gather_of_activation(n, data.tensor);
    if (data.k != source::constant || data.c->dims.size() != 2 || data.c->integer)
        throw unsupported{
            "ridgeline maps Gather only as an embedding: a constant float table [num_embeddings, embedding_dim] "
            "indexed by int64 token ids"};
    if (has_input(n, 1) && known(n.input(1))) return gather_by_held_ids(n, data.c);
    if (const std::int64_t axis = attr_int(n, "axis", 0); axis != 0 && axis != -2)
        throw unsupported{"Gather along axis " + std::to_string(axis) + " of a table"};
    const std::string ids = activation(n, 1);
    const core::op o =
        make("embedding",
             {{"num_embeddings", std::to_string(data.c->dims[0])}, {"embedding_dim", std::to_string(data.c->dims[1])}},
             node_name(n));
    map_output(n.output(0), emit(n, o, {ids}, {{"weight", data.c}}));
}

void importer::gather_of_activation(const onnx::NodeProto& n, const std::string& x) {
    // x[:, i] (ViT's class token read back): one index of an activation is a slice, and a scalar index drops
    // the axis (a reshape); both views, as in PyTorch. Several indices: slices and a concat (below)
    const auto idx = constant_input(n, 1);
    if (!idx->integer) throw unsupported{"Gather's indices are not integers (" + idx->shape_text() + ")"};
    const core::shape& xs = shape_of(x);
    const auto r = static_cast<std::int64_t>(xs.rank());
    std::int64_t axis = attr_int(n, "axis", 0);
    if (axis < -r || axis >= r)
        throw unsupported{"axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r)};
    if (axis < 0) axis += r;
    const std::int64_t size = xs[static_cast<std::size_t>(axis)];
    std::vector<std::int64_t> at;
    for (std::int64_t i : idx->ints) {
        if (i < -size || i >= size)
            throw unsupported{"index " + std::to_string(i) + " is out of range for axis " + std::to_string(axis) +
                              " of size " + std::to_string(size)};
        at.push_back(i < 0 ? i + size : i);
    }
    if (at.empty()) throw unsupported{"Gather by no index makes an empty tensor; ridgeline's dimensions are >= 1"};
    if (idx->size() > 1 || idx->dims.size() > 1) {
        // x.index_select(axis, [..]) / x[:, [..]]: each run of consecutive indices is a slice (a view), and
        // the runs are concatenated (a copy, as PyTorch's index_select copies); indices of rank > 1 put
        // their dims at the axis (a reshape)
        std::vector<std::pair<std::int64_t, std::int64_t>> runs;  // [start, end)
        for (std::int64_t i : at)
            if (!runs.empty() && runs.back().second == i) ++runs.back().second;
            else runs.emplace_back(i, i + 1);
        constexpr std::size_t max_runs = 256;
        if (runs.size() > max_runs)
            throw unsupported{"Gather of an activation by " + std::to_string(at.size()) + " indices in " +
                              std::to_string(runs.size()) + " runs; ridgeline maps at most " +
                              std::to_string(max_runs) + " runs of consecutive indices (slices and a concat)"};
        std::vector<std::string> parts;
        for (std::size_t k = 0; k < runs.size(); ++k) {
            onnx::NodeProto cut = n;
            cut.set_name(node_name(n) + "/slice" + (runs.size() > 1 ? std::to_string(k) : std::string()));
            parts.push_back(emit(cut,
                                 make("slice",
                                      {{"dim", std::to_string(axis)},
                                       {"start", std::to_string(runs[k].first)},
                                       {"end", std::to_string(runs[k].second)}},
                                      node_name(cut)),
                                 {x}));
        }
        std::string t = parts[0];
        if (parts.size() > 1) t = emit(n, make("concat", {{"dim", std::to_string(axis)}}, node_name(n)), parts);
        if (idx->dims.size() != 1) {
            std::vector<std::int64_t> dims(xs.dims().begin(), xs.dims().begin() + axis);
            dims.insert(dims.end(), idx->dims.begin(), idx->dims.end());
            dims.insert(dims.end(), xs.dims().begin() + axis + 1, xs.dims().end());
            onnx::NodeProto shaped = n;
            shaped.set_name(node_name(n) + "/reshape");
            t = emit(shaped, make("reshape", {{"shape", join_ints(dims)}}, node_name(shaped)), {t});
        }
        map_output(n.output(0), t);
        return;
    }
    const std::int64_t i = at[0];
    if (idx->dims.empty() && r == 1)
        throw unsupported{"Gather of one element of a rank-1 activation is a scalar; ridgeline's tensors have rank >= 1"};
    onnx::NodeProto cut = n;
    if (idx->dims.empty()) cut.set_name(node_name(n) + "/slice");
    std::string t = emit(cut,
                         make("slice",
                              {{"dim", std::to_string(axis)},
                               {"start", std::to_string(i)},
                               {"end", std::to_string(i + 1)}},
                              node_name(cut)),
                         {x});
    if (idx->dims.empty()) {
        std::vector<std::int64_t> dims = xs.dims();
        dims.erase(dims.begin() + axis);
        t = emit(n, make("reshape", {{"shape", join_ints(dims)}}, node_name(n)), {t});
    }
    map_output(n.output(0), t);
}

void importer::gather_by_held_ids(const onnx::NodeProto& n, const constant_ptr& table) {
    // table[index] with a constant index map (Swin's relative_position_bias_table[relative_position_index], a
    // position embedding read at constant positions): an embedding that holds its ids as a buffer, so that the
    // table counts as the parameter it is (onnx_fold.cpp leaves this Gather to the conversion)
    const auto idx = constant_input(n, 1);
    if (!idx->integer) throw unsupported{"Gather's indices are not integers (" + idx->shape_text() + ")"};
    if (const std::int64_t axis = attr_int(n, "axis", 0); axis != 0 && axis != -2)
        throw unsupported{"Gather along axis " + std::to_string(axis) + " of a table"};
    if (idx->dims.empty())
        throw unsupported{"Gather of one row of a table by a scalar index; ridgeline holds index maps of rank >= 1"};
    const std::int64_t rows = table->dims[0];
    auto ids = std::make_shared<constant>();
    ids->dims = idx->dims;
    ids->origin = idx->origin;
    ids->absent = idx->absent;
    ids->values.reserve(idx->ints.size());
    for (std::int64_t i : idx->ints) {
        if (i < -rows || i >= rows)
            throw unsupported{"index " + std::to_string(i) + " is out of range for a table of " + std::to_string(rows) +
                              " rows"};
        ids->values.push_back(static_cast<float>(i < 0 ? i + rows : i));
    }
    const core::op o = make("embedding",
                            {{"num_embeddings", std::to_string(rows)},
                             {"embedding_dim", std::to_string(table->dims[1])},
                             {"indices", join_ints(idx->dims)}},
                            node_name(n));
    map_output(n.output(0), emit(n, o, {}, {{"weight", table}, {"indices", ids}}));
}

}  // namespace ridgeline::io::onnx_detail

namespace ridgeline::io::onnx_detail {

bool importer::layer_norm_pattern(const onnx::NodeProto& rm1, const std::vector<std::int64_t>& axes) {
    // PyTorch's export of nn.LayerNorm before opset 17 (torch/onnx/symbolic_opset9.py, layer_norm):
    //   d = Sub(x, ReduceMean(x)); var = ReduceMean(Pow(d, 2)); y = Div(d, Sqrt(Add(var, eps)))
    //   [; y = Mul(y, weight); y = Add(y, bias)], the ReduceMeans over the same trailing axes, keepdims=1
    const auto& g = graph().proto.graph();
    const std::string& x = rm1.input(0);
    if (attr_int(rm1, "keepdims", 1) == 0) return false;
    auto other_of = [](const onnx::NodeProto& n, const std::string& t) -> std::string {
        if (n.input_size() != 2) return {};
        return n.input(0) == t ? n.input(1) : n.input(1) == t ? n.input(0) : std::string();
    };
    const int sub = only_reader(rm1.output(0), "Sub");
    if (sub < 0 || g.node(sub).input_size() != 2 || g.node(sub).input(0) != x ||
        g.node(sub).input(1) != rm1.output(0))
        return false;
    const std::string& d = g.node(sub).output(0);
    auto r = graph().readers.find(d);
    if (r == graph().readers.end() || r->second.size() != 2 || graph().outputs.count(d)) return false;
    int pow = -1, div = -1;
    for (int k : r->second) {
        if (g.node(k).op_type() == "Pow") pow = k;
        if (g.node(k).op_type() == "Div") div = k;
    }
    if (pow < 0 || div < 0 || g.node(pow).input_size() != 2 || g.node(div).input_size() != 2 ||
        g.node(pow).input(0) != d || !scalar_near(g.node(pow), g.node(pow).input(1), 2.0))
        return false;
    const int rm2 = only_reader(g.node(pow).output(0), "ReduceMean");
    if (rm2 < 0 || attr_int(g.node(rm2), "keepdims", 1) == 0) return false;
    std::vector<std::int64_t> axes2 = attr_ints(g.node(rm2), "axes", {});
    if (g.node(rm2).input_size() > 1) {
        if (!known(g.node(rm2).input(1))) return false;
        axes2 = resolve(g.node(rm2), g.node(rm2).input(1)).c->ints;
    }
    const auto rank = static_cast<std::int64_t>(shape_of(activation(rm1, 0)).rank());
    for (auto& a : axes2) a = a < 0 ? a + rank : a;
    std::sort(axes2.begin(), axes2.end());
    if (axes2 != axes) return false;
    const int add = only_reader(g.node(rm2).output(0), "Add");
    if (add < 0) return false;
    const std::string eps_t = other_of(g.node(add), g.node(rm2).output(0));
    if (eps_t.empty() || !known(eps_t) || resolve(g.node(add), eps_t).c->size() != 1 ||
        resolve(g.node(add), eps_t).c->absent)
        return false;
    const double eps = scalar_of(*resolve(g.node(add), eps_t).c);
    const int sqrt = only_reader(g.node(add).output(0), "Sqrt");
    if (sqrt < 0 || only_reader(g.node(sqrt).output(0), "Div") != div || g.node(div).input(0) != d ||
        g.node(div).input(1) != g.node(sqrt).output(0))
        return false;
    std::vector<std::int64_t> normalized;
    const core::shape& xs = shape_of(activation(rm1, 0));
    for (auto a : axes) normalized.push_back(xs[static_cast<std::size_t>(a)]);
    std::int64_t count = 1;
    for (auto v : normalized) count *= v;
    // the affine part: Mul by a constant of the normalized shape (leading 1s allowed), then Add of one; a
    // constant of another shape with as many elements ([8, 1] on [.., 8, 8]) scales other axes
    auto normalized_like = [&](const constant& c) {
        if (c.integer || static_cast<std::int64_t>(c.size()) != count) return false;
        std::vector<std::int64_t> dims = c.dims;
        while (!dims.empty() && dims.front() == 1 && dims.size() > normalized.size()) dims.erase(dims.begin());
        return dims == normalized;
    };
    std::vector<int> nodes{sub, pow, rm2, add, sqrt, div};
    std::string y = g.node(div).output(0);
    constant_ptr weight, bias;
    if (const int mul = only_reader(y, "Mul"); mul >= 0) {
        const std::string w = other_of(g.node(mul), y);
        if (!w.empty() && known(w) && normalized_like(*resolve(g.node(mul), w).c)) {
            weight = resolve(g.node(mul), w).c;
            nodes.push_back(mul);
            y = g.node(mul).output(0);
            if (const int badd = only_reader(y, "Add"); badd >= 0) {
                const std::string b = other_of(g.node(badd), y);
                if (!b.empty() && known(b) && normalized_like(*resolve(g.node(badd), b).c)) {
                    bias = resolve(g.node(badd), b).c;
                    nodes.push_back(badd);
                    y = g.node(badd).output(0);
                }
            }
        }
    }
    std::string name = node_name(rm1);
    const auto slash = name.rfind('/');
    name = slash == std::string::npos ? "LayerNorm_" + std::to_string(built_.current_index) : name.substr(0, slash + 1) + "LayerNorm";
    onnx::NodeProto named = rm1;
    named.set_name(name);
    std::vector<core::attribute> at{{"normalized_shape", join_ints(normalized)}, {"eps", number_text(eps)}};
    std::vector<std::pair<std::string, constant_ptr>> params;
    if (weight) {
        auto w = derived(*weight, "");
        w->dims = normalized;
        params = {{"weight", w}};
        if (bias) {
            auto b = derived(*bias, "");
            b->dims = normalized;
            params.emplace_back("bias", b);
        } else {  // a weight without a bias: nn.LayerNorm(bias=False), nothing counted for a bias
            at.push_back({"bias", "false"});
        }
    } else {
        at.push_back({"elementwise_affine", "false"});
    }
    map_output(y, emit(named, make("layer_norm", at, name), {activation(rm1, 0)}, params));
    for (int k : nodes) fuse(k);
    return true;
}

}  // namespace ridgeline::io::onnx_detail

namespace ridgeline::io::onnx_detail {

void importer::squeeze_unsqueeze(const onnx::NodeProto& n) {
    // of an activation (folded when constant): a view, one reshape to the shape PyTorch's squeeze/unsqueeze give
    const std::string x = activation(n, 0);
    std::vector<std::int64_t> axes = attr_or_input_ints(n, "axes", 1, "axes");
    std::vector<std::int64_t> dims = shape_of(x).dims();
    const bool unsqueeze = n.op_type() == "Unsqueeze";
    const auto rank = static_cast<std::int64_t>(dims.size() + (unsqueeze ? axes.size() : 0));
    for (auto& a : axes) {
        if (a < -rank || a >= rank) throw unsupported{"axis " + std::to_string(a) + " is out of range"};
        if (a < 0) a += rank;
    }
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
        throw unsupported{"axes " + join_ints(axes) + " name an axis twice"};
    if (unsqueeze) {
        if (axes.empty()) throw unsupported{"Unsqueeze without axes"};
        for (auto a : axes) dims.insert(dims.begin() + a, 1);
    } else {
        std::vector<std::int64_t> kept;
        for (std::size_t k = 0; k < dims.size(); ++k) {
            const bool named = std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(k));
            if (named && dims[k] != 1)
                throw unsupported{"axis " + std::to_string(k) + " has size " + std::to_string(dims[k]) + ", not 1"};
            if (!(named || (axes.empty() && dims[k] == 1))) kept.push_back(dims[k]);
        }
        dims = kept;
    }
    if (dims.empty()) throw unsupported{"the result is a scalar"};
    map_output(n.output(0), emit(n, make("reshape", {{"shape", join_ints(dims)}}, node_name(n)), {x}));
}

void importer::split(const onnx::NodeProto& n) {
    // torch.chunk / torch.split of an activation: one slice layer per output (views)
    const std::string x = activation(n, 0);
    const core::shape& xs = shape_of(x);
    const auto r = static_cast<std::int64_t>(xs.rank());
    std::int64_t axis = attr_int(n, "axis", 0);
    if (axis < -r || axis >= r) throw unsupported{"axis " + std::to_string(axis) + " is out of range"};
    if (axis < 0) axis += r;
    const std::int64_t d = xs[static_cast<std::size_t>(axis)];
    std::vector<std::int64_t> sizes = attr_or_input_ints(n, "split", 1, "split sizes");
    const auto outputs = static_cast<std::int64_t>(n.output_size());
    if (sizes.empty()) {  // equal parts, the last smaller (opset 18's rule; before, d must divide)
        const std::int64_t part = (d + outputs - 1) / outputs;
        for (std::int64_t k = 0; k < outputs; ++k) sizes.push_back(std::min(part, d - k * part));
    }
    std::int64_t total = 0;
    for (auto s : sizes) {
        if (s < 1) throw unsupported{"split sizes " + join_ints(sizes) + " have a part of size < 1"};
        total += s;
    }
    if (static_cast<std::int64_t>(sizes.size()) != outputs || total != d)
        throw unsupported{"split sizes " + join_ints(sizes) + " do not cut dimension " + std::to_string(axis) +
                          " (" + std::to_string(d) + ") into " + std::to_string(outputs) + " outputs"};
    std::int64_t start = 0;
    for (int k = 0; k < n.output_size(); ++k) {
        const std::int64_t end = start + sizes[static_cast<std::size_t>(k)];
        std::vector<core::attribute> at{{"dim", std::to_string(axis)}, {"start", std::to_string(start)}};
        if (end < d) at.push_back({"end", std::to_string(end)});
        if (!n.output(k).empty()) map_output(n.output(k), emit(n, make("slice", at, node_name(n)), {x}));
        start = end;
    }
}

// ------------------------------------------------------------------ the ONNX op types converted here

void importer::add_shape_converters(converter_map& table) {
    add_converter(table, "Squeeze", [](importer& i, const onnx::NodeProto& n, int) { i.squeeze_unsqueeze(n); });
    add_converter(table, "Unsqueeze", [](importer& i, const onnx::NodeProto& n, int) { i.squeeze_unsqueeze(n); });
    add_converter(table, "Split", [](importer& i, const onnx::NodeProto& n, int) { i.split(n); });
    add_converter(table, "Concat", [](importer& i, const onnx::NodeProto& n, int) { i.concat(n); });
    add_converter(table, "Flatten", [](importer& i, const onnx::NodeProto& n, int) { i.flatten(n); });
    add_converter(table, "Reshape", [](importer& i, const onnx::NodeProto& n, int) { i.reshape(n); });
    add_converter(table, "Softmax", [](importer& i, const onnx::NodeProto& n, int) { i.softmax(n); });
    add_converter(table, "LayerNormalization", [](importer& i, const onnx::NodeProto& n, int) { i.layer_norm(n); });
    add_converter(table, "Identity", [](importer& i, const onnx::NodeProto& n, int) { i.pass_through(n); });
    add_converter(table, "Dropout", [](importer& i, const onnx::NodeProto& n, int) { i.pass_through(n); });
    add_converter(table, "Constant", [](importer& i, const onnx::NodeProto& n, int) { i.constant_node(n); });
    add_converter(table, "Gather", [](importer& i, const onnx::NodeProto& n, int) { i.gather(n); });
}

}  // namespace ridgeline::io::onnx_detail
