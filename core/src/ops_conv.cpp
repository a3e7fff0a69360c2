// conv2d.
#include <string>

#include "op_helpers.hpp"

namespace ridgeline::core {

using detail::fail;

namespace {

padding2d read_padding(attribute_reader& r) {
    padding2d p;
    auto raw = r.find_raw("padding");
    if (!raw) return p;
    if (*raw == "same") {
        p.kind = padding2d::mode::same;
        return p;
    }
    if (*raw == "valid") {
        p.kind = padding2d::mode::valid;
        return p;
    }
    std::vector<std::int64_t> v;
    try {
        v = r.get_int_list("padding");
    } catch (const parse_error&) {
        r.fail("padding", "\"" + *raw + "\" is not an integer, HxW, TxLxBxR, \"same\" or \"valid\"");
    }
    for (auto x : v)
        if (x < 0) r.fail("padding", "\"" + *raw + "\" is negative, padding must be >= 0");
    if (v.size() == 1) {
        p.top = p.bottom = p.left = p.right = v[0];
    } else if (v.size() == 2) {
        p.top = p.bottom = v[0];
        p.left = p.right = v[1];
    } else if (v.size() == 4) {
        p.top = v[0];
        p.left = v[1];
        p.bottom = v[2];
        p.right = v[3];
    } else {
        r.fail("padding", "\"" + *raw + "\" has " + std::to_string(v.size()) +
                              " values, expected 1, 2 (HxW) or 4 (top x left x bottom x right)");
    }
    return p;
}

/// floor((in + pads - dilation*(k-1) - 1) / stride) + 1, or an error naming the axis.
std::int64_t conv_out(std::int64_t in, std::int64_t pad_lo, std::int64_t pad_hi, std::int64_t k, std::int64_t stride,
                      std::int64_t dilation, const char* axis, const std::string& where) {
    const std::int64_t padded = checked::sum({in, pad_lo, pad_hi}, "conv2d padded size");
    const std::int64_t extent = checked::add(checked::mul(dilation, k - 1, "conv2d kernel extent"), 1,
                                             "conv2d kernel extent");
    if (extent > padded)
        fail(where, std::string("kernel ") + axis + " " + std::to_string(k) +
                        (dilation > 1 ? " (dilated extent " + std::to_string(extent) + ")" : std::string()) +
                        " is larger than the padded input " + axis + " " + std::to_string(padded) + " (input " +
                        std::to_string(in) + " + padding " + std::to_string(pad_lo) + " + " +
                        std::to_string(pad_hi) + ")");
    return (padded - extent) / stride + 1;
}

/// Pairs (output position, kernel tap) along one dimension whose input index o*stride - pad + k*dilation falls
/// inside [0, n): the taps that read the input, not the padding. Derived: for tap k the valid positions o are
/// ceil((pad - k*d)/s) <= o <= floor((n - 1 + pad - k*d)/s), clipped to [0, out). Loops over taps or positions,
/// whichever are fewer; __int128 intermediates (k*d and o*s may exceed int64 only on absurd shapes).
std::int64_t taps_inside(std::int64_t n, std::int64_t out, std::int64_t kernel, std::int64_t stride,
                         std::int64_t dilation, std::int64_t pad) {
    __extension__ typedef __int128 i128;  // GCC/clang; __extension__: not ISO C++, on purpose
    auto floor_div = [](i128 a, i128 b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
    auto ceil_div = [&](i128 a, i128 b) { return -floor_div(-a, b); };
    i128 total = 0;
    if (kernel <= out) {
        for (std::int64_t k = 0; k < kernel; ++k) {
            const i128 off = static_cast<i128>(k) * dilation - pad;  // input index = o*stride + off
            const i128 lo = std::max<i128>(0, ceil_div(-off, stride));
            const i128 hi = std::min<i128>(out - 1, floor_div(static_cast<i128>(n) - 1 - off, stride));
            if (hi >= lo) total += hi - lo + 1;
        }
    } else {
        for (std::int64_t o = 0; o < out; ++o) {
            const i128 base = static_cast<i128>(o) * stride - pad;  // input index = base + k*dilation
            const i128 lo = std::max<i128>(0, ceil_div(-base, dilation));
            const i128 hi = std::min<i128>(kernel - 1, floor_div(static_cast<i128>(n) - 1 - base, dilation));
            if (hi >= lo) total += hi - lo + 1;
        }
    }
    return static_cast<std::int64_t>(total);  // <= kernel * out, which the MAC count already checked
}

}  // namespace

padding2d conv2d::resolved_padding() const {
    padding2d p = padding;
    if (padding.kind == padding2d::mode::valid) return padding2d{};
    if (padding.kind == padding2d::mode::same) {
        // PyTorch: total = dilation*(k-1); the smaller half before, the extra row/column after.
        const std::int64_t th = checked::mul(dilation.h, kernel_size.h - 1, "conv2d \"same\" padding");
        const std::int64_t tw = checked::mul(dilation.w, kernel_size.w - 1, "conv2d \"same\" padding");
        p = padding2d{padding2d::mode::explicit_pads, th / 2, tw / 2, th - th / 2, tw - tw / 2};
    }
    return p;
}

conv2d conv2d::read(attribute_reader& r) {
    conv2d c;
    c.in_channels = r.get_int("in_channels");
    c.out_channels = r.get_int("out_channels");
    c.kernel_size = r.get_pair("kernel_size");
    c.stride = r.get_pair("stride", {1, 1});
    c.padding = read_padding(r);
    c.dilation = r.get_pair("dilation", {1, 1});
    c.groups = r.get_int("groups", 1);
    c.bias = r.get_bool("bias", true);
    detail::require_at_least(r, "in_channels", c.in_channels, 1);
    detail::require_at_least(r, "out_channels", c.out_channels, 1);
    detail::require_at_least(r, "kernel_size", c.kernel_size, 1);
    detail::require_at_least(r, "stride", c.stride, 1);
    detail::require_at_least(r, "dilation", c.dilation, 1);
    detail::require_at_least(r, "groups", c.groups, 1);
    if (c.in_channels % c.groups != 0)
        fail(r.where(), "in_channels " + std::to_string(c.in_channels) + " is not divisible by groups " +
                            std::to_string(c.groups));
    if (c.out_channels % c.groups != 0)
        fail(r.where(), "out_channels " + std::to_string(c.out_channels) + " is not divisible by groups " +
                            std::to_string(c.groups));
    if (c.padding.kind == padding2d::mode::same && (c.stride.h != 1 || c.stride.w != 1))
        fail(r.where(), "padding \"same\" needs stride 1 (as in PyTorch), got stride " + to_string(c.stride));
    (void)checked::product({c.out_channels, c.in_channels / c.groups, c.kernel_size.h, c.kernel_size.w},
                           r.where() + " weight elements");
    return c;
}

void conv2d::write(attribute_writer& w) const {
    w.add("in_channels", in_channels);
    w.add("out_channels", out_channels);
    w.add("kernel_size", kernel_size);
    if (stride != pair2d{1, 1}) w.add("stride", stride);
    switch (padding.kind) {
        case padding2d::mode::same: w.add_word("padding", "same"); break;
        case padding2d::mode::valid: w.add_word("padding", "valid"); break;
        case padding2d::mode::explicit_pads:
            if (padding.top == padding.bottom && padding.left == padding.right) {
                if (padding.top != 0 || padding.left != 0) w.add("padding", pair2d{padding.top, padding.left});
            } else {
                w.add("padding", std::vector<std::int64_t>{padding.top, padding.left, padding.bottom, padding.right});
            }
            break;
    }
    if (dilation != pair2d{1, 1}) w.add("dilation", dilation);
    if (groups != 1) w.add("groups", groups);
    if (!bias) w.add("bias", false);
}

shape conv2d::infer(const shapes& in, const std::string& where) const {
    const shape& x = in.at(0);
    detail::expect_nchw_channels(x, in_channels, "in_channels", where);
    const padding2d p = resolved_padding();
    const std::int64_t h = conv_out(x[2], p.top, p.bottom, kernel_size.h, stride.h, dilation.h, "height", where);
    const std::int64_t w = conv_out(x[3], p.left, p.right, kernel_size.w, stride.w, dilation.w, "width", where);
    shape out{x[0], out_channels, h, w};
    (void)out.numel();
    return out;
}

std::vector<param_spec> conv2d::parameters() const {
    std::vector<param_spec> p{
        {"weight", shape{out_channels, in_channels / groups, kernel_size.h, kernel_size.w}, true}};
    if (bias) p.push_back({"bias", shape{out_channels}, true});
    return p;
}

cost conv2d::work(const shapes& in, const shape& out, dtype dt) const {
    cost c;
    // Every output element takes (in_channels/groups) * kh * kw MACs, padding taps included (torchvision).
    c.macs = checked::product({out.numel(), in_channels / groups, kernel_size.h, kernel_size.w}, "conv2d macs");
    // The kernel skips the taps that fall in the padding (benchdnn counts its rates the same way): those MACs
    // are counted in macs (as torchvision does) and apart in skipped_macs.
    const padding2d p = resolved_padding();
    const std::int64_t rows = taps_inside(in.at(0)[2], out[2], kernel_size.h, stride.h, dilation.h, p.top);
    const std::int64_t cols = taps_inside(in.at(0)[3], out[3], kernel_size.w, stride.w, dilation.w, p.left);
    const std::int64_t executed = checked::product({out[0], out[1], in_channels / groups, rows, cols}, "conv2d macs");
    c.skipped_macs = c.macs - executed;
    c.bias_flops = bias ? out.numel() : 0;
    c.flops = checked::add(checked::mul(2, c.macs, "conv2d flops"), c.bias_flops, "conv2d flops");
    c.bytes = detail::standard_bytes(in, out, detail::param_elements(parameters()), dt);
    return c;
}

}  // namespace ridgeline::core
