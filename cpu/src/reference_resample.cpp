// Reference loops of the resampling copies: torch.nn.functional.pad and torch.nn.functional.interpolate, element
// by element from their definitions (not from the per-axis tables the backends share, core::resample_coordinates).
#include <algorithm>
#include <cmath>

#include "reference_detail.hpp"

namespace ridgeline::cpu::reference_detail {

host_tensor pad_forward(const core::pad& op, const layer_io& io) {
    const host_tensor& in = io.input(0);
    host_tensor out = io.make_output();
    const std::size_t rank = in.dims.rank();
    const auto total = static_cast<i64>(out.data.size());
    for (i64 i = 0; i < total; ++i) {
        // output index -> input index per dimension; -1: outside the input (constant mode)
        i64 rem = i, src = 0, stride = 1;
        bool inside = true;
        for (std::size_t d = rank; d-- > 0;) {
            const i64 o = rem % io.out_shape()[d];
            rem /= io.out_shape()[d];
            const i64 size = in.dims[d];
            i64 s = o - op.of_dim(d, rank).first;
            if (s < 0 || s >= size) {
                switch (op.mode) {
                case core::pad::mode_t::constant: inside = false; break;
                case core::pad::mode_t::replicate: s = s < 0 ? 0 : size - 1; break;
                case core::pad::mode_t::reflect: s = s < 0 ? -s : 2 * (size - 1) - s; break;  // x[1] mirrors x[-1]
                }
            }
            src += s * stride;
            stride *= size;
        }
        out.data[static_cast<std::size_t>(i)] =
            inside ? in.data[static_cast<std::size_t>(src)] : static_cast<float>(op.value);
    }
    return out;
}

host_tensor interpolate_forward(const core::interpolate& op, const layer_io& io) {
    const host_tensor& in = io.input(0);
    host_tensor out = io.make_output();
    const i64 planes = in.dims[0] * in.dims[1], ih = in.dims[2], iw = in.dims[3];
    const i64 oh = op.size.h, ow = op.size.w;
    // PyTorch's rules, computed in float as ATen does for float tensors (UpSample.h)
    auto nearest = [](i64 o, i64 n_in, i64 n_out) {
        const float scale = static_cast<float>(n_in) / static_cast<float>(n_out);
        return std::min(static_cast<i64>(std::floor(static_cast<float>(o) * scale)), n_in - 1);
    };
    auto source = [&op](i64 o, i64 n_in, i64 n_out) {
        if (op.align_corners) {
            const float scale = n_out > 1 ? static_cast<float>(n_in - 1) / static_cast<float>(n_out - 1) : 0.0f;
            return scale * static_cast<float>(o);
        }
        const float s = static_cast<float>(n_in) / static_cast<float>(n_out) * (static_cast<float>(o) + 0.5f) - 0.5f;
        return s < 0 ? 0.0f : s;
    };
    for (i64 p = 0; p < planes; ++p) {
        const float* x = in.data.data() + p * ih * iw;
        float* y = out.data.data() + p * oh * ow;
        for (i64 r = 0; r < oh; ++r)
            for (i64 c = 0; c < ow; ++c) {
                if (op.mode == core::interpolate::mode_t::nearest) {
                    y[r * ow + c] = x[nearest(r, ih, oh) * iw + nearest(c, iw, ow)];
                    continue;
                }
                const float sr = source(r, ih, oh), sc = source(c, iw, ow);
                const i64 r0 = static_cast<i64>(sr), c0 = static_cast<i64>(sc);
                const i64 r1 = std::min(r0 + 1, ih - 1), c1 = std::min(c0 + 1, iw - 1);
                const double lr = sr - static_cast<float>(r0), lc = sc - static_cast<float>(c0);
                const double v = (1 - lr) * ((1 - lc) * x[r0 * iw + c0] + lc * x[r0 * iw + c1]) +
                                 lr * ((1 - lc) * x[r1 * iw + c0] + lc * x[r1 * iw + c1]);
                y[r * ow + c] = static_cast<float>(v);
            }
    }
    return out;
}

}  // namespace ridgeline::cpu::reference_detail
