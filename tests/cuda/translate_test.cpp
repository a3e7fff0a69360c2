// The CUDA backend's pure translations, checked without a device: layer descriptors -> cuBLAS / cuDNN
// parameters (each checked numerically by a host model of what the library computes with them, against
// the reference loops), algorithm bookkeeping, ceilings arithmetic, data-type mapping.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "context.hpp"
#include "library_types.hpp"
#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/layer.hpp"
#include "ridgeline/cpu/reference.hpp"
#include "ridgeline/cuda/translate.hpp"

using namespace ridgeline;
using cuda::gemm_shape;

namespace {

std::vector<float> random_values(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

/// What cuBLAS computes for a gemm_shape (column-major, BLAS definition): C = op(A) op(B), where element
/// (i, j) of a stored matrix X with leading dimension ld is X[i + j * ld].
void host_gemm(const gemm_shape& g, const float* a, const float* b, float* c) {
    for (std::int64_t j = 0; j < g.n; ++j)
        for (std::int64_t i = 0; i < g.m; ++i) {
            double s = 0;
            for (std::int64_t p = 0; p < g.k; ++p) {
                const float av = g.trans_a ? a[p + i * g.lda] : a[i + p * g.lda];
                const float bv = g.trans_b ? b[j + p * g.ldb] : b[p + j * g.ldb];
                s += double{av} * double{bv};
            }
            c[i + j * g.ldc] = static_cast<float>(s);
        }
}

core::layer make_layer(const std::string& text) { return core::layer{"op", core::parse_op(text), {}, {}}; }

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tol = 1e-5) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

}  // namespace

// ------------------------------------------------------------------------------------------ data types

TEST(CudaTranslate, PrecisionOfEveryDataType) {
    const auto fp32 = cuda::precision_of(core::dtype::fp32);
    EXPECT_EQ(fp32.storage_bytes, 4);
    EXPECT_EQ(fp32.cublas_compute, "CUBLAS_COMPUTE_32F");  // no TF32 for fp32
    EXPECT_EQ(fp32.cudnn_math, "CUDNN_FMA_MATH");
    EXPECT_FALSE(fp32.tensor_cores);
    const auto tf32 = cuda::precision_of(core::dtype::tf32);
    EXPECT_EQ(tf32.storage, "CUDA_R_32F");
    EXPECT_EQ(tf32.cublas_compute, "CUBLAS_COMPUTE_32F_FAST_TF32");
    EXPECT_TRUE(tf32.tensor_cores);
    EXPECT_EQ(cuda::precision_of(core::dtype::fp16).storage, "CUDA_R_16F");
    EXPECT_EQ(cuda::precision_of(core::dtype::bf16).storage, "CUDA_R_16BF");
    EXPECT_EQ(cuda::precision_of(core::dtype::bf16).storage_bytes, 2);
    // the enum values the backend passes agree with the names
    for (core::dtype dt : core::all_dtypes()) {
        const auto p = cuda::precision_of(dt);
        EXPECT_EQ(cuda::storage_type_name(cuda::storage_type(dt)), p.storage) << core::to_string(dt);
        EXPECT_EQ(cuda::cublas_compute_name(cuda::compute_type(dt)), p.cublas_compute) << core::to_string(dt);
        EXPECT_EQ(cuda::cudnn_math_name(cuda::cudnn_math(dt)), p.cudnn_math) << core::to_string(dt);
        EXPECT_EQ(p.storage_bytes, core::size_bytes(dt)) << core::to_string(dt);
    }
}

TEST(CudaTranslate, MathTypesThatKeepTheDataTypesPromise) {
    // fp32: FMA only; CUDNN_DEFAULT_MATH may use TF32 from compute capability 8.0 on (cudnnMathType_t docs)
    EXPECT_TRUE(cuda::math_allowed(core::dtype::fp32, "CUDNN_FMA_MATH", 9));
    EXPECT_FALSE(cuda::math_allowed(core::dtype::fp32, "CUDNN_DEFAULT_MATH", 8));
    EXPECT_TRUE(cuda::math_allowed(core::dtype::fp32, "CUDNN_DEFAULT_MATH", 7));
    EXPECT_FALSE(cuda::math_allowed(core::dtype::fp32, "CUDNN_TENSOR_OP_MATH", 9));
    EXPECT_TRUE(cuda::math_allowed(core::dtype::bf16, "CUDNN_TENSOR_OP_MATH", 9));
    EXPECT_TRUE(cuda::math_allowed(core::dtype::fp16, "CUDNN_DEFAULT_MATH", 9));
    // tf32 data converted to fp16 would lose range and precision
    EXPECT_FALSE(cuda::math_allowed(core::dtype::tf32, "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION", 9));
}

TEST(CudaTranslate, HostConversionsRoundToNearestEven) {
    // values exactly representable in each type survive the round trip; 1 + 2^-12 rounds to 1 in fp16
    // (10 mantissa bits) and 1 + 2^-9 to 1 in bf16 (7 bits): round to nearest even
    const std::vector<float> fp16_exact = {0.0f, 1.0f, -2.5f, 65504.0f, 0.000061035156f, 5.9604645e-08f};
    std::vector<float> back(fp16_exact.size());
    auto bytes = cuda::to_storage(fp16_exact.data(), fp16_exact.size(), core::dtype::fp16);
    ASSERT_EQ(bytes.size(), 2 * fp16_exact.size());
    cuda::from_storage(bytes.data(), fp16_exact.size(), core::dtype::fp16, back.data());
    EXPECT_EQ(back, fp16_exact);
    const std::vector<float> ties = {1.0f + 1.0f / 4096.0f};
    float one = 0;
    bytes = cuda::to_storage(ties.data(), 1, core::dtype::fp16);
    cuda::from_storage(bytes.data(), 1, core::dtype::fp16, &one);
    EXPECT_EQ(one, 1.0f);
    const std::vector<float> bf = {1.0f + 1.0f / 512.0f, 3.0f, -0.15625f};
    std::vector<float> bf_back(3);
    bytes = cuda::to_storage(bf.data(), 3, core::dtype::bf16);
    cuda::from_storage(bytes.data(), 3, core::dtype::bf16, bf_back.data());
    EXPECT_EQ(bf_back, (std::vector<float>{1.0f, 3.0f, -0.15625f}));
    // fp32 and tf32 are stored as float, unchanged
    bytes = cuda::to_storage(bf.data(), 3, core::dtype::tf32);
    cuda::from_storage(bytes.data(), 3, core::dtype::tf32, bf_back.data());
    EXPECT_EQ(bf_back, bf);
}

// ------------------------------------------------------------------------------------------ GEMM

TEST(CudaTranslate, LinearGemmShape) {
    // rows 5, in 33, out 17: m = out, n = rows, k = in; W read as in x out and transposed
    const gemm_shape g = cuda::linear_gemm(5, 33, 17);
    EXPECT_EQ(g, (gemm_shape{true, false, 17, 5, 33, 33, 33, 17}));
}

TEST(CudaTranslate, LinearGemmComputesTorchLinear) {
    const std::int64_t rows = 6, in = 7, out = 5;
    const auto x = random_values(rows * in, 1), w = random_values(out * in, 2), bias = random_values(out, 3);
    std::vector<float> y(rows * out);
    host_gemm(cuda::linear_gemm(rows, in, out), w.data(), x.data(), y.data());
    for (std::int64_t r = 0; r < rows; ++r)  // the epilogue: bias per row of C (column-major) = per output feature
        for (std::int64_t o = 0; o < out; ++o) y[r * out + o] += bias[o];
    const core::layer l = make_layer("linear:in_features=7,out_features=5");
    const backend_api::host_tensor hx{{rows, in}, x}, hw{{out, in}, w}, hb{{out}, bias};
    const auto want = cpu::reference_forward(l, {&hx}, {{"weight", &hw}, {"bias", &hb}}, core::shape{rows, out});
    expect_close(y, want.data);
}

TEST(CudaTranslate, MatmulGemmWithBroadcastBatches) {
    struct problem {
        core::shape a, b, out;
        bool uniform;
        std::int64_t stride_a, stride_b;
    };
    const problem problems[] = {
        // equal batches: strides are whole matrices (cuBLAS's A = layer's B: K x N = 5 x 9 = 45)
        {{2, 3, 7, 5}, {2, 3, 5, 9}, {2, 3, 7, 9}, true, 45, 35},
        // B broadcast over the batch: stride 0
        {{4, 7, 5}, {5, 3}, {4, 7, 3}, true, 0, 35},
        // A broadcast over the outer dim, B over the inner: offsets are not i * stride -> pointer arrays
        {{1, 3, 2, 4}, {2, 1, 4, 6}, {2, 3, 2, 6}, false, 0, 0},
    };
    for (const auto& p : problems) {
        const auto bg = cuda::matmul_gemm(p.a, p.b, p.out);
        EXPECT_EQ(bg.uniform, p.uniform) << p.a.to_string();
        EXPECT_EQ(bg.stride_a, p.stride_a) << p.a.to_string();
        EXPECT_EQ(bg.stride_b, p.stride_b) << p.a.to_string();
        const auto a = random_values(static_cast<std::size_t>(p.a.numel()), 4);
        const auto b = random_values(static_cast<std::size_t>(p.b.numel()), 5);
        std::vector<float> c(static_cast<std::size_t>(p.out.numel()));
        for (std::int64_t i = 0; i < bg.batch; ++i)
            host_gemm(bg.gemm, b.data() + bg.offset_a[static_cast<std::size_t>(i)],
                      a.data() + bg.offset_b[static_cast<std::size_t>(i)], c.data() + i * bg.stride_c);
        const core::layer l = make_layer("matmul");
        const backend_api::host_tensor ha{p.a, a}, hb{p.b, b};
        const auto want = cpu::reference_forward(l, {&ha, &hb}, {}, p.out);
        expect_close(c, want.data);
    }
}

TEST(CudaTranslate, IntLimitsAreUnsupportedNotWrong) {
    EXPECT_EQ(cuda::to_int(2147483647, "m"), 2147483647);
    try {
        (void)cuda::to_int(2147483648LL, "conv N");
        FAIL();
    } catch (const backend_api::unsupported& e) {
        EXPECT_NE(std::string(e.what()).find("conv N = 2147483648"), std::string::npos) << e.what();
    }
}

// ------------------------------------------------------------------------------------------ convolution

namespace {

/// What cuDNN computes for conv_params: cross-correlation over the (pre-padded) input with symmetric
/// zero padding pad_h x pad_w, groups, strides and dilations (cuDNN's convolution definition).
std::vector<float> host_cudnn_conv(const cuda::conv_params& p, const std::vector<float>& x, const std::vector<float>& w,
                                   const std::vector<float>* bias) {
    // pre-padding: the input copied into a zero-bordered buffer
    std::vector<float> xp(static_cast<std::size_t>(p.n * p.c * p.h * p.w), 0.0f);
    for (std::int64_t pl = 0; pl < p.n * p.c; ++pl)
        for (std::int64_t i = 0; i < p.in_h; ++i)
            for (std::int64_t j = 0; j < p.in_w; ++j)
                xp[static_cast<std::size_t>((pl * p.h + i + p.pre_top) * p.w + j + p.pre_left)] =
                    x[static_cast<std::size_t>((pl * p.in_h + i) * p.in_w + j)];
    std::vector<float> y(static_cast<std::size_t>(p.n * p.k * p.out_h * p.out_w));
    const std::int64_t k_per_group = p.k / p.groups;
    for (std::int64_t n = 0; n < p.n; ++n)
        for (std::int64_t k = 0; k < p.k; ++k) {
            const std::int64_t g = k / k_per_group;
            for (std::int64_t oh = 0; oh < p.out_h; ++oh)
                for (std::int64_t ow = 0; ow < p.out_w; ++ow) {
                    double s = bias ? (*bias)[static_cast<std::size_t>(k)] : 0.0;
                    for (std::int64_t c = 0; c < p.c_per_group; ++c)
                        for (std::int64_t r = 0; r < p.r; ++r)
                            for (std::int64_t q = 0; q < p.s; ++q) {
                                const std::int64_t ih = oh * p.stride_h - p.pad_h + r * p.dilation_h;
                                const std::int64_t iw = ow * p.stride_w - p.pad_w + q * p.dilation_w;
                                if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
                                const std::int64_t ci = g * p.c_per_group + c;
                                s += double{xp[static_cast<std::size_t>(((n * p.c + ci) * p.h + ih) * p.w + iw)]} *
                                     double{w[static_cast<std::size_t>(((k * p.c_per_group + c) * p.r + r) * p.s + q)]};
                            }
                    y[static_cast<std::size_t>(((n * p.k + k) * p.out_h + oh) * p.out_w + ow)] = static_cast<float>(s);
                }
        }
    return y;
}

}  // namespace

TEST(CudaTranslate, Conv2dParamsSymmetricAndPrePadded) {
    struct problem {
        const char* layer;
        core::shape in;
        std::int64_t pad_h, pad_w, pre_top, pre_left, pre_bottom, pre_right;
    };
    const problem problems[] = {
        {"conv2d:in_channels=3,out_channels=8,kernel_size=3,padding=1", {2, 3, 11, 13}, 1, 1, 0, 0, 0, 0},
        {"conv2d:in_channels=16,out_channels=24,kernel_size=3x5,stride=2x1,padding=1x2,bias=false", {1, 16, 9, 11},
         1, 2, 0, 0, 0, 0},
        {"conv2d:in_channels=12,out_channels=12,kernel_size=3,padding=2,dilation=2,groups=12", {1, 12, 9, 9}, 2, 2, 0,
         0, 0, 0},
        // TxLxBxR 0x1x1x0: cuDNN gets 0x0, the extra bottom row and left column are pre-padded
        {"conv2d:in_channels=12,out_channels=18,kernel_size=3,groups=3,padding=0x1x1x0", {1, 12, 9, 10}, 0, 0, 0, 1,
         1, 0},
        // padding=same, kernel 4: total 3 = 1 before + 2 after (PyTorch); cuDNN 1, pre-pad 1 after
        {"conv2d:in_channels=8,out_channels=8,kernel_size=4,padding=same", {1, 8, 10, 10}, 1, 1, 0, 0, 1, 1},
    };
    for (const auto& pr : problems) {
        const core::layer l = make_layer(pr.layer);
        const auto& op = std::get<core::conv2d>(l.op);
        const core::shape out = core::infer_shape(l, {pr.in});
        const cuda::conv_params p = cuda::conv2d_params(op, pr.in, out);
        EXPECT_EQ(p.pad_h, pr.pad_h) << pr.layer;
        EXPECT_EQ(p.pad_w, pr.pad_w) << pr.layer;
        EXPECT_EQ(p.pre_top, pr.pre_top) << pr.layer;
        EXPECT_EQ(p.pre_left, pr.pre_left) << pr.layer;
        EXPECT_EQ(p.pre_bottom, pr.pre_bottom) << pr.layer;
        EXPECT_EQ(p.pre_right, pr.pre_right) << pr.layer;
        EXPECT_EQ(p.groups, op.groups) << pr.layer;
        EXPECT_EQ(p.c_per_group, op.in_channels / op.groups) << pr.layer;
        EXPECT_EQ(p.out_h, out[2]) << pr.layer;
        EXPECT_EQ(p.out_w, out[3]) << pr.layer;
        // numerically: cuDNN's definition with these parameters is PyTorch's convolution
        const auto x = random_values(static_cast<std::size_t>(pr.in.numel()), 6);
        const core::shape wshape{op.out_channels, op.in_channels / op.groups, op.kernel_size.h, op.kernel_size.w};
        const auto w = random_values(static_cast<std::size_t>(wshape.numel()), 7);
        const auto b = random_values(static_cast<std::size_t>(op.out_channels), 8);
        const backend_api::host_tensor hx{pr.in, x}, hw{wshape, w}, hb{{op.out_channels}, b};
        std::map<std::string, const backend_api::host_tensor*> params{{"weight", &hw}};
        if (op.bias) params["bias"] = &hb;
        const auto want = cpu::reference_forward(l, {&hx}, params, out);
        expect_close(host_cudnn_conv(p, x, w, op.bias ? &b : nullptr), want.data, 1e-4);
    }
}

TEST(CudaTranslate, Conv2dParamsRejectAShapeMismatch) {
    const core::layer l = make_layer("conv2d:in_channels=3,out_channels=8,kernel_size=3");
    EXPECT_THROW((void)cuda::conv2d_params(std::get<core::conv2d>(l.op), {1, 3, 8, 8}, {1, 8, 7, 7}),
                 backend_api::backend_error);  // 8 - 3 + 1 = 6, not 7
}

// ------------------------------------------------------------------------------------------ pooling

TEST(CudaTranslate, PoolingParamsWithCeilModeRightPadding) {
    // max_pool2d kernel 3 stride 2 padding 1 on 112x112 (resnet's stem): out 56, no right padding needed:
    // (56 - 1) * 2 + 3 - 112 - 1 = 0
    {
        const core::layer l = make_layer("max_pool2d:kernel_size=3,stride=2,padding=1");
        const core::shape in{1, 64, 112, 112};
        const auto p = cuda::max_pool_params(std::get<core::max_pool2d>(l.op), in, core::infer_shape(l, {in}));
        EXPECT_EQ(p.planes, 64);
        EXPECT_EQ(p.out_h, 56);
        EXPECT_EQ(p.pad_bottom, 0);
        EXPECT_EQ(p.pad_right, 0);
    }
    // ceil_mode: 5 wide, kernel 2, stride 2 -> ceil((5 - 2) / 2) + 1 = 3 outputs; the last window starts
    // at 4 and needs (3 - 1) * 2 + 2 - 5 - 0 = 1 column of right padding
    {
        const core::layer l = make_layer("max_pool2d:kernel_size=2,ceil_mode=true");
        const core::shape in{2, 3, 5, 6};
        const auto p = cuda::max_pool_params(std::get<core::max_pool2d>(l.op), in, core::infer_shape(l, {in}));
        EXPECT_EQ(p.planes, 6);
        EXPECT_EQ(p.out_h, 3);
        EXPECT_EQ(p.out_w, 3);
        EXPECT_EQ(p.pad_bottom, 1);
        EXPECT_EQ(p.pad_right, 0);  // 6 wide: (3 - 1) * 2 + 2 - 6 = 0
    }
    // dilation widens the window: kernel 3 dilation 2 spans 5; 9 -> ceil((9 - 5) / 3) + 1 = 3 with
    // ceil_mode, right padding (3 - 1) * 3 + 5 - 9 = 2
    {
        const core::layer l = make_layer("max_pool2d:kernel_size=3,stride=3,dilation=2,ceil_mode=true");
        const core::shape in{1, 1, 9, 9};
        const auto p = cuda::max_pool_params(std::get<core::max_pool2d>(l.op), in, core::infer_shape(l, {in}));
        EXPECT_EQ(p.out_h, 3);
        EXPECT_EQ(p.dilation_h, 2);
        EXPECT_EQ(p.pad_bottom, 2);
    }
    {
        const core::layer l = make_layer("avg_pool2d:kernel_size=3,stride=2,padding=1,ceil_mode=true,count_include_pad=false");
        const core::shape in{1, 2, 6, 6};
        const auto p = cuda::avg_pool_params(std::get<core::avg_pool2d>(l.op), in, core::infer_shape(l, {in}));
        EXPECT_FALSE(p.count_include_pad);
        // out = ceil((6 + 2 - 3) / 2) + 1 = 4 (the last window starts at 5 < 6 + 1); right pad
        // (4 - 1) * 2 + 3 - 6 - 1 = 2
        EXPECT_EQ(p.out_h, 4);
        EXPECT_EQ(p.pad_bottom, 2);
    }
}

// ------------------------------------------------------------------------------------------ layouts

TEST(CudaTranslate, ViewsAliasWithStrides) {
    const cuda::strided_view v = cuda::dense_view({2, 3, 4});
    EXPECT_EQ(v.strides, (std::vector<std::int64_t>{12, 4, 1}));
    EXPECT_TRUE(cuda::is_dense(v));
    const auto t = cuda::transpose_view(v, 1, 2);
    EXPECT_EQ(t.dims, (std::vector<std::int64_t>{2, 4, 3}));
    EXPECT_EQ(t.strides, (std::vector<std::int64_t>{12, 1, 4}));
    EXPECT_FALSE(cuda::is_dense(t));
    // x[:, 1:3] along dim 1 of [2, 3, 4]: offset 1 * 4, still 4 elements per row but rows 12 apart
    core::slice s;
    s.dim = 1;
    s.start = 1;
    s.end = 3;
    const auto sl = cuda::slice_view(v, s, 2);
    EXPECT_EQ(sl.offset, 4);
    EXPECT_EQ(sl.dims, (std::vector<std::int64_t>{2, 2, 4}));
    EXPECT_FALSE(cuda::is_dense(sl));
    // a slice of the first dim stays dense, with an offset; negative start counts from the end
    s.dim = 0;
    s.start = -1;
    s.end = core::slice::to_end;
    const auto first = cuda::slice_view(v, s, 1);
    EXPECT_EQ(first.offset, 12);
    EXPECT_TRUE(cuda::is_dense(first));
    // step 2 along the last dim: stride 2
    s.dim = 2;
    s.start = 0;
    s.step = 2;
    EXPECT_EQ(cuda::slice_view(v, s, 2).strides, (std::vector<std::int64_t>{12, 4, 2}));
    // dims of size 1 carry any stride and stay dense
    EXPECT_TRUE(cuda::is_dense(cuda::strided_view{{1, 5}, {99, 1}, 0}));
}

TEST(CudaTranslate, BroadcastStridesAndCoalescing) {
    EXPECT_EQ(cuda::broadcast_strides({64, 1, 1}, {32, 64, 56, 56}), (std::vector<std::int64_t>{0, 1, 0, 0}));
    EXPECT_EQ(cuda::broadcast_strides({32, 64, 56, 56}, {32, 64, 56, 56}),
              (std::vector<std::int64_t>{200704, 3136, 56, 1}));
    EXPECT_EQ(cuda::broadcast_strides({5}, {2, 3, 5}), (std::vector<std::int64_t>{0, 0, 1}));
    // the example of translate.hpp: a per-channel bias over NCHW
    const cuda::strided_walk w{{32, 64, 56, 56},
                               cuda::broadcast_strides({32, 64, 56, 56}, {32, 64, 56, 56}),
                               cuda::broadcast_strides({64, 1, 1}, {32, 64, 56, 56})};
    EXPECT_EQ(cuda::coalesce(w), (cuda::strided_walk{{32, 64, 3136}, {200704, 3136, 1}, {0, 1, 0}}));
    // same shapes: one dim
    EXPECT_EQ(cuda::coalesce(cuda::strided_walk{{2, 3, 4}, {12, 4, 1}, {12, 4, 1}}),
              (cuda::strided_walk{{24}, {1}, {1}}));
    // a transposed operand cannot merge
    EXPECT_EQ(cuda::coalesce(cuda::strided_walk{{3, 4}, {1, 3}, {0, 0}}), (cuda::strided_walk{{3, 4}, {1, 3}, {0, 0}}));
    // one element
    EXPECT_EQ(cuda::coalesce(cuda::strided_walk{{1, 1}, {1, 1}, {1, 1}}), (cuda::strided_walk{{1}, {0}, {0}}));
}

TEST(CudaTranslate, SoftmaxAxisSplit) {
    EXPECT_EQ(cuda::split_at({3, 4, 10}, -1), (cuda::axis_split{12, 10, 1}));
    EXPECT_EQ(cuda::split_at({3, 4, 10}, 1), (cuda::axis_split{3, 4, 10}));
    EXPECT_EQ(cuda::split_at({7}, 0), (cuda::axis_split{1, 7, 1}));
}

// ------------------------------------------------------------------------------------------ algorithms

TEST(CudaTranslate, PickFastestAlgorithm) {
    using c = cuda::algo_candidate;
    const std::vector<c> found = {
        {"FFT", true, 0.5, 512 << 20, "CUDNN_FMA_MATH", true},              // fastest, but too much workspace
        {"IMPLICIT_GEMM", true, 1.0, 0, "CUDNN_FMA_MATH", true},
        {"WINOGRAD", false, 0.1, 0, "CUDNN_FMA_MATH", true},               // did not run
        {"IMPLICIT_PRECOMP_GEMM", true, 0.8, 4096, "CUDNN_TENSOR_OP_MATH", false},  // breaks fp32's promise
        {"GEMM", true, 0.9, 1 << 20, "CUDNN_FMA_MATH", true},
        {"DIRECT", true, 0.9, 1024, "CUDNN_FMA_MATH", true},                // tie with GEMM, smaller workspace
    };
    EXPECT_EQ(cuda::pick_fastest(found, 256 << 20), std::optional<std::size_t>(5));
    EXPECT_EQ(cuda::pick_fastest(found, std::int64_t{1} << 40), std::optional<std::size_t>(0));
    EXPECT_EQ(cuda::pick_fastest(found, 0), std::optional<std::size_t>(1));
    EXPECT_FALSE(cuda::pick_fastest({found[2], found[3]}, 1 << 30).has_value());
    EXPECT_FALSE(cuda::pick_fastest({}, 1 << 30).has_value());
    EXPECT_EQ(cuda::describe_choice("cudnn", found, 5), "cudnn DIRECT CUDNN_FMA_MATH ws 1.0 KiB (fastest of 5)");
}

// cuBLASLt's heuristic order stands within 2%: a later candidate displaces an earlier one only when faster by more
TEST(CudaTranslate, PickFastestKeepsTheHeuristicsOrderWithinTwoPercent) {
    using c = cuda::algo_candidate;
    const std::vector<c> found = {
        {"algo 1", true, 0.0100, 0, "CUBLAS_COMPUTE_32F", true},
        {"algo 2", true, 0.0099, 0, "CUBLAS_COMPUTE_32F", true},  // 1% faster: inside the noise, the order stands
        {"algo 3", true, 0.0097, 0, "CUBLAS_COMPUTE_32F", true},  // 3% faster than algo 1: taken
        {"algo 4", true, 0.0096, 0, "CUBLAS_COMPUTE_32F", true},  // 1.03% faster than algo 3: not enough
    };
    EXPECT_EQ(cuda::pick_fastest(found, 0, 0.02), std::optional<std::size_t>(2));
    EXPECT_EQ(cuda::pick_fastest(found, 0), std::optional<std::size_t>(3));  // without: the fastest
    EXPECT_EQ(cuda::pick_fastest({found[0], found[1]}, 0, 0.02), std::optional<std::size_t>(0));
}

// The event timer's resolution from empty pairs' readings: the smallest step between distinct readings (1.024 -
// 0.512 = 0.512 us here), the smallest reading where all are equal, the documented 0.5 us where none is positive.
TEST(CudaTranslate, EventResolutionIsTheSmallestStepBetweenReadings) {
    EXPECT_DOUBLE_EQ(cuda::event_resolution_ns({2048, 1024, 1536, 1024, 2048}), 512);
    EXPECT_DOUBLE_EQ(cuda::event_resolution_ns({3072, 3072, 3072}), 3072);
    EXPECT_DOUBLE_EQ(cuda::event_resolution_ns({0, 0, 0}), 500);
    EXPECT_DOUBLE_EQ(cuda::event_resolution_ns({}), 500);
    EXPECT_DOUBLE_EQ(cuda::event_resolution_ns({0, 960, 1920}), 960);
}

// SM 0's mean clock between two timestamp readings: 1,980,000 cycles over 1 ms (1,000,000 ns) is 1,980 MHz; a
// reading SM 0 never wrote (zeros) or a clock that did not advance gives 0 (no reading), never a made-up clock.
TEST(CudaTranslate, MeanClockFromTwoTimestamps) {
    EXPECT_DOUBLE_EQ(cuda::mean_clock_mhz(5'000'000, 10'000, 6'000'000, 1'990'000), 1980.0);
    EXPECT_DOUBLE_EQ(cuda::mean_clock_mhz(0, 0, 6'000'000, 1'990'000), 0.0);
    EXPECT_DOUBLE_EQ(cuda::mean_clock_mhz(5'000'000, 10'000, 0, 0), 0.0);
    EXPECT_DOUBLE_EQ(cuda::mean_clock_mhz(5'000'000, 10'000, 5'000'000, 20'000), 0.0);
}

// NVML's clock event reasons named: nvml.h's bits (0x4 software power cap, 0x40 hardware thermal slowdown, ...).
TEST(CudaTranslate, ClockEventReasonsAreNamed) {
    EXPECT_EQ(cuda::clock_event_reasons_text(0), "none");
    EXPECT_EQ(cuda::clock_event_reasons_text(0x4), "power cap");
    EXPECT_EQ(cuda::clock_event_reasons_text(0x4 | 0x40), "power cap, thermal (hardware)");
    EXPECT_EQ(cuda::clock_event_reasons_text(0x1 | 0x1000), "GPU idle, other 0x1000");
    EXPECT_EQ(cuda::clock_event_reasons_text(0x2000), "other 0x2000");
}

// Each timed window of a candidate lasts >= 100 us: a 4 us GEMM is called 25 times, a 30 us one 4 times (ceil
// of 3.33), one of 100 us or more once; a time of 0 (below the events' resolution) or NaN gets the cap.
TEST(CudaTranslate, CallsPerWindowFillAHundredMicroseconds) {
    EXPECT_EQ(cuda::calls_per_window(0.004), 25);
    EXPECT_EQ(cuda::calls_per_window(0.030), 4);
    EXPECT_EQ(cuda::calls_per_window(0.1), 1);
    EXPECT_EQ(cuda::calls_per_window(2.5), 1);
    EXPECT_EQ(cuda::calls_per_window(0.0), 10000);
    EXPECT_EQ(cuda::calls_per_window(std::nan("")), 10000);
    EXPECT_EQ(cuda::calls_per_window(1e-9), 10000);  // capped
    EXPECT_EQ(cuda::calls_per_window(0.001, 0.5, 100), 100);
}

TEST(CudaTranslate, ConvolutionAlgorithmNames) {
    EXPECT_EQ(cuda::conv_fwd_algo_name(0), "IMPLICIT_GEMM");
    EXPECT_EQ(cuda::conv_fwd_algo_name(1), "IMPLICIT_PRECOMP_GEMM");
    EXPECT_EQ(cuda::conv_fwd_algo_name(6), "WINOGRAD");
    EXPECT_EQ(cuda::conv_fwd_algo_name(7), "WINOGRAD_NONFUSED");
    EXPECT_EQ(cuda::conv_fwd_algo_name(8), "ALGO_8");
    EXPECT_EQ(cuda::format_bytes(256), "256 B");
    EXPECT_EQ(cuda::format_bytes(3 << 19), "1.5 MiB");
}

// ------------------------------------------------------------------------------------------ ceilings

TEST(CudaTranslate, CeilingsArithmetic) {
    // 2 * 8192^3 FLOPs = 1,099,511,627,776 in 1 ms -> 1,099,511.627776 GFLOP/s
    EXPECT_NEAR(cuda::gemm_gflops(8192, 8192, 8192, 1.0), 1099511.627776, 1e-6);
    EXPECT_EQ(cuda::gemm_gflops(8, 8, 8, 0.0), 0.0);
    // a copy of 1 GiB in 1 ms reads 1 GiB and writes 1 GiB: 2 * 1,073,741,824 B / 1e-3 s = 2147.483648 GB/s
    EXPECT_NEAR(cuda::copy_gbs(1LL << 30, 1.0), 2147.483648, 1e-9);
    // H100 SXM: HBM3 at 2619 MHz on a 5120-bit bus -> 2 * 2.619e9 * 640 B = 3352.32 GB/s (datasheet: 3.35 TB/s)
    EXPECT_NEAR(cuda::theoretical_bandwidth_gbs(2619000, 5120), 3352.32, 1e-9);
    // flush: twice the L2, at least 8 MiB, whole MiB: H100's 50 MiB L2 -> 100 MiB; 1.5 MiB -> 8 MiB
    EXPECT_EQ(cuda::flush_bytes(50LL << 20), 100LL << 20);
    EXPECT_EQ(cuda::flush_bytes(3LL << 19), 8LL << 20);
    EXPECT_EQ(cuda::flush_bytes((40LL << 20) + 1), 81LL << 20);  // 80 MiB + 2 B, rounded up
    // copy benchmark: 8 x L2 (400 MiB) when free memory allows; capped at a quarter of the free memory
    EXPECT_EQ(cuda::copy_bench_bytes(50LL << 20, 80LL << 30, false), 400LL << 20);
    EXPECT_EQ(cuda::copy_bench_bytes(1LL << 20, 80LL << 30, false), 256LL << 20);
    EXPECT_EQ(cuda::copy_bench_bytes(1LL << 20, 80LL << 30, true), 64LL << 20);
    EXPECT_EQ(cuda::copy_bench_bytes(50LL << 20, 400LL << 20, false), 100LL << 20);
    EXPECT_EQ(cuda::working_set_sizes(1 << 20), (std::vector<std::int64_t>{256 << 10, 512 << 10, 1 << 20}));
    EXPECT_EQ(cuda::roof_gemm_size(core::dtype::bf16, false), 8192);
    EXPECT_EQ(cuda::roof_gemm_size(core::dtype::fp32, false), 4096);
    EXPECT_EQ(cuda::roof_gemm_size(core::dtype::fp16, true), 2048);
}

// ------------------------------------------------------------------------------------------ fused groups

namespace {

/// A fused group of the ops given (member 0 the producer), as core::fuse builds it: plan_fused reads the members' ops.
core::layer_analysis group_of(const std::vector<std::string>& ops) {
    core::layer_analysis g;
    for (std::size_t k = 0; k < ops.size(); ++k) {
        core::layer_analysis m;
        m.layer.name = "m" + std::to_string(k);
        m.layer.op = core::parse_op(ops[k]);
        g.fused.push_back(std::move(m));
    }
    g.layer = g.fused.front().layer;
    return g;
}

const std::string conv_no_bias = "conv2d:in_channels=8,out_channels=8,kernel_size=3,padding=1,bias=false";
const std::string bn = "batch_norm2d:num_features=8";
const std::string fc = "linear:in_features=8,out_features=8";

}  // namespace

TEST(FusedPlan, ConvolutionTakesTheFoldedBatchNormTheResidualAndRelu) {
    // a residual block's tail, conv -> bn -> add(., skip) -> relu: y = relu(conv(x, W') + 1 * skip + b'), all of
    // it one cudnnConvolutionBiasActivationForward (z = skip, alpha2 = 1; the folded batch norm is W' and b')
    const auto p = cuda::plan_fused(group_of({conv_no_bias, bn, "add", "relu"}), core::dtype::fp32);
    EXPECT_EQ(p.library, cuda::fused_plan::call::cudnn_conv_bias_activation);
    EXPECT_EQ(p.library_members, 4u);
    EXPECT_TRUE(p.fold_batch_norm);
    EXPECT_TRUE(p.bias);  // the convolution has none; the folded batch norm gives it one
    EXPECT_EQ(p.residual, std::optional<std::size_t>(2));
    EXPECT_EQ(p.activation, cuda::fused_activation::relu);
    EXPECT_FALSE(p.implicit_precomp_gemm_only);  // RELU runs with any algorithm
    EXPECT_EQ(p.after, "");
}

TEST(FusedPlan, ConvolutionRunsActivationsOtherThanReluAfter) {
    // mobilenet's conv -> bn -> relu6: cuDNN's fused call applies RELU or IDENTITY only, so the call is conv + b'
    // with IDENTITY (which only IMPLICIT_PRECOMP_GEMM runs) and relu6 is ridgeline's kernel after it
    for (const char* act : {"relu6", "silu", "hardswish", "sigmoid", "tanh", "gelu"}) {
        const auto p = cuda::plan_fused(group_of({conv_no_bias, bn, act}), core::dtype::fp32);
        EXPECT_EQ(p.library_members, 2u) << act;
        EXPECT_TRUE(p.fold_batch_norm) << act;
        EXPECT_EQ(p.activation, cuda::fused_activation::none) << act;
        EXPECT_TRUE(p.implicit_precomp_gemm_only) << act;
        EXPECT_EQ(p.after, "cudnnConvolutionBiasActivationForward applies relu or identity only") << act;
    }
}

TEST(FusedPlan, ConvolutionAppliesOneActivation) {
    // conv -> relu -> sigmoid: relu is the call's activation, its last step; sigmoid runs after. No bias: the
    // convolution has none and no batch norm is folded
    const auto p = cuda::plan_fused(group_of({conv_no_bias, "relu", "sigmoid"}), core::dtype::fp16);
    EXPECT_EQ(p.library_members, 2u);
    EXPECT_FALSE(p.bias);
    EXPECT_FALSE(p.fold_batch_norm);
    EXPECT_EQ(p.activation, cuda::fused_activation::relu);
    EXPECT_EQ(p.after, "the call applies one activation, its last step");
}

TEST(FusedPlan, Bf16ConvolutionFoldsTheBatchNormOnly) {
    // the fold is a change of weights (any data type); the fused call is not confirmed for bfloat16, so the add and
    // the relu run after the plain convolution
    const auto p = cuda::plan_fused(group_of({conv_no_bias, bn, "add", "relu"}), core::dtype::bf16);
    EXPECT_EQ(p.library_members, 2u);
    EXPECT_TRUE(p.fold_batch_norm);
    EXPECT_FALSE(p.residual.has_value());
    EXPECT_EQ(p.after, "bf16: cudnnConvolutionBiasActivationForward is not confirmed for bfloat16");
}

TEST(FusedPlan, LinearTakesBiasAndReluOrTanhGeluEpilogues) {
    // linear -> relu: CUBLASLT_EPILOGUE_RELU_BIAS; linear -> gelu(tanh): CUBLASLT_EPILOGUE_GELU_BIAS
    auto p = cuda::plan_fused(group_of({fc, "relu"}), core::dtype::fp32);
    EXPECT_EQ(p.library, cuda::fused_plan::call::cublaslt_matmul);
    EXPECT_EQ(p.library_members, 2u);
    EXPECT_TRUE(p.bias);
    EXPECT_EQ(p.activation, cuda::fused_activation::relu);
    EXPECT_FALSE(p.implicit_precomp_gemm_only);  // a cuDNN rule only
    p = cuda::plan_fused(group_of({fc, "gelu:approximate=tanh"}), core::dtype::bf16);
    EXPECT_EQ(p.library_members, 2u);
    EXPECT_EQ(p.activation, cuda::fused_activation::gelu_tanh);
    // the exact gelu (erf) is not the epilogue's: BERT's gelu runs after the GEMM
    p = cuda::plan_fused(group_of({fc, "gelu"}), core::dtype::fp32);
    EXPECT_EQ(p.library_members, 1u);
    EXPECT_EQ(p.activation, cuda::fused_activation::none);
    EXPECT_EQ(p.after, "cuBLASLt's GELU epilogue is the tanh approximation; this gelu is the exact (erf) one");
    // relu6 has no epilogue
    p = cuda::plan_fused(group_of({fc, "relu6"}), core::dtype::fp32);
    EXPECT_EQ(p.library_members, 1u);
    EXPECT_EQ(p.after, "cuBLASLt's epilogues apply relu or gelu only");
}

TEST(FusedPlan, LinearTakesAResidualThenAnActivation) {
    // D = gelu(W x + 1 * skip + b): beta * C is inside the results the epilogue transforms, so add then gelu is one
    // call; its residual is member 1
    const auto p = cuda::plan_fused(group_of({fc, "add", "gelu:approximate=tanh"}), core::dtype::fp16);
    EXPECT_EQ(p.library_members, 3u);
    EXPECT_EQ(p.residual, std::optional<std::size_t>(1));
    EXPECT_EQ(p.activation, cuda::fused_activation::gelu_tanh);
    EXPECT_EQ(p.after, "");
}

TEST(FusedPlan, AnActivationBeforeTheResidualAddRunsTheAddAfter) {
    // relu(W x + b) + skip: the epilogue's relu would come after beta * C, so the call stops at relu and the add is
    // ridgeline's kernel (core::fuse never builds this group; a hand-made one must still be planned right)
    auto p = cuda::plan_fused(group_of({fc, "relu", "add"}), core::dtype::fp32);
    EXPECT_EQ(p.library_members, 2u);
    EXPECT_FALSE(p.residual.has_value());
    EXPECT_EQ(p.after, "the call applies one activation, its last step");
    // an activation the call cannot take stops it too: silu, then the add, both after
    p = cuda::plan_fused(group_of({"matmul", "silu", "add"}), core::dtype::fp32);
    EXPECT_EQ(p.library_members, 1u);
    EXPECT_FALSE(p.bias);  // matmul has no bias
    EXPECT_FALSE(p.residual.has_value());
    // two residual adds: the call adds one (z or C); the second runs after
    p = cuda::plan_fused(group_of({fc, "add", "add"}), core::dtype::fp32);
    EXPECT_EQ(p.library_members, 2u);
    EXPECT_EQ(p.after, "the call adds one residual");
}

TEST(FusedPlan, ABroadcastResidualRunsAfter) {
    // z and C have the output's layout: an add whose skip broadcasts ([1, 8, 1, 1] over [1, 8, 4, 4], a gate; [8]
    // over [2, 8]) is not the call's residual, so it and the relu after it run as ridgeline's kernels
    auto g = group_of({conv_no_bias, bn, "add", "relu"});
    g.fused[2].input_shapes = {core::shape{1, 8, 4, 4}, core::shape{1, 8, 1, 1}};
    auto p = cuda::plan_fused(g, core::dtype::fp32);
    EXPECT_EQ(p.library_members, 2u);  // the fold only
    EXPECT_FALSE(p.residual.has_value());
    EXPECT_EQ(p.activation, cuda::fused_activation::none);
    EXPECT_EQ(p.after, "the residual add broadcasts: the call's z has the output's shape");
    g = group_of({fc, "add"});
    g.fused[1].input_shapes = {core::shape{2, 8}, core::shape{8}};
    p = cuda::plan_fused(g, core::dtype::fp32);
    EXPECT_EQ(p.library_members, 1u);
    EXPECT_EQ(p.after, "the residual add broadcasts: the call's C has the output's shape");
    // the same add without broadcast is the call's
    g.fused[1].input_shapes = {core::shape{2, 8}, core::shape{2, 8}};
    EXPECT_EQ(cuda::plan_fused(g, core::dtype::fp32).residual, std::optional<std::size_t>(1));
}

TEST(FusedPlan, RefusesWhatIsNoGroup) {
    // no members: a plain layer
    EXPECT_THROW((void)cuda::plan_fused(core::layer_analysis{}, core::dtype::fp32), core::error);
    // a producer that is none of conv2d, linear, matmul
    EXPECT_THROW((void)cuda::plan_fused(group_of({"relu", "relu"}), core::dtype::fp32),
                 core::error);
}
