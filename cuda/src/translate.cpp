#include "ridgeline/cuda/translate.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <utility>

#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/fusion.hpp"

namespace ridgeline::cuda {

// ------------------------------------------------------------------------------------------ data types

precision precision_of(core::dtype dt) {
    switch (dt) {
        case core::dtype::fp32:
            return {4, "CUDA_R_32F", "CUBLAS_COMPUTE_32F", "CUDNN_FMA_MATH", false, "fp32 (FMA, TF32 off)"};
        case core::dtype::tf32:
            return {4, "CUDA_R_32F", "CUBLAS_COMPUTE_32F_FAST_TF32", "CUDNN_TENSOR_OP_MATH", true,
                    "tf32 (fp32 storage, TF32 tensor cores)"};
        case core::dtype::fp16:
            return {2, "CUDA_R_16F", "CUBLAS_COMPUTE_32F", "CUDNN_TENSOR_OP_MATH", true,
                    "fp16 (tensor cores, fp32 accumulation)"};
        case core::dtype::bf16:
            return {2, "CUDA_R_16BF", "CUBLAS_COMPUTE_32F", "CUDNN_TENSOR_OP_MATH", true,
                    "bf16 (tensor cores, fp32 accumulation)"};
    }
    throw backend_api::backend_error("unknown data type");
}

bool math_allowed(core::dtype dt, std::string_view math, int compute_capability_major) {
    if (dt == core::dtype::fp32)
        return math == "CUDNN_FMA_MATH" || (math == "CUDNN_DEFAULT_MATH" && compute_capability_major < 8);
    return math != "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION";
}

// ------------------------------------------------------------------------------------------ GEMM

int to_int(std::int64_t v, std::string_view what) {
    if (v < 0 || v > INT_MAX)
        throw backend_api::unsupported(std::string(what) + " = " + std::to_string(v) +
                                    " does not fit the 32-bit int that cuBLAS and cuDNN take");
    return static_cast<int>(v);
}

gemm_shape linear_gemm(std::int64_t rows, std::int64_t in_features, std::int64_t out_features) {
    return gemm_shape{.trans_a = true,
                      .trans_b = false,
                      .m = out_features,
                      .n = rows,
                      .k = in_features,
                      .lda = in_features,
                      .ldb = in_features,
                      .ldc = out_features};
}

batched_gemm matmul_gemm(const core::shape& a, const core::shape& b, const core::shape& out) {
    if (a.rank() < 2 || b.rank() < 2 || out.rank() < 2)
        throw backend_api::backend_error("matmul: both inputs need rank >= 2 (got " + a.to_string() + " and " +
                                      b.to_string() + ")");
    const auto& da = a.dims();
    const auto& db = b.dims();
    const auto& dc = out.dims();
    const std::int64_t M = da[da.size() - 2], K = da[da.size() - 1], N = db[db.size() - 1];
    if (db[db.size() - 2] != K || dc[dc.size() - 2] != M || dc[dc.size() - 1] != N)
        throw backend_api::backend_error("matmul: shapes " + a.to_string() + " x " + b.to_string() + " -> " +
                                      out.to_string() + " do not agree");
    batched_gemm r;
    r.gemm = gemm_shape{.trans_a = false, .trans_b = false, .m = N, .n = M, .k = K, .lda = N, .ldb = K, .ldc = N};
    r.stride_c = M * N;
    const std::vector<std::int64_t> ba(da.begin(), da.end() - 2), bb(db.begin(), db.end() - 2),
        bc(dc.begin(), dc.end() - 2);
    r.batch = 1;
    for (auto d : bc) r.batch *= d;
    const auto sa = core::broadcast_strides(bb, bc, K * N);  // cuBLAS's A is the layer's B
    const auto sb = core::broadcast_strides(ba, bc, M * K);  // cuBLAS's B is the layer's A
    r.offset_a.assign(static_cast<std::size_t>(r.batch), 0);
    r.offset_b.assign(static_cast<std::size_t>(r.batch), 0);
    std::vector<std::int64_t> index(bc.size(), 0);
    for (std::int64_t i = 0; i < r.batch; ++i) {
        std::int64_t oa = 0, ob = 0;
        for (std::size_t d = 0; d < bc.size(); ++d) {
            oa += index[d] * sa[d];
            ob += index[d] * sb[d];
        }
        r.offset_a[static_cast<std::size_t>(i)] = oa;
        r.offset_b[static_cast<std::size_t>(i)] = ob;
        for (std::size_t d = bc.size(); d-- > 0;) {  // odometer, last dim fastest
            if (++index[d] < bc[d]) break;
            index[d] = 0;
        }
    }
    auto uniform = [](const std::vector<std::int64_t>& off, std::int64_t& stride) {
        stride = off.size() > 1 ? off[1] - off[0] : 0;
        for (std::size_t i = 0; i < off.size(); ++i)
            if (off[i] != static_cast<std::int64_t>(i) * stride) return false;
        return true;
    };
    r.uniform = uniform(r.offset_a, r.stride_a) && uniform(r.offset_b, r.stride_b);
    if (!r.uniform) r.stride_a = r.stride_b = 0;
    return r;
}

// ------------------------------------------------------------------------------------------ convolution

conv_params conv2d_params(const core::conv2d& op, const core::shape& in, const core::shape& out) {
    if (in.rank() != 4 || out.rank() != 4)
        throw backend_api::backend_error("conv2d: input and output must be NCHW (got " + in.to_string() + " -> " +
                                      out.to_string() + ")");
    const core::padding2d p = op.resolved_padding();
    conv_params c;
    c.n = in[0];
    c.c = in[1];
    c.in_h = in[2];
    c.in_w = in[3];
    c.k = op.out_channels;
    c.c_per_group = op.in_channels / op.groups;
    c.r = op.kernel_size.h;
    c.s = op.kernel_size.w;
    c.pad_h = std::min(p.top, p.bottom);
    c.pad_w = std::min(p.left, p.right);
    c.pre_top = p.top - c.pad_h;
    c.pre_bottom = p.bottom - c.pad_h;
    c.pre_left = p.left - c.pad_w;
    c.pre_right = p.right - c.pad_w;
    c.h = c.in_h + c.pre_top + c.pre_bottom;
    c.w = c.in_w + c.pre_left + c.pre_right;
    c.stride_h = op.stride.h;
    c.stride_w = op.stride.w;
    c.dilation_h = op.dilation.h;
    c.dilation_w = op.dilation.w;
    c.groups = op.groups;
    c.out_h = 1 + (c.h + 2 * c.pad_h - ((c.r - 1) * c.dilation_h + 1)) / c.stride_h;
    c.out_w = 1 + (c.w + 2 * c.pad_w - ((c.s - 1) * c.dilation_w + 1)) / c.stride_w;
    if (out[0] != c.n || out[1] != c.k || out[2] != c.out_h || out[3] != c.out_w)
        throw backend_api::backend_error("conv2d: cuDNN's output " + std::to_string(c.n) + "x" + std::to_string(c.k) + "x" +
                                      std::to_string(c.out_h) + "x" + std::to_string(c.out_w) +
                                      " differs from the layer's " + out.to_string());
    return c;
}

// ------------------------------------------------------------------------------------------ fused groups

namespace {

/// The activation the producer's call can apply for `o`, or the reason it cannot (translate.hpp, fused_plan).
std::optional<fused_activation> library_activation(const core::op& o, fused_plan::call library, std::string& why) {
    if (std::holds_alternative<core::relu>(o)) return fused_activation::relu;
    const auto* g = std::get_if<core::gelu>(&o);
    if (library == fused_plan::call::cublaslt_matmul && g && g->tanh_approximation) return fused_activation::gelu_tanh;
    if (library == fused_plan::call::cublaslt_matmul)
        why = g ? "cuBLASLt's GELU epilogue is the tanh approximation; this gelu is the exact (erf) one"
                : "cuBLASLt's epilogues apply relu or gelu only";
    else
        why = "cudnnConvolutionBiasActivationForward applies relu or identity only";
    return std::nullopt;
}

}  // namespace

fused_plan plan_fused(const core::layer_analysis& group, core::dtype dt) {
    if (group.fused.empty()) throw core::error(core::where(group.layer) + ": not a fused group (no members)");
    const core::op& producer = group.fused.front().layer.op;
    fused_plan p;
    if (const auto* conv = std::get_if<core::conv2d>(&producer)) {
        p.bias = conv->bias;
    } else if (const auto* lin = std::get_if<core::linear>(&producer)) {
        p.library = fused_plan::call::cublaslt_matmul;
        p.bias = lin->bias;
    } else if (std::holds_alternative<core::matmul>(producer)) {
        p.library = fused_plan::call::cublaslt_matmul;
    } else {
        throw core::error(core::where(group.layer) + ": a fused group's producer is a conv2d, linear or matmul");
    }
    const bool conv = p.library == fused_plan::call::cudnn_conv_bias_activation;
    for (std::size_t k = 1; k < group.fused.size(); ++k) {
        const core::op& o = group.fused[k].layer.op;
        if (p.activation != fused_activation::none) {
            p.after = "the call applies one activation, its last step";
        } else if (conv && dt == core::dtype::bf16 && !(k == 1 && std::holds_alternative<core::batch_norm2d>(o))) {
            p.after = "bf16: cudnnConvolutionBiasActivationForward is not confirmed for bfloat16";
        } else {
            switch (core::rule_of(group, k)) {
                case core::fusion_rule::fold_batch_norm:
                    p.fold_batch_norm = p.bias = true;  // folded at prepare time, before any post-op
                    p.library_members = k + 1;
                    continue;
                case core::fusion_rule::sum_post_op:
                    if (p.residual) {
                        p.after = "the call adds one residual";
                        break;
                    }
                    if (const auto& in = group.fused[k].input_shapes; in.size() == 2 && in[0] != in[1]) {
                        p.after = std::string("the residual add broadcasts: the call's ") + (conv ? "z" : "C") +
                                  " has the output's shape";
                        break;
                    }
                    p.residual = k;
                    p.library_members = k + 1;
                    continue;
                case core::fusion_rule::activation_post_op:
                    if (const auto a = library_activation(o, p.library, p.after)) {
                        p.activation = *a;
                        p.library_members = k + 1;
                        continue;
                    }
                    break;
            }
        }
        break;  // this member and every one after it run as own kernels
    }
    p.implicit_precomp_gemm_only = conv && p.activation == fused_activation::none;
    return p;
}

// ------------------------------------------------------------------------------------------ pooling

namespace {

std::int64_t right_pad(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride,
                       std::int64_t pad, std::int64_t dilation) {
    const std::int64_t extent = (kernel - 1) * dilation + 1;
    return std::max<std::int64_t>(0, (out - 1) * stride + extent - in - pad);
}

pool_params base_pool(const core::shape& in, const core::shape& out) {
    if (in.rank() != 4 || out.rank() != 4)
        throw backend_api::backend_error("pooling: input and output must be NCHW (got " + in.to_string() + " -> " +
                                      out.to_string() + ")");
    pool_params p;
    p.planes = in[0] * in[1];
    p.in_h = in[2];
    p.in_w = in[3];
    p.out_h = out[2];
    p.out_w = out[3];
    return p;
}

}  // namespace

namespace {

/// A pooling window (avg_pool2d has no dilation: {1, 1}) and the right-hand pads it needs.
pool_params window_pool(const core::shape& in, const core::shape& out, core::pair2d kernel, core::pair2d stride,
                        core::pair2d padding, core::pair2d dilation) {
    pool_params p = base_pool(in, out);
    p.kernel_h = kernel.h;
    p.kernel_w = kernel.w;
    p.stride_h = stride.h;
    p.stride_w = stride.w;
    p.pad_h = padding.h;
    p.pad_w = padding.w;
    p.dilation_h = dilation.h;
    p.dilation_w = dilation.w;
    p.pad_bottom = right_pad(p.in_h, p.out_h, p.kernel_h, p.stride_h, p.pad_h, p.dilation_h);
    p.pad_right = right_pad(p.in_w, p.out_w, p.kernel_w, p.stride_w, p.pad_w, p.dilation_w);
    return p;
}

}  // namespace

pool_params max_pool_params(const core::max_pool2d& op, const core::shape& in, const core::shape& out) {
    return window_pool(in, out, op.kernel_size, op.stride, op.padding, op.dilation);
}

pool_params avg_pool_params(const core::avg_pool2d& op, const core::shape& in, const core::shape& out) {
    pool_params p = window_pool(in, out, op.kernel_size, op.stride, op.padding, {1, 1});
    p.count_include_pad = op.count_include_pad;
    return p;
}

pool_params adaptive_pool_params(const core::shape& in, const core::shape& out) {
    pool_params p = base_pool(in, out);
    p.count_include_pad = false;
    return p;
}

// ------------------------------------------------------------------------------------------ layouts

std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& dims) {
    std::vector<std::int64_t> s(dims.size(), 1);
    for (std::size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
    return s;
}

strided_view dense_view(const core::shape& s) { return {s.dims(), row_major_strides(s.dims()), 0}; }

bool is_dense(const strided_view& v) {
    // dims of size 1 may carry any stride
    const auto want = row_major_strides(v.dims);
    for (std::size_t i = 0; i < v.dims.size(); ++i)
        if (v.dims[i] != 1 && v.strides[i] != want[i]) return false;
    return true;
}

strided_view transpose_view(const strided_view& v, std::int64_t dim0, std::int64_t dim1) {
    strided_view t = v;
    const std::size_t a = core::normalize_dim(dim0, v.dims.size(), "transpose");
    const std::size_t b = core::normalize_dim(dim1, v.dims.size(), "transpose");
    std::swap(t.dims[a], t.dims[b]);
    std::swap(t.strides[a], t.strides[b]);
    return t;
}

strided_view slice_view(const strided_view& v, const core::slice& op, std::int64_t size) {
    strided_view t = v;
    const std::size_t d = core::normalize_dim(op.dim, v.dims.size(), "slice");
    const std::int64_t n = v.dims[d];
    std::int64_t start = op.start;
    if (start < 0) start = start < -n ? 0 : start + n;
    start = std::min(start, n);
    t.offset += start * v.strides[d];
    t.dims[d] = size;
    t.strides[d] = v.strides[d] * op.step;
    return t;
}

std::vector<std::int64_t> broadcast_strides(const core::shape& in, const core::shape& out) {
    return core::broadcast_strides(in.dims(), out.dims());
}

strided_walk coalesce(const strided_walk& w) {
    strided_walk r;
    for (std::size_t d = 0; d < w.dims.size(); ++d) {
        if (w.dims[d] == 1) continue;
        if (!r.dims.empty()) {
            const std::size_t last = r.dims.size() - 1;
            if (r.strides_a[last] == w.strides_a[d] * w.dims[d] && r.strides_b[last] == w.strides_b[d] * w.dims[d]) {
                r.dims[last] *= w.dims[d];
                r.strides_a[last] = w.strides_a[d];
                r.strides_b[last] = w.strides_b[d];
                continue;
            }
        }
        r.dims.push_back(w.dims[d]);
        r.strides_a.push_back(w.strides_a[d]);
        r.strides_b.push_back(w.strides_b[d]);
    }
    if (r.dims.empty()) {
        r.dims = {1};
        r.strides_a = {0};
        r.strides_b = {0};
    }
    return r;
}

axis_split split_at(const core::shape& s, std::int64_t dim) {
    const std::size_t d = core::normalize_dim(dim, s.rank(), "softmax");
    axis_split a;
    for (std::size_t i = 0; i < s.rank(); ++i) {
        if (i < d) a.outer *= s[i];
        else if (i == d) a.size = s[i];
        else a.inner *= s[i];
    }
    return a;
}

// ------------------------------------------------------------------------------------------ algorithms

std::optional<std::size_t> pick_fastest(const std::vector<algo_candidate>& candidates, std::int64_t workspace_limit,
                                        double keep_order_within) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const auto& c = candidates[i];
        if (!c.ran || !c.allowed || c.workspace_bytes > workspace_limit || !(c.time_ms >= 0)) continue;
        if (!best) {
            best = i;
            continue;
        }
        const auto& b = candidates[*best];
        if (keep_order_within > 0) {
            if (c.time_ms < b.time_ms * (1.0 - keep_order_within)) best = i;
        } else if (c.time_ms < b.time_ms || (c.time_ms == b.time_ms && c.workspace_bytes < b.workspace_bytes)) {
            best = i;
        }
    }
    return best;
}

double event_resolution_ns(std::vector<double> readings_ns, double documented_ns) {
    std::sort(readings_ns.begin(), readings_ns.end());
    double best = 0;
    for (std::size_t i = 0; i < readings_ns.size(); ++i) {
        const double step = i == 0 ? readings_ns[0] : readings_ns[i] - readings_ns[i - 1];
        if (step > 0 && std::isfinite(step) && (best == 0 || step < best)) best = step;
    }
    return best > 0 ? best : documented_ns;
}

double mean_clock_mhz(std::uint64_t start_ns, std::uint64_t start_cycles, std::uint64_t stop_ns,
                      std::uint64_t stop_cycles) {
    if (start_ns == 0 || stop_ns <= start_ns || stop_cycles <= start_cycles) return 0.0;
    return static_cast<double>(stop_cycles - start_cycles) / static_cast<double>(stop_ns - start_ns) * 1e3;
}

std::string clock_event_reasons_text(std::uint64_t mask) {
    static constexpr std::pair<std::uint64_t, const char*> names[] = {
        {0x1, "GPU idle"},           {0x2, "application clocks setting"}, {0x4, "power cap"},
        {0x8, "hardware slowdown"},  {0x10, "sync boost"},                {0x20, "thermal (software)"},
        {0x40, "thermal (hardware)"}, {0x80, "power brake"},               {0x100, "display clock setting"}};
    if (mask == 0) return "none";
    std::string out;
    for (const auto& [bit, name] : names)
        if (mask & bit) {
            out += (out.empty() ? "" : ", ") + std::string(name);
            mask &= ~bit;
        }
    if (mask != 0) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(mask));
        out += (out.empty() ? "other " : ", other ") + std::string(buf);
    }
    return out;
}

int calls_per_window(double one_call_ms, double window_ms, int max_calls) {
    if (!(one_call_ms > 0) || !std::isfinite(one_call_ms)) return max_calls;
    const double calls = std::ceil(window_ms / one_call_ms - 1e-9);  // a window that is a whole number of calls
    return calls >= max_calls ? max_calls : std::max(1, static_cast<int>(calls));
}

std::string format_bytes(std::int64_t bytes) {
    char buf[64];
    const double b = static_cast<double>(bytes);
    if (bytes < 1024)
        std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
    else if (bytes < 1024 * 1024)
        std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
    else if (bytes < 1024LL * 1024 * 1024)
        std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1024.0 * 1024.0));
    else
        std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

std::string describe_choice(std::string_view library, const std::vector<algo_candidate>& candidates,
                            std::size_t chosen) {
    const algo_candidate& c = candidates.at(chosen);
    std::size_t tried = 0;
    for (const auto& k : candidates) tried += k.ran ? 1 : 0;
    std::string s(library);
    s += " " + c.name;
    if (!c.math.empty()) s += " " + c.math;
    s += " ws " + format_bytes(c.workspace_bytes);
    s += " (fastest of " + std::to_string(tried) + ")";
    return s;
}

std::string conv_fwd_algo_name(int algo) {
    // cudnnConvolutionFwdAlgo_t, cudnn_ops.h (values checked against the header in cuda_graph.cpp)
    static const char* const names[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                                        "FFT",           "FFT_TILING",            "WINOGRAD", "WINOGRAD_NONFUSED"};
    if (algo >= 0 && algo < static_cast<int>(std::size(names))) return names[algo];
    return "ALGO_" + std::to_string(algo);
}

// ------------------------------------------------------------------------------------------ ceilings

double gemm_gflops(std::int64_t m, std::int64_t n, std::int64_t k, double time_ms) {
    if (!(time_ms > 0)) return 0;
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / (time_ms * 1e-3) / 1e9;
}

double copy_gbs(std::int64_t bytes, double time_ms) {
    if (!(time_ms > 0)) return 0;
    return 2.0 * static_cast<double>(bytes) / (time_ms * 1e-3) / 1e9;
}

double theoretical_bandwidth_gbs(std::int64_t memory_clock_khz, std::int64_t bus_width_bits) {
    return 2.0 * static_cast<double>(memory_clock_khz) * 1e3 * static_cast<double>(bus_width_bits) / 8.0 / 1e9;
}

std::int64_t flush_bytes(std::int64_t l2_bytes) {
    const std::int64_t mib = 1 << 20;
    const std::int64_t want = std::max<std::int64_t>(2 * l2_bytes, 8 * mib);
    return (want + mib - 1) / mib * mib;
}

std::int64_t copy_bench_bytes(std::int64_t l2_bytes, std::int64_t free_bytes, bool quick) {
    const std::int64_t mib = 1 << 20;
    std::int64_t want = std::max<std::int64_t>(8 * l2_bytes, (quick ? 64 : 256) * mib);
    if (free_bytes > 0) want = std::min(want, free_bytes / 4);
    return std::max<std::int64_t>(mib, want / mib * mib);
}

std::vector<std::int64_t> working_set_sizes(std::int64_t max_bytes) {
    std::vector<std::int64_t> sizes;
    for (std::int64_t s = 256 * 1024; s <= max_bytes; s *= 2) sizes.push_back(s);
    return sizes;
}

std::int64_t roof_gemm_size(core::dtype dt, bool quick) {
    const std::int64_t full = dt == core::dtype::fp32 ? 4096 : 8192;
    return quick ? full / 4 : full;
}

}  // namespace ridgeline::cuda
