// concat and the views: flatten, reshape, transpose, slice, parameter.
#include "op_helpers.hpp"

namespace ridgeline::core {

using detail::fail;

namespace {
cost view_work() { return cost{}; }  // a view computes nothing and moves nothing
}  // namespace

// ------------------------------------------------------------------ concat
concat concat::read(attribute_reader& r) {
    concat c;
    c.dim = r.get_int("dim", 1);
    return c;
}

void concat::write(attribute_writer& w) const {
    if (dim != 1) w.add("dim", dim);
}

shape concat::infer(const shapes& in, const std::string& where) const {
    const shape& first = in.at(0);
    const std::size_t d = normalize_dim(dim, first.rank(), where);
    auto dims = first.dims();
    for (std::size_t i = 1; i < in.size(); ++i) {
        const shape& s = in[i];
        if (s.rank() != first.rank())
            fail(where, "input " + std::to_string(i + 1) + " " + detail::describe(s) + " has a different rank from input 1 " +
                            detail::describe(first));
        for (std::size_t k = 0; k < s.rank(); ++k)
            if (k != d && s[k] != first[k])
                fail(where, "input " + std::to_string(i + 1) + " " + s.to_string() + " differs from input 1 " +
                                first.to_string() + " in dimension " + std::to_string(k) +
                                " (only dimension " + std::to_string(d) + " may differ)");
        dims[d] = checked::add(dims[d], s[d], "concat output size");
    }
    shape out(dims);
    (void)out.numel();
    return out;
}

cost concat::work(const shapes& in, const shape& out, dtype dt) const { return detail::copy_work(in, out, dt); }

// ------------------------------------------------------------------ flatten
flatten flatten::read(attribute_reader& r) {
    flatten f;
    f.start_dim = r.get_int("start_dim", 1);
    f.end_dim = r.get_int("end_dim", -1);
    return f;
}

void flatten::write(attribute_writer& w) const {
    if (start_dim != 1) w.add("start_dim", start_dim);
    if (end_dim != -1) w.add("end_dim", end_dim);
}

shape flatten::infer(const shapes& in, const std::string& where) const {
    const shape& x = in.at(0);
    const std::size_t s = normalize_dim(start_dim, x.rank(), where);
    const std::size_t e = normalize_dim(end_dim, x.rank(), where);
    if (s > e)
        fail(where, "start_dim " + std::to_string(start_dim) + " comes after end_dim " + std::to_string(end_dim) +
                        " for input " + x.to_string());
    std::vector<std::int64_t> dims(x.dims().begin(), x.dims().begin() + static_cast<std::ptrdiff_t>(s));
    std::int64_t merged = 1;
    for (std::size_t i = s; i <= e; ++i) merged = checked::mul(merged, x[i], "flatten size");
    dims.push_back(merged);
    dims.insert(dims.end(), x.dims().begin() + static_cast<std::ptrdiff_t>(e) + 1, x.dims().end());
    return shape(dims);
}

cost flatten::work(const shapes&, const shape&, dtype) const { return view_work(); }

// ------------------------------------------------------------------ reshape
reshape reshape::read(attribute_reader& r) {
    reshape v;
    v.target = r.get_int_list("shape");
    int inferred = 0;
    for (auto d : v.target) {
        if (d < -1) r.fail("shape", "has dimension " + std::to_string(d) + ": use -1 (inferred), 0 (copied) or >= 1");
        if (d == -1) ++inferred;
    }
    if (inferred > 1) r.fail("shape", "has more than one -1 dimension");
    return v;
}

void reshape::write(attribute_writer& w) const { w.add("shape", target); }

shape reshape::infer(const shapes& in, const std::string& where) const {
    const shape& x = in.at(0);
    std::vector<std::int64_t> dims = target;
    std::int64_t known = 1;
    std::ptrdiff_t infer_at = -1;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] == 0) {
            if (i >= x.rank())
                fail(where, "shape " + shape(target).to_string() + " copies dimension " + std::to_string(i) +
                                " (0) but the input " + x.to_string() + " has rank " + std::to_string(x.rank()));
            dims[i] = x[i];
        }
        if (dims[i] == -1)
            infer_at = static_cast<std::ptrdiff_t>(i);
        else
            known = checked::mul(known, dims[i], "reshape size");
    }
    const std::int64_t n = x.numel();
    if (infer_at >= 0) {
        if (n % known != 0)
            fail(where, "cannot reshape " + x.to_string() + " (" + std::to_string(n) + " elements) to " +
                            shape(target).to_string());
        dims[static_cast<std::size_t>(infer_at)] = n / known;
    } else if (known != n) {
        fail(where, "cannot reshape " + x.to_string() + " (" + std::to_string(n) + " elements) to " +
                        shape(dims).to_string() + " (" + std::to_string(known) + " elements)");
    }
    return shape(dims);
}

cost reshape::work(const shapes&, const shape&, dtype) const { return view_work(); }

// ------------------------------------------------------------------ transpose
transpose transpose::read(attribute_reader& r) {
    transpose t;
    t.dim0 = r.get_int("dim0");
    t.dim1 = r.get_int("dim1");
    return t;
}

void transpose::write(attribute_writer& w) const {
    w.add("dim0", dim0);
    w.add("dim1", dim1);
}

shape transpose::infer(const shapes& in, const std::string& where) const {
    shape out = in.at(0);
    const std::size_t a = normalize_dim(dim0, out.rank(), where);
    const std::size_t b = normalize_dim(dim1, out.rank(), where);
    std::swap(out[a], out[b]);
    return out;
}

cost transpose::work(const shapes&, const shape&, dtype) const { return view_work(); }

// ------------------------------------------------------------------ slice
slice slice::read(attribute_reader& r) {
    slice s;
    s.dim = r.get_int("dim", 0);
    s.start = r.get_int("start", 0);
    s.end = r.get_int("end", to_end);
    s.step = r.get_int("step", 1);
    detail::require_at_least(r, "step", s.step, 1);
    return s;
}

void slice::write(attribute_writer& w) const {
    w.add("dim", dim);
    if (start != 0) w.add("start", start);
    if (end != to_end) w.add("end", end);
    if (step != 1) w.add("step", step);
}

shape slice::infer(const shapes& in, const std::string& where) const {
    shape out = in.at(0);
    const std::size_t d = normalize_dim(dim, out.rank(), where);
    const std::int64_t size = out[d];
    auto clamp_index = [size](std::int64_t i) {
        if (i < 0) i = i < -size ? 0 : i + size;
        return std::min(i, size);
    };
    const std::int64_t b = clamp_index(start);
    const std::int64_t e = clamp_index(end);
    const std::int64_t len = e > b ? (e - b - 1) / step + 1 : 0;
    if (len < 1)
        fail(where, "start " + std::to_string(start) + (end == to_end ? std::string(" to the end") : " to end " + std::to_string(end)) +
                        " selects nothing of dimension " + std::to_string(d) + " (size " + std::to_string(size) + ")");
    out[d] = len;
    return out;
}

cost slice::work(const shapes&, const shape&, dtype) const { return view_work(); }

// ------------------------------------------------------------------ parameter
parameter parameter::read(attribute_reader& r) {
    parameter p;
    p.dims = r.get_int_list("shape");
    if (p.dims.empty()) r.fail("shape", "is empty: a parameter has at least one dimension");
    for (auto d : p.dims)
        if (d < 1) r.fail("shape", "has dimension " + std::to_string(d) + ": every dimension must be >= 1");
    if (r.find_raw("expand")) {
        p.expand = r.get_int_list("expand");
        for (auto d : p.expand)
            if (d < 1) r.fail("expand", "has dimension " + std::to_string(d) + ": every dimension must be >= 1");
    }
    p.trainable = r.get_bool("trainable", true);
    return p;
}

void parameter::write(attribute_writer& w) const {
    w.add("shape", dims);
    if (!expand.empty()) w.add("expand", expand);
    if (!trainable) w.add("trainable", false);
}

shape parameter::infer(const shapes&, const std::string& where) const {
    shape own(dims);
    (void)own.numel();  // throws overflow_error when the count does not fit
    if (expand.empty()) return own;
    // Tensor.expand: new leading dimensions may be added; an existing one keeps its size or grows from 1
    if (expand.size() < dims.size())
        fail(where, "expand " + shape(expand).to_string() + " has fewer dimensions than shape " + own.to_string());
    const std::size_t lead = expand.size() - dims.size();
    for (std::size_t i = 0; i < dims.size(); ++i)
        if (dims[i] != 1 && dims[i] != expand[lead + i])
            fail(where, "cannot expand " + own.to_string() + " to " + shape(expand).to_string() + " (dimension " +
                            std::to_string(lead + i) + ": " + std::to_string(dims[i]) + " is not 1)");
    shape out(expand);
    (void)out.numel();
    return out;
}

std::vector<param_spec> parameter::parameters() const { return {{"value", shape(dims), trainable}}; }

cost parameter::work(const shapes&, const shape&, dtype) const { return view_work(); }

}  // namespace ridgeline::core
