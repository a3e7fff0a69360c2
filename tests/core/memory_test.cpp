#include <gtest/gtest.h>

#include "ridgeline/core/memory.hpp"
#include "ridgeline/core/zoo.hpp"

using namespace ridgeline::core;

TEST(Memory, LivenessOfAChain) {
    // x[1,4] -> a = linear 4->8 -> b = relu -> c = linear 8->2, fp32:
    // bytes x 16, a 32, b 32, c 8. Live sets: inputs {x}=16; step a {x,a}=48; step b {a,b}=64 (x died
    // after a); step c {b,c}=40. Peak 64 at "b".
    model_builder mb("chain");
    mb.input("x", shape{1, 4});
    mb.then("a", parse_op("linear:in_features=4,out_features=8"));
    mb.then("b", parse_op("relu"));
    mb.then("c", parse_op("linear:in_features=8,out_features=2"));
    const auto a = analyze(mb.build(), dtype::fp32);
    const auto m = memory_of(a);
    EXPECT_EQ(m.input_bytes, 16);
    EXPECT_EQ(m.activation_bytes, (std::vector<std::int64_t>{32, 32, 8}));
    EXPECT_EQ(m.total_activation_bytes, 72);
    EXPECT_EQ(m.peak_activation_bytes, 64);
    EXPECT_EQ(m.peak_at, "b");
    // params (4*8 + 8) + (8*2 + 2) = 58 elements * 4 bytes
    EXPECT_EQ(m.parameter_bytes, 232);
}

TEST(Memory, ViewsAliasAndResidualsStayLive) {
    // x[1,8] -> v = reshape 2x4 (view, 0 bytes, keeps x alive) -> r = relu(v) [32 B]
    // -> s = add(r, v): x (32 B) must still be live at s. Live at s: x 32 + r 32 + s 32 = 96.
    model_builder mb("res");
    mb.input("x", shape{1, 8});
    mb.then("v", parse_op("reshape:shape=2x4"));
    mb.then("r", parse_op("relu"));
    mb.add("s", parse_op("add"), {"r", "v"});
    const auto m = memory_of(analyze(mb.build(), dtype::fp32));
    EXPECT_EQ(m.activation_bytes, (std::vector<std::int64_t>{0, 32, 32}));
    EXPECT_EQ(m.peak_activation_bytes, 96);
    EXPECT_EQ(m.peak_at, "s");
}

TEST(Memory, TrainingEstimate) {
    // resnet18: forward flops 3,637,806,568 (see the summary); conv/linear flops are 2*macs + bias adds:
    // backward = 2 x (conv + fc flops) + 1 x the rest. Gradients = params * 4 bytes = 46,758,048.
    const auto a = analyze(build_zoo_model("resnet18"), dtype::fp32);
    const auto m = memory_of(a);
    const auto t = estimate_training(a, m);
    std::int64_t heavy = 0;
    for (const auto& l : a.layers)
        if (std::holds_alternative<conv2d>(l.layer.op) || std::holds_alternative<linear>(l.layer.op)) heavy += l.cost.flops;
    EXPECT_EQ(t.forward_flops, 3637806568);
    EXPECT_EQ(t.backward_flops, 2 * heavy + (t.forward_flops - heavy));
    EXPECT_EQ(t.gradient_bytes, 11689512LL * 4);
    EXPECT_EQ(t.adam_state_bytes, 2 * 11689512LL * 4);
    EXPECT_EQ(t.momentum_state_bytes, 11689512LL * 4);
    EXPECT_EQ(t.sgd_state_bytes, 0);
}
