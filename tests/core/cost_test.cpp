// The cost model against faults reported in other counters, and against hand derivations.
#include <gtest/gtest.h>

#include "helpers.hpp"
#include "ridgeline/core/error.hpp"

using namespace ridgeline::core;
using ridgeline::test::expect_layer;
using ridgeline::test::one_layer;

TEST(Cost, StridedConvWithoutBias) {
    // out: floor((64 + 2 - 2 - 1)/2) + 1 = 32 -> 1x32x32x32
    // macs = 32*32*32 outputs * 16*3*3 = 32768*144 = 4,718,592; params 32*16*9 = 4,608
    // bytes = (16*64*64 + 4,608 + 32*32*32) * 4 = (65,536 + 4,608 + 32,768) * 4 = 411,648
    expect_layer(one_layer("conv2d:in_channels=16,out_channels=32,kernel_size=3,stride=2,padding=1,bias=false",
                           {{1, 16, 64, 64}}),
                 {.params = 4608,
                  .macs = 4718592,
                  .flops = 2 * 4718592,  // no bias: exactly 2*macs
                  .bytes = 411648,
                  .out = shape{1, 32, 32, 32}});
}

TEST(Cost, LinearWithBias) {
    // macs 17*49 = 833; flops 2*833 + 49 bias adds = 1,715; params 833 + 49 = 882
    // bytes (17 + 882 + 49) * 4 = 3,792
    expect_layer(one_layer("linear:in_features=17,out_features=49", {{1, 17}}),
                 {.params = 882, .macs = 833, .flops = 1715, .bytes = 3792});
}

TEST(Cost, SmallConvWithBias) {
    // out 1x5x4x4; macs 5*16*3*9 = 2,160; flops 4,320 + 80 = 4,400; params 135 + 5 = 140
    // bytes (108 + 140 + 80) * 4 = 1,312
    expect_layer(one_layer("conv2d:in_channels=3,out_channels=5,kernel_size=3", {{1, 3, 6, 6}}),
                 {.params = 140, .macs = 2160, .flops = 4400, .bytes = 1312, .out = shape{1, 5, 4, 4}});
}

TEST(Cost, DepthwiseConvCountsGroups) {
    // groups 7: weight 7x1x3x3 = 63 + bias 7 = 70; macs 7*32*32*(7/7)*9 = 64,512
    expect_layer(one_layer("conv2d:in_channels=7,out_channels=7,kernel_size=3,padding=1,groups=7", {{1, 7, 32, 32}}),
                 {.params = 70, .macs = 64512});
}

TEST(Cost, PaddedConvWithBias) {
    // macs 64*32*32*16*9 = 9,437,184; params 9,216 + 64 = 9,280
    // bytes (16,384 + 9,280 + 65,536) * 4 = 364,800
    expect_layer(one_layer("conv2d:in_channels=16,out_channels=64,kernel_size=3,padding=1", {{1, 16, 32, 32}}),
                 {.params = 9280, .macs = 9437184, .bytes = 364800});
}

TEST(Cost, SamePaddingEvenKernelPastInt32) {
    // k=4 'same': pads 1 before, 2 after -> 1024x1024 output
    // macs 4*1024*1024*16*16 = 1,073,741,824 = 2^30; flops 2^31 = 2,147,483,648 (one past INT32_MAX)
    expect_layer(one_layer("conv2d:in_channels=16,out_channels=4,kernel_size=4,padding=same,bias=false",
                           {{1, 16, 1024, 1024}}),
                 {.macs = 1073741824LL, .flops = 2147483648LL, .out = shape{1, 4, 1024, 1024}});
}

TEST(Cost, LinearCountsTheWholeBatch) {
    // 32 rows * 10 * 10 = 3,200 (per batch, not per sample)
    auto l = one_layer("linear:in_features=10,out_features=10", {{32, 10}});
    EXPECT_EQ(l.cost.macs, 3200);
}

TEST(Cost, LinearOnRank3TreatsLeadingDimsAsRows) {
    // rows 8*16 = 128: macs 128*64*32 = 262,144; flops 524,288 + 128*32 = 528,384; params 2,048 + 32 = 2,080
    // bytes (8,192 + 2,080 + 4,096) * 4 = 57,472
    expect_layer(one_layer("linear:in_features=64,out_features=32", {{8, 16, 64}}),
                 {.params = 2080, .macs = 262144, .flops = 528384, .bytes = 57472, .out = shape{8, 16, 32}});
}

TEST(Cost, ContainerAddsNothingOfItsOwn) {
    // three convs 16->16 k3, no padding: 32 -> 30 -> 28 -> 26
    // macs 16*144*(900 + 784 + 676) = 2,304 * 2,360 = 5,437,440; params 3 * (2,304 + 16) = 6,960
    model_builder b("chain");
    b.input("x", shape{1, 16, 32, 32});
    for (int i = 0; i < 3; ++i) b.then("conv" + std::to_string(i), parse_op("conv2d:in_channels=16,out_channels=16,kernel_size=3"));
    auto a = analyze(b.build(), dtype::fp32);
    EXPECT_EQ(a.totals.macs, 5437440);
    EXPECT_EQ(a.totals.params, 6960);
    EXPECT_EQ(a.layers.back().output_shape, (shape{1, 16, 26, 26}));
}

TEST(Cost, SamePaddingOddKernelKeepsTheSize) {
    // output 1x8x32x32; macs 8*1024*3*9 = 221,184
    expect_layer(one_layer("conv2d:in_channels=3,out_channels=8,kernel_size=3,padding=same", {{1, 3, 32, 32}}),
                 {.macs = 221184, .out = shape{1, 8, 32, 32}});
}

TEST(Cost, MaxPoolHasNoMacsAndMovesInputPlusOutput) {
    // output 1x16x16x16; bytes (16,384 + 4,096) * 4 = 81,920; flops (2*2-1) * 4,096 = 12,288
    expect_layer(one_layer("max_pool2d:kernel_size=2,stride=2", {{1, 16, 32, 32}}),
                 {.params = 0, .macs = 0, .flops = 12288, .bytes = 81920, .out = shape{1, 16, 16, 16}});
}

TEST(Cost, TinyTorchConventionVectors) {
    // TinyTorch counts 2*macs per sample without bias adds.
    // Conv(3->16, k3) on 1x3x32x32: 30x30 output, 2 * 16*900*27 = 777,600
    auto c1 = one_layer("conv2d:in_channels=3,out_channels=16,kernel_size=3", {{1, 3, 32, 32}});
    EXPECT_DOUBLE_EQ(conventions::tinytorch_flops(c1.cost, 1), 777600.0);
    // Conv(3->64, k7, s2) on 224x224: floor((224-7)/2)+1 = 109; 2 * 64*109*109*147 = 223,552,896
    auto c2 = one_layer("conv2d:in_channels=3,out_channels=64,kernel_size=7,stride=2", {{1, 3, 224, 224}});
    EXPECT_EQ(c2.output_shape, (shape{1, 64, 109, 109}));
    EXPECT_DOUBLE_EQ(conventions::tinytorch_flops(c2.cost, 1), 223552896.0);
    EXPECT_EQ(conventions::flop_counter_mode_flops(c2.cost), 223552896);
    // Linear(4,3), ReLU, Linear(3,2) on (7,4): params 15 + 8 = 23; macs 7*(12 + 6) = 126;
    // TinyTorch per sample: 2*12 + 3 (relu) + 2*6 = 39
    model_builder b("mlp");
    b.input("x", shape{7, 4});
    b.then("fc1", parse_op("linear:in_features=4,out_features=3"));
    b.then("relu", parse_op("relu"));
    b.then("fc2", parse_op("linear:in_features=3,out_features=2"));
    auto a = analyze(b.build(), dtype::fp32);
    EXPECT_EQ(a.totals.params, 23);
    EXPECT_EQ(a.totals.macs, 126);
    EXPECT_DOUBLE_EQ(conventions::tinytorch_flops(a.totals, 7), 39.0);
}

TEST(Cost, BytesFollowTheDataType) {
    // same linear as above in bf16: 948 elements * 2 bytes = 1,896
    auto l = one_layer("linear:in_features=17,out_features=49", {{1, 17}}, dtype::bf16);
    EXPECT_EQ(l.cost.bytes, 1896);
    EXPECT_EQ(l.cost.flops, 1715);  // the arithmetic does not change
}

TEST(Cost, ElementwiseRules) {
    const shape x{2, 8, 4, 4};  // 256 elements
    // batch_norm2d: 2 flops/element = 512; params 2*8 = 16, buffers 16; bytes (256+16+16+256)*4 = 2,176
    expect_layer(one_layer("batch_norm2d:num_features=8", {x}), {.params = 16, .buffers = 16, .flops = 512, .bytes = 2176});
    EXPECT_EQ(one_layer("relu", {x}).cost.flops, 256);
    EXPECT_EQ(one_layer("relu6", {x}).cost.flops, 256);
    EXPECT_EQ(one_layer("gelu", {x}).cost.flops, 5 * 256);
    EXPECT_EQ(one_layer("gelu:approximate=tanh", {x}).cost.flops, 9 * 256);
    EXPECT_EQ(one_layer("sigmoid", {x}).cost.flops, 3 * 256);
    // hardswish: add 3, clamp, multiply by x, divide by 6; hardsigmoid: add, clamp, divide; silu: sigmoid + multiply
    EXPECT_EQ(one_layer("hardswish", {x}).cost.flops, 4 * 256);
    EXPECT_EQ(one_layer("hardsigmoid", {x}).cost.flops, 3 * 256);
    EXPECT_EQ(one_layer("silu", {x}).cost.flops, 4 * 256);
    EXPECT_EQ(one_layer("silu", {x}).cost.bytes, 2 * 256 * 4);  // read x, write y, fp32
    EXPECT_EQ(one_layer("softmax:dim=1", {x}).cost.flops, 5 * 256);
    // erf, sqrt, exp, neg, pow: one function evaluation per element, 1 flop each (as tanh)
    for (const char* f : {"erf", "sqrt", "exp", "neg", "pow:exponent=3"}) EXPECT_EQ(one_layer(f, {x}).cost.flops, 256) << f;
    // sub and div broadcast as add: 2x8x4x4 - 1x8x1x1 -> 256 flops, bytes (256 + 8 + 256) * 4 = 2,080
    EXPECT_EQ(one_layer("sub", {x, {1, 8, 1, 1}}).cost.flops, 256);
    EXPECT_EQ(one_layer("div", {{1, 8, 1, 1}, x}).cost.bytes, 2080);
    // reductions of 2x8x4x4 (256) over dims 2 and 3 -> 2x8 (16): sum and amax 256 - 16 = 240 adds or comparisons,
    // mean those and 16 divides = 256; bytes (256 + 16) * 4 = 1,088; keepdim keeps the 1s
    EXPECT_EQ(one_layer("sum:dim=2x3", {x}).cost.flops, 240);
    EXPECT_EQ(one_layer("amax:dim=-1x-2", {x}).cost.flops, 240);
    EXPECT_EQ(one_layer("mean:dim=2x3", {x}).cost.flops, 256);
    EXPECT_EQ(one_layer("mean:dim=2x3", {x}).cost.bytes, 1088);
    EXPECT_EQ(one_layer("mean:dim=2x3", {x}).output_shape, (shape{2, 8}));
    EXPECT_EQ(one_layer("mean:dim=2x3,keepdim=true", {x}).output_shape, (shape{2, 8, 1, 1}));
    EXPECT_EQ(one_layer("sum:keepdim=true", {x}).output_shape, (shape{1, 1, 1, 1}));  // every dim, kept
    // add with broadcasting: 2x8x4x4 + 1x8x1x1 -> 256 flops; bytes (256 + 8 + 256) * 4 = 2,080
    expect_layer(one_layer("add", {x, {1, 8, 1, 1}}), {.flops = 256, .bytes = 2080, .out = x});
    // layer_norm over 4: 8 flops/element = 2,048; params 2*4 = 8
    expect_layer(one_layer("layer_norm:normalized_shape=4", {x}), {.params = 8, .flops = 2048});
    // bias=false (nn.LayerNorm(bias=False)): the weight alone, 4 params; 7 flops/element = 1,792; bytes (256 in +
    // 256 out + 4 weight) * 4 = 2,064
    expect_layer(one_layer("layer_norm:normalized_shape=4,bias=false", {x}), {.params = 4, .flops = 1792, .bytes = 2064});
    // without affine parameters there is no bias either (as nn.LayerNorm): 6 flops/element, no params
    expect_layer(one_layer("layer_norm:normalized_shape=4,elementwise_affine=false", {x}), {.params = 0, .flops = 1536});
}

TEST(Cost, PoolingRules) {
    // avg_pool2d k3 s2 p1 on 1x4x8x8: out floor((8+2-3)/2)+1 = 4 -> 64 outputs * 9 = 576 flops
    auto ap = one_layer("avg_pool2d:kernel_size=3,stride=2,padding=1", {{1, 4, 8, 8}});
    EXPECT_EQ(ap.output_shape, (shape{1, 4, 4, 4}));
    EXPECT_EQ(ap.cost.flops, 576);
    // 56 with k3 s2: floor((56-3)/2)+1 = 27, ceil((56-3)/2)+1 = 28 (the last window starts at 54 < 56)
    EXPECT_EQ(one_layer("max_pool2d:kernel_size=3,stride=2,ceil_mode=true", {{1, 1, 56, 56}}).output_shape,
              (shape{1, 1, 28, 28}));
    EXPECT_EQ(one_layer("max_pool2d:kernel_size=3,stride=2", {{1, 1, 56, 56}}).output_shape, (shape{1, 1, 27, 27}));
    // adaptive 5 -> 3: windows [0,2) [1,4) [3,5) = 2+3+2 = 7 per axis; 7*7 = 49 flops per channel
    auto ad = one_layer("adaptive_avg_pool2d:output_size=3", {{1, 2, 5, 5}});
    EXPECT_EQ(ad.output_shape, (shape{1, 2, 3, 3}));
    EXPECT_EQ(ad.cost.flops, 98);
    // global pooling 7x7 -> 1: 49 per channel
    EXPECT_EQ(one_layer("adaptive_avg_pool2d:output_size=1", {{1, 512, 7, 7}}).cost.flops, 512 * 49);
    // window sum per axis = in + out - gcd(in, out): 12 -> 5 gives 3+3+4+3+3 = 16 = 12 + 5 - 1, so 16*16
    EXPECT_EQ(one_layer("adaptive_avg_pool2d:output_size=5", {{1, 1, 12, 12}}).cost.flops, 16 * 16);
    // found by fuzz_cost: a huge output_size looped once per output position; the closed form on 3 -> 2^20
    // gives 3 + 2^20 - gcd(3, 2^20) = 2^20 + 2 per axis
    const std::int64_t axis = (std::int64_t{1} << 20) + 2;
    EXPECT_EQ(one_layer("adaptive_avg_pool2d:output_size=1048576", {{1, 1, 3, 3}}).cost.flops, axis * axis);
}

TEST(Cost, PoolingWithAnEnormousStrideDoesNotOverflow) {
    // found by fuzz_cost: (padded - extent + stride - 1) overflowed int64 with ceil_mode and stride near
    // INT64_MAX. 8 wide, kernel 1: floor mode 7 / stride + 1 = 1; ceil mode adds a window only if it starts
    // inside the input, and (out - 1) * stride = INT64_MAX >= 8 does not, so still 1
    const std::string big = "9223372036854775807";
    for (const char* ceil : {"false", "true"}) {
        auto l = one_layer("max_pool2d:kernel_size=1,stride=" + big + ",ceil_mode=" + ceil, {{1, 1, 8, 8}});
        EXPECT_EQ(l.output_shape, (shape{1, 1, 1, 1})) << ceil;
    }
}

TEST(Cost, MatmulAndViews) {
    // 2x12x128x64 @ 2x12x64x128: macs 2*12*128*128*64 = 25,165,824
    expect_layer(one_layer("matmul", {{2, 12, 128, 64}, {2, 12, 64, 128}}),
                 {.macs = 25165824, .flops = 2 * 25165824, .out = shape{2, 12, 128, 128}});
    // broadcast batch: 1x64x32 @ 3x32x16 -> 3x64x16, macs 3*64*16*32 = 98,304
    EXPECT_EQ(one_layer("matmul", {{1, 64, 32}, {3, 32, 16}}).cost.macs, 98304);
    for (const char* v : {"reshape:shape=0x-1", "transpose:dim0=0,dim1=1", "flatten", "slice:dim=1,end=2"}) {
        auto l = one_layer(v, {{4, 6}});
        EXPECT_EQ(l.cost.bytes, 0) << v;
        EXPECT_EQ(l.cost.flops, 0) << v;
        EXPECT_FALSE(l.cost.arithmetic_intensity().has_value()) << v;
    }
    EXPECT_EQ(one_layer("reshape:shape=0x2x-1", {{4, 6}}).output_shape, (shape{4, 2, 3}));
    EXPECT_EQ(one_layer("slice:dim=1,start=1,step=2", {{4, 6}}).output_shape, (shape{4, 3}));
    EXPECT_EQ(one_layer("slice:dim=1,start=-2", {{4, 6}}).output_shape, (shape{4, 2}));
    // concat moves inputs and output: (4*6 + 4*2 + 4*8) * 4 = 256 bytes
    auto cat = one_layer("concat:dim=1", {{4, 6}, {4, 2}});
    EXPECT_EQ(cat.output_shape, (shape{4, 8}));
    EXPECT_EQ(cat.cost.bytes, 256);
}

TEST(Cost, AnEmbeddingThatHoldsItsIdsCountsThemAsABuffer) {
    // Swin's relative position bias: table 169x3 (507 params) read through 2,401 held ids (buffers); output
    // 2401x3; bytes ids 2,401*8 = 19,208, rows read at most the table's 169*3*4 = 2,028, output written
    // 7,203*4 = 28,812: 50,048
    ridgeline::core::model_builder b("held_ids");
    b.input("anchor", shape{1});  // a model needs an input; nothing reads this one
    b.add("bias", ridgeline::core::parse_op("embedding:num_embeddings=169,embedding_dim=3,indices=2401"), {});
    const auto e = ridgeline::core::analyze(b.build(), ridgeline::core::dtype::fp32).layers.at(0);
    EXPECT_EQ(e.output_shape, (shape{2401, 3}));
    EXPECT_EQ(e.cost.params, 507);
    EXPECT_EQ(e.cost.buffers, 2401);
    EXPECT_EQ(e.cost.bytes, 50048);
}

TEST(Cost, WhereSelectsWithoutArithmetic) {
    // where(mask 1x1x4x4, scores 2x3x4x4, fill 1): output 2x3x4x4 (96); bytes (16 + 96 + 1 + 96) * 4 = 836
    auto w = one_layer("where", {{1, 1, 4, 4}, {2, 3, 4, 4}, {1}});
    EXPECT_EQ(w.output_shape, (shape{2, 3, 4, 4}));
    EXPECT_EQ(w.cost.flops, 0);
    EXPECT_EQ(w.cost.bytes, 836);
}

TEST(Cost, ExpandIsACopy) {
    // 1x1x4 expanded to 3x2x4 (a new leading dimension, the middle one repeated): 24 elements; bytes (4 + 24) * 4
    auto e = one_layer("expand:size=3x2x-1", {{1, 1, 4}});
    EXPECT_EQ(e.output_shape, (shape{3, 2, 4}));
    EXPECT_EQ(e.cost.bytes, 112);
    EXPECT_EQ(e.cost.flops, 0);
}

TEST(Cost, PadAndInterpolateAreCopies) {
    // F.pad(x, (1, 2, 3, 0)) of 2x3x4x5: W 5 + 1 + 2 = 8, H 4 + 3 + 0 = 7 -> 2x3x7x8 (336 elements);
    // bytes (120 read + 336 written) * 4 = 1,824; no arithmetic
    auto p = one_layer("pad:pad=1x2x3x0", {{2, 3, 4, 5}});
    EXPECT_EQ(p.output_shape, (shape{2, 3, 7, 8}));
    EXPECT_EQ(p.cost.bytes, 1824);
    EXPECT_EQ(p.cost.flops, 0);
    // one pair pads only the last dimension: 4x6 -> 4x(6+2+1)
    EXPECT_EQ(one_layer("pad:pad=2x1,mode=reflect", {{4, 6}}).output_shape, (shape{4, 9}));
    EXPECT_EQ(one_layer("pad:pad=0x0x5x5,mode=replicate", {{4, 1}}).output_shape, (shape{14, 1}));
    // nearest 1x16x7x7 -> 1x16x14x14: 0 flops, bytes (784 + 3,136) * 4 = 15,680
    auto n = one_layer("interpolate:size=14", {{1, 16, 7, 7}});
    EXPECT_EQ(n.output_shape, (shape{1, 16, 14, 14}));
    EXPECT_EQ(n.cost.flops, 0);
    EXPECT_EQ(n.cost.bytes, 15680);
    // bilinear to 9x10: 9 flops (6 multiplies, 3 adds) per output element, 16*90*9 = 12,960; bf16 bytes
    // (784 + 1,440) * 2 = 4,448
    auto b = one_layer("interpolate:size=9x10,mode=bilinear", {{1, 16, 7, 7}}, ridgeline::core::dtype::bf16);
    EXPECT_EQ(b.output_shape, (shape{1, 16, 9, 10}));
    EXPECT_EQ(b.cost.flops, 12960);
    EXPECT_EQ(b.cost.bytes, 4448);
}

TEST(Cost, EmbeddingReadsOnlyTheLookedUpRows) {
    // 1x128 ids: ids 128*8 = 1,024 bytes, rows read 128*768*4 = 393,216, output written 393,216
    auto e = one_layer("embedding:num_embeddings=30522,embedding_dim=768", {{1, 128}});
    EXPECT_EQ(e.output_shape, (shape{1, 128, 768}));
    EXPECT_EQ(e.cost.params, 30522 * 768);
    EXPECT_EQ(e.cost.bytes, 1024 + 2 * 393216);
    EXPECT_EQ(e.cost.flops, 0);
}

TEST(Cost, OverflowIsAnErrorNotAWrap) {
    // 2^20 x 2^20 x 2^20 input to a linear of 2^20 -> 2^20: macs 2^80 does not fit
    try {
        (void)one_layer("linear:in_features=1048576,out_features=1048576", {{1048576, 1048576, 1048576}});
        FAIL() << "expected overflow_error";
    } catch (const overflow_error& e) {
        EXPECT_NE(std::string(e.what()).find("does not fit in int64"), std::string::npos) << e.what();
    }
}

TEST(Cost, ExecutedMacsLeaveOutThePaddingTaps) {
    // A kernel skips the taps that fall in the padding; macs counts them (torchvision), executed_macs does not.
    // Per dimension, a 3x3 kernel with padding 1 over 7 positions reads the input at 6 + 7 + 6 = 19 of 21
    // (position, tap) pairs: tap 0 misses position 0, tap 2 misses position 6.
    // 64->64 at 7x7: macs 49*64*64*9 = 1,806,336; executed 64*64*19*19 = 1,478,656 (18% fewer, the figure)
    auto l7 = one_layer("conv2d:in_channels=64,out_channels=64,kernel_size=3,padding=1,bias=false", {{1, 64, 7, 7}});
    EXPECT_EQ(l7.cost.macs, 1806336);
    EXPECT_EQ(l7.cost.executed_macs(), 1478656);
    EXPECT_EQ(l7.cost.executed_flops(), 2 * 1478656);
    // 28x28: per dimension 28*3 - 2 = 82 of 84 pairs; macs 784*64*64*9 = 28,901,376; executed 64*64*82*82 =
    // 27,541,504 (4.7% fewer)
    auto l28 = one_layer("conv2d:in_channels=64,out_channels=64,kernel_size=3,padding=1,bias=false", {{1, 64, 28, 28}});
    EXPECT_EQ(l28.cost.macs, 28901376);
    EXPECT_EQ(l28.cost.executed_macs(), 27541504);
    // no padding: every tap reads the input
    auto none = one_layer("conv2d:in_channels=3,out_channels=8,kernel_size=3", {{2, 3, 9, 9}});
    EXPECT_EQ(none.cost.executed_macs(), none.cost.macs);
    EXPECT_EQ(none.cost.skipped_macs, 0);
    // stride 2, padding 1, 3x3 over 32 -> 16 outputs: tap 0 reads 2o-1 (misses o=0: 15), tap 1 reads 2o (16),
    // tap 2 reads 2o+1 <= 31 (16) -> 47 of 48 per dimension; 16->32 channels: executed 32*16*47*47 = 1,131,008 of
    // macs 32*16*16*16*9 = 1,179,648
    auto s2 = one_layer("conv2d:in_channels=16,out_channels=32,kernel_size=3,stride=2,padding=1", {{1, 16, 32, 32}});
    EXPECT_EQ(s2.cost.macs, 1179648);
    EXPECT_EQ(s2.cost.executed_macs(), 1131008);
    // the bias adds are executed in any case: flops - executed_flops = 2 * the padding taps
    EXPECT_EQ(s2.cost.flops - s2.cost.executed_flops(), 2 * (1179648 - 1131008));
    // dilation 2, padding 2, 3x3 over 5 -> 5 outputs: taps read o-2, o, o+2 -> 3 + 5 + 3 = 11 of 15 per dimension;
    // 1->1 channel: executed 11*11 = 121 of 225
    auto dil = one_layer("conv2d:in_channels=1,out_channels=1,kernel_size=3,padding=2,dilation=2", {{1, 1, 5, 5}});
    EXPECT_EQ(dil.cost.macs, 225);
    EXPECT_EQ(dil.cost.executed_macs(), 121);
    // asymmetric "same" padding of a 4x4 kernel over 1024: 1 before, 2 after; taps read o-1, o, o+1, o+2 ->
    // 1023 + 1024 + 1023 + 1022 = 4,092 of 4,096 per dimension; 16->4 channels: 4*16*4092^2 = 1,071,645,696
    auto same = one_layer("conv2d:in_channels=16,out_channels=4,kernel_size=4,padding=same,bias=false",
                          {{1, 16, 1024, 1024}});
    EXPECT_EQ(same.cost.macs, 1073741824LL);
    EXPECT_EQ(same.cost.executed_macs(), 1071645696LL);
    // linear and matmul have no padding
    auto fc = one_layer("linear:in_features=64,out_features=32", {{8, 16, 64}});
    EXPECT_EQ(fc.cost.executed_macs(), fc.cost.macs);
}

TEST(Cost, AParameterIsHeldNotComputedAndCountsItsOwnSize) {
    // ViT's input: a class token [1, 1, 768] expanded to the batch (4) and concatenated before 196 patches, then a
    // position embedding [1, 197, 768] added; an additive mask buffer beside it
    model m("vit_stem");
    m.add_input({"x", shape{4, 196, 768}, false});
    m.add_layer({"class_token", parse_op("parameter:shape=1x1x768,expand=4x1x768"), {}, {}});
    m.add_layer({"cat", parse_op("concat:dim=1"), {"class_token", "x"}, {}});
    m.add_layer({"pos_embedding", parse_op("parameter:shape=1x197x768"), {}, {}});
    m.add_layer({"add", parse_op("add"), {"cat", "pos_embedding"}, {}});
    m.add_layer({"mask", parse_op("parameter:shape=197x1,trainable=false"), {}, {}});
    m.add_layer({"masked", parse_op("add"), {"add", "mask"}, {}});
    const auto a = analyze(m, dtype::fp32);
    EXPECT_EQ(a.layers[0].output_shape, (shape{4, 1, 768}));  // the broadcast, as Tensor.expand
    // held, not computed: 0 flops and 0 bytes; the params are the stored tensor, not its broadcast (768, not 3,072)
    EXPECT_EQ(a.layers[0].cost.flops, 0);
    EXPECT_EQ(a.layers[0].cost.bytes, 0);
    EXPECT_EQ(a.layers[0].cost.params, 768);
    EXPECT_EQ(a.layers[2].cost.params, 197 * 768);  // 151,296
    EXPECT_EQ(a.layers[4].cost.params, 0);           // trainable=false: a buffer
    EXPECT_EQ(a.layers[4].cost.buffers, 197);
    // model: params 768 + 151,296 = 152,064; add 4 x 197 x 768 = 605,184 flops, twice = 1,210,368
    EXPECT_EQ(a.totals.params, 152'064);
    EXPECT_EQ(a.totals.buffers, 197);
    EXPECT_EQ(a.totals.flops, 1'210'368);
    // its readers count the read: concat reads 768 x 4 (the broadcast) + 602,112 and writes 605,184 floats
    EXPECT_EQ(a.layers[1].cost.bytes, (4 * 768 + 602'112 + 605'184) * 4);
}

TEST(Cost, AParameterThatCannotExpandSaysWhy) {
    model m("m");
    m.add_input({"x", shape{2, 3}, false});
    m.add_layer({"p", parse_op("parameter:shape=3x2,expand=4x2x3"), {}, {}});
    m.add_layer({"y", parse_op("add"), {"x", "p"}, {}});
    try {
        (void)analyze(m, dtype::fp32);
        FAIL() << "no error";
    } catch (const error& e) {
        EXPECT_STREQ(e.what(), "parameter \"p\": cannot expand 3x2 to 4x2x3 (dimension 1: 3 is not 1)");
    }
    EXPECT_THROW((void)parse_op("parameter:shape=0x4"), parse_error);
    EXPECT_THROW((void)parse_op("parameter"), parse_error);
}
