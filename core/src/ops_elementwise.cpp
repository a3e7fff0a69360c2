// Unary activations (relu, relu6, gelu, tanh, sigmoid, hardswish, hardsigmoid, silu, scale, softmax), elementwise
// functions (erf, sqrt, exp, neg, pow), binary add / mul / sub / div and where.
#include "op_helpers.hpp"

namespace ridgeline::core {

using detail::fail;

namespace detail {

shape broadcast(const shape& a, const shape& b, const std::string& where) {
    const std::size_t rank = std::max(a.rank(), b.rank());
    std::vector<std::int64_t> dims(rank, 1);
    for (std::size_t i = 0; i < rank; ++i) {
        const std::int64_t da = i < a.rank() ? a[a.rank() - 1 - i] : 1;
        const std::int64_t db = i < b.rank() ? b[b.rank() - 1 - i] : 1;
        if (da != db && da != 1 && db != 1)
            fail(where, "shapes " + a.to_string() + " and " + b.to_string() + " do not broadcast (dimension -" +
                            std::to_string(i + 1) + ": " + std::to_string(da) + " vs " + std::to_string(db) + ")");
        dims[rank - 1 - i] = std::max(da, db);
    }
    return shape(dims);
}

void require_at_least(attribute_reader& r, const char* key, std::int64_t v, std::int64_t minimum) {
    if (v < minimum) r.fail(key, "must be >= " + std::to_string(minimum) + ", got " + std::to_string(v));
}

void require_at_least(attribute_reader& r, const char* key, pair2d v, std::int64_t minimum) {
    if (v.h < minimum || v.w < minimum)
        r.fail(key, "must be >= " + std::to_string(minimum) + ", got " + to_string(v));
}

}  // namespace detail

namespace {
template <class T>
cost unary_work(const T& op, const shapes& in, const shape& out, dtype dt) {
    cost c;
    c.flops = checked::mul(op.flops_per_element(), out.numel(), std::string(T::kind) + " flops");
    c.bytes = detail::standard_bytes(in, out, 0, dt);
    return c;
}
}  // namespace

#define RIDGELINE_UNARY_COMMON(T)                                                                      \
    shape T::infer(const shapes& in, const std::string&) const { return in.at(0); }                     \
    cost T::work(const shapes& in, const shape& out, dtype dt) const { return unary_work(*this, in, out, dt); }

RIDGELINE_UNARY_COMMON(relu)
RIDGELINE_UNARY_COMMON(relu6)
RIDGELINE_UNARY_COMMON(gelu)
RIDGELINE_UNARY_COMMON(tanh_op)
RIDGELINE_UNARY_COMMON(sigmoid)
RIDGELINE_UNARY_COMMON(scale)
RIDGELINE_UNARY_COMMON(hardswish)
RIDGELINE_UNARY_COMMON(hardsigmoid)
RIDGELINE_UNARY_COMMON(silu)
RIDGELINE_UNARY_COMMON(erf_op)
RIDGELINE_UNARY_COMMON(sqrt_op)
RIDGELINE_UNARY_COMMON(exp_op)
RIDGELINE_UNARY_COMMON(neg)
RIDGELINE_UNARY_COMMON(pow_op)
#undef RIDGELINE_UNARY_COMMON

// The ops without attributes: nothing to read or write, a fixed FLOP count per element.
#define RIDGELINE_NO_ATTRIBUTES(T, flops)                            \
    T T::read(attribute_reader&) { return {}; }                      \
    void T::write(attribute_writer&) const {}                        \
    std::int64_t T::flops_per_element() const { return flops; }
RIDGELINE_NO_ATTRIBUTES(relu, 1)
RIDGELINE_NO_ATTRIBUTES(relu6, 1)
RIDGELINE_NO_ATTRIBUTES(tanh_op, 1)
RIDGELINE_NO_ATTRIBUTES(sigmoid, 3)
RIDGELINE_NO_ATTRIBUTES(hardswish, 4)
RIDGELINE_NO_ATTRIBUTES(hardsigmoid, 3)
RIDGELINE_NO_ATTRIBUTES(silu, 4)
RIDGELINE_NO_ATTRIBUTES(erf_op, 1)
RIDGELINE_NO_ATTRIBUTES(sqrt_op, 1)
RIDGELINE_NO_ATTRIBUTES(exp_op, 1)
RIDGELINE_NO_ATTRIBUTES(neg, 1)
#undef RIDGELINE_NO_ATTRIBUTES

gelu gelu::read(attribute_reader& r) {
    gelu g;
    g.tanh_approximation = r.get_word("approximate", {"none", "tanh"}, "none") == "tanh";
    return g;
}
void gelu::write(attribute_writer& w) const {
    if (tanh_approximation) w.add_word("approximate", "tanh");
}
std::int64_t gelu::flops_per_element() const { return tanh_approximation ? 9 : 5; }


// The ops of one required number, the attribute named as the member (pow's exponent, scale's factor): 1 flop per
// element.
#define RIDGELINE_ONE_NUMBER(T, member)                                   \
    T T::read(attribute_reader& r) {                                      \
        T o;                                                              \
        o.member = r.get_float(#member);                                  \
        return o;                                                         \
    }                                                                     \
    void T::write(attribute_writer& w) const { w.add(#member, member); }  \
    std::int64_t T::flops_per_element() const { return 1; }
RIDGELINE_ONE_NUMBER(pow_op, exponent)
RIDGELINE_ONE_NUMBER(scale, factor)
#undef RIDGELINE_ONE_NUMBER

softmax softmax::read(attribute_reader& r) {
    softmax s;
    s.dim = r.get_int("dim", -1);
    return s;
}
void softmax::write(attribute_writer& w) const {
    if (dim != -1) w.add("dim", dim);
}
shape softmax::infer(const shapes& in, const std::string& where) const {
    (void)normalize_dim(dim, in.at(0).rank(), where);
    return in.at(0);
}
cost softmax::work(const shapes& in, const shape& out, dtype dt) const { return unary_work(*this, in, out, dt); }
std::int64_t softmax::flops_per_element() const { return 5; }

// ------------------------------------------------------------------ add, mul, sub, div
namespace {
cost binary_work(const shapes& in, const shape& out, dtype dt) {
    cost c;
    c.flops = out.numel();
    c.bytes = detail::standard_bytes(in, out, 0, dt);
    return c;
}
}  // namespace

#define RIDGELINE_BINARY(T)                                                                         \
    T T::read(attribute_reader&) { return {}; }                                                     \
    void T::write(attribute_writer&) const {}                                                       \
    shape T::infer(const shapes& in, const std::string& where) const {                              \
        return detail::broadcast(in.at(0), in.at(1), where);                                        \
    }                                                                                               \
    cost T::work(const shapes& in, const shape& out, dtype dt) const { return binary_work(in, out, dt); }
RIDGELINE_BINARY(add)
RIDGELINE_BINARY(mul)
RIDGELINE_BINARY(sub)
RIDGELINE_BINARY(div)
#undef RIDGELINE_BINARY

// ------------------------------------------------------------------ where
where_op where_op::read(attribute_reader&) { return {}; }
void where_op::write(attribute_writer&) const {}
shape where_op::infer(const shapes& in, const std::string& where) const {
    return detail::broadcast(detail::broadcast(in.at(0), in.at(1), where), in.at(2), where);
}
cost where_op::work(const shapes& in, const shape& out, dtype dt) const { return detail::copy_work(in, out, dt); }

}  // namespace ridgeline::core
