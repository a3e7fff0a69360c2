// batch_norm2d, layer_norm, rms_norm.
#include "op_helpers.hpp"
#include "ridgeline/core/format.hpp"

namespace ridgeline::core {

using detail::fail;

namespace {
double read_eps(attribute_reader& r, double fallback) {
    const double eps = r.get_float("eps", fallback);
    // 6 significant digits: -1e-10 is "-1e-10", not std::to_string's "-0.000000"
    if (eps < 0) r.fail("eps", "is " + significant(eps, 6) + ", it must be >= 0");
    return eps;
}

/// normalized_shape as nn.LayerNorm and nn.RMSNorm take it: each dimension >= 1, their product within int64.
void check_normalized_shape(attribute_reader& r, const std::vector<std::int64_t>& dims) {
    for (auto d : dims)
        if (d < 1) r.fail("normalized_shape", "has dimension " + std::to_string(d) + ", every dimension must be >= 1");
    (void)shape(dims).numel();
}

/// The input, once its trailing dimensions are `normalized` (a norm's output has its input's shape).
shape normalized_input(const shapes& in, const std::vector<std::int64_t>& normalized, const std::string& where) {
    const shape& x = in.at(0);
    const std::size_t k = normalized.size();
    bool ok = x.rank() >= k;
    for (std::size_t i = 0; ok && i < k; ++i) ok = x[x.rank() - k + i] == normalized[i];
    if (!ok)
        fail(where, "normalized_shape " + shape(normalized).to_string() +
                        " does not match the trailing dimensions of the input " + x.to_string());
    return x;
}
}  // namespace

// ------------------------------------------------------------------ batch_norm2d
batch_norm2d batch_norm2d::read(attribute_reader& r) {
    batch_norm2d b;
    b.num_features = r.get_int("num_features");
    b.eps = read_eps(r, 1e-5);
    b.affine = r.get_bool("affine", true);
    detail::require_at_least(r, "num_features", b.num_features, 1);
    return b;
}

void batch_norm2d::write(attribute_writer& w) const {
    w.add("num_features", num_features);
    if (eps != 1e-5) w.add("eps", eps);
    if (!affine) w.add("affine", false);
}

shape batch_norm2d::infer(const shapes& in, const std::string& where) const {
    const shape& x = in.at(0);
    detail::expect_nchw_channels(x, num_features, "num_features", where);
    return x;
}

std::vector<param_spec> batch_norm2d::parameters() const {
    std::vector<param_spec> p;
    if (affine) {
        p.push_back({"weight", shape{num_features}, true});
        p.push_back({"bias", shape{num_features}, true});
    }
    p.push_back({"running_mean", shape{num_features}, false});
    p.push_back({"running_var", shape{num_features}, false});
    return p;
}

cost batch_norm2d::work(const shapes& in, const shape& out, dtype dt) const {
    cost c;
    c.flops = checked::mul(2, out.numel(), "batch_norm2d flops");  // folded scale and shift
    c.bytes = detail::standard_bytes(in, out, detail::param_elements(parameters()), dt);
    return c;
}

// ------------------------------------------------------------------ layer_norm
layer_norm layer_norm::read(attribute_reader& r) {
    layer_norm l;
    l.normalized_shape = r.get_int_list("normalized_shape");
    l.eps = read_eps(r, 1e-5);
    l.elementwise_affine = r.get_bool("elementwise_affine", true);
    l.bias = r.get_bool("bias", true);
    if (!l.elementwise_affine) l.bias = false;  // as nn.LayerNorm: no affine parameters, no bias either
    check_normalized_shape(r, l.normalized_shape);
    return l;
}

void layer_norm::write(attribute_writer& w) const {
    w.add("normalized_shape", normalized_shape);
    if (eps != 1e-5) w.add("eps", eps);
    if (!elementwise_affine) w.add("elementwise_affine", false);
    if (elementwise_affine && !bias) w.add("bias", false);
}

shape layer_norm::infer(const shapes& in, const std::string& where) const {
    return normalized_input(in, normalized_shape, where);
}

std::vector<param_spec> layer_norm::parameters() const {
    if (!elementwise_affine) return {};
    if (!bias) return {{"weight", shape(normalized_shape), true}};
    return {{"weight", shape(normalized_shape), true}, {"bias", shape(normalized_shape), true}};
}

cost layer_norm::work(const shapes& in, const shape& out, dtype dt) const {
    cost c;
    // 6 per element normalising (docs/conventions.md), then a multiply by the weight and an add of the bias
    c.flops = checked::mul(6 + (elementwise_affine ? 1 : 0) + (bias ? 1 : 0), out.numel(), "layer_norm flops");
    c.bytes = detail::standard_bytes(in, out, detail::param_elements(parameters()), dt);
    return c;
}

// ------------------------------------------------------------------ rms_norm
rms_norm rms_norm::read(attribute_reader& r) {
    rms_norm n;
    n.normalized_shape = r.get_int_list("normalized_shape");
    n.eps = read_eps(r, 1e-6);
    n.elementwise_affine = r.get_bool("elementwise_affine", true);
    if (n.normalized_shape.empty()) r.fail("normalized_shape", "is empty: it names at least one trailing dimension");
    check_normalized_shape(r, n.normalized_shape);
    return n;
}

void rms_norm::write(attribute_writer& w) const {
    w.add("normalized_shape", normalized_shape);
    if (eps != 1e-6) w.add("eps", eps);
    if (!elementwise_affine) w.add("elementwise_affine", false);
}

shape rms_norm::infer(const shapes& in, const std::string& where) const {
    return normalized_input(in, normalized_shape, where);
}

std::vector<param_spec> rms_norm::parameters() const {
    if (!elementwise_affine) return {};
    return {{"weight", shape(normalized_shape), true}};
}

cost rms_norm::work(const shapes& in, const shape& out, dtype dt) const {
    cost c;
    // square, accumulate and normalise: 3 per element (docs/conventions.md), then a multiply by the weight
    c.flops = checked::mul(3 + (elementwise_affine ? 1 : 0), out.numel(), "rms_norm flops");
    c.bytes = detail::standard_bytes(in, out, detail::param_elements(parameters()), dt);
    return c;
}

}  // namespace ridgeline::core
