// The oneDNN lowering (dnnl_graph.hpp): elementwise and binary ops, pooling, concat and views.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "dnnl_graph.hpp"
#include "dnnl_loops.hpp"
#include "dnnl_silu.hpp"
#include "ridgeline/core/error.hpp"

namespace ridgeline::cpu::dnnl_detail {

// ------------------------------------------------------------ elementwise

void dnnl_graph::eltwise(const core::layer_analysis& la, dnnl::algorithm alg, float alpha, float beta) {
    const memory src = dense_or_blocked(la.layer.inputs[0]);
    dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, alg, src.get_desc(), alpha, beta);
    dnnl::eltwise_forward::primitive_desc pd(d, attr(), engine_);
    record(pd);
    memory dst = elementwise_dst(pd.dst_desc(), la.layer.inputs[0], src);
    steps_.push_back({dnnl::eltwise_forward(pd),
                      {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}},
                      {}});
    set_output(la.layer.name, dst);
}

eltwise_spec activation_eltwise(const core::op& o) {
    using alg = dnnl::algorithm;
    if (std::holds_alternative<core::relu>(o)) return {alg::eltwise_relu, 0, 0};
    if (std::holds_alternative<core::relu6>(o)) return {alg::eltwise_clip_v2, 0, 6};
    if (const auto* g = std::get_if<core::gelu>(&o))
        return {g->tanh_approximation ? alg::eltwise_gelu_tanh : alg::eltwise_gelu_erf, 0, 0};
    if (std::holds_alternative<core::tanh_op>(o)) return {alg::eltwise_tanh, 0, 0};
    if (std::holds_alternative<core::sigmoid>(o)) return {alg::eltwise_logistic, 0, 0};
    if (std::holds_alternative<core::hardswish>(o)) return {alg::eltwise_hardswish, 0, 0};  // x * min(max(x + 3, 0), 6) / 6
    if (std::holds_alternative<core::silu>(o)) return {alg::eltwise_swish, 1.0f, 0};  // x * sigmoid(alpha * x)
    throw backend_api::unsupported(std::string(core::kind_of(o)) + " is not an activation oneDNN runs as an eltwise");
}

void dnnl_graph::activation(const core::layer_analysis& la) {
    const eltwise_spec e = activation_eltwise(la.layer.op);
    eltwise(la, e.alg, e.alpha, e.beta);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::relu&) { activation(la); }
void dnnl_graph::add(const core::layer_analysis& la, const core::relu6&) { activation(la); }
void dnnl_graph::add(const core::layer_analysis& la, const core::gelu&) { activation(la); }
void dnnl_graph::add(const core::layer_analysis& la, const core::tanh_op&) { activation(la); }
void dnnl_graph::add(const core::layer_analysis& la, const core::sigmoid&) { activation(la); }
void dnnl_graph::add(const core::layer_analysis& la, const core::hardswish&) { activation(la); }
void dnnl_graph::add(const core::layer_analysis& la, const core::silu&) {
    if (dt_ != core::dtype::fp32) return activation(la);
    const memory src = dense_or_blocked(la.layer.inputs[0]);
    const memory dst = elementwise_dst(src.get_desc(), la.layer.inputs[0], src);
    add_silu_step(src, dst);
    set_output(la.layer.name, dst);
}

void dnnl_graph::add_silu_step(const memory& src, const memory& dst) {
    const auto* x = static_cast<const float*>(src.get_data_handle());
    auto* y = static_cast<float*>(dst.get_data_handle());
    // every float of the buffer: a blocked layout's padding holds zeros, and silu(0) = 0
    const auto n = static_cast<std::int64_t>(dst.get_desc().get_size() / sizeof(float));
    steps_.push_back({{}, {}, [x, y, n] { silu_f32(x, y, n); }});
    notes_.emplace_back("ridgeline silu loop");
}

void dnnl_graph::add(const core::layer_analysis& la, const core::hardsigmoid&) {
    // oneDNN 2.6 has no hardsigmoid (2.7 adds one): x / 6 + 0.5 (eltwise_linear), then clamp to [0, 1]
    // in place (eltwise_clip_v2), two jit primitives; one eltwise_linear with a clip post-op falls back to
    // oneDNN's scalar reference kernel (ref:any)
    eltwise(la, dnnl::algorithm::eltwise_linear, 1.0f / 6.0f, 0.5f);
    const memory y = dense_or_blocked(la.layer.name);
    dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_clip_v2,
                                  y.get_desc(), 0.0f, 1.0f);
    dnnl::eltwise_forward::primitive_desc pd(d, attr(), engine_);
    record(pd);
    steps_.push_back({dnnl::eltwise_forward(pd),
                      {{DNNL_ARG_SRC, y}, {DNNL_ARG_DST, y}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}},
                      {}});
}

void dnnl_graph::add(const core::layer_analysis& la, const core::scale& op) {
    eltwise(la, dnnl::algorithm::eltwise_linear, static_cast<float>(op.factor), 0);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::softmax& op) {
    const memory src = dense(la.layer.inputs[0]);
    const int axis = static_cast<int>(core::normalize_dim(op.dim, la.input_shapes[0].rank(), core::where(la.layer)));
    dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, src.get_desc(), axis);
    dnnl::softmax_forward::primitive_desc pd(d, attr(), engine_);
    record(pd);
    memory dst(pd.dst_desc(), engine_);
    steps_.push_back({dnnl::softmax_forward(pd),
                      {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}},
                      {}});
    set_output(la.layer.name, dst);
}

void dnnl_graph::binary(const core::layer_analysis& la, dnnl::algorithm alg, bool commutes) {
    std::string a = la.layer.inputs[0], b = la.layer.inputs[1];
    core::shape sa = la.input_shapes[0], sb = la.input_shapes[1];
    if (sa != la.output_shape && commutes) {  // oneDNN broadcasts src1 only; add and mul commute
        std::swap(a, b);
        std::swap(sa, sb);
    }
    if (sa != la.output_shape) {
        // both inputs broadcast; oneDNN broadcasts src1 only: first a = 0 + a into the output's shape (exact), then
        // the operation with b broadcast
        const auto dt = to_dnnl(dt_);
        const dims od = to_dims(la.output_shape);
        memory zeros(plain_md(od, dt), engine_);
        std::memset(zeros.get_data_handle(), 0, zeros.get_desc().get_size());
        memory wide(plain_md(od, dt), engine_);
        const memory da = dense(a);
        dims ad = da.get_desc().dims();
        while (ad.size() < od.size()) ad.insert(ad.begin(), 1);
        const memory a1(plain_md(ad, dt), engine_, da.get_data_handle());
        dnnl::binary::desc d(dnnl::algorithm::binary_add, zeros.get_desc(), a1.get_desc(), wide.get_desc());
        dnnl::binary::primitive_desc pd(d, attr(), engine_);
        record(pd);
        steps_.push_back({dnnl::binary(pd),
                          {{DNNL_ARG_SRC_0, zeros},
                           {DNNL_ARG_SRC_1, a1},
                           {DNNL_ARG_DST, wide},
                           {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}},
                          {}});
        keep_.push_back(da);
        a = la.layer.name + "#broadcast";
        sa = la.output_shape;
        set_output(a, wide);
    }
    memory src0 = dense_or_blocked(a);
    memory src1;
    if (sb == sa) {
        src1 = slots_.at(b).strided ? dense(b) : to_layout(b, src0.get_desc());
    } else {
        const memory d1 = dense(b);
        dims bd = d1.get_desc().dims();
        while (bd.size() < sa.rank()) bd.insert(bd.begin(), 1);
        src1 = memory(plain_md(bd, d1.get_desc().data_type()), engine_, d1.get_data_handle());
    }
    auto make_pd = [&] {
        dnnl::binary::desc d(alg, src0.get_desc(), src1.get_desc(), src0.get_desc());
        return dnnl::binary::primitive_desc(d, attr(), engine_);
    };
    dnnl::binary::primitive_desc pd = make_pd();
    if (sb != sa && std::string(pd.impl_info_str()).rfind("ref", 0) == 0 &&
        src0.get_desc() != plain_md(to_dims(sa), src0.get_desc().data_type())) {
        // a [N, C, 1, 1] operand broadcast over a blocked (nChw16c) tensor: oneDNN 2.6 has no jit kernel for
        // the pair and runs its scalar reference (ref:any), 1000x slower than the same product on plain layouts
        // (a squeeze-excite gate of 1x672x14x14: 7.3 ms against 6 us). The blocked tensor is reordered to plain
        // first (a "reorder" note), and the product runs jit on plain layouts
        src0 = dense(a);
        pd = make_pd();
    }
    record(pd);
    memory dst = elementwise_dst(pd.dst_desc(), a, src0);
    steps_.push_back(
        {dnnl::binary(pd),
         {{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}},
         {}});
    set_output(la.layer.name, dst);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::add&) { binary(la, dnnl::algorithm::binary_add); }

void dnnl_graph::add(const core::layer_analysis& la, const core::mul&) { binary(la, dnnl::algorithm::binary_mul); }

void dnnl_graph::add(const core::layer_analysis& la, const core::sub&) {
    binary(la, dnnl::algorithm::binary_sub, false);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::div&) {
    binary(la, dnnl::algorithm::binary_div, false);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::sqrt_op&) {
    eltwise(la, dnnl::algorithm::eltwise_sqrt, 0, 0);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::exp_op&) {
    eltwise(la, dnnl::algorithm::eltwise_exp, 0, 0);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::neg&) {
    eltwise(la, dnnl::algorithm::eltwise_linear, -1.0f, 0);  // -1 * x + 0
}

void dnnl_graph::add(const core::layer_analysis& la, const core::pow_op& op) {
    eltwise(la, dnnl::algorithm::eltwise_pow, 1.0f, static_cast<float>(op.exponent));  // 1 * x^exponent
}

void dnnl_graph::add(const core::layer_analysis& la, const core::erf_op&) {
    // oneDNN 2.6 has no erf (only gelu_erf): ridgeline's own loop over float32, std::erf per element, split over the
    // OpenMP threads (std::erf, a libm call, is compute-bound: tens of cycles an element); other data types are
    // converted to float32 and back by reorders around it
    const dims d = to_dims(la.output_shape);
    const memory x = to_layout(la.layer.inputs[0], plain_md(d, memory::data_type::f32));
    memory y32(plain_md(d, memory::data_type::f32), engine_);
    const auto n = static_cast<std::size_t>(la.output_shape.numel());
    steps_.push_back({{}, {}, [x, y32, n] {
                          const auto* xp = static_cast<const float*>(x.get_data_handle());
                          auto* yp = static_cast<float*>(y32.get_data_handle());
#pragma omp parallel for schedule(static)
                          for (std::size_t i = 0; i < n; ++i) yp[i] = std::erf(xp[i]);
                      }});
    notes_.emplace_back("ridgeline erf loop");
    set_output_from_f32(la.layer.name, y32);
}

void dnnl_graph::set_output_from_f32(const std::string& name, const memory& y32) {
    if (to_dnnl(dt_) == memory::data_type::f32) {
        set_output(name, y32);
        return;
    }
    memory y(plain_md(y32.get_desc().dims(), to_dnnl(dt_)), engine_);
    steps_.push_back({dnnl::reorder(y32, y), {{DNNL_ARG_FROM, y32}, {DNNL_ARG_TO, y}}, {}});
    notes_.emplace_back("reorder");
    set_output(name, y);
}

namespace {

/// Whether a value, given by its bits, is > 0 (false for -0, NaN and negatives): a positive value's bits less one lie
/// below those of +infinity, `inf` (float32 0x7f800000, bf16 0x7f80, fp16 0x7c00), and nothing else's do.
template <class U, U inf>
inline bool positive(U v) {
    return static_cast<U>(v - 1) < inf;
}

/// y[j] = c[j] > 0 ? a[j] : b[j] over one run, an operand with a false flag read at its first element (broadcast);
/// both values are read and one kept by a mask, so the loop has no branch and vectorises.
template <class U, U inf, bool vc, bool va, bool vb>
void select_run(const U* c, const U* a, const U* b, U* y, std::int64_t n) {
#pragma omp simd
    for (std::int64_t j = 0; j < n; ++j) {
        const U keep = static_cast<U>(U{0} - static_cast<U>(positive<U, inf>(c[vc ? j : 0])));  // all ones: a
        y[j] = static_cast<U>((a[va ? j : 0] & keep) | (b[vb ? j : 0] & static_cast<U>(~keep)));
    }
}

/// where over a coalesced shape of (y, c, a, b): the run's variant picked once from the operands' innermost strides.
template <class U, U inf>
void select(const void* cp, const void* ap, const void* bp, void* yp, const strided_shape& sh) {
    using run_fn = void (*)(const U*, const U*, const U*, U*, std::int64_t);
    static constexpr run_fn runs[8] = {select_run<U, inf, false, false, false>, select_run<U, inf, false, false, true>,
                                       select_run<U, inf, false, true, false>,  select_run<U, inf, false, true, true>,
                                       select_run<U, inf, true, false, false>,  select_run<U, inf, true, false, true>,
                                       select_run<U, inf, true, true, false>,   select_run<U, inf, true, true, true>};
    const run_fn run = runs[(sh.s[1].back() != 0) * 4 + (sh.s[2].back() != 0) * 2 + (sh.s[3].back() != 0)];
    const auto* c = static_cast<const U*>(cp);
    const auto* a = static_cast<const U*>(ap);
    const auto* b = static_cast<const U*>(bp);
    auto* y = static_cast<U*>(yp);
    const bool stream = stream_output(sh.elements() * static_cast<std::int64_t>(sizeof(U)));
    for_each_run<4>(sh, [&](const std::array<std::int64_t, 4>& off, std::int64_t j0, std::int64_t j1) {
        write_run(y + off[0], j0, j1, stream, [&](U* out, std::int64_t lo, std::int64_t hi) {
            auto at = [&](std::size_t k) { return off[k] + (sh.s[k].back() != 0 ? lo : 0); };
            run(c + at(1), a + at(2), b + at(3), out, hi - lo);
        });
    });
}

}  // namespace

void dnnl_graph::add(const core::layer_analysis& la, const core::where_op&) {
    // oneDNN 2.6 has no select: ridgeline's own loop ("ridgeline where loop") in the graph's data type (a select
    // copies one of its inputs' values, so no conversion is needed), each input read through its broadcast strides,
    // the dimensions merged where every operand steps through them as one (dnnl_loops.hpp), the runs vectorised
    // and split over the OpenMP threads
    const auto dt = to_dnnl(dt_);
    const dims out = to_dims(la.output_shape);
    std::vector<memory> in;
    std::vector<dims> strides{row_major_strides(out)};
    for (std::size_t k = 0; k < 3; ++k) {
        const dims s = to_dims(la.input_shapes[k]);
        in.push_back(to_layout(la.layer.inputs[k], plain_md(s, dt)));
        strides.push_back(core::broadcast_strides(s, out));  // NumPy broadcasting, by stride 0
    }
    const strided_shape sh = coalesce(out, strides);
    memory y(plain_md(out, dt), engine_);
    steps_.push_back({{}, {}, [in, y, sh, dt] {
                          const void* c = in[0].get_data_handle();
                          const void* a = in[1].get_data_handle();
                          const void* b = in[2].get_data_handle();
                          if (dt == memory::data_type::f32)
                              select<std::uint32_t, 0x7f800000u>(c, a, b, y.get_data_handle(), sh);
                          else if (dt == memory::data_type::bf16)
                              select<std::uint16_t, 0x7f80u>(c, a, b, y.get_data_handle(), sh);
                          else
                              select<std::uint16_t, 0x7c00u>(c, a, b, y.get_data_handle(), sh);
                      }});
    notes_.emplace_back("ridgeline where loop");
    set_output(la.layer.name, y);
}

// ------------------------------------------------------------ pooling

/// Right padding that makes oneDNN's floor formula give PyTorch's (possibly ceil_mode) output size, per axis.
core::pair2d dnnl_graph::right_padding(const core::layer_analysis& la, core::pair2d kernel, core::pair2d stride,
                                       core::pair2d pad, core::pair2d dilation) {
    const core::shape& x = la.input_shapes[0];
    const core::shape& y = la.output_shape;
    const std::int64_t ext_h = (kernel.h - 1) * dilation.h + 1, ext_w = (kernel.w - 1) * dilation.w + 1;
    return {std::max<std::int64_t>(0, (y[2] - 1) * stride.h + ext_h - x[2] - pad.h),
            std::max<std::int64_t>(0, (y[3] - 1) * stride.w + ext_w - x[3] - pad.w)};
}

void dnnl_graph::pooling(const core::layer_analysis& la, dnnl::algorithm alg, core::pair2d kernel, core::pair2d stride,
                         core::pair2d pad, core::pair2d dilation, bool plain_dst) {
    // oneDNN's pooling visits every tap of every window, padding included: a kernel far larger than the input (100000
    // x 100000 over 5x5) would run for minutes on a few elements. Declined above 65,536 taps and 64 times the input's.
    const core::shape& x = la.input_shapes[0];
    const std::int64_t taps = kernel.h * kernel.w;  // fits: the op's FLOPs, a multiple, were counted in int64
    if (taps > 65536 && taps / 64 > x[2] * x[3])
        throw backend_api::unsupported(core::where(la.layer) + ": a " + std::to_string(kernel.h) + "x" +
                                    std::to_string(kernel.w) + " kernel over a " +
                                    std::to_string(x[2]) + "x" + std::to_string(x[3]) +
                                    " input: oneDNN's pooling visits all " + std::to_string(taps) +
                                    " taps of each window, padding included (declined above 65,536 taps and 64 times "
                                    "the input's)");
    const auto dt = to_dnnl(dt_);
    const memory src = dense_or_blocked(la.layer.inputs[0]);
    const core::shape& y = la.output_shape;
    const core::pair2d pr = right_padding(la, kernel, stride, pad, dilation);
    dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg, src.get_desc(),
                                     plain_dst ? plain_md(to_dims(y), dt) : any_md(to_dims(y), dt),
                                     {stride.h, stride.w}, {kernel.h, kernel.w}, {dilation.h - 1, dilation.w - 1},
                                     {pad.h, pad.w}, {pr.h, pr.w});
    dnnl::pooling_v2_forward::primitive_desc pd(d, attr(), engine_);
    record(pd);
    memory dst(pd.dst_desc(), engine_);
    steps_.push_back({dnnl::pooling_v2_forward(pd),
                      {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}},
                      {}});
    set_output(la.layer.name, dst);
}

/// A dilated window can hold only padding; PyTorch's max over no element is -inf (ATen's max_pool2d starts from
/// -inf and skips padding), oneDNN's is the lowest finite value. Those output positions are set to -inf after the
/// pooling (a plain output then, so that they are easy to find).
void dnnl_graph::add(const core::layer_analysis& la, const core::max_pool2d& op) {
    const core::shape& x = la.input_shapes[0];
    const core::shape& y = la.output_shape;
    auto empty_windows = [](std::int64_t out, std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t pad,
                            std::int64_t dilation) {
        std::vector<bool> empty(static_cast<std::size_t>(out), true);
        for (std::int64_t o = 0; o < out; ++o)
            for (std::int64_t t = 0; t < k; ++t) {
                const std::int64_t i = o * stride - pad + t * dilation;
                if (i >= 0 && i < in) empty[static_cast<std::size_t>(o)] = false;
            }
        return empty;
    };
    const auto rows = empty_windows(y[2], x[2], op.kernel_size.h, op.stride.h, op.padding.h, op.dilation.h);
    const auto cols = empty_windows(y[3], x[3], op.kernel_size.w, op.stride.w, op.padding.w, op.dilation.w);
    std::vector<std::int64_t> positions;  // oh * W_out + ow of each all-padding window
    for (std::int64_t oh = 0; oh < y[2]; ++oh)
        for (std::int64_t ow = 0; ow < y[3]; ++ow)
            if (rows[static_cast<std::size_t>(oh)] || cols[static_cast<std::size_t>(ow)])
                positions.push_back(oh * y[3] + ow);
    pooling(la, dnnl::algorithm::pooling_max, op.kernel_size, op.stride, op.padding, op.dilation, !positions.empty());
    if (positions.empty()) return;
    const memory dst = slots_.at(la.layer.name).mem;
    const std::int64_t planes = y[0] * y[1], plane = y[2] * y[3];
    const auto data_type = dst.get_desc().data_type();
    steps_.push_back({{}, {}, [dst, positions, planes, plane, data_type] {
                          auto* base = static_cast<unsigned char*>(dst.get_data_handle());
                          const std::uint32_t f32 = 0xff800000u;  // -inf in each format
                          const std::uint16_t b16 = 0xff80u, f16 = 0xfc00u;
                          const std::size_t es = memory::data_type_size(data_type);
                          const void* value = data_type == memory::data_type::f32    ? static_cast<const void*>(&f32)
                                              : data_type == memory::data_type::bf16 ? static_cast<const void*>(&b16)
                                                                                     : static_cast<const void*>(&f16);
                          for (std::int64_t p = 0; p < planes; ++p)
                              for (std::int64_t at : positions)
                                  std::memcpy(base + static_cast<std::size_t>(p * plane + at) * es, value, es);
                      }});
    notes_.emplace_back("ridgeline -inf for windows of padding only");
}

/// PyTorch's divisor with count_include_pad counts a window clipped to [-pad, in + pad), so the taps a ceil_mode
/// window hangs past in + pad are not counted (ATen's AvgPool2d: hend = min(hstart + kH, H + padH)). oneDNN's
/// include_padding counts every tap of the window, its exclude_padding only those inside the input. With no
/// padding PyTorch's rule is exclude_padding; where the right padding oneDNN needs stays within the symmetric
/// padding it is include_padding; otherwise include_padding followed by a multiply with kh*kw / PyTorch's divisor
/// per output position (a (1, 1, H_out, W_out) tensor, broadcast).
void dnnl_graph::add(const core::layer_analysis& la, const core::avg_pool2d& op) {
    const core::pair2d pr = right_padding(la, op.kernel_size, op.stride, op.padding, {1, 1});
    const bool no_padding = op.padding.h == 0 && op.padding.w == 0;
    pooling(la,
            op.count_include_pad && !no_padding ? dnnl::algorithm::pooling_avg_include_padding
                                                : dnnl::algorithm::pooling_avg_exclude_padding,
            op.kernel_size, op.stride, op.padding, {1, 1});
    if (!op.count_include_pad || no_padding || (pr.h <= op.padding.h && pr.w <= op.padding.w)) return;
    const core::shape& x = la.input_shapes[0];
    const core::shape& y = la.output_shape;
    auto extent = [](std::int64_t o, std::int64_t stride, std::int64_t pad, std::int64_t k, std::int64_t in) {
        const std::int64_t start = o * stride - pad;
        return std::min(start + k, in + pad) - start;
    };
    backend_api::host_tensor factor{core::shape{1, 1, y[2], y[3]}, {}};
    for (std::int64_t oh = 0; oh < y[2]; ++oh)
        for (std::int64_t ow = 0; ow < y[3]; ++ow)
            factor.data.push_back(static_cast<float>(op.kernel_size.h * op.kernel_size.w) /
                                  static_cast<float>(extent(oh, op.stride.h, op.padding.h, op.kernel_size.h, x[2]) *
                                                     extent(ow, op.stride.w, op.padding.w, op.kernel_size.w, x[3])));
    const auto dt = to_dnnl(dt_);
    const memory f = upload(factor, plain_md({1, 1, y[2], y[3]}, dt));
    const memory pooled = slots_.at(la.layer.name).mem;
    dnnl::binary::primitive_desc pd(
        dnnl::binary::desc(dnnl::algorithm::binary_mul, pooled.get_desc(), f.get_desc(), pooled.get_desc()), attr(),
        engine_);
    record(pd);
    memory dst(pd.dst_desc(), engine_);
    steps_.push_back(
        {dnnl::binary(pd),
         {{DNNL_ARG_SRC_0, pooled}, {DNNL_ARG_SRC_1, f}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}},
         {}});
    keep_.insert(keep_.end(), {pooled, f});
    set_output(la.layer.name, dst);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::adaptive_avg_pool2d& op) {
    const core::shape& x = la.input_shapes[0];
    if (x[2] % op.output_size.h != 0 || x[3] % op.output_size.w != 0) {
        adaptive_as_matmuls(la, op);
        return;
    }
    const core::pair2d k{x[2] / op.output_size.h, x[3] / op.output_size.w};
    pooling(la, dnnl::algorithm::pooling_avg_exclude_padding, k, k, {0, 0}, {1, 1});
}

/// Windows of different sizes (PyTorch's [floor(i*H/out), ceil((i+1)*H/out))), which oneDNN pooling cannot
/// express, as two matmuls with averaging matrices: the mean over a window is separable, so per (n, c) plane
/// Y = Ph X Pw with Ph[i][h] = 1/len_i on the rows of window i and Pw[w][j] = 1/len_j on its columns.
void dnnl_graph::adaptive_as_matmuls(const core::layer_analysis& la, const core::adaptive_avg_pool2d& op) {
    const auto dt = to_dnnl(dt_);
    const core::shape& x = la.input_shapes[0];
    const std::int64_t planes = x[0] * x[1], h = x[2], w = x[3], oh = op.output_size.h, ow = op.output_size.w;
    auto averaging = [](std::int64_t in, std::int64_t out, bool transposed) {
        backend_api::host_tensor m{transposed ? core::shape{1, in, out} : core::shape{1, out, in},
                                std::vector<float>(static_cast<std::size_t>(in * out), 0.0F)};
        for (std::int64_t i = 0; i < out; ++i) {
            const std::int64_t lo = (i * in) / out, hi = ((i + 1) * in + out - 1) / out;
            for (std::int64_t k = lo; k < hi; ++k)
                m.data[static_cast<std::size_t>(transposed ? k * out + i : i * in + k)] =
                    1.0F / static_cast<float>(hi - lo);
        }
        return m;
    };
    const memory pw = upload(averaging(w, ow, true), plain_md({1, w, ow}, dt));
    const memory ph = upload(averaging(h, oh, false), plain_md({1, oh, h}, dt));
    const memory in = dense(la.layer.inputs[0]);
    const memory rows(plain_md({1, planes * h, w}, dt), engine_, in.get_data_handle());
    memory mid(plain_md({1, planes * h, ow}, dt), engine_);
    dnnl::matmul::primitive_desc pd1(dnnl::matmul::desc(rows.get_desc(), pw.get_desc(), mid.get_desc()), attr(),
                                     engine_);
    record(pd1);
    steps_.push_back(
        {dnnl::matmul(pd1),
         {{DNNL_ARG_SRC, rows}, {DNNL_ARG_WEIGHTS, pw}, {DNNL_ARG_DST, mid}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd1)}},
         {}});
    const memory mid3(plain_md({planes, h, ow}, dt), engine_, mid.get_data_handle());
    memory dst(plain_md({planes, oh, ow}, dt), engine_);
    dnnl::matmul::primitive_desc pd2(dnnl::matmul::desc(ph.get_desc(), mid3.get_desc(), dst.get_desc()), attr(),
                                     engine_);
    record(pd2);
    steps_.push_back(
        {dnnl::matmul(pd2),
         {{DNNL_ARG_SRC, ph}, {DNNL_ARG_WEIGHTS, mid3}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd2)}},
         {}});
    keep_.insert(keep_.end(), {in, mid, dst, pw, ph});
    set_output(la.layer.name, memory(plain_md(to_dims(la.output_shape), dt), engine_, dst.get_data_handle()));
}

// ------------------------------------------------------------ data movement and views

void dnnl_graph::add(const core::layer_analysis& la, const core::concat& op) {
    const int axis = static_cast<int>(core::normalize_dim(op.dim, la.output_shape.rank(), core::where(la.layer)));
    std::vector<memory> srcs;
    std::vector<memory::desc> mds;
    for (const auto& t : la.layer.inputs) {
        srcs.push_back(dense_or_blocked(t));
        mds.push_back(srcs.back().get_desc());
    }
    dnnl::concat::primitive_desc pd(axis, mds, engine_, attr());
    record(pd);
    memory dst(pd.dst_desc(), engine_);
    std::unordered_map<int, memory> args{{DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}};
    for (std::size_t i = 0; i < srcs.size(); ++i) args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = srcs[i];
    steps_.push_back({dnnl::concat(pd), args, {}});
    set_output(la.layer.name, dst);
}

void dnnl_graph::reinterpret(const core::layer_analysis& la) {
    const memory src = dense(la.layer.inputs[0]);
    set_output(la.layer.name,
               memory(plain_md(to_dims(la.output_shape), src.get_desc().data_type()), engine_, src.get_data_handle()),
               false, true);
}

/// A held tensor: uploaded at prepare time (broadcast to `expand` on the host), like a model input.
void dnnl_graph::add(const core::layer_analysis& la, const core::parameter&) {
    const auto& host = data_->tensors.at(backend_api::param_key(la.layer, "value"));
    slot s;
    s.mem = upload(backend_api::broadcast_to(host, la.output_shape), plain_md(to_dims(la.output_shape), to_dnnl(dt_)));
    s.constant = true;
    slots_[la.layer.name] = s;
}

void dnnl_graph::add(const core::layer_analysis& la, const core::flatten&) { reinterpret(la); }

void dnnl_graph::add(const core::layer_analysis& la, const core::reshape&) { reinterpret(la); }

/// Source of a strided view: the tensor itself when plain or strided, else a dense copy.
memory dnnl_graph::viewable(const std::string& name) {
    const slot& s = slots_.at(name);
    if (!plain_strides(s.mem.get_desc()).empty()) return s.mem;
    return dense(name);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::transpose& op) {
    const memory src = viewable(la.layer.inputs[0]);
    const memory::desc md = src.get_desc();
    dims d = md.dims(), s = plain_strides(md);
    const std::size_t a = core::normalize_dim(op.dim0, d.size(), core::where(la.layer));
    const std::size_t b = core::normalize_dim(op.dim1, d.size(), core::where(la.layer));
    std::swap(d[a], d[b]);
    std::swap(s[a], s[b]);
    const memory::desc out(d, md.data_type(), s);
    set_output(la.layer.name, memory(out, engine_, src.get_data_handle()), !is_plain_dense(out), true);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::slice& op) {
    const memory src = viewable(la.layer.inputs[0]);
    const memory::desc md = src.get_desc();
    dims d = md.dims(), s = plain_strides(md);
    const std::size_t k = core::normalize_dim(op.dim, d.size(), core::where(la.layer));
    const std::int64_t size = d[k];
    std::int64_t start = op.start < 0 ? std::max<std::int64_t>(0, op.start + size) : std::min(op.start, size);
    const std::int64_t offset = start * s[k];
    d[k] = la.output_shape[k];
    s[k] *= op.step;
    auto* base = static_cast<unsigned char*>(src.get_data_handle()) +
                 static_cast<std::size_t>(offset) * memory::data_type_size(md.data_type());
    std::optional<memory::desc> out;
    try {
        out = memory::desc(d, md.data_type(), s);
    } catch (const dnnl::error&) {
        // oneDNN describes only strides whose dims do not interleave (a step wider than the next dim's extent,
        // e.g. every third column of 6x4 has strides 4, 3 over 6x2): copy those elements instead
    }
    if (out) {
        set_output(la.layer.name, memory(*out, engine_, base), !is_plain_dense(*out), true);
        return;
    }
    memory dst(plain_md(d, md.data_type()), engine_);
    const std::size_t es = memory::data_type_size(md.data_type());
    steps_.push_back({{}, {}, [base, dst, d, s, es] {
                          strided_gather(base, static_cast<unsigned char*>(dst.get_data_handle()), d, s, es);
                      }});
    notes_.emplace_back("ridgeline strided copy");
    keep_.push_back(src);
    set_output(la.layer.name, dst);
}

}  // namespace ridgeline::cpu::dnnl_detail
