// Layer strings: parsing, canonical printing, round trips.
#include <gtest/gtest.h>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/layer.hpp"

using namespace ridgeline::core;

TEST(LayerString, CanonicalStringsPrintBackTheSame) {
    const char* canonical[] = {
        "conv2d:in_channels=16,out_channels=32,kernel_size=3,stride=2,padding=1,bias=false",
        "conv2d:in_channels=3,out_channels=8,kernel_size=3,padding=same",
        "conv2d:in_channels=3,out_channels=8,kernel_size=3x5,padding=valid",
        "conv2d:in_channels=8,out_channels=8,kernel_size=3,padding=0x0x1x1,dilation=2,groups=8",
        "conv2d:in_channels=4,out_channels=4,kernel_size=1x7,padding=0x3",
        "linear:in_features=1024,out_features=512",
        "linear:in_features=17,out_features=49,bias=false",
        "batch_norm2d:num_features=64",
        "batch_norm2d:num_features=64,eps=0.001",
        "layer_norm:normalized_shape=768,eps=1e-12", "layer_norm:normalized_shape=8,bias=false",
        "max_pool2d:kernel_size=3,stride=2,padding=1",
        "max_pool2d:kernel_size=3,stride=2,ceil_mode=true",
        "avg_pool2d:kernel_size=2,count_include_pad=false",
        "adaptive_avg_pool2d:output_size=7",
        "adaptive_avg_pool2d:output_size=1x2",
        "relu", "relu6", "tanh", "sigmoid", "hardswish", "hardsigmoid", "silu", "gelu", "gelu:approximate=tanh", "softmax", "softmax:dim=1",
        "scale:factor=0.125", "add", "mul", "matmul", "concat", "concat:dim=2", "flatten", "flatten:start_dim=0",
        "embedding:num_embeddings=30522,embedding_dim=768", "embedding:num_embeddings=169,embedding_dim=3,indices=2401",
        "reshape:shape=0x0x12x64", "reshape:shape=-1x768", "transpose:dim0=1,dim1=2",
        "parameter:shape=1x1x768,expand=4x1x768", "parameter:shape=197,trainable=false",
        "erf", "sqrt", "exp", "neg", "pow:exponent=3", "pow:exponent=0.5", "sub", "div",
        "mean", "mean:dim=-1,keepdim=true", "sum:dim=0x2", "amax:dim=1",
        "slice:dim=1,end=1", "slice:dim=2,start=768,end=1536", "slice:dim=0,start=-3,step=2",
        "pad:pad=1x1x2x2", "pad:pad=0x1,mode=reflect", "pad:pad=3x0x0x0,mode=replicate", "pad:pad=1x1,value=-0.5",
        "where", "expand:size=2x-1x4", "interpolate:size=14", "interpolate:size=7x9,mode=bilinear", "interpolate:size=8,mode=bilinear,align_corners=true",
    };
    for (const char* s : canonical) {
        SCOPED_TRACE(s);
        EXPECT_EQ(to_string(parse_op(s)), s);
    }
}

TEST(LayerString, DefaultsAndOrderAreNormalised) {
    // PyTorch defaults (stride 1, padding 0, dilation 1, groups 1, bias true) are omitted when printed,
    // and keys come out in declaration order whatever order they went in.
    EXPECT_EQ(to_string(parse_op("conv2d: bias=true, kernel_size=3x3, out_channels=8, in_channels=3, stride=1, "
                                 "padding=0, dilation=1x1, groups=1")),
              "conv2d:in_channels=3,out_channels=8,kernel_size=3");
    EXPECT_EQ(to_string(parse_op("max_pool2d:kernel_size=2,stride=2")), "max_pool2d:kernel_size=2");
    EXPECT_EQ(to_string(parse_op("BatchNorm2d:num_features=4")), "batch_norm2d:num_features=4");
}

TEST(LayerString, ParsedFieldsAreTheGivenValues) {
    const auto c = std::get<conv2d>(parse_op("conv2d:in_channels=6,out_channels=9,kernel_size=3x5,stride=2x1,"
                                             "padding=1x2,dilation=2,groups=3,bias=false"));
    EXPECT_EQ(c.in_channels, 6);
    EXPECT_EQ(c.out_channels, 9);
    EXPECT_EQ(c.kernel_size, (pair2d{3, 5}));
    EXPECT_EQ(c.stride, (pair2d{2, 1}));
    EXPECT_EQ(c.padding, (padding2d{padding2d::mode::explicit_pads, 1, 2, 1, 2}));
    EXPECT_EQ(c.dilation, (pair2d{2, 2}));
    EXPECT_EQ(c.groups, 3);
    EXPECT_FALSE(c.bias);
}

TEST(LayerString, SamePaddingOfAnEvenKernelPutsTheExtraAfter) {
    // total = dilation*(k-1) = 3 for k=4: 1 before, 2 after (PyTorch's rule)
    const auto c = std::get<conv2d>(parse_op("conv2d:in_channels=1,out_channels=1,kernel_size=4,padding=same"));
    EXPECT_EQ(c.resolved_padding(), (padding2d{padding2d::mode::explicit_pads, 1, 1, 2, 2}));
    // dilation 2, k=3: total 4, 2 and 2
    const auto d =
        std::get<conv2d>(parse_op("conv2d:in_channels=1,out_channels=1,kernel_size=3,padding=same,dilation=2"));
    EXPECT_EQ(d.resolved_padding(), (padding2d{padding2d::mode::explicit_pads, 2, 2, 2, 2}));
}

TEST(LayerString, EveryKnownKindParsesWithItsRequiredAttributes) {
    // op_kinds() lists every alternative of `op`; each must parse (possibly with required attributes).
    EXPECT_EQ(op_kinds().size(), std::variant_size_v<op>);
    EXPECT_EQ(op_kinds().front(), "linear");
}
