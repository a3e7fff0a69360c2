// The oneDNN lowering of the transformer layers (dnnl_graph.hpp): rms_norm, rotary, attention, kv_cache.
// oneDNN 2.6 has no RMS normalisation, rotary embedding or fused attention: rms_norm and rotary are ridgeline's own
// loops over float32 and bf16 (no conversion steps around them; in bf16 with AVX-512 BF16 where the CPU has it:
// dnnl_bf16_rows.hpp), attention is oneDNN's matmul and softmax around a
// masking loop of ridgeline's, and the KV cache append is a oneDNN reorder into the cache's buffer. Each is named in
// the layer's notes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "dnnl_bf16_rows.hpp"
#include "dnnl_graph.hpp"
#include "dnnl_loops.hpp"
#include "ridgeline/core/error.hpp"

namespace ridgeline::cpu::dnnl_detail {

namespace {

/// One row of rms_norm: y = x / sqrt(mean(x^2) + eps) * w over `inner` values (the statistics in float32, as
/// LlamaRMSNorm), streamed if `stream` (write_run).
template <class T>
RIDGELINE_LOOP_CLONES void rms_row(const T* xr, T* yr, const float* w, std::int64_t inner, float eps, bool stream) {
    double sq = 0;  // blocks of fold_block values in float32, their sums in double (fold_block)
    for (std::int64_t b = 0; b < inner; b += fold_block)
        sq += fold_run(
            xr + b, std::min(fold_block, inner - b), 0.0f, [](auto v) RIDGELINE_LAMBDA_INLINE { return v * v; },
            [](auto a, auto c) RIDGELINE_LAMBDA_INLINE { return a + c; });
    const float inv = 1.0f / std::sqrt(static_cast<float>(sq / static_cast<double>(inner)) + eps);
    write_run(yr, 0, inner, stream, [&](T* o, std::int64_t lo, std::int64_t hi) RIDGELINE_LAMBDA_INLINE {
        if (w) {
#pragma omp simd
            for (std::int64_t i = lo; i < hi; ++i) store(o, i - lo, load(xr, i) * inv * w[i]);
        } else {
#pragma omp simd
            for (std::int64_t i = lo; i < hi; ++i) store(o, i - lo, load(xr, i) * inv);
        }
    });
}

/// rms_norm over `rows` rows of `inner` values, the rows split over the threads; an output past the last-level cache
/// streamed (write_run).
template <class T>
void rms_rows(const T* x, T* y, const float* w, std::int64_t rows, std::int64_t inner, float eps) {
    const bool stream = stream_output(rows * inner * static_cast<std::int64_t>(sizeof(T)));
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (std::int64_t r = 0; r < rows; ++r) {
            if constexpr (std::is_same_v<T, std::uint16_t>)
                if (rms_row_bf16(x + r * inner, y + r * inner, w, inner, eps, stream)) continue;
            rms_row(x + r * inner, y + r * inner, w, inner, eps, stream);
        }
        stream_fence();
    }
}

/// One rotate-half RoPE row of `dim` values, x read with element stride `e` (`unit`: e is 1, so the run vectorises
/// without gathers), y dense, each half a run (write_run, streamed if `stream`): y[i] = x1 c[i] - x2 s[i] and
/// y[i + half] = x2 c[i + half] + x1 s[i + half], x1 = x[i], x2 = x[i + half].
template <class T, bool unit>
RIDGELINE_LOOP_CLONES void rotary_row(const T* xr, std::int64_t e, T* yr, const float* c, const float* sn,
                                      std::int64_t dim, bool stream) {
    if (unit) e = 1;
    const std::int64_t half = dim / 2;
    write_run(yr, 0, half, stream, [&](T* o, std::int64_t lo, std::int64_t hi) RIDGELINE_LAMBDA_INLINE {
#pragma omp simd
        for (std::int64_t i = lo; i < hi; ++i) store(o, i - lo, load(xr, i * e) * c[i] - load(xr, (i + half) * e) * sn[i]);
    });
    write_run(yr, half, dim, stream, [&](T* o, std::int64_t lo, std::int64_t hi) RIDGELINE_LAMBDA_INLINE {
#pragma omp simd
        for (std::int64_t i = lo; i < hi; ++i) store(o, i - lo, load(xr, i * e) * c[i] + load(xr, (i - half) * e) * sn[i]);
    });
}

/// Rotate-half RoPE over x [B, H, S, D] read through its element strides `xs` (a transposed view is read in place),
/// written dense to y row by row (rotary_row; streamed past the last-level cache).
template <class T, bool unit>
void rotary_rows(const T* x, const dims& xs, T* y, const float* cos, const float* sin, const dims& d) {
    const std::int64_t heads = d[1], seq = d[2], dim = d[3];
    const bool stream = stream_output(d[0] * heads * seq * dim * static_cast<std::int64_t>(sizeof(T)));
#pragma omp parallel
    {
#pragma omp for collapse(2) schedule(static)
        for (std::int64_t b = 0; b < d[0]; ++b)
            for (std::int64_t h = 0; h < heads; ++h) {
                if constexpr (std::is_same_v<T, std::uint16_t> && unit)
                    if (rotary_slab_bf16(x + b * xs[0] + h * xs[1], xs[2], y + (b * heads + h) * seq * dim, cos, sin,
                                         seq, dim, stream))
                        continue;
                for (std::int64_t s = 0; s < seq; ++s)
                    rotary_row<T, unit>(x + b * xs[0] + h * xs[1] + s * xs[2], xs[3],
                                        y + ((b * heads + h) * seq + s) * dim, cos + s * dim, sin + s * dim, dim, stream);
            }
        stream_fence();
    }
}

}  // namespace

// ------------------------------------------------------------ rms_norm

void dnnl_graph::add(const core::layer_analysis& la, const core::rms_norm& op) {
    const auto dt = to_dnnl(dt_);
    if (dt != memory::data_type::f32 && dt != memory::data_type::bf16)
        throw backend_api::unsupported(core::where(la.layer) + ": ridgeline's rms_norm loop runs float32 and bf16 only");
    const memory x = dense(la.layer.inputs[0]);
    const std::int64_t inner = core::shape(op.normalized_shape).numel();
    const std::int64_t rows = la.input_shapes[0].numel() / inner;
    memory w;
    if (op.elementwise_affine) {
        w = upload_param(la.layer, "weight", plain_md({inner}, memory::data_type::f32), dims{inner});
        keep_.push_back(w);
    }
    memory y(plain_md(to_dims(la.output_shape), dt), engine_);
    const float eps = static_cast<float>(op.eps);
    steps_.push_back({{}, {}, [x, y, w, rows, inner, eps, dt] {
                          const auto* wp = w ? static_cast<const float*>(w.get_data_handle()) : nullptr;
                          if (dt == memory::data_type::f32)
                              rms_rows(static_cast<const float*>(x.get_data_handle()),
                                       static_cast<float*>(y.get_data_handle()), wp, rows, inner, eps);
                          else
                              rms_rows(static_cast<const std::uint16_t*>(x.get_data_handle()),
                                       static_cast<std::uint16_t*>(y.get_data_handle()), wp, rows, inner, eps);
                      }});
    notes_.emplace_back("ridgeline rms_norm loop");
    set_output(la.layer.name, y);
}

// ------------------------------------------------------------ rotary

void dnnl_graph::add(const core::layer_analysis& la, const core::rotary& op) {
    const auto dt = to_dnnl(dt_);
    if (dt != memory::data_type::f32 && dt != memory::data_type::bf16)
        throw backend_api::unsupported(core::where(la.layer) + ": ridgeline's rotary loop runs float32 and bf16 only");
    memory x = slots_.at(la.layer.inputs[0]).mem;
    dims xs = plain_strides(x.get_desc());
    if (xs.empty()) {  // blocked: a dense copy first
        x = dense(la.layer.inputs[0]);
        xs = row_major_strides(x.get_desc().dims());
    }
    const dims d = to_dims(la.output_shape);
    const core::rotary::tables t = op.make_tables(d[3], d[2]);
    memory cos(plain_md({d[2], d[3]}, memory::data_type::f32), engine_);
    memory sin(plain_md({d[2], d[3]}, memory::data_type::f32), engine_);
    std::memcpy(cos.get_data_handle(), t.cos.data(), t.cos.size() * sizeof(float));
    std::memcpy(sin.get_data_handle(), t.sin.data(), t.sin.size() * sizeof(float));
    keep_.push_back(cos);
    keep_.push_back(sin);
    memory y(plain_md(d, dt), engine_);
    steps_.push_back({{}, {}, [x, xs, y, cos, sin, d, dt] {
                          const auto* c = static_cast<const float*>(cos.get_data_handle());
                          const auto* s = static_cast<const float*>(sin.get_data_handle());
                          auto run = [&](auto* xp, auto* yp) {
                              using T = std::remove_cv_t<std::remove_pointer_t<decltype(xp)>>;
                              (xs[3] == 1 ? rotary_rows<T, true> : rotary_rows<T, false>)(xp, xs, yp, c, s, d);
                          };
                          if (dt == memory::data_type::f32)
                              run(static_cast<const float*>(x.get_data_handle()),
                                  static_cast<float*>(y.get_data_handle()));
                          else
                              run(static_cast<const std::uint16_t*>(x.get_data_handle()),
                                  static_cast<std::uint16_t*>(y.get_data_handle()));
                      }});
    notes_.emplace_back("ridgeline rotary loop");
    set_output(la.layer.name, y);
}

// ------------------------------------------------------------ attention

void dnnl_graph::add(const core::layer_analysis& la, const core::attention& op) {
    const auto dt = to_dnnl(dt_);
    const core::shape& qs = la.input_shapes[0];
    const core::shape& ks = la.input_shapes[1];
    const core::shape& vs = la.input_shapes[2];
    const std::int64_t batch = qs[0], heads = qs[1], sq = qs[2], d = qs[3];
    const std::int64_t kv_heads = ks[1], skv = ks[2], dv = vs[3];
    const std::int64_t groups = batch * kv_heads, rows = heads / kv_heads * sq;  // a kv head's query rows, grouped
    const memory q = dense(la.layer.inputs[0]);
    const memory k = dense(la.layer.inputs[1]);
    const memory v = dense(la.layer.inputs[2]);
    // scores = q k^T * scale: q as [B*KVH, G*Sq, D] (a kv head's query heads are adjacent), k read transposed in place
    const memory q3(memory::desc({groups, rows, d}, dt, tag::abc), engine_, q.get_data_handle());
    const memory kt(memory::desc({groups, d, skv}, dt, dims{skv * d, 1, d}), engine_, k.get_data_handle());
    memory scores(plain_md({groups, rows, skv}, memory::data_type::f32), engine_);
    dnnl::primitive_attr sa = attr();
    sa.set_output_scales(0, {static_cast<float>(op.scale_for(d))});
    dnnl::matmul::primitive_desc qk(dnnl::matmul::desc(q3.get_desc(), kt.get_desc(), scores.get_desc()), sa, engine_);
    record(qk);
    steps_.push_back({dnnl::matmul(qk),
                      {{DNNL_ARG_SRC, q3}, {DNNL_ARG_WEIGHTS, kt}, {DNNL_ARG_DST, scores},
                       {DNNL_ARG_SCRATCHPAD, scratchpad(qk)}},
                      {}});
    // the mask: the causal and window bounds as -inf (only the masked entries are written), or the additive mask
    // read through its broadcast strides
    if (op.is_causal) {
        const std::int64_t window = op.sliding_window;
        steps_.push_back({{}, {}, [scores, groups, rows, sq, skv, window] {
                              auto* s = static_cast<float*>(scores.get_data_handle());
                              const float ninf = -std::numeric_limits<float>::infinity();
#pragma omp parallel for collapse(2) schedule(static)
                              for (std::int64_t g = 0; g < groups; ++g)
                                  for (std::int64_t r = 0; r < rows; ++r) {
                                      const std::int64_t pos = skv - sq + r % sq;
                                      float* row = s + (g * rows + r) * skv;
                                      for (std::int64_t j = pos + 1; j < skv; ++j) row[j] = ninf;
                                      if (window > 0)
                                          for (std::int64_t j = 0; j <= pos - window; ++j) row[j] = ninf;
                                  }
                          }});
        notes_.emplace_back("ridgeline causal mask loop");
    } else if (la.input_shapes.size() == 4) {
        const core::shape& ms = la.input_shapes[3];
        const memory m = to_layout(la.layer.inputs[3], plain_md(to_dims(ms), memory::data_type::f32));
        const dims st = core::broadcast_strides(to_dims(ms), dims{batch, heads, sq, skv});
        steps_.push_back({{}, {}, [scores, m, st, batch, heads, sq, skv] {
                              auto* s = static_cast<float*>(scores.get_data_handle());
                              const auto* mp = static_cast<const float*>(m.get_data_handle());
#pragma omp parallel for collapse(2) schedule(static)
                              for (std::int64_t b = 0; b < batch; ++b)
                                  for (std::int64_t h = 0; h < heads; ++h)
                                      for (std::int64_t i = 0; i < sq; ++i) {
                                          float* row = s + ((b * heads + h) * sq + i) * skv;
                                          const float* mr = mp + b * st[0] + h * st[1] + i * st[2];
                                          if (st[3] == 0) {  // one value per row: a contiguous run either way
                                              const float m0 = mr[0];
#pragma omp simd
                                              for (std::int64_t j = 0; j < skv; ++j) row[j] += m0;
                                          } else {
#pragma omp simd
                                              for (std::int64_t j = 0; j < skv; ++j) row[j] += mr[j];
                                          }
                                      }
                          }});
        notes_.emplace_back("ridgeline mask loop");
    }
    // softmax over the keys, into the data type of the second matmul
    memory probs(plain_md({groups * rows, skv}, dt), engine_);
    const memory s2(plain_md({groups * rows, skv}, memory::data_type::f32), engine_, scores.get_data_handle());
    dnnl::softmax_v2_forward::primitive_desc sm(
        dnnl::softmax_v2_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::softmax_accurate,
                                       s2.get_desc(), probs.get_desc(), 1),
        attr(), engine_);
    record(sm);
    steps_.push_back({dnnl::softmax_v2_forward(sm),
                      {{DNNL_ARG_SRC, s2}, {DNNL_ARG_DST, probs}, {DNNL_ARG_SCRATCHPAD, scratchpad(sm)}},
                      {}});
    // out = probs v: [B*KVH, G*Sq, Skv] x [B*KVH, Skv, Dv] -> [B*KVH, G*Sq, Dv], which is [B, H, Sq, Dv]
    const memory p3(memory::desc({groups, rows, skv}, dt, tag::abc), engine_, probs.get_data_handle());
    const memory v3(memory::desc({groups, skv, dv}, dt, tag::abc), engine_, v.get_data_handle());
    memory out(plain_md(to_dims(la.output_shape), dt), engine_);
    const memory o3(memory::desc({groups, rows, dv}, dt, tag::abc), engine_, out.get_data_handle());
    dnnl::matmul::primitive_desc pv(dnnl::matmul::desc(p3.get_desc(), v3.get_desc(), o3.get_desc()), attr(), engine_);
    record(pv);
    steps_.push_back({dnnl::matmul(pv),
                      {{DNNL_ARG_SRC, p3}, {DNNL_ARG_WEIGHTS, v3}, {DNNL_ARG_DST, o3},
                       {DNNL_ARG_SCRATCHPAD, scratchpad(pv)}},
                      {}});
    // the scores and probabilities are the unfused kernel's intermediates: workspace
    workspace_ += static_cast<std::int64_t>(scores.get_desc().get_size() + probs.get_desc().get_size());
    keep_.push_back(scores);
    keep_.push_back(probs);
    set_output(la.layer.name, out);
}

// ------------------------------------------------------------ kv_cache

void dnnl_graph::add(const core::layer_analysis& la, const core::kv_cache& op) {
    const auto dt = to_dnnl(dt_);
    const dims full = to_dims(la.output_shape);
    memory cache = upload_param(la.layer, "cache", plain_md(full, dt));
    keep_.push_back(cache);
    // the new entries' place in the buffer: positions past .. past + new - 1 of every (batch, head)
    const std::int64_t len = op.past + op.new_tokens;
    auto* at = static_cast<unsigned char*>(cache.get_data_handle()) +
               static_cast<std::size_t>(op.past * op.head_dim) * memory::data_type_size(dt);
    const memory::desc dst_md({op.batch, op.num_heads, op.new_tokens, op.head_dim}, dt,
                              dims{op.num_heads * len * op.head_dim, len * op.head_dim, op.head_dim, 1});
    const memory dst(dst_md, engine_, at);
    memory src = slots_.at(la.layer.inputs[0]).mem;
    if (plain_strides(src.get_desc()).empty()) src = dense(la.layer.inputs[0]);
    dnnl::reorder::primitive_desc pd(engine_, src.get_desc(), engine_, dst_md);
    record(pd);
    steps_.push_back({dnnl::reorder(pd), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}}, {}});
    set_output(la.layer.name, cache);
    slots_.at(la.layer.name).holds_state = true;
}

}  // namespace ridgeline::cpu::dnnl_detail
