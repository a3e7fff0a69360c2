// report::advise on hand-made profiles: each rule fires on the evidence it needs, and not without it (a disturbed
// layer is no evidence; a producer read by two layers cannot take a post-op), and the advice is ordered by the time
// at stake.
#include <gtest/gtest.h>

#include "../support/measured_layer.hpp"
#include "ridgeline/report/advice.hpp"

using namespace ridgeline;

namespace {

core::roofline_point verdict(core::bound_class b, double roof_fraction) {
    core::roofline_point v;
    v.bound = b;
    v.roof_fraction = roof_fraction;
    (b == core::bound_class::memory ? v.memory_ms : v.compute_ms) = roof_fraction;  // which floor set it
    return v;
}

/// x -> conv "c" -> batch_norm "bn" -> relu "act" -> linear-free tail; conv 4 ms (compute, 90%), bn 1 ms (memory,
/// 30%), act 0.5 ms (memory, 80%). Sum of layers 5.5 ms.
profiler::profile_result conv_bn_relu() {
    profiler::profile_result r = test::chain_profile(
        "cbr", {1, 8, 16, 16},
        {{"c", "conv2d:in_channels=8,out_channels=8,kernel_size=3,padding=1"}, {"bn", "batch_norm2d:num_features=8"},
         {"act", "relu"}});
    const double median[] = {4.0, 1.0, 0.5};
    const core::roofline_point v[] = {verdict(core::bound_class::compute, 0.9), verdict(core::bound_class::memory, 0.3),
                                      verdict(core::bound_class::memory, 0.8)};
    for (std::size_t i = 0; i < 3; ++i) {
        r.layers.push_back(test::measured_layer(r.analysis.layers[i], median[i]));
        r.layers.back().roofline = v[i];
        r.sum_of_layers_ms += median[i];
    }
    return r;
}

const report::advice* find(const std::vector<report::advice>& a, const std::string& rule) {
    for (const auto& x : a)
        if (x.rule == rule) return &x;
    return nullptr;
}

}  // namespace

TEST(Advice, NormAfterConvFoldsAndActivationAfterNormIsNoPostOp) {
    const auto a = report::advise(conv_bn_relu());
    const report::advice* fold = find(a, "fold_norm");
    ASSERT_NE(fold, nullptr);
    EXPECT_EQ(fold->layers, std::vector<std::string>{"bn"});
    EXPECT_DOUBLE_EQ(fold->time_ms, 1.0);
    EXPECT_NE(fold->text.find("1 batch norm (bn) follows a convolution"), std::string::npos) << fold->text;
    EXPECT_NE(fold->text.find("1.000 ms, 18% of the layers' time"), std::string::npos) << fold->text;  // 1 of 5.5 ms
    // the relu reads the norm, not a conv or linear: no post-op advice
    EXPECT_EQ(find(a, "post_op"), nullptr);
    // bn is memory-bound at 30% with 1 / 5.5 = 18% of the time: headroom advice too; the conv at 90% has none
    const report::advice* mem = find(a, "memory_headroom");
    ASSERT_NE(mem, nullptr);
    EXPECT_EQ(mem->layers, std::vector<std::string>{"bn"});
    EXPECT_EQ(find(a, "compute_headroom"), nullptr);
}

TEST(Advice, AnActivationRightAfterAConvIsAPostOpUnlessTheConvHasAnotherReader) {
    profiler::profile_result r = test::chain_profile(
        "cr", {1, 8, 16, 16}, {{"c", "conv2d:in_channels=8,out_channels=8,kernel_size=1"}, {"act", "relu"}});
    for (std::size_t i = 0; i < 2; ++i) {
        r.layers.push_back(test::measured_layer(r.analysis.layers[i], 1.0));
        r.layers.back().roofline = verdict(core::bound_class::memory, 0.9);
        r.sum_of_layers_ms += 1.0;
    }
    const auto advised = report::advise(r);  // kept: find() points into it
    const report::advice* post = find(advised, "post_op");
    ASSERT_NE(post, nullptr);
    EXPECT_EQ(post->layers, std::vector<std::string>{"act"});
    // a disturbed activation is no evidence
    r.layers[1].time->disturbed = true;
    EXPECT_EQ(find(report::advise(r), "post_op"), nullptr);
}

TEST(Advice, OverheadBoundLayersHoldingAFifthOfTheTime) {
    profiler::profile_result r = conv_bn_relu();
    // bn and act overhead-bound: 1.5 of 5.5 ms = 27% of the time (>= 20%)
    r.layers[1].roofline = verdict(core::bound_class::overhead, 0.5);
    r.layers[2].roofline = verdict(core::bound_class::overhead, 0.5);
    const auto a = report::advise(r);
    const report::advice* o = find(a, "overhead");
    ASSERT_NE(o, nullptr);
    EXPECT_DOUBLE_EQ(o->time_ms, 1.5);
    EXPECT_NE(o->text.find("2 layers are overhead-bound, 27% of the layers' time"), std::string::npos) << o->text;
    // the most time at stake first: overhead (1.5 ms) before fold_norm (1.0 ms)
    ASSERT_GE(a.size(), 2u);
    EXPECT_EQ(a[0].rule, "overhead");
    // at 10% of the time (act alone, 0.5 of 5.5) no overhead advice
    r.layers[1].roofline = verdict(core::bound_class::memory, 0.8);
    EXPECT_EQ(find(report::advise(r), "overhead"), nullptr);
}
