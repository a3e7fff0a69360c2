// The op-class models of a GPU (gpu_model.hpp, docs/roofline.md "Predicting another class of device").
#include "ridgeline/core/gpu_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <variant>

#include "ridgeline/core/layer.hpp"

namespace ridgeline::core {

namespace {

using i64 = std::int64_t;

double ceil_div(double a, double b) { return std::ceil(a / b); }

/// `v` with `decimals` fixed decimals ("%.*f"); 4 significant digits where `decimals` is negative ("%.4g").
std::string num(double v, int decimals = 0) {
    char buf[64];
    if (decimals < 0) std::snprintf(buf, sizeof buf, "%.4g", v);
    else std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

double attained_gbs(const gpu_spec& s) { return s.memory_fraction * s.memory_gbs; }

/// The product of every dimension but the last `keep`.
i64 leading(const shape& s, std::size_t keep) {
    i64 p = 1;
    for (std::size_t i = 0; i + keep < s.rank(); ++i) p *= s[i];
    return p;
}

/// The math path of scaled dot-product attention for one layer (PyTorch's when no fused kernel applies): the GEMM
/// q k^T over every pair, the scores scaled and masked in one pass (read and write), softmax (read and write), the
/// GEMM with v; each a kernel. Its GEMMs read q, k, v and write the output as the layer counts; the scores (B x H x
/// Sq x Skv in the dtype) are written by the first GEMM, read and written twice, and read by the second.
gpu_estimate attention_math_path(i64 bh, i64 sq, i64 skv, i64 d, double bytes, dtype dt, const gpu_spec& s) {
    const double scores = static_cast<double>(bh) * static_cast<double>(sq) * static_cast<double>(skv) *
                          static_cast<double>(size_bytes(dt));
    const gpu_estimate qk = gemm_on_gpu({bh, sq, skv, d}, bytes / 2 + scores, s);
    const gpu_estimate av = gemm_on_gpu({bh, sq, d, skv}, bytes / 2 + scores, s);
    const gpu_estimate mask = stream_on_gpu(2 * scores, s);
    const gpu_estimate softmax = stream_on_gpu(2 * scores, s);
    gpu_estimate e;
    e.time_ms = qk.time_ms + av.time_ms + mask.time_ms + softmax.time_ms;
    e.compute_ms = qk.compute_ms + av.compute_ms;
    e.memory_ms = qk.memory_ms + av.memory_ms + mask.memory_ms + softmax.memory_ms;
    e.kernels = 4;
    e.model = "attention math path";
    e.detail = "q k^T (" + qk.detail + ") + scale and mask, softmax (2 passes over " + num(scores / 1e6, -1) +
               " MB of scores) + scores v (" + av.detail + ")";
    return e;
}

gpu_estimate attention_on_gpu(const std::vector<shape>& in, dtype dt, const cost& c, const gpu_spec& s) {
    const shape& q = in.at(0);
    const shape& k = in.at(1);
    const i64 d = q[q.rank() - 1], sq = q[q.rank() - 2], skv = k[k.rank() - 2];
    const i64 bh = leading(q, 2);
    const auto bytes = static_cast<double>(c.bytes);
    if (!s.flash_attention) return attention_math_path(bh, sq, skv, d, bytes, dt, s);
    // a flash kernel: tiles of 128 query rows per (batch, head), waves over the SMs, the executed pairs' FLOPs at
    // its attained fraction; never faster than its bytes (q, k, v read once, the output written once)
    const double tiles = static_cast<double>(bh) * ceil_div(static_cast<double>(sq), 128);
    const double waves = ceil_div(tiles, s.sms);
    const double executed = static_cast<double>(c.executed_flops());
    const double rate = s.flash_fraction * s.matrix_gflops * 1e6;  // FLOP per ms
    const double compute = executed > 0 && rate > 0 ? executed / rate * (waves * s.sms / tiles) : 0.0;
    gpu_estimate e;
    e.memory_ms = bytes / (attained_gbs(s) * 1e6);
    e.compute_ms = compute;
    e.time_ms = s.launch_ms + std::max(compute, e.memory_ms);
    e.model = "flash attention";
    e.detail = num(tiles) + " tiles of 128 query rows in " + num(waves) + " waves of " + num(s.sms) + " SMs, " +
               num(100 * s.flash_fraction) + "% of the matrix peak";
    return e;
}

/// The GEMM a layer runs, where it is one: linear (rows x in -> out), matmul (its batch), conv2d (cuDNN's implicit
/// GEMM: rows N x Ho x Wo, columns out / groups, depth in / groups x kh x kw, one product per group).
std::optional<gemm_dims> gemm_of(const op& o, const std::vector<shape>& in, const shape& out) {
    if (const auto* l = std::get_if<linear>(&o)) return gemm_dims{1, out.numel() / l->out_features, l->out_features, l->in_features};
    if (std::holds_alternative<matmul>(o)) {
        const shape& a = in.at(0);
        const i64 m = out.rank() >= 2 ? out[out.rank() - 2] : 1, n = out[out.rank() - 1], k = a[a.rank() - 1];
        return gemm_dims{out.numel() / (m * n), m, n, k};
    }
    if (const auto* cv = std::get_if<conv2d>(&o)) {
        const i64 cin = cv->in_channels / cv->groups, cout = cv->out_channels / cv->groups;
        // a depthwise or nearly depthwise convolution (a handful of input channels per group) runs as a streaming
        // kernel, not a GEMM
        if (cin * cv->kernel_size.h * cv->kernel_size.w < 32 && cv->groups > 1) return std::nullopt;
        return gemm_dims{cv->groups, out[0] * out[2] * out[3], cout, cin * cv->kernel_size.h * cv->kernel_size.w};
    }
    return std::nullopt;
}

}  // namespace

gpu_spec gpu_spec_of(const datasheet_entry& e, dtype dt, double launch_ms) {
    gpu_spec s;
    s.name = std::string(e.device);
    s.sms = e.sms;
    s.matrix_gflops = e.peak_tflops(dt).value_or(0.0) * 1000.0;
    s.vector_gflops = e.fp32_tflops * 1000.0;
    s.memory_gbs = e.memory_bandwidth_gbs;
    s.gemm_fraction = gpu_gemm_fraction;
    s.memory_fraction = gpu_memory_fraction;
    s.launch_ms = launch_ms;
    s.flash_attention = (dt == dtype::fp16 || dt == dtype::bf16) && e.compute_capability >= 80;
    s.flash_fraction = e.compute_capability >= 90 ? flash_fraction_hopper : flash_fraction_ampere;
    return s;
}

namespace {

/// A GEMM of at most gpu_small_m_rows rows per product (a decode step's projections): no tile padding, its FLOPs at
/// the attained fraction of the matrix peak, its bytes (the weights, read once) at the attained bandwidth.
gpu_estimate small_m_gemm_on_gpu(const gemm_dims& g, const gpu_spec& s) {
    gpu_estimate e;
    const double flops = 2.0 * static_cast<double>(g.batch) * static_cast<double>(g.m) * static_cast<double>(g.n) *
                         static_cast<double>(g.k);
    e.compute_ms = flops / (s.gemm_fraction * s.matrix_gflops * 1e6);
    e.detail = "a small-M kernel (" + num(static_cast<double>(g.m)) + " rows, at most " + num(gpu_small_m_rows) +
               "): no tile padding, " + num(100 * s.gemm_fraction) + "% of the matrix peak";
    return e;
}

/// The best tile shape for `g` (the compute time and its detail), as a library's heuristic picks one.
gpu_estimate tiled_gemm_on_gpu(const gemm_dims& g, const gpu_spec& s) {
    struct tile {
        int m, n;
    };
    static constexpr tile tiles[] = {{256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64}};
    const double per_sm = s.gemm_fraction * s.matrix_gflops * 1e6 / s.sms;  // FLOP per ms of one SM
    gpu_estimate best;
    best.time_ms = -1;
    for (const tile t : tiles) {
        const double n_tiles = static_cast<double>(g.batch) * ceil_div(static_cast<double>(g.m), t.m) *
                               ceil_div(static_cast<double>(g.n), t.n);
        // split-K: where the tiles leave SMs idle, each takes a slice of k (at least 128 deep)
        const double split = n_tiles < s.sms ? std::max(1.0, std::min(std::floor(s.sms / n_tiles),
                                                                      std::floor(static_cast<double>(g.k) / 128)))
                                             : 1.0;
        const double waves = ceil_div(n_tiles * split, s.sms);
        const double reuse = std::min(1.0, static_cast<double>(t.m) * t.n / (t.m + t.n) / 64.0);
        const double tile_ms = 2.0 * t.m * t.n * (static_cast<double>(g.k) / split) / (per_sm * reuse);
        const double compute = waves * tile_ms;
        if (best.time_ms < 0 || compute < best.compute_ms) {
            best.compute_ms = compute;
            best.time_ms = compute;
            best.detail = num(n_tiles) + " tiles of " + num(t.m) + "x" + num(t.n) +
                          (split > 1 ? ", split-K " + num(split) + " ways" : std::string()) + ", " + num(waves) +
                          " waves of " + num(s.sms) + " SMs";
        }
    }
    best.detail += ", " + num(100 * s.gemm_fraction) + "% of the matrix peak";
    return best;
}

}  // namespace

gpu_estimate gemm_on_gpu(const gemm_dims& g, double bytes, const gpu_spec& s) {
    gpu_estimate best = g.m <= gpu_small_m_rows ? small_m_gemm_on_gpu(g, s) : tiled_gemm_on_gpu(g, s);
    best.memory_ms = bytes / (attained_gbs(s) * 1e6);
    best.time_ms = s.launch_ms + std::max(best.compute_ms, best.memory_ms);
    best.model = "gemm";
    // where the bytes take longer than the arithmetic, they decide the time: say so first
    if (best.memory_ms > best.compute_ms)
        best.detail = "its bytes decide: " + num(bytes / 1e6, -1) + " MB at " + num(100 * s.memory_fraction) + "% of " +
                      num(s.memory_gbs) + " GB/s (the arithmetic, " + best.detail + ", takes less)";
    return best;
}

gpu_estimate stream_on_gpu(double bytes, const gpu_spec& s) {
    gpu_estimate e;
    e.memory_ms = bytes / (attained_gbs(s) * 1e6);
    e.time_ms = s.launch_ms + e.memory_ms;
    e.model = "stream";
    e.detail = num(bytes / 1e6, -1) + " MB at " + num(100 * s.memory_fraction) + "% of " + num(s.memory_gbs) + " GB/s";
    return e;
}

gpu_estimate estimate_on_gpu(const op& o, const std::vector<shape>& inputs, const shape& output, dtype dt,
                             const cost& c, const gpu_spec& s) {
    if (is_view(o)) {
        gpu_estimate e;
        e.kernels = 0;
        e.model = "view";
        e.detail = "no kernel";
        return e;
    }
    if (std::holds_alternative<attention>(o)) return attention_on_gpu(inputs, dt, c, s);
    if (const auto g = gemm_of(o, inputs, output)) return gemm_on_gpu(*g, static_cast<double>(c.bytes), s);
    return stream_on_gpu(static_cast<double>(c.bytes), s);
}

}  // namespace ridgeline::core
