// ONNX import, dense ops: Gemm, MatMul (with a following bias Add fused into linear), Transpose, Einsum.
#include "onnx_importer.hpp"

namespace ridgeline::io::onnx_detail {

std::string importer::permute(const onnx::NodeProto& n, std::string x, const std::vector<std::int64_t>& perm) {
    std::vector<std::int64_t> cur(perm.size());
    for (std::size_t i = 0; i < cur.size(); ++i) cur[i] = static_cast<std::int64_t>(i);
    for (std::size_t i = 0; i < perm.size(); ++i) {
        if (cur[i] == perm[i]) continue;
        const auto j = static_cast<std::size_t>(std::find(cur.begin(), cur.end(), perm[i]) - cur.begin());
        std::swap(cur[i], cur[j]);
        x = emit(n, make("transpose", {{"dim0", std::to_string(i)}, {"dim1", std::to_string(j)}}, node_name(n)), {x});
    }
    return x;
}

void importer::gemm(const onnx::NodeProto& n) {
    const std::string a = activation(n, 0);
    if (shape_of(a).rank() != 2)
        throw unsupported{"input A has rank " + std::to_string(shape_of(a).rank()) + ", Gemm needs 2"};
    const bool trans_a = attr_int(n, "transA", 0) != 0, trans_b = attr_int(n, "transB", 0) != 0;
    const double alpha = attr_float(n, "alpha", 1.0), beta = attr_float(n, "beta", 1.0);
    if (!std::isfinite(alpha) || !std::isfinite(beta))
        throw unsupported{"alpha " + number_text(alpha) + " and beta " + number_text(beta) + " must be finite numbers"};
    value b = input(n, 1);
    if (b.k == source::unavailable) throw unsupported{"reads \"" + n.input(1) + "\", " + b.why, !b.producer_listed};
    if (b.k == source::constant) {
        if (b.c->dims.size() != 2 || b.c->integer)
            throw unsupported{"B has shape " + b.c->shape_text() + ", expected a matrix"};
        // linear's weight is [out, in]: B as stored when transB=1, B transposed when transB=0
        std::shared_ptr<constant> w = trans_b ? derived(*b.c, "") : transposed2d(*b.c);
        if (alpha != 1.0) {
            w->origin += "*alpha";
            for (auto& v : w->values) v = static_cast<float>(v * alpha);
        }
        const std::int64_t out = w->dims[0], in = w->dims[1];
        std::vector<std::pair<std::string, constant_ptr>> params{{"weight", w}};
        // beta = 0: C is multiplied by zero, so it is neither added nor stored (no bias parameter, no bias FLOPs)
        if (has_input(n, 2) && beta != 0.0) {
            const auto c = constant_input(n, 2);
            const bool vector_like = c->size() == 1 || (static_cast<std::int64_t>(c->size()) == out &&
                                                        !c->dims.empty() && c->dims.back() == out);
            if (!vector_like || c->integer)
                throw unsupported{"bias C has shape " + c->shape_text() +
                                  "; ridgeline's linear adds a vector of out_features"};
            auto bias = derived(*c, "");
            if (c->size() == 1) {
                bias->values.assign(static_cast<std::size_t>(out), c->values[0]);
                bias->origin += "^broadcast";
            }
            bias->dims = {out};
            if (beta != 1.0) {
                bias->origin += "*beta";
                for (auto& v : bias->values) v = static_cast<float>(v * beta);
            }
            params.emplace_back("bias", bias);
        }
        std::string x = trans_a ? permute(n, a, {1, 0}) : a;
        const core::op o = make("linear",
                                {{"in_features", std::to_string(in)},
                                 {"out_features", std::to_string(out)},
                                 {"bias", params.size() > 1 ? "true" : "false"}},
                                node_name(n));
        map_output(n.output(0), emit(n, o, {x}, params));
        return;
    }
    if (has_input(n, 2) && beta != 0.0) throw unsupported{"Gemm of two activations with a bias C is not supported"};
    if (alpha != 1.0) throw unsupported{"Gemm of two activations with alpha != 1 is not supported"};
    std::string x = trans_a ? permute(n, a, {1, 0}) : a;
    std::string y = trans_b ? permute(n, b.tensor, {1, 0}) : b.tensor;
    map_output(n.output(0), emit(n, make("matmul", {}, node_name(n)), {x, y}));
}

int importer::bias_add_after(const onnx::NodeProto& n, std::int64_t out) {
    const std::string& y = n.output(0);
    if (graph().outputs.count(y)) return -1;
    auto r = graph().readers.find(y);
    if (r == graph().readers.end() || r->second.size() != 1) return -1;
    const int j = r->second[0];
    const auto& add = graph().proto.graph().node(j);
    if (add.op_type() != "Add" || add.input_size() != 2) return -1;
    const std::string& other = add.input(0) == y ? add.input(1) : add.input(0);
    if (other == y) return -1;
    if (!consts_.values.count(other) && !graph().initializer.count(other)) return -1;
    value c = resolve(add, other);
    if (c.c->integer || static_cast<std::int64_t>(c.c->size()) != out || c.c->dims.empty() || c.c->dims.back() != out)
        return -1;
    return j;
}

void importer::matmul(const onnx::NodeProto& n, int index) {
    (void)index;
    value a = input(n, 0);
    if (a.k == source::unavailable) throw unsupported{"reads \"" + n.input(0) + "\", " + a.why, !a.producer_listed};
    if (a.k == source::constant)
        throw unsupported{"input A is a constant of shape " + a.c->shape_text() +
                          "; ridgeline's matmul reads two activations"};
    value b = input(n, 1);
    if (b.k == source::unavailable) throw unsupported{"reads \"" + n.input(1) + "\", " + b.why, !b.producer_listed};
    if (b.k == source::activation) {
        if (attention_pattern(n)) return;  // MatMul, scale, mask, Softmax, MatMul: one attention layer
        map_output(n.output(0), emit(n, make("matmul", {}, node_name(n)), {a.tensor, b.tensor}));
        return;
    }
    if (b.c->dims.size() != 2 || b.c->integer)
        throw unsupported{"MatMul by a constant of shape " + b.c->shape_text() +
                          "; ridgeline maps only a constant matrix (to linear)"};
    auto w = transposed2d(*b.c);  // [K, N] -> linear's [N, K]
    const std::int64_t in = b.c->dims[0], out = b.c->dims[1];
    std::vector<std::pair<std::string, constant_ptr>> params{{"weight", w}};
    const int add = bias_add_after(n, out);
    if (add >= 0) {
        const auto& an = graph().proto.graph().node(add);
        const std::string& other = an.input(0) == n.output(0) ? an.input(1) : an.input(0);
        auto bias = derived(*resolve(an, other).c, "");
        bias->dims = {out};
        params.emplace_back("bias", bias);
    }
    const core::op o = make("linear",
                            {{"in_features", std::to_string(in)},
                             {"out_features", std::to_string(out)},
                             {"bias", add >= 0 ? "true" : "false"}},
                            node_name(n));
    const std::string l = emit(n, o, {a.tensor}, params);
    if (add >= 0) {
        map_output(graph().proto.graph().node(add).output(0), l);
        fuse(add);
    } else {
        map_output(n.output(0), l);
    }
}

void importer::transpose(const onnx::NodeProto& n) {
    value v = input(n, 0);
    if (v.k == source::unavailable) throw unsupported{"reads \"" + n.input(0) + "\", " + v.why, !v.producer_listed};
    const std::size_t rank = v.k == source::constant ? v.c->dims.size() : shape_of(v.tensor).rank();
    std::vector<std::int64_t> perm = attr_ints(n, "perm", {});
    if (perm.empty())
        for (std::size_t i = 0; i < rank; ++i) perm.push_back(static_cast<std::int64_t>(rank - 1 - i));
    std::vector<std::int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i)
        if (sorted.size() != rank || sorted[i] != static_cast<std::int64_t>(i))
            throw unsupported{"perm " + join_ints(perm) + " is not a permutation of " + std::to_string(rank) +
                              " dimensions"};
    if (v.k == source::constant) {  // fold: a constant transposed at load time
        // integers too: index tables (Swin's relative positions) and padding amounts pass through a Transpose
        auto c = derived(*v.c, "^T" + join_ints(perm));
        std::vector<std::int64_t> in_strides(rank, 1), out_dims(rank);
        for (std::size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * v.c->dims[i];
        for (std::size_t i = 0; i < rank; ++i) out_dims[i] = v.c->dims[static_cast<std::size_t>(perm[i])];
        std::vector<std::int64_t> idx(rank, 0);
        for (std::size_t o = 0; o < c->size(); ++o) {
            std::int64_t src = 0;
            for (std::size_t i = 0; i < rank; ++i) src += idx[i] * in_strides[static_cast<std::size_t>(perm[i])];
            if (c->integer) c->ints[o] = v.c->ints[static_cast<std::size_t>(src)];
            else c->values[o] = v.c->values[static_cast<std::size_t>(src)];
            for (std::size_t i = rank; i-- > 0;) {
                if (++idx[i] < out_dims[i]) break;
                idx[i] = 0;
            }
        }
        c->dims = out_dims;
        consts_.values[n.output(0)] = c;
        return;
    }
    map_output(n.output(0), permute(n, v.tensor, perm));
}

// Einsum where it is a (batched) matmul: two operands, every index either a batch index (in both operands and
// the output), a row index (first operand and output), a column index (second operand and output) or a
// contracted one (both operands, not the output), with at least one of each but batch. It becomes transposes
// (views) that put each operand in [batch..., rows..., contracted...] and [batch..., contracted..., columns...]
// order, reshapes where a group has several indices, one matmul, and the views back to the output's order:
// the MACs are the matmul's, batch x rows x columns x contracted, as torch.einsum computes it (bmm).
void importer::einsum(const onnx::NodeProto& n) {
    std::string eq;
    for (char ch : attr_string(n, "equation", "")) {
        if (ch != ' ') eq += ch;
    }
    if (n.input_size() != 2) throw unsupported{"Einsum of " + std::to_string(n.input_size()) + " operands; ridgeline maps two (a matmul)"};
    const std::string a = activation(n, 0), b = activation(n, 1);
    const auto arrow = eq.find("->");
    const auto comma = eq.find(',');
    if (comma == std::string::npos || comma > arrow || eq.find(',', comma + 1) < arrow)
        throw unsupported{"equation \"" + eq + "\" does not have two operands"};
    std::vector<std::string> terms = {eq.substr(0, comma),
                                      eq.substr(comma + 1, arrow == std::string::npos ? std::string::npos : arrow - comma - 1)};
    const std::vector<std::string> ins = {a, b};
    // "..." stands for the leading dimensions the letters leave; both operands must leave the same number
    std::size_t ellipsis = 0;
    bool has_ellipsis = false;
    for (std::size_t t = 0; t < 2; ++t) {
        const auto rank = shape_of(ins[t]).rank();
        const auto dots = terms[t].find("...");
        if (dots == std::string::npos) continue;
        const std::size_t letters = terms[t].size() - 3;
        if (letters > rank) throw unsupported{"equation \"" + eq + "\" names more dimensions than operand " + std::to_string(t) + " has"};
        if (has_ellipsis && rank - letters != ellipsis)
            throw unsupported{"equation \"" + eq + "\": \"...\" covers a different number of dimensions in each operand (a broadcast)"};
        has_ellipsis = true;
        ellipsis = rank - letters;
    }
    auto expand_dots = [&](std::string term) {
        const auto dots = term.find("...");
        if (dots == std::string::npos) return term;
        std::string fill;
        for (std::size_t i = 0; i < ellipsis; ++i) fill += static_cast<char>(1 + i);  // placeholders, not letters
        return term.substr(0, dots) + fill + term.substr(dots + 3);
    };
    for (auto& t : terms) t = expand_dots(t);
    std::string out;
    if (arrow != std::string::npos) {
        out = expand_dots(eq.substr(arrow + 2));
    } else {  // implicit output: the ellipsis, then the letters that appear once, in alphabetical order
        std::map<char, int> count;
        for (const auto& t : terms)
            for (char ch : t) ++count[ch];
        for (std::size_t i = 0; i < ellipsis; ++i) out += static_cast<char>(1 + i);
        for (const auto& [ch, c] : count)
            if (c == 1 && ch > 31) out += ch;
    }
    auto letter = [](char ch) { return ch > 31 ? std::string(1, ch) : std::string("..."); };
    std::map<char, std::int64_t> size;
    for (std::size_t t = 0; t < 2; ++t) {
        const core::shape& s = shape_of(ins[t]);
        if (terms[t].size() != s.rank())
            throw unsupported{"equation \"" + eq + "\": operand " + std::to_string(t) + " has " + std::to_string(s.rank()) +
                              " dimensions, its term names " + std::to_string(terms[t].size())};
        for (std::size_t i = 0; i < terms[t].size(); ++i) {
            const char ch = terms[t][i];
            if (terms[t].find(ch) != i)
                throw unsupported{"equation \"" + eq + "\" repeats \"" + letter(ch) + "\" in one operand (a diagonal), not a matmul"};
            if (size.count(ch) && size[ch] != s[i])
                throw unsupported{"equation \"" + eq + "\": \"" + letter(ch) + "\" is " + std::to_string(size[ch]) + " in one operand and " +
                                  std::to_string(s[i]) + " in the other (a broadcast)"};
            size[ch] = s[i];
        }
    }
    std::string batch, rows, cols, contracted;
    for (char ch : out) {
        if (out.find(ch) != out.rfind(ch) || !size.count(ch))
            throw unsupported{"equation \"" + eq + "\": output index \"" + letter(ch) + "\" is repeated or in no operand"};
        const bool in_a = terms[0].find(ch) != std::string::npos, in_b = terms[1].find(ch) != std::string::npos;
        (in_a && in_b ? batch : in_a ? rows : cols) += ch;
    }
    for (char ch : terms[0])
        if (out.find(ch) == std::string::npos) {
            if (terms[1].find(ch) == std::string::npos)
                throw unsupported{"equation \"" + eq + "\" sums operand 0 over \"" + letter(ch) + "\" alone, not a matmul"};
            contracted += ch;
        }
    for (char ch : terms[1])
        if (out.find(ch) == std::string::npos && terms[0].find(ch) == std::string::npos)
            throw unsupported{"equation \"" + eq + "\" sums operand 1 over \"" + letter(ch) + "\" alone, not a matmul"};
    if (rows.empty() || cols.empty() || contracted.empty())
        throw unsupported{"equation \"" + eq + "\" is not a matmul (it needs a row, a column and a contracted index; " +
                          "an outer product, a dot product or a matrix-vector product is not mapped)"};
    // each operand in [batch, rows | contracted, contracted | columns] order, one index per group after reshapes
    auto product = [&](const std::string& s) {
        std::int64_t p = 1;
        for (char ch : s) p *= size[ch];
        return p;
    };
    auto arrange = [&](const std::string& x, const std::string& term, const std::string& order, const std::string& g1,
                       const std::string& g2) {
        std::vector<std::int64_t> perm;
        for (char ch : order) perm.push_back(static_cast<std::int64_t>(term.find(ch)));
        std::string t = permute(n, x, perm);
        if (g1.size() > 1 || g2.size() > 1) {
            std::vector<std::int64_t> dims;
            for (char ch : batch) dims.push_back(size[ch]);
            dims.push_back(product(g1));
            dims.push_back(product(g2));
            t = emit(n, make("reshape", {{"shape", join_ints(dims)}}, node_name(n)), {t});
        }
        return t;
    };
    const std::string lhs = arrange(a, terms[0], batch + rows + contracted, rows, contracted);
    const std::string rhs = arrange(b, terms[1], batch + contracted + cols, contracted, cols);
    std::string y = emit(n, make("matmul", {}, node_name(n)), {lhs, rhs});
    const std::string produced = batch + rows + cols;
    if (rows.size() > 1 || cols.size() > 1) {
        std::vector<std::int64_t> dims;
        for (char ch : produced) dims.push_back(size[ch]);
        y = emit(n, make("reshape", {{"shape", join_ints(dims)}}, node_name(n)), {y});
    }
    std::vector<std::int64_t> perm;
    for (char ch : out) perm.push_back(static_cast<std::int64_t>(produced.find(ch)));
    map_output(n.output(0), permute(n, y, perm));
}

// ------------------------------------------------------------------ the ONNX op types converted here

void importer::add_dense_converters(converter_map& table) {
    add_converter(table, "Gemm", [](importer& i, const onnx::NodeProto& n, int) { i.gemm(n); });
    add_converter(table, "MatMul", [](importer& i, const onnx::NodeProto& n, int index) { i.matmul(n, index); });
    add_converter(table, "Einsum", [](importer& i, const onnx::NodeProto& n, int) { i.einsum(n); });
    add_converter(table, "Transpose", [](importer& i, const onnx::NodeProto& n, int) { i.transpose(n); });
}

}  // namespace ridgeline::io::onnx_detail
