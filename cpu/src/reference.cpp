// Reference loops: every op of core::op computed as PyTorch defines it, accumulating in double.
// One handler per op type, dispatched with std::visit: an op without a handler does not compile.
// Formulas: the PyTorch documentation of each module (torch.nn.Conv2d, torch.nn.AvgPool2d, ...); where
// PyTorch's exact rule is only in its source, the file is named next to the code.
#include "ridgeline/cpu/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/core/error.hpp"
#include "reference_detail.hpp"

namespace ridgeline::cpu {
namespace {

using namespace reference_detail;

// ------------------------------------------------------------------ index helpers

/// Row-major strides of `dims` (elements).
std::vector<i64> strides_of(const std::vector<i64>& dims) {
    std::vector<i64> s(dims.size(), 1);
    for (std::size_t d = dims.size(); d-- > 1;) s[d - 1] = s[d] * dims[d];
    return s;
}

using core::broadcast_strides;

/// Calls f(i, offset_a, offset_b) for every element i of `out` in row-major order, where offset_x is
/// base_x + sum_d index_d * strides_x[d]: the element of input x that output element i reads.
template <class F>
void for_each_element(const std::vector<i64>& out, i64 base_a, const std::vector<i64>& strides_a, i64 base_b,
                      const std::vector<i64>& strides_b, F&& f) {
    const std::size_t rank = out.size();
    if (rank == 0) {
        f(i64{0}, base_a, base_b);
        return;
    }
    i64 total = 1;
    for (const i64 d : out) total *= d;
    const i64 inner = out[rank - 1];
    const i64 inner_a = strides_a[rank - 1];
    const i64 inner_b = strides_b[rank - 1];
    std::vector<i64> index(rank, 0);
    i64 oa = base_a;
    i64 ob = base_b;
    for (i64 i = 0; i < total; i += inner) {
        for (i64 j = 0; j < inner; ++j) f(i + j, oa + j * inner_a, ob + j * inner_b);
        for (std::size_t d = rank - 1; d-- > 0;) {  // odometer over the outer dims
            ++index[d];
            oa += strides_a[d];
            ob += strides_b[d];
            if (index[d] < out[d]) break;
            oa -= strides_a[d] * out[d];
            ob -= strides_b[d] * out[d];
            index[d] = 0;
        }
    }
}

/// out[i] = src[base + sum_d index_d * strides[d]] over out's shape (views: transpose, slice).
void gather(const float* src, i64 base, const std::vector<i64>& strides, host_tensor& out) {
    const std::vector<i64> none(strides.size(), 0);
    float* dst = out.data.data();
    for_each_element(out.dims.dims(), base, strides, 0, none,
                     [&](i64 i, i64 offset, i64) { dst[i] = src[offset]; });
}

i64 product(const std::vector<i64>& dims, std::size_t begin, std::size_t end) {
    i64 p = 1;
    for (std::size_t d = begin; d < end; ++d) p *= dims[d];
    return p;
}

/// Maps every element through f (double in, double out).
template <class F>
host_tensor unary(const layer_io& io, F f) {
    const host_tensor& x = io.input(0);
    host_tensor out = io.make_output();
    const auto n = static_cast<i64>(out.data.size());
    for (i64 i = 0; i < n; ++i)
        out.data[static_cast<std::size_t>(i)] = static_cast<float>(f(double{x.data[static_cast<std::size_t>(i)]}));
    return out;
}

/// out = f(a, b) with NumPy broadcasting of both inputs to out_shape.
template <class F>
host_tensor binary(const layer_io& io, F f) {
    const host_tensor& a = io.input(0);
    const host_tensor& b = io.input(1);
    host_tensor out = io.make_output();
    const auto& dims = out.dims.dims();
    const float* pa = a.data.data();
    const float* pb = b.data.data();
    float* po = out.data.data();
    for_each_element(dims, 0, broadcast_strides(a.dims.dims(), dims), 0, broadcast_strides(b.dims.dims(), dims),
                     [&](i64 i, i64 ia, i64 ib) { po[i] = static_cast<float>(f(double{pa[ia]}, double{pb[ib]})); });
    return out;
}

// ------------------------------------------------------------------ dense

/// y[r, o] = sum_k x[r, k] * W[o, k] + b[o] (torch.nn.Linear), k ascending.
host_tensor forward(const core::linear& op, const layer_io& io) {
    const host_tensor& in = io.input(0);
    const float* x = in.data.data();
    const float* w = io.param("weight");
    const float* bias = op.bias ? io.param("bias") : nullptr;
    host_tensor out = io.make_output();
    float* y = out.data.data();
    const i64 in_features = op.in_features;
    const i64 out_features = op.out_features;
    const i64 rows = in.dims.numel() / in_features;
    // Tasks: (block of 64 output features, chunk of 64 rows), block-major. A thread copies its block of W
    // transposed ([k][j], a few hundred KiB that stay in cache) once per block, then each row sums
    // y[r, o0 + j] += x[r, k] * Wt[k][j] over k ascending: the innermost loop walks j contiguously, each
    // element with its own accumulator, so the order of every sum is k ascending whatever the threads.
    constexpr i64 block = 64;
    constexpr i64 row_chunk = 64;
    const i64 blocks = (out_features + block - 1) / block;
    const i64 chunks = (rows + row_chunk - 1) / row_chunk;
    const i64 tasks = blocks * chunks;
#pragma omp parallel
    {
        std::vector<float> w_block(static_cast<std::size_t>(in_features * block));
        std::vector<double> acc(static_cast<std::size_t>(block));
        i64 loaded = -1;
#pragma omp for schedule(static)
        for (i64 t = 0; t < tasks; ++t) {
            const i64 ob = t / chunks;
            const i64 o0 = ob * block;
            const i64 nb = std::min(block, out_features - o0);
            float* wt = w_block.data();
            if (ob != loaded) {
                for (i64 j = 0; j < nb; ++j)
                    for (i64 k = 0; k < in_features; ++k) wt[k * block + j] = w[(o0 + j) * in_features + k];
                loaded = ob;
            }
            const i64 r_end = std::min(rows, (t % chunks + 1) * row_chunk);
            for (i64 r = (t % chunks) * row_chunk; r < r_end; ++r) {
                const float* xr = x + r * in_features;
                double* a = acc.data();
                std::fill(a, a + nb, 0.0);
                for (i64 k = 0; k < in_features; ++k) {
                    const double xk = xr[k];
                    const float* wk = wt + k * block;
#pragma omp simd
                    for (i64 j = 0; j < nb; ++j) a[j] += xk * double{wk[j]};
                }
                for (i64 j = 0; j < nb; ++j)
                    y[r * out_features + o0 + j] = static_cast<float>(a[j] + (bias ? double{bias[o0 + j]} : 0.0));
            }
        }
    }
    return out;
}

/// C[..., i, j] = sum_k A[..., i, k] * B[..., k, j] (torch.matmul), batch dims broadcast, k ascending.
host_tensor forward(const core::matmul&, const layer_io& io) {
    const host_tensor& a = io.input(0);
    const host_tensor& b = io.input(1);
    host_tensor out = io.make_output();
    const auto& da = a.dims.dims();
    const auto& db = b.dims.dims();
    const auto& dc = out.dims.dims();
    const i64 m = da[da.size() - 2];
    const i64 k_size = da[da.size() - 1];
    const i64 n = db[db.size() - 1];
    const std::vector<i64> batch_a(da.begin(), da.end() - 2);
    const std::vector<i64> batch_b(db.begin(), db.end() - 2);
    const std::vector<i64> batch_c(dc.begin(), dc.end() - 2);
    // Offsets of the A and B matrices of every output batch element.
    const i64 batches = product(batch_c, 0, batch_c.size());
    std::vector<i64> offset_a(static_cast<std::size_t>(batches));
    std::vector<i64> offset_b(static_cast<std::size_t>(batches));
    for_each_element(batch_c, 0, broadcast_strides(batch_a, batch_c, m * k_size), 0,
                     broadcast_strides(batch_b, batch_c, k_size * n), [&](i64 i, i64 oa, i64 ob) {
                         offset_a[static_cast<std::size_t>(i)] = oa;
                         offset_b[static_cast<std::size_t>(i)] = ob;
                     });
    const float* pa = a.data.data();
    const float* pb = b.data.data();
    float* pc = out.data.data();
    const i64 rows = batches * m;
#pragma omp parallel
    {
        std::vector<double> acc(static_cast<std::size_t>(n));
#pragma omp for schedule(static)
        for (i64 row = 0; row < rows; ++row) {
            const i64 bi = row / m;
            const i64 i = row % m;
            const float* ar = pa + offset_a[static_cast<std::size_t>(bi)] + i * k_size;
            const float* bm = pb + offset_b[static_cast<std::size_t>(bi)];
            std::fill(acc.begin(), acc.end(), 0.0);
            double* c = acc.data();
            for (i64 k = 0; k < k_size; ++k) {
                const double av = ar[k];
                const float* br = bm + k * n;
#pragma omp simd
                for (i64 j = 0; j < n; ++j) c[j] += av * double{br[j]};
            }
            float* cr = pc + row * n;
            for (i64 j = 0; j < n; ++j) cr[j] = static_cast<float>(c[j]);
        }
    }
    return out;
}

/// out[..., :] = weight[id, :] (torch.nn.Embedding); ids must be integers in [0, num_embeddings).
host_tensor forward(const core::embedding& op, const layer_io& io) {
    // the ids: the input, or the buffer the layer holds (`indices`)
    const float* ids = op.indices.empty() ? io.input(0).data.data() : io.param("indices");
    const auto n_ids = static_cast<std::size_t>(op.indices.empty() ? io.input(0).dims.numel()
                                                                    : core::shape(op.indices).numel());
    const float* w = io.param("weight");
    host_tensor out = io.make_output();
    const i64 dim = op.embedding_dim;
    for (std::size_t i = 0; i < n_ids; ++i) {
        const double id = ids[i];
        if (!(id >= 0 && id < static_cast<double>(op.num_embeddings)) || id != std::floor(id)) {
            std::ostringstream text;
            text << "token id " << id << " at position " << i << " is not an integer in [0, " << op.num_embeddings
                 << ")";
            io.fail(text.str());
        }
        const float* row = w + static_cast<i64>(id) * dim;
        std::copy(row, row + dim, out.data.begin() + static_cast<std::ptrdiff_t>(i) * dim);
    }
    return out;
}

// ------------------------------------------------------------------ convolution (reference_conv.cpp)

host_tensor forward(const core::conv2d& op, const layer_io& io) { return conv2d_forward(op, io); }

// ------------------------------------------------------------------ normalisation

/// torch.nn.BatchNorm2d, eval(): y = (x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c].
host_tensor forward(const core::batch_norm2d& op, const layer_io& io) {
    const host_tensor& in = io.input(0);
    const float* mean = io.param("running_mean");
    const float* var = io.param("running_var");
    const float* gamma = op.affine ? io.param("weight") : nullptr;
    const float* beta = op.affine ? io.param("bias") : nullptr;
    host_tensor out = io.make_output();
    const i64 channels = in.dims[1];
    const i64 plane = in.dims[2] * in.dims[3];
    const i64 planes = in.dims[0] * channels;
    for (i64 p = 0; p < planes; ++p) {
        const i64 c = p % channels;
        const double inv_std = 1.0 / std::sqrt(double{var[c]} + op.eps);
        const double g = gamma ? double{gamma[c]} : 1.0;
        const double b = beta ? double{beta[c]} : 0.0;
        const double mu = mean[c];
        const float* xp = in.data.data() + p * plane;
        float* yp = out.data.data() + p * plane;
        for (i64 i = 0; i < plane; ++i) yp[i] = static_cast<float>((double{xp[i]} - mu) * inv_std * g + b);
    }
    return out;
}

/// torch.nn.LayerNorm: over the trailing numel(normalized_shape) values of each row, mean and biased
/// variance, y = (x - mean) / sqrt(var + eps) * weight + bias.
host_tensor forward(const core::layer_norm& op, const layer_io& io) {
    const host_tensor& in = io.input(0);
    const float* gamma = op.elementwise_affine ? io.param("weight") : nullptr;
    const float* beta = op.elementwise_affine && op.bias ? io.param("bias") : nullptr;
    host_tensor out = io.make_output();
    const i64 inner = product(op.normalized_shape, 0, op.normalized_shape.size());
    const i64 rows = in.dims.numel() / inner;
    for (i64 r = 0; r < rows; ++r) {
        const float* xr = in.data.data() + r * inner;
        float* yr = out.data.data() + r * inner;
        double sum = 0;
        for (i64 i = 0; i < inner; ++i) sum += xr[i];
        const double mean = sum / static_cast<double>(inner);
        double sq = 0;
        for (i64 i = 0; i < inner; ++i) sq += (xr[i] - mean) * (xr[i] - mean);
        const double inv_std = 1.0 / std::sqrt(sq / static_cast<double>(inner) + op.eps);
        for (i64 i = 0; i < inner; ++i) {
            double v = (xr[i] - mean) * inv_std;
            if (gamma) v = v * gamma[i] + (beta ? beta[i] : 0.0);
            yr[i] = static_cast<float>(v);
        }
    }
    return out;
}

// ------------------------------------------------------------------ elementwise

// NaN propagates through relu and relu6 as through torch.clamp.
host_tensor forward(const core::relu&, const layer_io& io) {
    return unary(io, [](double v) { return std::isnan(v) ? v : std::max(v, 0.0); });
}

host_tensor forward(const core::relu6&, const layer_io& io) {
    return unary(io, [](double v) { return std::isnan(v) ? v : std::min(std::max(v, 0.0), 6.0); });
}

/// torch.nn.GELU: 0.5*x*(1 + erf(x/sqrt(2))); approximate="tanh": 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3))).
host_tensor forward(const core::gelu& op, const layer_io& io) {
    if (op.tanh_approximation) {
        const double beta = std::sqrt(2.0 / std::numbers::pi);
        return unary(io, [beta](double v) { return 0.5 * v * (1.0 + std::tanh(beta * (v + 0.044715 * v * v * v))); });
    }
    return unary(io, [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::numbers::sqrt2)); });
}

host_tensor forward(const core::tanh_op&, const layer_io& io) {
    return unary(io, [](double v) { return std::tanh(v); });
}

host_tensor forward(const core::sigmoid&, const layer_io& io) {
    return unary(io, [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
}

/// torch.nn.Hardswish: x * relu6(x + 3) / 6 (NaN propagates).
host_tensor forward(const core::hardswish&, const layer_io& io) {
    return unary(io, [](double v) { return std::isnan(v) ? v : v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0; });
}

/// torch.nn.Hardsigmoid: relu6(x + 3) / 6 (NaN propagates).
host_tensor forward(const core::hardsigmoid&, const layer_io& io) {
    return unary(io, [](double v) { return std::isnan(v) ? v : std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0; });
}

/// torch.nn.SiLU: x * sigmoid(x).
host_tensor forward(const core::silu&, const layer_io& io) {
    return unary(io, [](double v) { return v / (1.0 + std::exp(-v)); });
}

host_tensor forward(const core::scale& op, const layer_io& io) {
    return unary(io, [factor = op.factor](double v) { return v * factor; });
}

/// torch.softmax along dim: exp(x - max) / sum(exp(x - max)), the max subtracted for stability.
host_tensor forward(const core::softmax& op, const layer_io& io) {
    const host_tensor& in = io.input(0);
    host_tensor out = io.make_output();
    const auto& dims = in.dims.dims();
    const std::size_t d = core::normalize_dim(op.dim, dims.size(), io.where());
    const i64 outer = product(dims, 0, d);
    const i64 size = dims[d];
    const i64 inner = product(dims, d + 1, dims.size());
    std::vector<double> e(static_cast<std::size_t>(size));
    for (i64 o = 0; o < outer; ++o) {
        for (i64 i = 0; i < inner; ++i) {
            const float* x = in.data.data() + o * size * inner + i;
            float* y = out.data.data() + o * size * inner + i;
            double m = -std::numeric_limits<double>::infinity();
            for (i64 k = 0; k < size; ++k) m = std::max(m, double{x[k * inner]});
            double sum = 0;
            for (i64 k = 0; k < size; ++k) sum += e[static_cast<std::size_t>(k)] = std::exp(x[k * inner] - m);
            for (i64 k = 0; k < size; ++k) y[k * inner] = static_cast<float>(e[static_cast<std::size_t>(k)] / sum);
        }
    }
    return out;
}

host_tensor forward(const core::erf_op&, const layer_io& io) {
    return unary(io, [](double v) { return std::erf(v); });
}

host_tensor forward(const core::sqrt_op&, const layer_io& io) {
    return unary(io, [](double v) { return std::sqrt(v); });  // NaN below 0, as torch.sqrt
}

host_tensor forward(const core::exp_op&, const layer_io& io) {
    return unary(io, [](double v) { return std::exp(v); });
}

host_tensor forward(const core::neg&, const layer_io& io) {
    return unary(io, [](double v) { return -v; });
}

host_tensor forward(const core::pow_op& op, const layer_io& io) {
    return unary(io, [e = op.exponent](double v) { return std::pow(v, e); });
}

host_tensor forward(const core::sub&, const layer_io& io) {
    return binary(io, [](double a, double b) { return a - b; });
}

host_tensor forward(const core::div&, const layer_io& io) {
    return binary(io, [](double a, double b) { return a / b; });
}

host_tensor forward(const core::add&, const layer_io& io) {
    return binary(io, [](double a, double b) { return a + b; });
}

host_tensor forward(const core::mul&, const layer_io& io) {
    return binary(io, [](double a, double b) { return a * b; });
}

// ------------------------------------------------------------------ reductions

/// torch.sum / torch.mean / torch.amax over the dims core::reduced_dims picks, in double; amax propagates NaN.
enum class reduction { sum, mean, max };
host_tensor reduce(const layer_io& io, const std::vector<i64>& dim, reduction how) {
    const host_tensor& in = io.input(0);
    host_tensor out = io.make_output();
    const auto& dims = in.dims.dims();
    const auto reduced = core::reduced_dims(dim, dims.size(), io.where());
    std::vector<i64> stride(dims.size(), 0);  // the output offset of one step along each input dimension
    i64 s = 1;
    for (std::size_t k = dims.size(); k-- > 0;)
        if (!reduced[k]) {
            stride[k] = s;
            s *= dims[k];
        }
    const double init = how == reduction::max ? -std::numeric_limits<double>::infinity() : 0.0;
    std::vector<double> acc(out.data.size(), init);
    std::vector<i64> index(dims.size(), 0);
    for (std::size_t i = 0; i < in.data.size(); ++i) {
        i64 o = 0;
        for (std::size_t k = 0; k < dims.size(); ++k) o += index[k] * stride[k];
        double& a = acc[static_cast<std::size_t>(o)];
        const double v = in.data[i];
        if (how != reduction::max)
            a += v;
        else if (std::isnan(v) || std::isnan(a))
            a = std::numeric_limits<double>::quiet_NaN();
        else
            a = std::max(a, v);
        for (std::size_t k = dims.size(); k-- > 0;) {  // next row-major index
            if (++index[k] < dims[k]) break;
            index[k] = 0;
        }
    }
    const double count = static_cast<double>(in.data.size()) / static_cast<double>(out.data.size());
    for (std::size_t o = 0; o < acc.size(); ++o)
        out.data[o] = static_cast<float>(how == reduction::mean ? acc[o] / count : acc[o]);
    return out;
}

host_tensor forward(const core::sum_op& op, const layer_io& io) { return reduce(io, op.dim, reduction::sum); }
host_tensor forward(const core::mean_op& op, const layer_io& io) { return reduce(io, op.dim, reduction::mean); }
host_tensor forward(const core::amax& op, const layer_io& io) { return reduce(io, op.dim, reduction::max); }

// ------------------------------------------------------------------ pooling

/// torch.nn.MaxPool2d: max over the window taps inside the input (padding is -inf, so never chosen);
/// NaN propagates as in PyTorch's kernel (aten/src/ATen/native/cpu/MaxPoolKernel.cpp).
/// The taps t in [0, k) of a window starting at `start` with dilation `d` that land inside [0, n): [first, last).
/// Computed, not searched, so that a huge kernel over a small input costs what the input has.
std::pair<i64, i64> taps_inside(i64 start, i64 k, i64 d, i64 n) {
    const i64 first = start >= 0 ? 0 : (-start + d - 1) / d;
    if (n - 1 - start < 0) return {0, 0};
    const i64 last = std::min(k, (n - 1 - start) / d + 1);
    return {first, std::max(first, last)};
}

/// A pooling over NCHW planes: every output element of every plane is `value(plane's input, oh, ow)`.
template <class Value>
host_tensor pool_planes(const layer_io& io, Value value) {
    const host_tensor& in = io.input(0);
    host_tensor out = io.make_output();
    const i64 height = in.dims[2], width = in.dims[3];
    const i64 out_h = out.dims[2], out_w = out.dims[3];
    const i64 planes = in.dims[0] * in.dims[1];
    for (i64 p = 0; p < planes; ++p) {
        const float* xp = in.data.data() + p * height * width;
        float* yp = out.data.data() + p * out_h * out_w;
        for (i64 oh = 0; oh < out_h; ++oh)
            for (i64 ow = 0; ow < out_w; ++ow) yp[oh * out_w + ow] = value(xp, oh, ow);
    }
    return out;
}

host_tensor forward(const core::max_pool2d& op, const layer_io& io) {
    const i64 height = io.input(0).dims[2], width = io.input(0).dims[3];
    return pool_planes(io, [&](const float* xp, i64 oh, i64 ow) {
        double m = -std::numeric_limits<double>::infinity();  // a window of padding only: -inf (PyTorch)
        const i64 h0 = oh * op.stride.h - op.padding.h, w0 = ow * op.stride.w - op.padding.w;
        const auto [kh0, kh1] = taps_inside(h0, op.kernel_size.h, op.dilation.h, height);
        const auto [kw0, kw1] = taps_inside(w0, op.kernel_size.w, op.dilation.w, width);
        for (i64 kh = kh0; kh < kh1; ++kh) {
            const i64 ih = h0 + kh * op.dilation.h;
            for (i64 kw = kw0; kw < kw1; ++kw) {
                const double v = xp[ih * width + w0 + kw * op.dilation.w];
                if (v > m || std::isnan(v)) m = v;
            }
        }
        return static_cast<float>(m);
    });
}

/// torch.nn.AvgPool2d, as aten/src/ATen/native/cpu/AvgPoolKernel.cpp: the window [h0, h0 + k) is first
/// clipped to the padded input [-pad, H + pad) (its size is the count_include_pad divisor), then to the
/// input [0, H) (the sum, and the divisor without count_include_pad). An empty window gives 0.
host_tensor forward(const core::avg_pool2d& op, const layer_io& io) {
    const i64 height = io.input(0).dims[2], width = io.input(0).dims[3];
    return pool_planes(io, [&](const float* xp, i64 oh, i64 ow) {
        i64 h0 = oh * op.stride.h - op.padding.h;
        i64 w0 = ow * op.stride.w - op.padding.w;
        i64 h1 = std::min(h0 + op.kernel_size.h, height + op.padding.h);
        i64 w1 = std::min(w0 + op.kernel_size.w, width + op.padding.w);
        const i64 padded_count = (h1 - h0) * (w1 - w0);
        h0 = std::max<i64>(h0, 0);
        w0 = std::max<i64>(w0, 0);
        h1 = std::min(h1, height);
        w1 = std::min(w1, width);
        if (h0 >= h1 || w0 >= w1) return 0.0F;
        double sum = 0;
        for (i64 ih = h0; ih < h1; ++ih)
            for (i64 iw = w0; iw < w1; ++iw) sum += xp[ih * width + iw];
        const i64 divisor = op.count_include_pad ? padded_count : (h1 - h0) * (w1 - w0);
        return static_cast<float>(sum / static_cast<double>(divisor));
    });
}

/// torch.nn.AdaptiveAvgPool2d: output i averages input [floor(i*H/out), ceil((i+1)*H/out)), both axes.
host_tensor forward(const core::adaptive_avg_pool2d&, const layer_io& io) {
    const i64 height = io.input(0).dims[2], width = io.input(0).dims[3];
    const i64 out_h = io.out_shape()[2], out_w = io.out_shape()[3];
    return pool_planes(io, [&](const float* xp, i64 oh, i64 ow) {
        const i64 h0 = (oh * height) / out_h;
        const i64 h1 = ((oh + 1) * height + out_h - 1) / out_h;
        const i64 w0 = (ow * width) / out_w;
        const i64 w1 = ((ow + 1) * width + out_w - 1) / out_w;
        double sum = 0;
        for (i64 ih = h0; ih < h1; ++ih)
            for (i64 iw = w0; iw < w1; ++iw) sum += xp[ih * width + iw];
        return static_cast<float>(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
    });
}

// ------------------------------------------------------------------ data movement and views

/// torch.cat: for each index of the dims before `dim`, the inputs' blocks one after another.
host_tensor forward(const core::concat& op, const layer_io& io) {
    host_tensor out = io.make_output();
    const auto& dims = out.dims.dims();
    const std::size_t d = core::normalize_dim(op.dim, dims.size(), io.where());
    const i64 outer = product(dims, 0, d);
    const i64 inner = product(dims, d + 1, dims.size());
    const i64 out_block = dims[d] * inner;
    i64 offset = 0;  // start of this input's block inside an output block
    for (std::size_t t = 0; t < io.input_count(); ++t) {
        const host_tensor& in = io.input(t);
        const i64 block = in.dims[d] * inner;
        for (i64 o = 0; o < outer; ++o)
            std::copy_n(in.data.data() + o * block, block, out.data.data() + o * out_block + offset);
        offset += block;
    }
    return out;
}

/// Same values in the same row-major order, new shape.
host_tensor same_data(const layer_io& io) {
    host_tensor out = io.make_output();
    out.data = io.input(0).data;
    return out;
}

/// A held tensor: its stored values, broadcast to `expand` when given.
host_tensor forward(const core::parameter& op, const layer_io& io) {
    const host_tensor stored{core::shape(op.dims), std::vector<float>(io.param("value"),
                                                                      io.param("value") + core::shape(op.dims).numel())};
    return backend_api::broadcast_to(stored, io.make_output().dims);
}

host_tensor forward(const core::flatten&, const layer_io& io) { return same_data(io); }
host_tensor forward(const core::reshape&, const layer_io& io) { return same_data(io); }

/// torch.transpose: output index with dims dim0 and dim1 swapped reads the input.
host_tensor forward(const core::transpose& op, const layer_io& io) {
    const host_tensor& in = io.input(0);
    host_tensor out = io.make_output();
    const std::size_t rank = in.dims.rank();
    const std::size_t a = core::normalize_dim(op.dim0, rank, io.where());
    const std::size_t b = core::normalize_dim(op.dim1, rank, io.where());
    std::vector<i64> strides = strides_of(in.dims.dims());
    std::swap(strides[a], strides[b]);
    gather(in.data.data(), 0, strides, out);
    return out;
}

/// x[..., start:end:step, ...] along dim; start clamped as core::slice::infer does (Python rules).
host_tensor forward(const core::slice& op, const layer_io& io) {
    const host_tensor& in = io.input(0);
    host_tensor out = io.make_output();
    const std::size_t d = core::normalize_dim(op.dim, in.dims.rank(), io.where());
    const i64 size = in.dims[d];
    i64 start = op.start;
    if (start < 0) start = start < -size ? 0 : start + size;
    start = std::min(start, size);
    std::vector<i64> strides = strides_of(in.dims.dims());
    const i64 base = start * strides[d];
    strides[d] *= op.step;
    gather(in.data.data(), base, strides, out);
    return out;
}

host_tensor forward(const core::pad& op, const layer_io& io) { return pad_forward(op, io); }

/// Tensor.expand made contiguous: each output element reads the input through its broadcast strides.
host_tensor forward(const core::expand&, const layer_io& io) {
    const host_tensor& in = io.input(0);
    host_tensor out = io.make_output();
    const std::vector<i64> s = broadcast_strides(in.dims.dims(), out.dims.dims());
    gather(in.data.data(), 0, s, out);
    return out;
}

/// torch.where(condition > 0, input, other), the three broadcast to the output.
host_tensor forward(const core::where_op&, const layer_io& io) {
    host_tensor out = io.make_output();
    const auto& dims = out.dims.dims();
    const std::vector<i64> sc = broadcast_strides(io.input(0).dims.dims(), dims);
    const float* c = io.input(0).data.data();
    const float* a = io.input(1).data.data();
    const float* b = io.input(2).data.data();
    float* y = out.data.data();
    // the condition's offset from the output index, the two values' through for_each_element
    for_each_element(dims, 0, broadcast_strides(io.input(1).dims.dims(), dims), 0,
                     broadcast_strides(io.input(2).dims.dims(), dims), [&](i64 i, i64 ia, i64 ib) {
                         i64 rem = i, ic = 0;
                         for (std::size_t d = dims.size(); d-- > 0;) {
                             ic += (rem % dims[d]) * sc[d];
                             rem /= dims[d];
                         }
                         y[i] = c[ic] > 0 ? a[ia] : b[ib];
                     });
    return out;
}
host_tensor forward(const core::interpolate& op, const layer_io& io) { return interpolate_forward(op, io); }
host_tensor forward(const core::rms_norm& op, const layer_io& io) { return rms_norm_forward(op, io); }
host_tensor forward(const core::rotary& op, const layer_io& io) { return rotary_forward(op, io); }
host_tensor forward(const core::attention& op, const layer_io& io) { return attention_forward(op, io); }
host_tensor forward(const core::kv_cache& op, const layer_io& io) { return kv_cache_forward(op, io); }

}  // namespace

backend_api::host_tensor reference_forward(const core::layer& l, const std::vector<const backend_api::host_tensor*>& inputs,
                                        const std::map<std::string, const backend_api::host_tensor*>& params,
                                        const core::shape& out_shape) {
    const layer_io io(l, inputs, params, out_shape);
    return std::visit([&io](const auto& op) { return forward(op, io); }, l.op);
}

}  // namespace ridgeline::cpu
