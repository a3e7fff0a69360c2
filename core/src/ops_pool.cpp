// max_pool2d, avg_pool2d, adaptive_avg_pool2d.
#include <numeric>

#include "op_helpers.hpp"

namespace ridgeline::core {

using detail::fail;

namespace {

/// PyTorch's pooling_output_shape (aten/src/ATen/native/Pool.h):
///   out = div_floor(in + 2*pad - dilation*(k-1) - 1 + (ceil_mode ? stride-1 : 0), stride) + 1
///   and with ceil_mode, a last window starting at or past in + pad is dropped; fewer than 1 is an error. With
///   ceil_mode a window may be larger than the padded input (in 2, kernel 3, stride 2: one output).
std::int64_t pool_out(std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t pad, std::int64_t dilation,
                      bool ceil_mode, const char* axis, const std::string& where) {
    const std::int64_t padded = checked::sum({in, pad, pad}, "pool padded size");
    const std::int64_t extent = checked::add(checked::mul(dilation, k - 1, "pool kernel extent"), 1, "pool extent");
    // in this form no intermediate overflows, whatever the stride: span + stride - 1 is computed only when span < 0
    const std::int64_t span = padded - extent;
    std::int64_t out = 0;
    if (span >= 0) {
        out = span / stride + 1;
        if (ceil_mode && span % stride != 0) ++out;
    } else if (ceil_mode && span + (stride - 1) >= 0) {
        out = 1;  // div_floor(span + stride - 1, stride) + 1 with 0 <= span + stride - 1 < stride
    }
    if (out < 1)
        fail(where, std::string("kernel ") + axis + " " + std::to_string(k) +
                        (dilation > 1 ? " (dilated extent " + std::to_string(extent) + ")" : std::string()) +
                        " is larger than the padded input " + axis + " " + std::to_string(padded) +
                        (ceil_mode ? " by a stride or more" : std::string()));
    // the last window starts at (out - 1) * stride; drop it when that is >= in + pad
    if (ceil_mode && out - 1 > (in + pad - 1) / stride) --out;
    return out;
}

void read_pool_common(attribute_reader& r, pair2d& kernel, pair2d& stride, pair2d& padding) {
    kernel = r.get_pair("kernel_size");
    stride = r.get_pair("stride", kernel);
    padding = r.get_pair("padding", {0, 0});
    detail::require_at_least(r, "kernel_size", kernel, 1);
    detail::require_at_least(r, "stride", stride, 1);
    detail::require_at_least(r, "padding", padding, 0);
    // PyTorch: "pad should be at most half of effective kernel size".
    if (padding.h > kernel.h / 2 || padding.w > kernel.w / 2)
        r.fail("padding", to_string(padding) + " is more than half the kernel_size " + to_string(kernel) +
                              " (PyTorch's rule for pooling)");
}

void write_pool_common(attribute_writer& w, pair2d kernel, pair2d stride, pair2d padding) {
    w.add("kernel_size", kernel);
    if (stride != kernel) w.add("stride", stride);
    if (padding != pair2d{0, 0}) w.add("padding", padding);
}

cost pool_work(std::int64_t per_output, const shapes& in, const shape& out, dtype dt, const char* what) {
    cost c;
    c.flops = checked::mul(per_output, out.numel(), what);
    c.bytes = detail::standard_bytes(in, out, 0, dt);
    return c;
}

}  // namespace

// ------------------------------------------------------------------ max_pool2d
max_pool2d max_pool2d::read(attribute_reader& r) {
    max_pool2d p;
    read_pool_common(r, p.kernel_size, p.stride, p.padding);
    p.dilation = r.get_pair("dilation", {1, 1});
    p.ceil_mode = r.get_bool("ceil_mode", false);
    detail::require_at_least(r, "dilation", p.dilation, 1);
    return p;
}

void max_pool2d::write(attribute_writer& w) const {
    write_pool_common(w, kernel_size, stride, padding);
    if (dilation != pair2d{1, 1}) w.add("dilation", dilation);
    if (ceil_mode) w.add("ceil_mode", true);
}

shape max_pool2d::infer(const shapes& in, const std::string& where) const {
    const shape& x = in.at(0);
    detail::expect_rank(x, 4, where, "NCHW");
    const auto h = pool_out(x[2], kernel_size.h, stride.h, padding.h, dilation.h, ceil_mode, "height", where);
    const auto w = pool_out(x[3], kernel_size.w, stride.w, padding.w, dilation.w, ceil_mode, "width", where);
    return shape{x[0], x[1], h, w};
}

cost max_pool2d::work(const shapes& in, const shape& out, dtype dt) const {
    return pool_work(checked::mul(kernel_size.h, kernel_size.w, "max_pool2d flops") - 1, in, out, dt, "max_pool2d flops");
}

// ------------------------------------------------------------------ avg_pool2d
avg_pool2d avg_pool2d::read(attribute_reader& r) {
    avg_pool2d p;
    read_pool_common(r, p.kernel_size, p.stride, p.padding);
    p.ceil_mode = r.get_bool("ceil_mode", false);
    p.count_include_pad = r.get_bool("count_include_pad", true);
    return p;
}

void avg_pool2d::write(attribute_writer& w) const {
    write_pool_common(w, kernel_size, stride, padding);
    if (ceil_mode) w.add("ceil_mode", true);
    if (!count_include_pad) w.add("count_include_pad", false);
}

shape avg_pool2d::infer(const shapes& in, const std::string& where) const {
    const shape& x = in.at(0);
    detail::expect_rank(x, 4, where, "NCHW");
    const auto h = pool_out(x[2], kernel_size.h, stride.h, padding.h, 1, ceil_mode, "height", where);
    const auto w = pool_out(x[3], kernel_size.w, stride.w, padding.w, 1, ceil_mode, "width", where);
    return shape{x[0], x[1], h, w};
}

cost avg_pool2d::work(const shapes& in, const shape& out, dtype dt) const {
    return pool_work(checked::mul(kernel_size.h, kernel_size.w, "avg_pool2d flops"), in, out, dt, "avg_pool2d flops");
}

// ------------------------------------------------------------------ adaptive_avg_pool2d
adaptive_avg_pool2d adaptive_avg_pool2d::read(attribute_reader& r) {
    adaptive_avg_pool2d p;
    p.output_size = r.get_pair("output_size");
    detail::require_at_least(r, "output_size", p.output_size, 1);
    return p;
}

void adaptive_avg_pool2d::write(attribute_writer& w) const { w.add("output_size", output_size); }

shape adaptive_avg_pool2d::infer(const shapes& in, const std::string& where) const {
    const shape& x = in.at(0);
    detail::expect_rank(x, 4, where, "NCHW");
    return shape{x[0], x[1], output_size.h, output_size.w};
}

namespace {
/// Sum over output positions i of the window length [floor(i*in/out), ceil((i+1)*in/out)), in closed form:
/// in + out - gcd(in, out). Derived: with S = sum_{i<out} floor(i*in/out), sum_{i<out} ceil((i+1)*in/out)
/// = S + in + (out - gcd) (a ceiling exceeds its floor unless out divides j*in, which gcd of the j in
/// 1..out do), so the starts cancel. E.g. in 12, out 5: windows 3+3+4+3+3 = 16 = 12 + 5 - 1.
/// (A loop over the output positions would run for as long as output_size is large.)
std::int64_t adaptive_window_sum(std::int64_t in, std::int64_t out) {
    return checked::add(in, out, "adaptive_avg_pool2d windows") - std::gcd(in, out);
}
}  // namespace

cost adaptive_avg_pool2d::work(const shapes& in, const shape& out, dtype dt) const {
    const shape& x = in.at(0);
    cost c;
    // Each output element costs its window's size: (size - 1) adds and one divide.
    const std::int64_t windows = checked::mul(adaptive_window_sum(x[2], output_size.h),
                                              adaptive_window_sum(x[3], output_size.w), "adaptive_avg_pool2d flops");
    c.flops = checked::product({x[0], x[1], windows}, "adaptive_avg_pool2d flops");
    c.bytes = detail::standard_bytes(in, out, 0, dt);
    return c;
}

}  // namespace ridgeline::core
