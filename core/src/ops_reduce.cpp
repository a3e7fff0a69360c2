// Reductions: mean, sum, amax over any dimensions (torch.mean, torch.sum, torch.amax; ONNX ReduceMean,
// ReduceSum, ReduceMax).
#include "op_helpers.hpp"

namespace ridgeline::core {

using detail::fail;

std::vector<bool> reduced_dims(const std::vector<std::int64_t>& dim, std::size_t rank, const std::string& where) {
    std::vector<bool> r(rank, dim.empty());
    for (auto d : dim) {
        const std::size_t k = normalize_dim(d, rank, where);
        if (r[k]) fail(where, "dim " + std::to_string(d) + " is given twice");
        r[k] = true;
    }
    return r;
}

namespace {

template <class T>
T read_reduce(attribute_reader& r) {
    T o;
    if (r.find_raw("dim")) o.dim = r.get_int_list("dim");
    o.keepdim = r.get_bool("keepdim", false);
    return o;
}

template <class T>
void write_reduce(const T& o, attribute_writer& w) {
    if (!o.dim.empty()) w.add("dim", o.dim);
    if (o.keepdim) w.add("keepdim", true);
}

template <class T>
shape infer_reduce(const T& o, const shapes& in, const std::string& where) {
    const shape& x = in.at(0);
    const auto r = reduced_dims(o.dim, x.rank(), where);
    std::vector<std::int64_t> out;
    for (std::size_t i = 0; i < x.rank(); ++i) {
        if (!r[i])
            out.push_back(x[i]);
        else if (o.keepdim)
            out.push_back(1);
    }
    if (out.empty())
        fail(where, "reduces every dimension of " + x.to_string() +
                        " to a scalar; ridgeline's tensors have rank >= 1 (use keepdim=true)");
    return shape(out);
}

cost reduce_work(const shapes& in, const shape& out, dtype dt, bool divides) {
    cost c;
    // in - out adds (or comparisons): each output combines its elements pairwise; mean divides each output once
    c.flops = in.at(0).numel() - out.numel() + (divides ? out.numel() : 0);
    c.bytes = detail::standard_bytes(in, out, 0, dt);
    return c;
}

}  // namespace

#define RIDGELINE_REDUCE(T, DIVIDES)                                                                       \
    T T::read(attribute_reader& r) { return read_reduce<T>(r); }                                           \
    void T::write(attribute_writer& w) const { write_reduce(*this, w); }                                   \
    shape T::infer(const shapes& in, const std::string& where) const { return infer_reduce(*this, in, where); } \
    cost T::work(const shapes& in, const shape& out, dtype dt) const { return reduce_work(in, out, dt, DIVIDES); }
RIDGELINE_REDUCE(mean_op, true)
RIDGELINE_REDUCE(sum_op, false)
RIDGELINE_REDUCE(amax, false)
#undef RIDGELINE_REDUCE

}  // namespace ridgeline::core
