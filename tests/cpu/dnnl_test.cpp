// oneDNN backend against the reference loops for every op, on fixed and random shapes.
#include <gtest/gtest.h>

#include <random>

#include "ridgeline/profiler/profiler.hpp"
#include "ridgeline/cpu/cpu_backends.hpp"
#include "ridgeline/cpu/cpu_ceilings.hpp"
#include "ridgeline/cpu/reference.hpp"

using namespace ridgeline;

namespace {

struct problem {
    std::string layer;
    std::vector<core::shape> inputs;
};

core::model_analysis one_layer_graph(const problem& p, core::dtype dt) {
    return core::analyze(core::single_layer_model(core::parse_op(p.layer), p.inputs, "op", "t"), dt);
}

/// Runs the layer on `b` with poisoned outputs and compares with the reference on the same data.
profiler::verification_result check(backend_api::backend& b, const problem& p, core::dtype dt, std::uint64_t seed = 7) {
    const auto g = one_layer_graph(p, dt);
    const auto data = backend_api::make_graph_data(g, dt, seed);
    auto prep = b.prepare(g, data);
    prep->poison_outputs();
    prep->run();
    const auto got = prep->outputs();
    const auto& la = g.layers[0];
    std::vector<const backend_api::host_tensor*> in;
    for (const auto& t : la.layer.inputs) in.push_back(&data.tensors.at(t));
    std::map<std::string, const backend_api::host_tensor*> params;
    for (const auto& q : core::parameters_of(la.layer.op))
        params[q.name] = &data.tensors.at(backend_api::param_key(la.layer, q.name));
    const auto want = cpu::reference_forward(la.layer, in, params, la.output_shape);
    return profiler::compare_outputs(got, {want}, profiler::verification_tolerance(dt));
}

std::unique_ptr<backend_api::backend>& cpu_backend() {
    static std::unique_ptr<backend_api::backend> b = cpu::make_dnnl_backend(0);
    return b;
}

}  // namespace

TEST(Dnnl, EveryOpMatchesTheReferenceInFp32) {
    const problem problems[] = {
        {"linear:in_features=33,out_features=17", {{5, 33}}},
        {"linear:in_features=64,out_features=32,bias=false", {{2, 3, 64}}},
        {"matmul", {{2, 3, 7, 5}, {2, 3, 5, 9}}},
        {"matmul", {{1, 7, 5}, {4, 5, 3}}},  // broadcast batch
        {"embedding:num_embeddings=50,embedding_dim=12", {{2, 9}}},
        {"conv2d:in_channels=3,out_channels=8,kernel_size=3,padding=1", {{2, 3, 11, 13}}},
        {"conv2d:in_channels=16,out_channels=24,kernel_size=3x5,stride=2x1,padding=1x2,bias=false", {{1, 16, 17, 19}}},
        {"conv2d:in_channels=12,out_channels=12,kernel_size=3,padding=2,dilation=2,groups=12", {{1, 12, 15, 15}}},
        {"conv2d:in_channels=12,out_channels=18,kernel_size=3,groups=3,padding=0x1x1x0", {{1, 12, 9, 10}}},
        {"conv2d:in_channels=8,out_channels=8,kernel_size=4,padding=same", {{1, 8, 10, 10}}},
        {"batch_norm2d:num_features=16", {{2, 16, 7, 7}}},
        {"batch_norm2d:num_features=5,affine=false", {{1, 5, 4, 6}}},
        {"layer_norm:normalized_shape=24", {{3, 5, 24}}},
        {"layer_norm:normalized_shape=4x6,eps=1e-12", {{3, 4, 6}}},
        {"relu", {{2, 16, 5, 5}}},
        {"relu6", {{3, 7}}},
        {"gelu", {{4, 9}}},
        {"gelu:approximate=tanh", {{4, 9}}},
        {"tanh", {{4, 9}}},
        {"sigmoid", {{4, 9}}},
        {"hardswish", {{2, 16, 5, 5}}},
        {"hardsigmoid", {{2, 16, 5, 5}}},
        {"silu", {{4, 9}}},
        {"scale:factor=0.125", {{4, 9}}},
        {"softmax", {{3, 4, 10}}},
        {"softmax:dim=1", {{3, 4, 10}}},
        {"add", {{2, 16, 6, 6}, {2, 16, 6, 6}}},
        {"add", {{1, 4, 8}, {4, 1}}},  // broadcast second
        {"add", {{8}, {2, 3, 8}}},     // broadcast first (swapped)
        {"mul", {{2, 3, 4}, {2, 3, 4}}},
        {"max_pool2d:kernel_size=3,stride=2,padding=1", {{1, 16, 13, 13}}},
        {"max_pool2d:kernel_size=3,stride=2,ceil_mode=true", {{1, 8, 14, 14}}},
        {"max_pool2d:kernel_size=2,dilation=2", {{1, 8, 9, 9}}},
        {"avg_pool2d:kernel_size=3,stride=2,padding=1", {{1, 16, 13, 13}}},
        {"avg_pool2d:kernel_size=3,stride=2,padding=1,count_include_pad=false", {{1, 8, 13, 13}}},
        {"avg_pool2d:kernel_size=2", {{1, 3, 7, 7}}},
        {"adaptive_avg_pool2d:output_size=1", {{2, 16, 7, 7}}},
        {"adaptive_avg_pool2d:output_size=2x3", {{1, 8, 4, 6}}},
        {"concat", {{1, 8, 5, 5}, {1, 16, 5, 5}}},
        {"concat:dim=2", {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}},
        {"flatten", {{2, 16, 3, 3}}},
        {"reshape:shape=0x-1x4", {{2, 6, 4}}},
        {"transpose:dim0=1,dim1=2", {{2, 3, 5}}},
        {"slice:dim=1,start=1,end=5,step=2", {{2, 7, 3}}},
    };
    for (const auto& p : problems) {
        SCOPED_TRACE(p.layer + " on " + p.inputs[0].to_string());
        const auto v = check(*cpu_backend(), p, core::dtype::fp32);
        EXPECT_EQ(v.state, profiler::verification_state::passed) << v.message;
        EXPECT_EQ(v.unwritten, 0);
        EXPECT_LE(v.rel_l2_error, 1e-4);
    }
}

TEST(Dnnl, RandomConvolutions) {
    // 40 random problems over groups, dilation, stride, asymmetric padding and odd sizes
    std::mt19937 rng(1234);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    int checked = 0;
    for (int i = 0; i < 40; ++i) {
        const int groups = std::vector<int>{1, 1, 2, 3, 4}[static_cast<std::size_t>(pick(0, 4))];
        const int cin = groups * pick(1, 6), cout = groups * pick(1, 6);
        const int kh = pick(1, 5), kw = pick(1, 5), sh = pick(1, 3), sw = pick(1, 3), dh = pick(1, 2), dw = pick(1, 2);
        const int pt = pick(0, 2), pl = pick(0, 2), pb = pick(0, 2), pr = pick(0, 2);
        const int h = pick(dh * (kh - 1) + 1, 20), w = pick(dw * (kw - 1) + 1, 20);
        const std::string s = "conv2d:in_channels=" + std::to_string(cin) + ",out_channels=" + std::to_string(cout) +
                              ",kernel_size=" + std::to_string(kh) + "x" + std::to_string(kw) + ",stride=" +
                              std::to_string(sh) + "x" + std::to_string(sw) + ",padding=" + std::to_string(pt) + "x" +
                              std::to_string(pl) + "x" + std::to_string(pb) + "x" + std::to_string(pr) + ",dilation=" +
                              std::to_string(dh) + "x" + std::to_string(dw) + ",groups=" + std::to_string(groups) +
                              ",bias=" + (pick(0, 1) ? "true" : "false");
        SCOPED_TRACE(s + " on " + std::to_string(h) + "x" + std::to_string(w));
        const auto v = check(*cpu_backend(), {s, {{pick(1, 2), cin, h, w}}}, core::dtype::fp32, 100 + static_cast<std::uint64_t>(i));
        EXPECT_EQ(v.state, profiler::verification_state::passed) << v.message;
        ++checked;
    }
    EXPECT_EQ(checked, 40);
}

TEST(Dnnl, ReducedPrecisionIsSupportedOrDeclinedWithAReason) {
    const problem p{"conv2d:in_channels=16,out_channels=16,kernel_size=3,padding=1", {{1, 16, 12, 12}}};
    const auto g = one_layer_graph(p, core::dtype::bf16);
    const auto s = cpu_backend()->supports(g.layers[0], core::dtype::bf16);
    if (s.supported) {
        const auto v = check(*cpu_backend(), p, core::dtype::bf16);
        EXPECT_EQ(v.state, profiler::verification_state::passed) << v.message;
    } else {
        EXPECT_NE(s.reason.find("bf16 needs AVX-512"), std::string::npos) << s.reason;
        EXPECT_THROW((void)cpu_backend()->prepare(g, backend_api::make_graph_data(g, core::dtype::bf16, 1)),
                     backend_api::unsupported);
    }
    const auto tf = cpu_backend()->supports(g.layers[0], core::dtype::tf32);
    EXPECT_FALSE(tf.supported);
    EXPECT_NE(tf.reason.find("tf32"), std::string::npos);
}

TEST(Dnnl, RunsWhatOneDnnPoolingCannotExpress) {
    // adaptive pooling 5 -> 3 has windows [0,2), [1,4), [3,5) of 2 and 3: two averaging matmuls, not a pooling
    const problem p{"adaptive_avg_pool2d:output_size=3", {{1, 2, 5, 5}}};
    const auto v = check(*cpu_backend(), p, core::dtype::fp32);
    EXPECT_EQ(v.state, profiler::verification_state::passed) << v.message;
    const auto g = one_layer_graph(p, core::dtype::fp32);
    auto prep = cpu_backend()->prepare(g, backend_api::make_graph_data(g, core::dtype::fp32, 1));
    EXPECT_NE(prep->notes().find("+"), std::string::npos) << "two primitives: " << prep->notes();
}

TEST(Dnnl, WholeModelMatchesTheReferenceChain) {
    // a small residual network with views: end-to-end output equals the reference backend's
    core::model_builder b("tiny");
    b.input("x", core::shape{2, 8, 10, 10});
    b.then("conv", core::parse_op("conv2d:in_channels=8,out_channels=16,kernel_size=3,padding=1"));
    const std::string c = b.then("bn", core::parse_op("batch_norm2d:num_features=16"));
    b.then("relu", core::parse_op("relu"));
    b.then("conv2", core::parse_op("conv2d:in_channels=16,out_channels=16,kernel_size=3,padding=1,bias=false"));
    const std::string r = b.current();
    b.add("add", core::parse_op("add"), {r, c});
    b.then("pool", core::parse_op("adaptive_avg_pool2d:output_size=1"));
    b.then("flat", core::parse_op("flatten"));
    b.then("fc", core::parse_op("linear:in_features=16,out_features=12"));
    b.then("view", core::parse_op("reshape:shape=0x3x4"));
    b.then("t", core::parse_op("transpose:dim0=1,dim1=2"));
    b.then("sm", core::parse_op("softmax"));
    const auto g = core::analyze(b.build(), core::dtype::fp32);
    const auto data = backend_api::make_graph_data(g, core::dtype::fp32, 99);
    auto fast = cpu_backend()->prepare(g, data);
    fast->poison_outputs();
    fast->run();
    auto ref_backend = cpu::make_reference_backend(0);
    auto ref = ref_backend->prepare(g, data);
    ref->run();
    const auto v = profiler::compare_outputs(fast->outputs(), ref->outputs(), 1e-4);
    EXPECT_EQ(v.state, profiler::verification_state::passed) << v.message;
    EXPECT_EQ(fast->outputs().at(0).dims, (core::shape{2, 4, 3}));
}

TEST(Dnnl, ASqueezeExciteGateRunsJitNotOneDnnsReference) {
    // x * gate with the gate [1, C, 1, 1] (MobileNetV3's and EfficientNet's squeeze-excite): x arrives blocked
    // (nChw16c, or nChw8c on AVX2, as the backend lays out 4-D activations and as oneDNN's depthwise kernels
    // write them) and oneDNN 2.6 has no jit kernel for that pair: it ran its scalar ref:any, 7.3 ms for a
    // 1x672x14x14 gate against 11 us. ridgeline reorders x to plain first; the result still matches
    core::model_builder b("se");
    b.input("x", core::shape{1, 672, 14, 14});
    b.input("gate", core::shape{1, 672, 1, 1});
    b.add("mul", core::parse_op("mul"), {"gate", "x"});
    const auto g = core::analyze(b.build(), core::dtype::fp32);
    const auto data = backend_api::make_graph_data(g, core::dtype::fp32, 7);
    auto fast = cpu_backend()->prepare(g, data);
    EXPECT_EQ(fast->notes().find("ref:any"), std::string::npos) << fast->notes();
    fast->poison_outputs();
    fast->run();
    auto ref = cpu::make_reference_backend(0)->prepare(g, data);
    ref->run();
    const auto v = profiler::compare_outputs(fast->outputs(), ref->outputs(), 1e-4);
    EXPECT_EQ(v.state, profiler::verification_state::passed) << v.message;
}

// Without /sys cache topology (some VMs) the last level's size comes from the sweep itself. The points of a 2-vCPU Zen 5
// VM whose CPUID reports 508 MB of L3 (cpu_info::cache_source "cpuid"): L2 (2 MB for 2 cores) and below first, then
// 155-160 GB/s from 3 to 25 MB, 107 at 50 MB (under 0.75 x 160 = 120), DRAM beyond: the level ends at 25.17 MB.
TEST(CpuCeilings, TheLastLevelEndsWhereTheSweepFallsOff) {
    const std::vector<std::pair<std::int64_t, double>> sweep = {
        {49152, 443.6},    {98304, 363.1},    {196608, 288.4},    {393216, 283.1},    {786432, 299.2},
        {1572864, 245.4},  {3145728, 160.2},  {6291456, 160.5},   {12582912, 156.2},  {25165824, 157.5},
        {50331648, 107.6}, {100663296, 87.3}, {201326592, 86.5}};
    EXPECT_EQ(ridgeline::cpu::last_level_from_sweep(sweep, 2097152), 25165824);
    // no fall within the sweep: nothing is read from it (the reported size stands)
    const std::vector<std::pair<std::int64_t, double>> flat = {{3145728, 160.2}, {6291456, 158.0}, {12582912, 150.0}};
    EXPECT_EQ(ridgeline::cpu::last_level_from_sweep(flat, 2097152), 0);
    // past the last level, DRAM's points (107.6, 87.3, 86.5) stay within 25% of their best: nothing to read
    EXPECT_EQ(ridgeline::cpu::last_level_from_sweep(sweep, 25165824), 0);
}
