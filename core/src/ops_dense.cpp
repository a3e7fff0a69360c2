// linear, matmul, embedding.
#include <algorithm>

#include "op_helpers.hpp"

namespace ridgeline::core {

using detail::fail;

// ------------------------------------------------------------------ linear
linear linear::read(attribute_reader& r) {
    linear l;
    l.in_features = r.get_int("in_features");
    l.out_features = r.get_int("out_features");
    l.bias = r.get_bool("bias", true);
    detail::require_at_least(r, "in_features", l.in_features, 1);
    detail::require_at_least(r, "out_features", l.out_features, 1);
    return l;
}

void linear::write(attribute_writer& w) const {
    w.add("in_features", in_features);
    w.add("out_features", out_features);
    if (!bias) w.add("bias", false);
}

shape linear::infer(const shapes& in, const std::string& where) const {
    const shape& x = in.at(0);
    if (x.rank() < 1) fail(where, "expects an input of rank >= 1 ([..., in_features]), got a scalar");
    if (x.at(-1) != in_features)
        fail(where, "input has " + std::to_string(x.at(-1)) + " features (last dimension of " + x.to_string() +
                        ") but in_features is " + std::to_string(in_features));
    auto dims = x.dims();
    dims.back() = out_features;
    return shape(dims);
}

std::vector<param_spec> linear::parameters() const {
    std::vector<param_spec> p{{"weight", shape{out_features, in_features}, true}};
    if (bias) p.push_back({"bias", shape{out_features}, true});
    return p;
}

cost linear::work(const shapes& in, const shape& out, dtype dt) const {
    const std::int64_t rows = in.at(0).numel() / in_features;
    cost c;
    c.macs = checked::product({rows, in_features, out_features}, "linear macs");
    c.bias_flops = bias ? out.numel() : 0;
    c.flops = checked::add(checked::mul(2, c.macs, "linear flops"), c.bias_flops, "linear flops");
    c.bytes = detail::standard_bytes(in, out, detail::param_elements(parameters()), dt);
    return c;
}

// ------------------------------------------------------------------ matmul
matmul matmul::read(attribute_reader&) { return {}; }
void matmul::write(attribute_writer&) const {}

shape matmul::infer(const shapes& in, const std::string& where) const {
    const shape& a = in.at(0);
    const shape& b = in.at(1);
    if (a.rank() < 2 || b.rank() < 2)
        fail(where, "expects two inputs of rank >= 2 ([..., M, K] and [..., K, N]), got " + detail::describe(a) +
                        " and " + detail::describe(b));
    if (a.at(-1) != b.at(-2))
        fail(where, "inner dimensions differ: " + a.to_string() + " has K=" + std::to_string(a.at(-1)) + " but " +
                        b.to_string() + " has K=" + std::to_string(b.at(-2)));
    const shape batch_a(std::vector<std::int64_t>(a.dims().begin(), a.dims().end() - 2));
    const shape batch_b(std::vector<std::int64_t>(b.dims().begin(), b.dims().end() - 2));
    auto dims = detail::broadcast(batch_a, batch_b, where).dims();
    dims.push_back(a.at(-2));
    dims.push_back(b.at(-1));
    return shape(dims);
}

std::vector<param_spec> matmul::parameters() const { return {}; }

cost matmul::work(const shapes& in, const shape& out, dtype dt) const {
    const std::int64_t k = in.at(0).at(-1);
    cost c;
    c.macs = checked::mul(out.numel(), k, "matmul macs");  // batch * M * N outputs, K MACs each
    c.flops = checked::mul(2, c.macs, "matmul flops");
    c.bytes = detail::standard_bytes(in, out, 0, dt);
    return c;
}

// ------------------------------------------------------------------ embedding
embedding embedding::read(attribute_reader& r) {
    embedding e;
    e.num_embeddings = r.get_int("num_embeddings");
    e.embedding_dim = r.get_int("embedding_dim");
    detail::require_at_least(r, "num_embeddings", e.num_embeddings, 1);
    detail::require_at_least(r, "embedding_dim", e.embedding_dim, 1);
    if (r.find_raw("indices")) {
        e.indices = r.get_int_list("indices");
        if (e.indices.empty()) r.fail("indices", "is empty: the held ids have at least one dimension");
        for (auto d : e.indices)
            if (d < 1) r.fail("indices", "has dimension " + std::to_string(d) + ": every dimension must be >= 1");
    }
    return e;
}

void embedding::write(attribute_writer& w) const {
    w.add("num_embeddings", num_embeddings);
    w.add("embedding_dim", embedding_dim);
    if (!indices.empty()) w.add("indices", indices);
}

shape embedding::infer(const shapes& in, const std::string& where) const {
    if (indices.empty() && in.size() != 1)
        fail(where, "needs one input of token ids (or indices=<shape> for ids the layer holds), got " +
                        std::to_string(in.size()) + " inputs");
    if (!indices.empty() && !in.empty())
        fail(where, "holds its token ids (indices=" + shape(indices).to_string() + ") and takes no input, got " +
                        std::to_string(in.size()));
    auto dims = indices.empty() ? in.at(0).dims() : indices;
    dims.push_back(embedding_dim);
    shape out(dims);
    (void)out.numel();
    return out;
}

std::vector<param_spec> embedding::parameters() const {
    std::vector<param_spec> p{{"weight", shape{num_embeddings, embedding_dim}, true}};
    if (!indices.empty()) p.push_back({"indices", shape(indices), false});
    return p;
}

cost embedding::work(const shapes& in, const shape& out, dtype dt) const {
    cost c;  // a gather: no arithmetic
    const std::int64_t n_ids = indices.empty() ? in.at(0).numel() : shape(indices).numel();
    const std::int64_t ids = checked::mul(n_ids, index_size_bytes, "embedding bytes");
    // rows read: each distinct row once, at most every id's and at most the whole table (Swin's 2,401 ids read a
    // 169-row table); the output written once
    const std::int64_t row_bytes = checked::mul(embedding_dim, size_bytes(dt), "embedding bytes");
    const std::int64_t read = checked::mul(std::min(n_ids, num_embeddings), row_bytes, "embedding bytes");
    const std::int64_t written = checked::mul(out.numel(), size_bytes(dt), "embedding bytes");
    c.bytes = checked::sum({ids, read, written}, "embedding bytes");
    return c;
}

}  // namespace ridgeline::core
