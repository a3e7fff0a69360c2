// Reference loops: every op against values derived by hand (the arithmetic is in the comments), plus
// random-input checks of the optimised loops (conv2d, linear, matmul) against direct formulas.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/core/layer.hpp"
#include "ridgeline/cpu/reference.hpp"

namespace {

namespace core = ridgeline::core;
using ridgeline::backend_api::backend_error;
using ridgeline::backend_api::host_tensor;
using ridgeline::cpu::reference_forward;

host_tensor tensor(core::shape dims, std::vector<float> values) {
    EXPECT_EQ(static_cast<std::int64_t>(values.size()), dims.numel()) << "test data for " << dims.to_string();
    return host_tensor{std::move(dims), std::move(values)};
}

/// Uniform in [-1, 1], seeded: never all zeros.
std::vector<float> random_values(std::int64_t n, std::uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.0F, 1.0F);
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = dist(gen);
    return v;
}

/// Parses `text`, infers the output shape from the inputs, runs the reference and checks that the result
/// has that shape and that every element was written (the reference poisons its output with NaN).
host_tensor run(const std::string& text, const std::vector<host_tensor>& inputs,
                const std::map<std::string, host_tensor>& params = {}) {
    const core::layer l{"t", core::parse_op(text), {}, {}};
    core::shapes shapes;
    std::vector<const host_tensor*> in;
    for (const auto& t : inputs) {
        shapes.push_back(t.dims);
        in.push_back(&t);
    }
    std::map<std::string, const host_tensor*> p;
    for (const auto& [name, t] : params) p[name] = &t;
    const core::shape out_shape = core::infer_shape(l, shapes);
    host_tensor out = reference_forward(l, in, p, out_shape);
    EXPECT_EQ(out.dims, out_shape);
    EXPECT_EQ(static_cast<std::int64_t>(out.data.size()), out_shape.numel());
    for (std::size_t i = 0; i < out.data.size(); ++i) EXPECT_FALSE(std::isnan(out.data[i])) << "element " << i;
    return out;
}

void expect_values(const host_tensor& out, const std::vector<double>& expected, double tolerance = 1e-6) {
    ASSERT_EQ(out.data.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i)
        EXPECT_NEAR(out.data[i], expected[i], tolerance * std::max(1.0, std::abs(expected[i]))) << "element " << i;
}

/// Linear's formula in double: y[r, o] = b[o] (0 without a bias) + sum_k x[r, k] * W[o, k], rows in order.
std::vector<double> linear_formula(const host_tensor& x, const host_tensor& w, const host_tensor* b, std::int64_t rows,
                                   std::int64_t in_f, std::int64_t out_f) {
    std::vector<double> expected;
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t o = 0; o < out_f; ++o) {
            double s = b ? b->data[static_cast<std::size_t>(o)] : 0;
            for (std::int64_t k = 0; k < in_f; ++k)
                s += double{x.data[static_cast<std::size_t>(r * in_f + k)]} *
                     w.data[static_cast<std::size_t>(o * in_f + k)];
            expected.push_back(s);
        }
    return expected;
}

// The 3x3 and 4x4 images several tests share.
const std::vector<float> image3{1, -2, 3,  //
                                0.5F, 4, -1,  //
                                2, -3, 1.5F};
const std::vector<float> image4{0.5F, -1, 2,     1.5F,  //
                                3,    -2, 1,     -0.5F,  //
                                -1,   4,  0.25F, 2,      //
                                1.5F, -3, 2.5F,  -1};

// ------------------------------------------------------------------ dense

TEST(ReferenceLinear, HandComputed) {
    // y = x W^T + b, x = [[1, 2, 3], [-1, 0.5, 2]], W = [[0.5, -1, 2], [1.5, 0.25, -0.5]], b = [0.1, -0.2]:
    //   y00 = 1*0.5 + 2*(-1) + 3*2 + 0.1      = 0.5 - 2 + 6 + 0.1       = 4.6
    //   y01 = 1*1.5 + 2*0.25 + 3*(-0.5) - 0.2 = 1.5 + 0.5 - 1.5 - 0.2   = 0.3
    //   y10 = -1*0.5 + 0.5*(-1) + 2*2 + 0.1   = -0.5 - 0.5 + 4 + 0.1    = 3.1
    //   y11 = -1*1.5 + 0.5*0.25 + 2*(-0.5) - 0.2 = -1.5 + 0.125 - 1 - 0.2 = -2.575
    const auto out = run("linear:in_features=3,out_features=2", {tensor({2, 3}, {1, 2, 3, -1, 0.5F, 2})},
                         {{"weight", tensor({2, 3}, {0.5F, -1, 2, 1.5F, 0.25F, -0.5F})},
                          {"bias", tensor({2}, {0.1F, -0.2F})}});
    EXPECT_EQ(out.dims, (core::shape{2, 2}));
    expect_values(out, {4.6, 0.3, 3.1, -2.575});
}

TEST(ReferenceLinear, RandomRank3AgainstTheFormula) {
    // 11 outputs: one full block of 8 and a partial block of 3; rows are the 2*3 leading positions.
    const std::int64_t in_f = 5, out_f = 11, rows = 6;
    const auto x = tensor({2, 3, in_f}, random_values(rows * in_f, 1));
    const auto w = tensor({out_f, in_f}, random_values(out_f * in_f, 2));
    const auto out = run("linear:in_features=5,out_features=11,bias=false", {x}, {{"weight", w}});
    EXPECT_EQ(out.dims, (core::shape{2, 3, out_f}));
    expect_values(out, linear_formula(x, w, nullptr, rows, in_f, out_f));
}

TEST(ReferenceLinear, RandomManyRowsAndBlocksAgainstTheFormula) {
    // 130 rows (chunks of 64: 64 + 64 + 2) and 70 outputs (blocks of 64: 64 + 6), with bias.
    const std::int64_t in_f = 7, out_f = 70, rows = 130;
    const auto x = tensor({rows, in_f}, random_values(rows * in_f, 12));
    const auto w = tensor({out_f, in_f}, random_values(out_f * in_f, 13));
    const auto b = tensor({out_f}, random_values(out_f, 14));
    const auto out = run("linear:in_features=7,out_features=70", {x}, {{"weight", w}, {"bias", b}});
    expect_values(out, linear_formula(x, w, &b, rows, in_f, out_f));
}

TEST(ReferenceMatmul, BroadcastBatchHandComputed) {
    // A [2,1,1,2] x B [3,2,1]: batch dims [2,1] and [3] broadcast to [2,3]; each product is 1x2 by 2x1.
    //   A[0] = [1, 2], A[1] = [-1, 0.5]; B[0] = [3, -1]^T, B[1] = [0.5, 2]^T, B[2] = [-2, 4]^T
    //   out[0,0] = 1*3 + 2*(-1) = 1       out[0,1] = 1*0.5 + 2*2 = 4.5      out[0,2] = -2 + 8 = 6
    //   out[1,0] = -3 + 0.5*(-1) = -3.5   out[1,1] = -0.5 + 0.5*2 = 0.5     out[1,2] = 2 + 0.5*4 = 4
    const auto out = run("matmul", {tensor({2, 1, 1, 2}, {1, 2, -1, 0.5F}),
                                    tensor({3, 2, 1}, {3, -1, 0.5F, 2, -2, 4})});
    EXPECT_EQ(out.dims, (core::shape{2, 3, 1, 1}));
    expect_values(out, {1, 4.5, 6, -3.5, 0.5, 4});
}

TEST(ReferenceMatmul, RandomBroadcastAgainstTheFormula) {
    // A [2,1,3,4] x B [3,4,5] -> [2,3,3,5]: out[i,j] = A[i,0] x B[j].
    const auto a = tensor({2, 1, 3, 4}, random_values(24, 3));
    const auto b = tensor({3, 4, 5}, random_values(60, 4));
    const auto out = run("matmul", {a, b});
    EXPECT_EQ(out.dims, (core::shape{2, 3, 3, 5}));
    std::vector<double> expected;
    for (std::size_t i = 0; i < 2; ++i)
        for (std::size_t j = 0; j < 3; ++j)
            for (std::size_t m = 0; m < 3; ++m)
                for (std::size_t n = 0; n < 5; ++n) {
                    double s = 0;
                    for (std::size_t k = 0; k < 4; ++k)
                        s += double{a.data[i * 12 + m * 4 + k]} * b.data[j * 20 + k * 5 + n];
                    expected.push_back(s);
                }
    expect_values(out, expected);
}

TEST(ReferenceEmbedding, LooksUpRows) {
    // weight rows: 0 = [1.5, -2], 1 = [0.25, 3], 2 = [-0.75, 0.5]; ids [[2, 0, 2]] -> rows 2, 0, 2.
    const auto weight = tensor({3, 2}, {1.5F, -2, 0.25F, 3, -0.75F, 0.5F});
    const auto out =
        run("embedding:num_embeddings=3,embedding_dim=2", {tensor({1, 3}, {2, 0, 2})}, {{"weight", weight}});
    EXPECT_EQ(out.dims, (core::shape{1, 3, 2}));
    expect_values(out, {-0.75, 0.5, 1.5, -2, -0.75, 0.5});
    // id 3 is past the table (num_embeddings 3), 1.5 is not an integer.
    try {
        (void)run("embedding:num_embeddings=3,embedding_dim=2", {tensor({2}, {0, 3})}, {{"weight", weight}});
        ADD_FAILURE() << "id 3 was accepted";
    } catch (const backend_error& e) {
        EXPECT_STREQ(e.what(), "embedding \"t\": token id 3 at position 1 is not an integer in [0, 3)");
    }
    EXPECT_THROW(run("embedding:num_embeddings=3,embedding_dim=2", {tensor({1}, {1.5F})}, {{"weight", weight}}),
                 backend_error);
}

// ------------------------------------------------------------------ convolution

TEST(ReferenceConv2d, TwoByTwoKernelHandComputed) {
    // x = image3 = [[1, -2, 3], [0.5, 4, -1], [2, -3, 1.5]], W = [[1, 0.5], [-1, 2]], b = 0.25, no padding:
    //   y00 = 1*1 + (-2)*0.5 + 0.5*(-1) + 4*2 + 0.25    = 1 - 1 - 0.5 + 8 + 0.25   = 7.75
    //   y01 = (-2)*1 + 3*0.5 + 4*(-1) + (-1)*2 + 0.25   = -2 + 1.5 - 4 - 2 + 0.25 = -6.25
    //   y10 = 0.5*1 + 4*0.5 + 2*(-1) + (-3)*2 + 0.25    = 0.5 + 2 - 2 - 6 + 0.25  = -5.25
    //   y11 = 4*1 + (-1)*0.5 + (-3)*(-1) + 1.5*2 + 0.25 = 4 - 0.5 + 3 + 3 + 0.25  = 9.75
    const auto out = run("conv2d:in_channels=1,out_channels=1,kernel_size=2", {tensor({1, 1, 3, 3}, image3)},
                         {{"weight", tensor({1, 1, 2, 2}, {1, 0.5F, -1, 2})}, {"bias", tensor({1}, {0.25F})}});
    EXPECT_EQ(out.dims, (core::shape{1, 1, 2, 2}));
    expect_values(out, {7.75, -6.25, -5.25, 9.75});
}

TEST(ReferenceConv2d, GroupsReadOnlyTheirChannels) {
    // groups=2, in 4, out 2, 1x1 kernel: out channel g sums input channels 2g and 2g+1.
    //   x = [1, 2, 3, 4] (1x1 images), W = [[0.5, -1], [2, 0.25]]
    //   y0 = 0.5*1 + (-1)*2 = -1.5;  y1 = 2*3 + 0.25*4 = 7  (reading channels 0, 1 would give 2.5)
    const auto out =
        run("conv2d:in_channels=4,out_channels=2,kernel_size=1,groups=2,bias=false",
            {tensor({1, 4, 1, 1}, {1, 2, 3, 4})}, {{"weight", tensor({2, 2, 1, 1}, {0.5F, -1, 2, 0.25F})}});
    expect_values(out, {-1.5, 7});
}

TEST(ReferenceConv2d, StrideDilationAsymmetricPadding) {
    // x = image4 (4x4), W = [[1, -0.5], [2, 0.25]], stride 2, dilation 2, padding top 1, left 0, bottom 0,
    // right 1. H_out = floor((4 + 1 + 0 - 2*1 - 1) / 2) + 1 = 2, W_out = floor((4 + 0 + 1 - 3) / 2) + 1 = 2.
    // ih = 2*oh - 1 + 2*kh: oh 0 -> rows -1 (pad), 1; oh 1 -> rows 1, 3.
    // iw = 2*ow + 2*kw:     ow 0 -> cols 0, 2;      ow 1 -> cols 2, 4 (pad).
    //   y00 = 2*x[1][0] + 0.25*x[1][2]                             = 2*3 + 0.25*1            = 6.25
    //   y01 = 2*x[1][2]                                            = 2*1                     = 2
    //   y10 = 1*x[1][0] - 0.5*x[1][2] + 2*x[3][0] + 0.25*x[3][2]   = 3 - 0.5 + 3 + 0.625     = 6.125
    //   y11 = 1*x[1][2] + 2*x[3][2]                                = 1 + 5                   = 6
    const auto out = run("conv2d:in_channels=1,out_channels=1,kernel_size=2,stride=2,padding=1x0x0x1,dilation=2,"
                         "bias=false",
                         {tensor({1, 1, 4, 4}, image4)}, {{"weight", tensor({1, 1, 2, 2}, {1, -0.5F, 2, 0.25F})}});
    EXPECT_EQ(out.dims, (core::shape{1, 1, 2, 2}));
    expect_values(out, {6.25, 2, 6.125, 6});
}

TEST(ReferenceConv2d, SamePaddingWithEvenKernelPadsAfter) {
    // kernel 2, padding "same": total padding 1 per axis, 0 before and 1 after (PyTorch), so
    // y[i][j] = x[i][j]*1 + x[i][j+1]*0.5 - x[i+1][j] + 2*x[i+1][j+1], x = image3, zero outside 3x3:
    //   y00 = 1 - 1 - 0.5 + 8 = 7.5      y01 = -2 + 1.5 - 4 - 2 = -6.5   y02 = 3 + 0 + 1 + 0 = 4
    //   y10 = 0.5 + 2 - 2 - 6 = -5.5     y11 = 4 - 0.5 + 3 + 3 = 9.5     y12 = -1 + 0 - 1.5 + 0 = -2.5
    //   y20 = 2 - 1.5 = 0.5              y21 = -3 + 0.75 = -2.25         y22 = 1.5
    const auto out = run("conv2d:in_channels=1,out_channels=1,kernel_size=2,padding=same,bias=false",
                         {tensor({1, 1, 3, 3}, image3)}, {{"weight", tensor({1, 1, 2, 2}, {1, 0.5F, -1, 2})}});
    EXPECT_EQ(out.dims, (core::shape{1, 1, 3, 3}));
    expect_values(out, {7.5, -6.5, 4, -5.5, 9.5, -2.5, 0.5, -2.25, 1.5});
}

/// y[n, oc, oh, ow] = b[oc] + sum over ic < C/groups, kh, kw of x[n, g*C/groups + ic, ih, iw] * W[oc, ic, kh, kw]
/// with ih = oh*sh - top + kh*dh, iw = ow*sw - left + kw*dw inside the image and g = oc / (OC/groups).
std::vector<double> direct_conv(const host_tensor& x, const host_tensor& w, const host_tensor& b,
                                const core::shape& out, std::int64_t groups, std::int64_t sh, std::int64_t sw,
                                std::int64_t dh, std::int64_t dw, std::int64_t top, std::int64_t left) {
    const std::int64_t c = x.dims[1], h = x.dims[2], wd = x.dims[3];
    const std::int64_t oc_n = out[1], kh_n = w.dims[2], kw_n = w.dims[3], cg = c / groups;
    std::vector<double> y;
    for (std::int64_t n = 0; n < out[0]; ++n)
        for (std::int64_t oc = 0; oc < oc_n; ++oc)
            for (std::int64_t oh = 0; oh < out[2]; ++oh)
                for (std::int64_t ow = 0; ow < out[3]; ++ow) {
                    double s = b.data[static_cast<std::size_t>(oc)];
                    const std::int64_t g = oc / (oc_n / groups);
                    for (std::int64_t ic = 0; ic < cg; ++ic)
                        for (std::int64_t kh = 0; kh < kh_n; ++kh)
                            for (std::int64_t kw = 0; kw < kw_n; ++kw) {
                                const std::int64_t ih = oh * sh - top + kh * dh, iw = ow * sw - left + kw * dw;
                                if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
                                s +=
                                    double{
                                        x.data[static_cast<std::size_t>(((n * c + g * cg + ic) * h + ih) * wd + iw)]} *
                                    w.data[static_cast<std::size_t>(((oc * cg + ic) * kh_n + kh) * kw_n + kw)];
                            }
                    y.push_back(s);
                }
    return y;
}

TEST(ReferenceConv2d, RandomEverythingAgainstTheFormula) {
    // Batch 2, 6 -> 4 channels in 2 groups, kernel 3x2, stride 3x2, dilation 1x2, padding (top 2, left 1,
    // bottom 0, right 3) on a 7x9 image: strides above 1 with padding exercise every clipped tap range.
    const auto x = tensor({2, 6, 7, 9}, random_values(2 * 6 * 7 * 9, 5));
    const auto w = tensor({4, 3, 3, 2}, random_values(4 * 3 * 3 * 2, 6));
    const auto b = tensor({4}, random_values(4, 7));
    const auto out = run("conv2d:in_channels=6,out_channels=4,kernel_size=3x2,stride=3x2,padding=2x1x0x3,"
                         "dilation=1x2,groups=2",
                         {x}, {{"weight", w}, {"bias", b}});
    expect_values(out, direct_conv(x, w, b, out.dims, 2, 3, 2, 1, 2, 2, 1));
}

TEST(ReferenceConv2d, RandomStrideOneSamePaddingAgainstTheFormula) {
    // 5x5 kernel, dilation 2, "same": 4 rows and columns of padding on each side.
    const auto x = tensor({1, 3, 6, 11}, random_values(3 * 6 * 11, 8));
    const auto w = tensor({5, 3, 5, 5}, random_values(5 * 3 * 25, 9));
    const auto b = tensor({5}, random_values(5, 10));
    const auto out = run("conv2d:in_channels=3,out_channels=5,kernel_size=5,padding=same,dilation=2", {x},
                         {{"weight", w}, {"bias", b}});
    EXPECT_EQ(out.dims, (core::shape{1, 5, 6, 11}));
    expect_values(out, direct_conv(x, w, b, out.dims, 1, 1, 1, 2, 2, 4, 4));
}

TEST(ReferenceConv2d, RandomWideImagesSpanSeveralRowTiles) {
    // Width 400: the loops sum tiles of floor(1024/400) = 2 output rows, so 7 rows make 4 tiles (the last
    // partial). 1x1 stride 1 takes the whole-tile path; 3x3 with padding 1 the row-by-row path.
    const auto x = tensor({1, 3, 7, 400}, random_values(3 * 7 * 400, 15));
    const auto b = tensor({5}, random_values(5, 16));
    const auto w1 = tensor({5, 3, 1, 1}, random_values(15, 17));
    const auto out1 = run("conv2d:in_channels=3,out_channels=5,kernel_size=1", {x}, {{"weight", w1}, {"bias", b}});
    expect_values(out1, direct_conv(x, w1, b, out1.dims, 1, 1, 1, 1, 1, 0, 0));
    const auto w3 = tensor({5, 3, 3, 3}, random_values(135, 18));
    const auto out3 =
        run("conv2d:in_channels=3,out_channels=5,kernel_size=3,padding=1", {x}, {{"weight", w3}, {"bias", b}});
    EXPECT_EQ(out3.dims, (core::shape{1, 5, 7, 400}));
    expect_values(out3, direct_conv(x, w3, b, out3.dims, 1, 1, 1, 1, 1, 1, 1));
}

TEST(ReferenceConv2d, RandomDepthwiseAgainstTheFormula) {
    // groups = in_channels = out_channels = 3 (MobileNet's depthwise 3x3, stride 2, padding 1).
    const auto x = tensor({2, 3, 9, 8}, random_values(2 * 3 * 9 * 8, 19));
    const auto w = tensor({3, 1, 3, 3}, random_values(27, 20));
    const auto b = tensor({3}, random_values(3, 21));
    const auto out = run("conv2d:in_channels=3,out_channels=3,kernel_size=3,stride=2,padding=1,groups=3", {x},
                         {{"weight", w}, {"bias", b}});
    EXPECT_EQ(out.dims, (core::shape{2, 3, 5, 4}));  // floor((9 + 2 - 3)/2) + 1 = 5, floor((8 + 2 - 3)/2) + 1 = 4
    expect_values(out, direct_conv(x, w, b, out.dims, 3, 2, 2, 1, 1, 1, 1));
}

// ------------------------------------------------------------------ normalisation

TEST(ReferenceBatchNorm2d, InferenceFormula) {
    // eps 0.75, running_var [3.25, 0.25] -> sqrt(var + eps) = [2, 1]; running_mean [2, -1];
    // weight [0.5, 2], bias [0.1, -0.3]; channel 0 = [1, 3], channel 1 = [-2, 0.5]:
    //   (1 - 2)/2*0.5 + 0.1 = -0.15     (3 - 2)/2*0.5 + 0.1 = 0.35
    //   (-2 + 1)/1*2 - 0.3  = -2.3      (0.5 + 1)/1*2 - 0.3 = 2.7
    const auto x = tensor({1, 2, 1, 2}, {1, 3, -2, 0.5F});
    const std::map<std::string, host_tensor> stats{{"running_mean", tensor({2}, {2, -1})},
                                                   {"running_var", tensor({2}, {3.25F, 0.25F})}};
    auto params = stats;
    params["weight"] = tensor({2}, {0.5F, 2});
    params["bias"] = tensor({2}, {0.1F, -0.3F});
    expect_values(run("batch_norm2d:num_features=2,eps=0.75", {x}, params), {-0.15, 0.35, -2.3, 2.7});
    // affine=false: (1 - 2)/2 = -0.5, (3 - 2)/2 = 0.5, (-2 + 1)/1 = -1, (0.5 + 1)/1 = 1.5
    expect_values(run("batch_norm2d:num_features=2,eps=0.75,affine=false", {x}, stats), {-0.5, 0.5, -1, 1.5});
}

TEST(ReferenceLayerNorm, NormalisesTrailingDims) {
    // eps 0.5. Row 0 = [1, 2, 3, 6]: mean 3, deviations [-2, -1, 0, 3], biased variance (4+1+0+9)/4 = 3.5,
    //   sqrt(3.5 + 0.5) = 2 -> [-1, -0.5, 0, 1.5].
    // Row 1 = [-2.5, 1.5, 2.5, 0.5]: mean 0.5, deviations [-3, 1, 2, 0], variance (9+1+4+0)/4 = 3.5
    //   -> [-1.5, 0.5, 1, 0].
    // Affine with weight [1, 2, 0.5, -1], bias [0.5, 0, 1, -0.5]:
    //   row 0: [-1+0.5, -1+0, 0+1, -1.5-0.5] = [-0.5, -1, 1, -2]
    //   row 1: [-1.5+0.5, 1+0, 0.5+1, 0-0.5] = [-1, 1, 1.5, -0.5]
    const std::vector<float> rows{1, 2, 3, 6, -2.5F, 1.5F, 2.5F, 0.5F};
    expect_values(run("layer_norm:normalized_shape=4,eps=0.5", {tensor({2, 4}, rows)},
                      {{"weight", tensor({4}, {1, 2, 0.5F, -1})}, {"bias", tensor({4}, {0.5F, 0, 1, -0.5F})}}),
                  {-0.5, -1, 1, -2, -1, 1, 1.5, -0.5});
    // bias=false: the weight alone, row 0 [-1, -1, 0, -1.5], row 1 [-1.5, 1, 0.5, 0]
    expect_values(run("layer_norm:normalized_shape=4,eps=0.5,bias=false", {tensor({2, 4}, rows)},
                      {{"weight", tensor({4}, {1, 2, 0.5F, -1})}}),
                  {-1, -1, 0, -1.5, -1.5, 1, 0.5, 0});
    // The same rows as [2, 2, 2] normalised over the trailing 2x2, no affine transform.
    expect_values(run("layer_norm:normalized_shape=2x2,eps=0.5,elementwise_affine=false", {tensor({2, 2, 2}, rows)}),
                  {-1, -0.5, 0, 1.5, -1.5, 0.5, 1, 0});
}

// ------------------------------------------------------------------ elementwise

TEST(ReferenceActivations, ReluAndRelu6) {
    const auto x = tensor({1, 5}, {-2, -0.5F, 0.75F, 7, 3});
    expect_values(run("relu", {x}), {0, 0, 0.75, 7, 3});   // max(x, 0)
    expect_values(run("relu6", {x}), {0, 0, 0.75, 6, 3});  // min(max(x, 0), 6)
}

TEST(ReferenceActivations, Gelu) {
    // erf form: gelu(x) = x * Phi(x), Phi the standard normal CDF (tables: Phi(1) = 0.8413447461,
    // Phi(2) = 0.9772498681, Phi(0.5) = 0.6914624613):
    //   gelu(1) = 0.8413447461; gelu(-1) = -(1 - 0.8413447461) = -0.1586552539
    //   gelu(2) = 2*0.9772498681 = 1.9544997361; gelu(-0.5) = -0.5*(1 - 0.6914624613) = -0.1542687694
    const auto x = tensor({4}, {1, -1, 2, -0.5F});
    expect_values(run("gelu", {x}), {0.8413447461, -0.1586552539, 1.9544997361, -0.1542687694});
    // tanh form: 0.5*x*(1 + tanh(u)), u = sqrt(2/pi)*(x + 0.044715*x^3), sqrt(2/pi) = 0.7978845608:
    //   x=1:    u = 0.7978845608*1.044715  = 0.8335619689, tanh = 0.6823839812, 0.5*1.6823839812 = 0.8411919906
    //   x=-1:   u = -0.8335619689, tanh = -0.6823839812, -0.5*0.3176160188 = -0.1588080094
    //   x=2:    u = 0.7978845608*2.35772   = 1.8811883867, tanh = 0.9545976941, 1*1.9545976941 = 1.9545976941
    //   x=-0.5: u = 0.7978845608*-0.50558938 = -0.4034019564, tanh = -0.3828560393,
    //           -0.25*0.6171439607 = -0.1542859902
    expect_values(run("gelu:approximate=tanh", {x}), {0.8411919906, -0.1588080094, 1.9545976941, -0.1542859902});
}

TEST(ReferenceActivations, TanhSigmoidScale) {
    // tanh(0.5) = 0.4621171573, tanh(-1) = -0.7615941560;
    // sigmoid: 1/(1+e^-1) = 0.7310585786, 1/(1+e^2) = 0.1192029220 (x = -2), 1/(1+e^-0.5) = 0.6224593312.
    expect_values(run("tanh", {tensor({2}, {0.5F, -1})}), {0.4621171573, -0.7615941560});
    expect_values(run("sigmoid", {tensor({3}, {1, -2, 0.5F})}), {0.7310585786, 0.1192029220, 0.6224593312});
    // hardswish x * relu6(x + 3) / 6: -4 -> 0 (clamped at 0), -1.5 -> -1.5 * 1.5 / 6 = -0.375,
    // 1 -> 1 * 4 / 6 = 0.6666666667, 4 -> 4 (x + 3 = 7 clamps to 6)
    expect_values(run("hardswish", {tensor({4}, {-4, -1.5F, 1, 4})}), {0, -0.375, 0.6666666667, 4});
    // hardsigmoid relu6(x + 3) / 6: -4 -> 0, -1.5 -> 0.25, 1 -> 0.6666666667, 4 -> 1
    expect_values(run("hardsigmoid", {tensor({4}, {-4, -1.5F, 1, 4})}), {0, 0.25, 0.6666666667, 1});
    // silu x / (1 + e^-x): 1 -> 0.7310585786, -2 -> -2 * 0.1192029220 = -0.2384058440, 0 -> 0
    expect_values(run("silu", {tensor({3}, {1, -2, 0})}), {0.7310585786, -0.2384058440, 0});
    // erf(0.5) = 0.5204998778, erf(-1) = -0.8427007929; sqrt(2.25) = 1.5, sqrt(0.25) = 0.5;
    // exp(1) = 2.7182818285, exp(-2) = 0.1353352832; neg; pow(x, 3): -2 -> -8, 0.5 -> 0.125; pow(x, 0.5): 4 -> 2
    expect_values(run("erf", {tensor({2}, {0.5F, -1})}), {0.5204998778, -0.8427007929});
    expect_values(run("sqrt", {tensor({2}, {2.25F, 0.25F})}), {1.5, 0.5});
    expect_values(run("exp", {tensor({2}, {1, -2})}), {2.7182818285, 0.1353352832});
    expect_values(run("neg", {tensor({2}, {1.5F, -2})}), {-1.5, 2});
    expect_values(run("pow:exponent=3", {tensor({2}, {-2, 0.5F})}), {-8, 0.125});
    expect_values(run("pow:exponent=0.5", {tensor({1}, {4})}), {2});
    // sub and div keep their operand order: [6, 1] - [2] = [4, -1]; [6, 1] / [2] = [3, 0.5]; [2] / [6, 1] = [1/3, 2]
    expect_values(run("sub", {tensor({2}, {6, 1}), tensor({1}, {2})}), {4, -1});
    expect_values(run("div", {tensor({2}, {6, 1}), tensor({1}, {2})}), {3, 0.5});
    expect_values(run("div", {tensor({1}, {2}), tensor({2}, {6, 1})}), {0.3333333333, 2});
    // [[1, 2, 3], [4, 5, 9]]: sum over dim 1 = [6, 18], mean = [2, 6], amax over dim 0 = [4, 5, 9], mean of all
    // kept = [[4]]
    const host_tensor m = tensor({2, 3}, {1, 2, 3, 4, 5, 9});
    expect_values(run("sum:dim=1", {m}), {6, 18});
    expect_values(run("mean:dim=-1", {m}), {2, 6});
    expect_values(run("amax:dim=0", {m}), {4, 5, 9});
    expect_values(run("mean:keepdim=true", {m}), {4});
    // x * 0.125: 3*0.125 = 0.375, -0.5*0.125 = -0.0625, 10*0.125 = 1.25
    expect_values(run("scale:factor=0.125", {tensor({3}, {3, -0.5F, 10})}), {0.375, -0.0625, 1.25});
}

TEST(ReferenceWhere, PicksWhereTheConditionIsPositive) {
    // condition [1, 0, -2] (true, false, false) broadcast over 2 rows: row 0 [1, 2, 3] vs other 9 -> [1, 9, 9];
    // row 1 [4, 5, 6] -> [4, 9, 9]
    expect_values(run("where", {tensor({3}, {1, 0, -2}), tensor({2, 3}, {1, 2, 3, 4, 5, 6}), tensor({1}, {9})}),
                  {1, 9, 9, 4, 9, 9});
    // a column condition [[0.5], [0]] picks row 0 from input, row 1 from other [7, 8]
    expect_values(run("where", {tensor({2, 1}, {0.5F, 0}), tensor({2, 2}, {1, 2, 3, 4}), tensor({2}, {7, 8})}),
                  {1, 2, 7, 8});
}

TEST(ReferenceResample, ExpandRepeatsDimensionsOfOne) {
    // [[1], [2]] (2x1) expanded to 2x2x3: each row's value three times, the whole twice
    expect_values(run("expand:size=2x2x3", {tensor({2, 1}, {1, 2})}), {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2});
}

TEST(ReferenceResample, PadModesByHand) {
    // x = [1, 2, 3], pad (2, 1): constant 0 -> [0, 0, 1, 2, 3, 0]; value 7 -> [7, 7, 1, 2, 3, 7];
    // reflect mirrors without the edge -> [3, 2, 1, 2, 3, 2]; replicate repeats it -> [1, 1, 1, 2, 3, 3]
    const host_tensor x = tensor({3}, {1, 2, 3});
    expect_values(run("pad:pad=2x1", {x}), {0, 0, 1, 2, 3, 0});
    expect_values(run("pad:pad=2x1,value=7", {x}), {7, 7, 1, 2, 3, 7});
    expect_values(run("pad:pad=2x1,mode=reflect", {x}), {3, 2, 1, 2, 3, 2});
    expect_values(run("pad:pad=2x1,mode=replicate", {x}), {1, 1, 1, 2, 3, 3});
    // [[1, 2], [3, 4]] padded (0, 0) on W and (1, 0) on H with replicate: the first row repeated above
    expect_values(run("pad:pad=0x0x1x0,mode=replicate", {tensor({2, 2}, {1, 2, 3, 4})}), {1, 2, 1, 2, 3, 4});
}

TEST(ReferenceResample, InterpolateByHand) {
    // 1x1x2x2 [[1, 2], [3, 4]] nearest to 4x4: index floor(o * 2 / 4) = 0, 0, 1, 1 on both axes
    const host_tensor x = tensor({1, 1, 2, 2}, {1, 2, 3, 4});
    expect_values(run("interpolate:size=4", {x}), {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
    // nearest down 1x1x1x3 [5, 6, 7] to width 2: floor(o * 1.5) = 0, 1 -> [5, 6]
    expect_values(run("interpolate:size=1x2", {tensor({1, 1, 1, 3}, {5, 6, 7})}), {5, 6});
    // bilinear 1x1x1x2 [0, 4] to width 4, align_corners=false: source (o + 0.5) * 0.5 - 0.5 = -0.25 (clamped to 0),
    // 0.25, 0.75, 1.25 (both neighbours 1) -> [0, 1, 3, 4]
    const host_tensor r = tensor({1, 1, 1, 2}, {0, 4});
    expect_values(run("interpolate:size=1x4,mode=bilinear", {r}), {0, 1, 3, 4});
    // align_corners=true: source o * (2 - 1) / (4 - 1) = 0, 1/3, 2/3, 1 -> [0, 4/3, 8/3, 4]
    expect_values(run("interpolate:size=1x4,mode=bilinear,align_corners=true", {r}), {0, 1.3333333333, 2.6666666667, 4});
    // both axes: [[1, 2], [3, 4]] to 3x3 with align_corners=true: corners kept, centre the mean 2.5
    expect_values(run("interpolate:size=3,mode=bilinear,align_corners=true", {x}), {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
}

TEST(ReferenceSoftmax, LastDimStableAndFirstDim) {
    // Row [1, 2, 3]: exp(x - 3) = [e^-2, e^-1, 1] = [0.1353352832, 0.3678794412, 1], sum 1.5032147244
    //   -> [0.0900305732, 0.2447284711, 0.6652409558]. Row [1000, 1001, 1002] gives the same (exp(1000)
    //   would overflow without subtracting the max).
    expect_values(run("softmax", {tensor({2, 3}, {1, 2, 3, 1000, 1001, 1002})}),
                  {0.0900305732, 0.2447284711, 0.6652409558, 0.0900305732, 0.2447284711, 0.6652409558});
    // dim 0 of [[1, 3], [2, -1]]: column [1, 2] -> [1/(1+e), e/(1+e)] = [0.2689414214, 0.7310585786];
    //   column [3, -1] -> [1/(1+e^-4), e^-4/(1+e^-4)] = [0.9820137900, 0.0179862100].
    expect_values(run("softmax:dim=0", {tensor({2, 2}, {1, 3, 2, -1})}),
                  {0.2689414214, 0.9820137900, 0.7310585786, 0.0179862100});
}

TEST(ReferenceSoftmax, RandomRowsSumToOne) {
    // softmax over dim 1 of [3, 4, 5]: for every (i, k), sum_j y[i, j, k] = 1 and every y in (0, 1).
    const auto out = run("softmax:dim=1", {tensor({3, 4, 5}, random_values(60, 11))});
    for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t k = 0; k < 5; ++k) {
            double s = 0;
            for (std::size_t j = 0; j < 4; ++j) {
                const float v = out.data[i * 20 + j * 5 + k];
                EXPECT_GT(v, 0.0F);
                EXPECT_LT(v, 1.0F);
                s += v;
            }
            EXPECT_NEAR(s, 1.0, 1e-6);
        }
}

TEST(ReferenceBinary, AddBroadcasts) {
    // [2,1] + [3] -> [2,3]: a = [1, -2], b = [0.5, 1.5, -3]
    //   row 0: 1 + b = [1.5, 2.5, -2]; row 1: -2 + b = [-1.5, -0.5, -5]
    const auto out = run("add", {tensor({2, 1}, {1, -2}), tensor({3}, {0.5F, 1.5F, -3})});
    EXPECT_EQ(out.dims, (core::shape{2, 3}));
    expect_values(out, {1.5, 2.5, -2, -1.5, -0.5, -5});
}

TEST(ReferenceBinary, MulBroadcastsBothWays) {
    // [2,1,2] * [3,1] -> [2,3,2]: out[i][j][k] = a[i][k] * b[j], a = [[1, 2]], [[-1, 0.5]], b = [2, -1, 0.5]
    //   i=0: [2, 4], [-1, -2], [0.5, 1];  i=1: [-2, 1], [1, -0.5], [-0.5, 0.25]
    const auto out = run("mul", {tensor({2, 1, 2}, {1, 2, -1, 0.5F}), tensor({3, 1}, {2, -1, 0.5F})});
    EXPECT_EQ(out.dims, (core::shape{2, 3, 2}));
    expect_values(out, {2, 4, -1, -2, 0.5, 1, -2, 1, 1, -0.5, -0.5, 0.25});
}

// ------------------------------------------------------------------ pooling

TEST(ReferenceMaxPool2d, CeilModeKeepsThePartialWindow) {
    // image4, kernel 3, stride 2: floor mode (4-3)/2+1 = 1 output, ceil mode ceil((4-3)/2)+1 = 2 (the last
    // window starts at 2 < 4, so it is kept). Windows: rows {0,1,2} / {2,3}, columns alike.
    //   y00 = max(0.5, -1, 2, 3, -2, 1, -1, 4, 0.25) = 4     y01 = max(2, 1.5, 1, -0.5, 0.25, 2) = 2
    //   y10 = max(-1, 4, 0.25, 1.5, -3, 2.5)        = 4     y11 = max(0.25, 2, 2.5, -1)          = 2.5
    const auto x = tensor({1, 1, 4, 4}, image4);
    expect_values(run("max_pool2d:kernel_size=3,stride=2,ceil_mode=true", {x}), {4, 2, 4, 2.5});
    expect_values(run("max_pool2d:kernel_size=3,stride=2", {x}), {4});
}

TEST(ReferenceMaxPool2d, PaddingIsNeverTheMax) {
    // All-negative 2x2, kernel 3, stride 2, padding 1: one window covering everything; zero padding would
    // give 0, PyTorch's -inf padding gives max(-1, -2, -3, -4) = -1.
    expect_values(run("max_pool2d:kernel_size=3,stride=2,padding=1", {tensor({1, 1, 2, 2}, {-1, -2, -3, -4})}), {-1});
}

TEST(ReferenceMaxPool2d, Dilation) {
    // image4, kernel 2, stride 1, dilation 2: window taps (r, c), (r, c+2), (r+2, c), (r+2, c+2); 2x2 output.
    //   y00 = max(0.5, 2, -1, 0.25) = 2      y01 = max(-1, 1.5, 4, 2) = 4
    //   y10 = max(3, 1, 1.5, 2.5)   = 3      y11 = max(-2, -0.5, -3, -1) = -0.5
    expect_values(run("max_pool2d:kernel_size=2,stride=1,dilation=2", {tensor({1, 1, 4, 4}, image4)}), {2, 4, 3, -0.5});
}

TEST(ReferenceAvgPool2d, CountIncludePadTrueAndFalse) {
    // image3, kernel 2, stride 2, padding 1: H_out = (3 + 2 - 2)/2 + 1 = 2. Windows rows {-1, 0} / {1, 2},
    // columns alike; -1 is padding.
    //   y00: x00 = 1                          -> include pad 1/4 = 0.25,     exclude 1/1 = 1
    //   y01: x01 + x02 = -2 + 3 = 1           -> 1/4 = 0.25,                 1/2 = 0.5
    //   y10: x10 + x20 = 0.5 + 2 = 2.5        -> 2.5/4 = 0.625,              2.5/2 = 1.25
    //   y11: 4 - 1 - 3 + 1.5 = 1.5            -> 1.5/4 = 0.375,              1.5/4 = 0.375
    const auto x = tensor({1, 1, 3, 3}, image3);
    expect_values(run("avg_pool2d:kernel_size=2,stride=2,padding=1", {x}), {0.25, 0.25, 0.625, 0.375});
    expect_values(run("avg_pool2d:kernel_size=2,stride=2,padding=1,count_include_pad=false", {x}),
                  {1, 0.5, 1.25, 0.375});
}

TEST(ReferenceAvgPool2d, CeilModeOverhangIsNotCounted) {
    // image3, kernel 2, stride 2, no padding, ceil_mode: 2x2 output; the last window [2, 4) overhangs the
    // input [0, 3), and even with count_include_pad the divisor is the window clipped to [0, 3 + 0):
    //   y00 = (1 - 2 + 0.5 + 4)/4 = 0.875     y01 = (3 - 1)/(2*1) = 1
    //   y10 = (2 - 3)/(1*2) = -0.5            y11 = 1.5/1 = 1.5
    expect_values(run("avg_pool2d:kernel_size=2,stride=2,ceil_mode=true", {tensor({1, 1, 3, 3}, image3)}),
                  {0.875, 1, -0.5, 1.5});
}

TEST(ReferenceAvgPool2d, CeilModeWithPaddingCountsPadButNotOverhang) {
    // Row [0.5, -1, 2, 1.5], kernel 1x3, stride 1x2, padding 0x1, ceil_mode: W_out = ceil((4+2-3)/2)+1 = 3
    // (last window starts at 2*2 - 1 = 3 < 4 + 1: kept). w0 = 2*ow - 1, clipped to [-1, 5) then [0, 4):
    //   ow 0: [-1, 2) size 3, real [0, 2): 0.5 - 1 = -0.5 -> include -0.5/3 = -0.1666666667, exclude -0.5/2 = -0.25
    //   ow 1: [1, 4)  size 3, real [1, 4): -1 + 2 + 1.5 = 2.5 -> 2.5/3 = 0.8333333333 both
    //   ow 2: [3, 5)  size 2 (pad column 4 counts, overhang column 5 does not), real [3, 4): 1.5
    //         -> include 1.5/2 = 0.75, exclude 1.5/1 = 1.5
    const auto x = tensor({1, 1, 1, 4}, {0.5F, -1, 2, 1.5F});
    expect_values(run("avg_pool2d:kernel_size=1x3,stride=1x2,padding=0x1,ceil_mode=true", {x}),
                  {-0.1666666667, 0.8333333333, 0.75});
    expect_values(run("avg_pool2d:kernel_size=1x3,stride=1x2,padding=0x1,ceil_mode=true,count_include_pad=false", {x}),
                  {-0.25, 0.8333333333, 1.5});
}

TEST(ReferenceAdaptiveAvgPool2d, FiveToThree) {
    // Height 5 -> 3: windows [floor(i*5/3), ceil((i+1)*5/3)) = [0, 2), [1, 4), [3, 5) (they overlap);
    // width 2 -> 1: [0, 2). x rows: [1, 3], [-2, 0], [3, -1], [0.5, 1.5], [4, 2].
    //   y0 = (1 + 3 - 2 + 0)/4                 = 0.5
    //   y1 = (-2 + 0 + 3 - 1 + 0.5 + 1.5)/6    = 2/6 = 0.3333333333
    //   y2 = (0.5 + 1.5 + 4 + 2)/4             = 2
    const auto x = tensor({1, 1, 5, 2}, {1, 3, -2, 0, 3, -1, 0.5F, 1.5F, 4, 2});
    expect_values(run("adaptive_avg_pool2d:output_size=3x1", {x}), {0.5, 0.3333333333, 2});
    // Global average: (1 + 3 - 2 + 0 + 3 - 1 + 0.5 + 1.5 + 4 + 2)/10 = 12/10 = 1.2
    expect_values(run("adaptive_avg_pool2d:output_size=1", {x}), {1.2});
}

// ------------------------------------------------------------------ data movement and views

TEST(ReferenceConcat, Dim1) {
    // [2,1,2] and [2,2,2] along dim 1 -> [2,3,2]: per batch, a's row then b's two rows.
    const auto a = tensor({2, 1, 2}, {0.5F, -1, 2, 3});
    const auto b = tensor({2, 2, 2}, {4, -5, 6, 7, -8, 9, 1.5F, 2.5F});
    const auto out = run("concat", {a, b});
    EXPECT_EQ(out.dims, (core::shape{2, 3, 2}));
    expect_values(out, {0.5, -1, 4, -5, 6, 7, 2, 3, -8, 9, 1.5, 2.5});
}

TEST(ReferenceConcat, LastDimThreeInputs) {
    // [2,1], [2,2], [2,1] along dim -1 -> [2,4]: row 0 = [1 | 2, 3 | 4], row 1 = [-1 | -2, -3 | -4].
    const auto out =
        run("concat:dim=-1", {tensor({2, 1}, {1, -1}), tensor({2, 2}, {2, 3, -2, -3}), tensor({2, 1}, {4, -4})});
    expect_values(out, {1, 2, 3, 4, -1, -2, -3, -4});
}

TEST(ReferenceViews, FlattenAndReshapeKeepTheData) {
    const auto x = tensor({1, 2, 2, 2}, {0.5F, -1, 2, 1.5F, 3, -2, 1, -0.5F});
    const auto flat = run("flatten", {x});
    EXPECT_EQ(flat.dims, (core::shape{1, 8}));
    expect_values(flat, {0.5, -1, 2, 1.5, 3, -2, 1, -0.5});
    const auto reshaped = run("reshape:shape=0x-1x4", {x});  // 0 copies 1, -1 = 8/4 = 2
    EXPECT_EQ(reshaped.dims, (core::shape{1, 2, 4}));
    expect_values(reshaped, {0.5, -1, 2, 1.5, 3, -2, 1, -0.5});
}

TEST(ReferenceViews, Transpose) {
    // [[0.5, -1, 2], [3, -2, 1]]^T = [[0.5, 3], [-1, -2], [2, 1]]
    expect_values(run("transpose:dim0=0,dim1=1", {tensor({2, 3}, {0.5F, -1, 2, 3, -2, 1})}), {0.5, 3, -1, -2, 2, 1});
    // Negative dims on [2,2,3]: dim0=-1, dim1=-2 transposes each 2x3 batch matrix -> [2,3,2].
    //   batch 0 [[1, 2, 3], [4, 5, 6]] -> [[1, 4], [2, 5], [3, 6]]; batch 1 negated alike.
    const auto out = run("transpose:dim0=-1,dim1=-2", {tensor({2, 2, 3}, {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6})});
    EXPECT_EQ(out.dims, (core::shape{2, 3, 2}));
    expect_values(out, {1, 4, 2, 5, 3, 6, -1, -4, -2, -5, -3, -6});
}

TEST(ReferenceViews, SliceNegativeStartStepTwo) {
    // dim 1 of size 5, start -4 -> 1, end to the end, step 2: columns 1, 3 ((5-1-1)/2+1 = 2 of them).
    const auto x = tensor({2, 5}, {0.5F, -1, 2, 1.5F, 3, -2, 4, 0.25F, -3, 5});
    const auto out = run("slice:dim=1,start=-4,step=2", {x});
    EXPECT_EQ(out.dims, (core::shape{2, 2}));
    expect_values(out, {-1, 1.5, 4, -3});
    // start -9 clamps to 0, end -1 -> 4, step 3: columns 0, 3 ((4-0-1)/3+1 = 2).
    expect_values(run("slice:dim=-1,start=-9,end=-1,step=3", {x}), {0.5, 1.5, -2, -3});
    // dim 0, start 1: the second row.
    expect_values(run("slice:dim=0,start=1", {x}), {-2, 4, 0.25, -3, 5});
}

// ------------------------------------------------------------------ errors

TEST(ReferenceErrors, MissingOrWrongParametersAndInputsThrow) {
    const core::layer l{"stem.conv", core::parse_op("conv2d:in_channels=1,out_channels=1,kernel_size=2"), {}, {}};
    const auto x = tensor({1, 1, 3, 3}, image3);
    const auto w = tensor({1, 1, 2, 2}, {1, 0.5F, -1, 2});
    const auto b = tensor({1}, {0.25F});
    const auto short_w = tensor({1, 1, 1, 3}, {1, 0.5F, -1});
    const core::shape out{1, 1, 2, 2};
    auto message = [&](const std::vector<const host_tensor*>& in, const std::map<std::string, const host_tensor*>& p,
                       const core::shape& out_shape) -> std::string {
        try {
            (void)reference_forward(l, in, p, out_shape);
        } catch (const backend_error& e) {
            return e.what();
        }
        return "no error";
    };
    // No weight.
    EXPECT_EQ(message({&x}, {{"bias", &b}}, out), "conv2d \"stem.conv\": parameter \"weight\" (1x1x2x2) is missing");
    // Bias expected (bias=true) but absent.
    EXPECT_EQ(message({&x}, {{"weight", &w}}, out), "conv2d \"stem.conv\": parameter \"bias\" (1) is missing");
    // A weight with 3 values instead of 1*1*2*2 = 4.
    EXPECT_EQ(message({&x}, {{"weight", &short_w}, {"bias", &b}}, out),
              "conv2d \"stem.conv\": parameter \"weight\" has 3 values, expected 4 (1x1x2x2)");
    // No input, a null input.
    EXPECT_EQ(message({}, {{"weight", &w}, {"bias", &b}}, out),
              "conv2d \"stem.conv\": input 1 is missing (the layer takes 1, got 0)");
    EXPECT_EQ(message({nullptr}, {{"weight", &w}, {"bias", &b}}, out),
              "conv2d \"stem.conv\": input 1 is missing (null)");
    // An input whose values do not fill its shape, and an out_shape that does not fit the input.
    const host_tensor torn{core::shape{1, 1, 3, 3}, {1, 2, 3}};
    EXPECT_EQ(message({&torn}, {{"weight", &w}, {"bias", &b}}, out),
              "conv2d \"stem.conv\": input 1 has 3 values but its shape 1x1x3x3 needs 9");
    EXPECT_EQ(message({&x}, {{"weight", &w}, {"bias", &b}}, core::shape{1, 1, 3, 3}),
              "conv2d \"stem.conv\": out_shape 1x1x3x3 does not match the shape 1x1x2x2 of these inputs");
    // The correct call works: y00 = 7.75 as in TwoByTwoKernelHandComputed.
    EXPECT_EQ(message({&x}, {{"weight", &w}, {"bias", &b}}, out), "no error");
    // A BatchNorm without its running statistics, a LayerNorm without its bias.
    EXPECT_THROW(run("batch_norm2d:num_features=1", {tensor({1, 1, 1, 2}, {1, 2})},
                     {{"weight", tensor({1}, {1})}, {"bias", tensor({1}, {0.5F})}}),
                 backend_error);
    EXPECT_THROW(run("layer_norm:normalized_shape=2", {tensor({1, 2}, {1, 2})}, {{"weight", tensor({2}, {1, 1})}}),
                 backend_error);
    // matmul needs two inputs.
    const core::layer mm{"attn.scores", core::parse_op("matmul"), {}, {}};
    const auto a = tensor({2, 2}, {1, 2, 3, 4});
    EXPECT_THROW((void)reference_forward(mm, {&a}, {}, core::shape{2, 2}), backend_error);
}

}  // namespace
