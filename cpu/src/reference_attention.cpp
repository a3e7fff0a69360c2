// Reference loops of the transformer layers (reference_detail.hpp): rms_norm, rotary, attention, kv_cache, each as
// Hugging Face's modelling code computes it (the source is named at each), accumulating in double.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "reference_detail.hpp"

namespace ridgeline::cpu::reference_detail {

/// LlamaRMSNorm (modeling_llama.py): y = x / sqrt(mean(x^2) + eps) * weight over the trailing
/// numel(normalized_shape) values of each row.
host_tensor rms_norm_forward(const core::rms_norm& op, const layer_io& io) {
    const host_tensor& in = io.input(0);
    const float* gamma = op.elementwise_affine ? io.param("weight") : nullptr;
    host_tensor out = io.make_output();
    const i64 inner = core::shape(op.normalized_shape).numel();
    const i64 rows = in.dims.numel() / inner;
    for (i64 r = 0; r < rows; ++r) {
        const float* xr = in.data.data() + r * inner;
        float* yr = out.data.data() + r * inner;
        double sq = 0;
        for (i64 i = 0; i < inner; ++i) sq += static_cast<double>(xr[i]) * xr[i];
        const double inv_rms = 1.0 / std::sqrt(sq / static_cast<double>(inner) + op.eps);
        for (i64 i = 0; i < inner; ++i) yr[i] = static_cast<float>(xr[i] * inv_rms * (gamma ? gamma[i] : 1.0));
    }
    return out;
}

/// apply_rotary_pos_emb (modeling_llama.py): q * cos + rotate_half(q) * sin, rotate_half(x) = cat(-x2, x1), with the
/// tables core::rotary::make_tables gives every backend.
host_tensor rotary_forward(const core::rotary& op, const layer_io& io) {
    const host_tensor& in = io.input(0);
    host_tensor out = io.make_output();
    const i64 seq = in.dims[2], dim = in.dims[3], half = dim / 2;
    const core::rotary::tables t = op.make_tables(dim, seq);
    const i64 rows = in.dims[0] * in.dims[1];
    for (i64 r = 0; r < rows; ++r)
        for (i64 s = 0; s < seq; ++s) {
            const float* x = in.data.data() + (r * seq + s) * dim;
            float* y = out.data.data() + (r * seq + s) * dim;
            const float* c = t.cos.data() + s * dim;
            const float* sn = t.sin.data() + s * dim;
            for (i64 i = 0; i < half; ++i) {
                const double x1 = x[i], x2 = x[i + half];
                y[i] = static_cast<float>(x1 * c[i] - x2 * sn[i]);
                y[i + half] = static_cast<float>(x2 * c[i + half] + x1 * sn[i + half]);
            }
        }
    return out;
}

/// torch.nn.functional.scaled_dot_product_attention with grouped-query heads (repeat_kv): per query row, the scores
/// q.k * scale (+ mask), a softmax over the keys the causal mask and window keep (core::attention::keeps), then
/// the weighted sum of the values. A row whose every score is -inf gives NaN, as PyTorch's softmax does.
host_tensor attention_forward(const core::attention& op, const layer_io& io) {
    const host_tensor& q = io.input(0);
    const host_tensor& k = io.input(1);
    const host_tensor& v = io.input(2);
    const host_tensor* mask = io.input_count() == 4 ? &io.input(3) : nullptr;
    host_tensor out = io.make_output();
    const i64 batch = q.dims[0], heads = q.dims[1], sq = q.dims[2], d = q.dims[3];
    const i64 kv_heads = k.dims[1], skv = k.dims[2], dv = v.dims[3];
    const i64 group = heads / kv_heads;
    const double scale = op.scale_for(d);
    std::vector<i64> mstride(4, 0);
    if (mask) {  // the mask's strides against the scores' dims, right-aligned, 0 where it broadcasts
        const auto& md = mask->dims.dims();
        i64 st = 1;
        for (std::size_t i = md.size(); i-- > 0;) {
            const std::size_t o = 4 - md.size() + i;
            mstride[o] = md[i] == 1 ? 0 : st;
            st *= md[i];
        }
    }
    std::vector<double> p(static_cast<std::size_t>(skv));
    for (i64 b = 0; b < batch; ++b)
        for (i64 h = 0; h < heads; ++h) {
            const i64 kh = h / group;
            const float* kb = k.data.data() + (b * kv_heads + kh) * skv * d;
            const float* vb = v.data.data() + (b * kv_heads + kh) * skv * dv;
            for (i64 i = 0; i < sq; ++i) {
                const float* qi = q.data.data() + ((b * heads + h) * sq + i) * d;
                double top = -std::numeric_limits<double>::infinity();
                for (i64 j = 0; j < skv; ++j) {
                    double s = -std::numeric_limits<double>::infinity();
                    if (op.keeps(i, j, sq, skv)) {
                        double dot = 0;
                        for (i64 e = 0; e < d; ++e) dot += static_cast<double>(qi[e]) * kb[j * d + e];
                        s = dot * scale;
                        if (mask) s += mask->data[static_cast<std::size_t>(b * mstride[0] + h * mstride[1] + i * mstride[2] + j * mstride[3])];
                    }
                    p[static_cast<std::size_t>(j)] = s;
                    top = std::max(top, s);
                }
                double sum = 0;
                for (auto& s : p) {
                    s = std::exp(s - top);
                    sum += s;
                }
                float* yi = out.data.data() + ((b * heads + h) * sq + i) * dv;
                for (i64 e = 0; e < dv; ++e) {
                    double acc = 0;
                    for (i64 j = 0; j < skv; ++j) acc += p[static_cast<std::size_t>(j)] * vb[j * dv + e];
                    yi[e] = static_cast<float>(acc / sum);
                }
            }
        }
    return out;
}

/// A StaticCache's update: the held buffer with the new entries written at positions past .. past + new - 1.
host_tensor kv_cache_forward(const core::kv_cache& op, const layer_io& io) {
    const host_tensor& in = io.input(0);
    host_tensor out = io.make_output();
    const float* cache = io.param("cache");
    out.data.assign(cache, cache + out.dims.numel());
    const i64 len = op.past + op.new_tokens;
    for (i64 r = 0; r < op.batch * op.num_heads; ++r)
        for (i64 s = 0; s < op.new_tokens; ++s)
            for (i64 e = 0; e < op.head_dim; ++e)
                out.data[static_cast<std::size_t>((r * len + op.past + s) * op.head_dim + e)] =
                    in.data[static_cast<std::size_t>((r * op.new_tokens + s) * op.head_dim + e)];
    return out;
}

}  // namespace ridgeline::cpu::reference_detail
