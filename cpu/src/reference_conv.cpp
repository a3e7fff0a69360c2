// The reference loops' convolution (reference_detail.hpp): torch.nn.Conv2d, tiled over output positions so that the
// oracle stays fast enough for the differential tests, accumulating in double.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "reference_detail.hpp"

namespace ridgeline::cpu::reference_detail {

namespace {
// ------------------------------------------------------------------ convolution

/// First output index o in [0, out_size) with o*stride + shift >= 0, and one past the last with
/// o*stride + shift < in_size: the outputs whose tap at offset `shift` lies inside the input.
std::pair<i64, i64> valid_outputs(i64 shift, i64 stride, i64 in_size, i64 out_size) {
    const i64 lo = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
    const i64 hi = in_size - 1 - shift < 0 ? 0 : (in_size - 1 - shift) / stride + 1;
    const i64 begin = std::min(lo, out_size);
    return {begin, std::max(begin, std::min(hi, out_size))};
}

/// Geometry of one conv2d call, index math hoisted out of the loops.
struct conv_plan {
    i64 height = 0, width = 0, out_h = 0, out_w = 0;
    i64 cin_per_group = 0, kh_size = 0, kw_size = 0, sh = 1, sw = 1;
    i64 weight_stride = 0;          // values per output channel: cin_per_group * kh * kw
    std::vector<i64> shift_h;       // ih = oh*sh + shift_h[kh]
    std::vector<i64> oh_begin, oh_end;
    std::vector<i64> shift_w;       // iw = ow*sw + shift_w[kw]
    std::vector<i64> ow_begin, ow_end;
};

/// a[b*tile + i] += w[b] * x[i*stride] for b < nb, i < len: one tap of the kernel for nb output channels,
/// written out per channel (no loop over b) so that the compiler keeps the weights in registers.
template <int nb>
inline void accumulate_tap(double* a, i64 tile, const double* w, const float* xs, i64 len, i64 stride) {
    static_assert(nb >= 1 && nb <= 4);
    double* a0 = a;
    [[maybe_unused]] double* a1 = nb > 1 ? a + tile : a;
    [[maybe_unused]] double* a2 = nb > 2 ? a + 2 * tile : a;
    [[maybe_unused]] double* a3 = nb > 3 ? a + 3 * tile : a;
    const double w0 = w[0];
    [[maybe_unused]] const double w1 = nb > 1 ? w[1] : 0.0;
    [[maybe_unused]] const double w2 = nb > 2 ? w[2] : 0.0;
    [[maybe_unused]] const double w3 = nb > 3 ? w[3] : 0.0;
    auto body = [&](i64 i, double xv) {
        a0[i] += w0 * xv;
        if constexpr (nb > 1) a1[i] += w1 * xv;
        if constexpr (nb > 2) a2[i] += w2 * xv;
        if constexpr (nb > 3) a3[i] += w3 * xv;
    };
    if (stride == 1) {
#pragma omp simd
        for (i64 i = 0; i < len; ++i) body(i, double{xs[i]});
    } else {
        for (i64 i = 0; i < len; ++i) body(i, double{xs[i * stride]});
    }
}

/// Sums of `nb` output channels over output rows [t0, t1) of one image, into acc[b][(oh - t0)*out_w + ow]:
/// for ic, kh, kw ascending, acc += W[oc0 + b, ic, kh, kw] * x[ic, ih, iw] over the taps inside the image.
/// The innermost loop walks an input row (the whole tile for a 1x1-like tap with stride 1), so it reads
/// contiguous memory and each of its iterations updates different accumulators.
template <int nb>
void conv_tile(const conv_plan& p, const float* x_group, const float* w_oc0, double* acc, i64 t0, i64 t1) {
    const i64 tile = (t1 - t0) * p.out_w;
    std::fill(acc, acc + nb * tile, 0.0);
    const i64 plane = p.height * p.width;
    for (i64 ic = 0; ic < p.cin_per_group; ++ic) {
        const float* x_plane = x_group + ic * plane;
        for (i64 kh = 0; kh < p.kh_size; ++kh) {
            const auto sk = static_cast<std::size_t>(kh);
            const i64 r0 = std::max(t0, p.oh_begin[sk]);
            const i64 r1 = std::min(t1, p.oh_end[sk]);
            if (r0 >= r1) continue;
            for (i64 kw = 0; kw < p.kw_size; ++kw) {
                const auto sc = static_cast<std::size_t>(kw);
                double wv[nb];
                for (int b = 0; b < nb; ++b)
                    wv[b] = w_oc0[b * p.weight_stride + (ic * p.kh_size + kh) * p.kw_size + kw];
                const i64 begin = p.ow_begin[sc], end = p.ow_end[sc];
                if (begin >= end) continue;  // this column of the kernel is in the padding for every ow
                if (p.sh == 1 && p.sw == 1 && begin == 0 && end == p.out_w && p.out_w == p.width &&
                    p.shift_w[sc] == 0) {
                    // Rows r0..r1 read rows r0 + shift_h.. of the input, whole and back to back: one loop.
                    const float* xs = x_plane + (r0 + p.shift_h[sk]) * p.width;
                    double* a = acc + (r0 - t0) * p.out_w;
                    accumulate_tap<nb>(a, tile, wv, xs, (r1 - r0) * p.out_w, 1);
                    continue;
                }
                for (i64 oh = r0; oh < r1; ++oh) {
                    const float* xs = x_plane + (oh * p.sh + p.shift_h[sk]) * p.width + begin * p.sw + p.shift_w[sc];
                    double* a = acc + (oh - t0) * p.out_w + begin;
                    accumulate_tap<nb>(a, tile, wv, xs, end - begin, p.sw);
                }
            }
        }
    }
}

/// torch.nn.Conv2d: y[n, oc, oh, ow] = b[oc] + sum_{ic, kh, kw} x[n, g*C/g + ic, ih, iw] * W[oc, ic, kh, kw]
/// with ih = oh*stride_h - pad_top + kh*dilation_h, iw = ow*stride_w - pad_left + kw*dilation_w, g = oc /
/// (out_channels/groups); taps in the padding add nothing. Summed over ic, kh, kw ascending.

}  // namespace

host_tensor conv2d_forward(const core::conv2d& op, const layer_io& io) {
    const host_tensor& in = io.input(0);
    const float* x = in.data.data();
    const float* w = io.param("weight");
    const float* bias = op.bias ? io.param("bias") : nullptr;
    const core::padding2d pad = op.resolved_padding();
    host_tensor out = io.make_output();
    float* y = out.data.data();

    conv_plan p;
    p.height = in.dims[2];
    p.width = in.dims[3];
    p.out_h = out.dims[2];
    p.out_w = out.dims[3];
    p.cin_per_group = op.in_channels / op.groups;
    p.kh_size = op.kernel_size.h;
    p.kw_size = op.kernel_size.w;
    p.sh = op.stride.h;
    p.sw = op.stride.w;
    p.weight_stride = p.cin_per_group * p.kh_size * p.kw_size;
    for (i64 kh = 0; kh < p.kh_size; ++kh) {
        p.shift_h.push_back(kh * op.dilation.h - pad.top);
        const auto [b, e] = valid_outputs(p.shift_h.back(), p.sh, p.height, p.out_h);
        p.oh_begin.push_back(b);
        p.oh_end.push_back(e);
    }
    for (i64 kw = 0; kw < p.kw_size; ++kw) {
        p.shift_w.push_back(kw * op.dilation.w - pad.left);
        const auto [b, e] = valid_outputs(p.shift_w.back(), p.sw, p.width, p.out_w);
        p.ow_begin.push_back(b);
        p.ow_end.push_back(e);
    }

    // Tasks: (image, group, block of up to 4 output channels, tile of output rows). A block shares each
    // input value among 4 sums; a tile keeps the block's sums (about 32 KiB of doubles) in cache.
    constexpr i64 max_block = 4;
    const i64 channels = in.dims[1];
    const i64 cout_per_group = op.out_channels / op.groups;
    const i64 blocks = (cout_per_group + max_block - 1) / max_block;
    const i64 tile_rows = std::clamp<i64>(1024 / p.out_w, 1, p.out_h);
    const i64 tiles = (p.out_h + tile_rows - 1) / tile_rows;
    const i64 tasks = out.dims[0] * op.groups * blocks * tiles;
#pragma omp parallel
    {
        std::vector<double> acc(static_cast<std::size_t>(max_block * tile_rows * p.out_w));
#pragma omp for schedule(static)
        for (i64 t = 0; t < tasks; ++t) {
            const i64 tile = t % tiles;
            const i64 block = (t / tiles) % blocks;
            const i64 g = (t / (tiles * blocks)) % op.groups;
            const i64 n = t / (tiles * blocks * op.groups);
            const i64 t0 = tile * tile_rows;
            const i64 t1 = std::min(p.out_h, t0 + tile_rows);
            const i64 oc0 = g * cout_per_group + block * max_block;
            const i64 nb = std::min(max_block, cout_per_group - block * max_block);
            const float* x_group = x + (n * channels + g * p.cin_per_group) * p.height * p.width;
            const float* w_oc0 = w + oc0 * p.weight_stride;
            double* a = acc.data();
            switch (nb) {
                case 4: conv_tile<4>(p, x_group, w_oc0, a, t0, t1); break;
                case 3: conv_tile<3>(p, x_group, w_oc0, a, t0, t1); break;
                case 2: conv_tile<2>(p, x_group, w_oc0, a, t0, t1); break;
                default: conv_tile<1>(p, x_group, w_oc0, a, t0, t1); break;
            }
            const i64 tile_size = (t1 - t0) * p.out_w;
            for (i64 b = 0; b < nb; ++b) {
                const double bv = bias ? double{bias[oc0 + b]} : 0.0;
                float* yo = y + ((n * out.dims[1] + oc0 + b) * p.out_h + t0) * p.out_w;
                const double* ab = a + b * tile_size;
                for (i64 i = 0; i < tile_size; ++i) yo[i] = static_cast<float>(ab[i] + bv);
            }
        }
    }
    return out;
}

}  // namespace ridgeline::cpu::reference_detail
