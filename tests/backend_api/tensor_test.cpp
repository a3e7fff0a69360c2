// backend_api's host-side arithmetic on tensors: the batch-norm fold both backends load for a fused group
// (backend_api/tensor.hpp, PyTorch's fuse_conv_bn_eval).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ridgeline/backend_api/tensor.hpp"
#include "ridgeline/core/error.hpp"

using namespace ridgeline;
using backend_api::host_tensor;

namespace {

// A 2-output-channel convolution with 1x2 kernels: channel 0's weights {1, 2}, channel 1's {3, 4}.
host_tensor two_channel_weight() { return host_tensor{core::shape({2, 1, 1, 2}), {1.0f, 2.0f, 3.0f, 4.0f}}; }

}  // namespace

TEST(FoldBatchNorm, ScalesEachOutputChannelAndShiftsItsBias) {
    // eps 0.25 and running_var {3.75, 0} make var + eps {4, 0.25}: sqrt {2, 0.5}, all exact in float.
    // s = gamma / sqrt(var + eps) = {1 / 2, 2 / 0.5} = {0.5, 4}
    // W' = W * s per output channel: {1, 2} * 0.5 = {0.5, 1}; {3, 4} * 4 = {12, 16}
    // b' = (b - mean) * s + beta: (0.5 - 0.5) * 0.5 + 0.25 = 0.25; (-1 - 1) * 4 - 0.5 = -8.5
    const auto f = backend_api::fold_batch_norm(two_channel_weight(), {0.5f, -1.0f}, /*mean*/ {0.5f, 1.0f},
                                                /*var*/ {3.75f, 0.0f}, /*gamma*/ {1.0f, 2.0f}, /*beta*/ {0.25f, -0.5f},
                                                0.25);
    EXPECT_EQ(f.weight.dims, core::shape({2, 1, 1, 2}));
    EXPECT_EQ(f.weight.data, (std::vector<float>{0.5f, 1.0f, 12.0f, 16.0f}));
    EXPECT_EQ(f.bias.dims, core::shape({2}));
    EXPECT_EQ(f.bias.data, (std::vector<float>{0.25f, -8.5f}));
}

TEST(FoldBatchNorm, WithoutBiasOrAffineTheBiasIsMinusTheScaledMean) {
    // no convolution bias (b = 0), no affine (gamma = 1, beta = 0): s = 1 / sqrt(var + eps) = {0.5, 2}
    // W' = {0.5, 1, 6, 8}; b' = -mean * s = {-0.5 * 0.5, -1 * 2} = {-0.25, -2}
    const auto f = backend_api::fold_batch_norm(two_channel_weight(), {}, {0.5f, 1.0f}, {3.75f, 0.0f}, {}, {}, 0.25);
    EXPECT_EQ(f.weight.data, (std::vector<float>{0.5f, 1.0f, 6.0f, 8.0f}));
    EXPECT_EQ(f.bias.data, (std::vector<float>{-0.25f, -2.0f}));
}

TEST(FoldBatchNorm, ReadsTheLayersTensorsFromGraphData) {
    // the same values as the first test, under the layers' param_keys
    const core::layer conv{"conv", core::conv2d{.in_channels = 1, .out_channels = 2, .kernel_size = {1, 2},
                                                .stride = {1, 1}, .padding = {}, .dilation = {1, 1}, .groups = 1,
                                                .bias = true},
                           {"x"}, {}};
    const core::layer bn{"bn", core::batch_norm2d{.num_features = 2, .eps = 0.25, .affine = true}, {"conv"}, {}};
    backend_api::graph_data d;
    d.tensors["conv.weight"] = two_channel_weight();
    d.tensors["conv.bias"] = {core::shape({2}), {0.5f, -1.0f}};
    d.tensors["bn.running_mean"] = {core::shape({2}), {0.5f, 1.0f}};
    d.tensors["bn.running_var"] = {core::shape({2}), {3.75f, 0.0f}};
    d.tensors["bn.weight"] = {core::shape({2}), {1.0f, 2.0f}};
    d.tensors["bn.bias"] = {core::shape({2}), {0.25f, -0.5f}};
    const auto f = backend_api::fold_batch_norm(d, conv, bn);
    EXPECT_EQ(f.weight.data, (std::vector<float>{0.5f, 1.0f, 12.0f, 16.0f}));
    EXPECT_EQ(f.bias.data, (std::vector<float>{0.25f, -8.5f}));
    // the layers swapped: a batch norm folds into a conv2d only
    EXPECT_THROW(backend_api::fold_batch_norm(d, bn, conv), core::error);
}

TEST(FoldBatchNorm, AVectorOfTheWrongLengthIsAnError) {
    // 3 running means for 2 output channels
    try {
        (void)backend_api::fold_batch_norm(two_channel_weight(), {}, {0.0f, 0.0f, 0.0f}, {1.0f, 1.0f}, {}, {}, 1e-5);
        FAIL() << "a mean of 3 values for 2 channels was accepted";
    } catch (const core::error& e) {
        EXPECT_STREQ(e.what(), "fold_batch_norm: running_mean has 3 values for a convolution of 2 output channels");
    }
}

TEST(FoldBatchNorm, ADivisionByZeroOrNaNIsNamedNotFolded) {
    // channel 1: running_var 0 with eps 0 -> s = 1 / sqrt(0) = inf, the folded weights inf and the folded convolution
    // NaN (inf - inf); the batch norm itself is infinite there, so there is nothing to fold, and the error says why
    auto message = [](const std::vector<float>& var, double eps) -> std::string {
        try {
            (void)backend_api::fold_batch_norm(two_channel_weight(), {}, {0.0f, 0.0f}, var, {}, {}, eps);
        } catch (const core::error& e) {
            return e.what();
        }
        return "folded";
    };
    EXPECT_EQ(message({1.0f, 0.0f}, 0.0),
              "running_var + eps is 0 in channel 1: the batch norm divides by zero or by a NaN there, so it has no "
              "folded form (its output is infinite or NaN; without --fuse it runs as it is)");
    EXPECT_NE(message({-1.0f, 1.0f}, 0.5).find("running_var + eps is -0.5 in channel 0:"), std::string::npos);
    EXPECT_NE(message({1.0f, std::nanf("")}, 1e-5).find("is nan in channel 1:"), std::string::npos);
    EXPECT_EQ(message({1.0f, 0.0f}, 1e-5), "folded");  // eps alone keeps it finite

    // through the layers: the batch norm named
    const core::layer conv{"conv", core::conv2d{.in_channels = 1, .out_channels = 2, .kernel_size = {1, 2},
                                                .stride = {1, 1}, .padding = {}, .dilation = {1, 1}, .groups = 1,
                                                .bias = false},
                           {"x"}, {}};
    const core::layer bn{"bn", core::batch_norm2d{.num_features = 2, .eps = 0.0, .affine = false}, {"conv"}, {}};
    backend_api::graph_data d;
    d.tensors["conv.weight"] = two_channel_weight();
    d.tensors["bn.running_mean"] = {core::shape({2}), {0.0f, 0.0f}};
    d.tensors["bn.running_var"] = {core::shape({2}), {0.0f, 1.0f}};
    try {
        (void)backend_api::fold_batch_norm(d, conv, bn);
        FAIL() << "a zero variance with eps 0 was folded";
    } catch (const core::error& e) {
        EXPECT_EQ(std::string(e.what()).rfind("batch_norm2d \"bn\": running_var + eps is 0 in channel 0:", 0), 0u)
            << e.what();
    }
}
