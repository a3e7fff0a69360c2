// The CUDA backend on a device (ctest label `gpu`): every op against the reference loops in fp32, tf32,
// fp16 and bf16, graphs with views and residuals end to end, fused groups (--fuse), graph replay, the event
// timer, the cache flush and the ceilings. Every test skips with the driver's reason where there is no device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "ridgeline/profiler/profiler.hpp"
#include "ridgeline/backend_api/timing.hpp"
#include "ridgeline/core/fusion.hpp"
#include "ridgeline/core/zoo.hpp"
#include "ridgeline/cpu/cpu_backends.hpp"
#include "ridgeline/cpu/reference.hpp"
#include "ridgeline/cuda/cuda_backend.hpp"
#include "differential.hpp"

using namespace ridgeline;

namespace {

struct problem {
    std::string layer;
    std::vector<core::shape> inputs;
};

core::model_analysis one_layer_graph(const problem& p, core::dtype dt) {
    return core::analyze(core::single_layer_model(core::parse_op(p.layer), p.inputs, "op", "t"), dt);
}

/// The backend on device 0, made once for the whole test program.
backend_api::backend* gpu() {
    static std::unique_ptr<backend_api::backend> b = cuda::device_count() > 0 ? cuda::make_cuda_backend(0) : nullptr;
    return b.get();
}

#define REQUIRE_GPU()                                                                       \
    do {                                                                                    \
        if (cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device: " << cuda::device_count_error(); \
    } while (0)

/// Runs `g` on the GPU (outputs poisoned first) and on the reference backend, from the same data.
profiler::verification_result check_graph(const core::model_analysis& g, core::dtype dt, std::uint64_t seed = 7) {
    return test::differential::verify(*gpu(), g, backend_api::make_graph_data(g, dt, seed));
}

const std::vector<problem>& every_op() {
    static const std::vector<problem> problems = {
        {"linear:in_features=33,out_features=17", {{5, 33}}},
        {"linear:in_features=64,out_features=32,bias=false", {{2, 3, 64}}},
        {"linear:in_features=768,out_features=3072", {{128, 768}}},
        {"matmul", {{2, 3, 7, 5}, {2, 3, 5, 9}}},
        {"matmul", {{1, 7, 5}, {4, 5, 3}}},            // broadcast batch: strided with stride 0
        {"matmul", {{1, 3, 2, 4}, {2, 1, 4, 6}}},      // irregular broadcast: pointer arrays
        {"matmul", {{12, 64, 64}, {12, 64, 128}}},
        {"embedding:num_embeddings=50,embedding_dim=12", {{2, 9}}},
        {"conv2d:in_channels=3,out_channels=8,kernel_size=3,padding=1", {{2, 3, 11, 13}}},
        {"conv2d:in_channels=16,out_channels=24,kernel_size=3x5,stride=2x1,padding=1x2,bias=false", {{1, 16, 17, 19}}},
        {"conv2d:in_channels=12,out_channels=12,kernel_size=3,padding=2,dilation=2,groups=12", {{1, 12, 15, 15}}},
        {"conv2d:in_channels=12,out_channels=18,kernel_size=3,groups=3,padding=0x1x1x0", {{1, 12, 9, 10}}},
        {"conv2d:in_channels=8,out_channels=8,kernel_size=4,padding=same", {{1, 8, 10, 10}}},
        {"conv2d:in_channels=64,out_channels=64,kernel_size=3,padding=1,bias=false", {{4, 64, 28, 28}}},
        {"conv2d:in_channels=3,out_channels=64,kernel_size=7,stride=2,padding=3,bias=false", {{2, 3, 64, 64}}},
        {"batch_norm2d:num_features=16", {{2, 16, 7, 7}}},
        {"batch_norm2d:num_features=5,affine=false", {{1, 5, 4, 6}}},
        {"layer_norm:normalized_shape=24", {{3, 5, 24}}},
        {"layer_norm:normalized_shape=4x6,eps=1e-12", {{3, 4, 6}}},
        {"layer_norm:normalized_shape=768", {{2, 16, 768}}},
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
        {"softmax", {{2, 1000}}},
        {"softmax:dim=1", {{3, 4, 10}}},
        {"sum:dim=-1", {{3, 4, 10}}},       // one thread per output
        {"mean:dim=-1", {{4, 4096}}},       // one block per output (reduce_per_block: 4 outputs of 4,096)
        {"amax:dim=1", {{2, 3000, 3}}},     // one block per output, inputs strided by 3
        {"sum:dim=0", {{5000, 2}}},
        {"add", {{2, 3, 4}, {2, 3, 4}}},
        {"add", {{2, 8, 5, 5}, {8, 1, 1}}},
        {"mul", {{4, 1, 6}, {1, 5, 1}}},  // both inputs broadcast
        {"max_pool2d:kernel_size=3,stride=2,padding=1", {{2, 4, 11, 11}}},
        {"max_pool2d:kernel_size=2,ceil_mode=true", {{1, 3, 5, 7}}},
        {"max_pool2d:kernel_size=3,stride=2,dilation=2", {{1, 2, 13, 13}}},
        {"avg_pool2d:kernel_size=3,stride=2,padding=1", {{1, 4, 9, 9}}},
        {"avg_pool2d:kernel_size=3,stride=2,padding=1,ceil_mode=true,count_include_pad=true", {{1, 2, 6, 6}}},
        {"avg_pool2d:kernel_size=2,ceil_mode=true,count_include_pad=false", {{1, 2, 5, 5}}},
        {"adaptive_avg_pool2d:output_size=1", {{2, 8, 7, 7}}},
        {"adaptive_avg_pool2d:output_size=3x2", {{1, 2, 7, 5}}},  // windows of different sizes
        {"concat:dim=1", {{2, 3, 4, 4}, {2, 5, 4, 4}}},
        {"concat:dim=0", {{2, 3}, {4, 3}}},
        {"concat:dim=-1", {{2, 3, 2}, {2, 3, 5}, {2, 3, 1}}},
        {"pad:pad=1x2x3x0,value=-0.5", {{2, 3, 5, 6}}},
        {"pad:pad=3x3x3x3,mode=reflect", {{1, 64, 56, 56}}},
        {"pad:pad=1x0x0x2x1x1,mode=replicate", {{2, 3, 4, 5}}},
        {"interpolate:size=112", {{1, 64, 56, 56}}},
        {"where", {{1, 1, 8, 8}, {2, 4, 8, 8}, {1}}},
        {"expand:size=4x3x-1", {{1, 5}}},
        {"interpolate:size=5x9", {{2, 3, 7, 4}}},  // down on H, not a whole factor on W
        {"interpolate:size=13x17,mode=bilinear", {{2, 8, 6, 6}}},
        {"interpolate:size=13x17,mode=bilinear,align_corners=true", {{2, 8, 6, 6}}},
    };
    return problems;
}

}  // namespace

class CudaEveryOp : public testing::TestWithParam<core::dtype> {};

TEST_P(CudaEveryOp, MatchesTheReference) {
    REQUIRE_GPU();
    const core::dtype dt = GetParam();
    // the backend declines a data type as a whole (an older GPU): then every op; never one op of a type it runs
    if (const auto s = gpu()->supports(one_layer_graph(every_op().front(), dt).layers[0], dt); !s.supported)
        GTEST_SKIP() << s.reason;
    for (const auto& p : every_op()) {
        const auto g = one_layer_graph(p, dt);
        const auto s = gpu()->supports(g.layers[0], dt);
        if (!s.supported) {
            ADD_FAILURE() << p.layer << " " << core::to_string(dt) << " declined: " << s.reason;
            continue;
        }
        try {
            const auto v = check_graph(g, dt);
            EXPECT_EQ(v.state, profiler::verification_state::passed) << p.layer << " " << g.inputs[0].dims.to_string() << ": " << v.message
                                         << " (rel L2 " << v.rel_l2_error << ")";
            EXPECT_EQ(v.unwritten, 0) << p.layer;
        } catch (const std::exception& e) {
            ADD_FAILURE() << p.layer << " " << core::to_string(dt) << ": " << e.what();
        }
    }
}

INSTANTIATE_TEST_SUITE_P(DataTypes, CudaEveryOp,
                         testing::Values(core::dtype::fp32, core::dtype::tf32, core::dtype::fp16, core::dtype::bf16),
                         [](const testing::TestParamInfo<core::dtype>& i) { return std::string(core::to_string(i.param)); });

// Differential testing on the GPU (tests/support/differential.hpp): 25 random valid cases of every op in each data
// type, against the reference; no mismatch, no failure, at most a quarter of an op's cases declined (with reasons).
class CudaDifferential : public testing::TestWithParam<core::dtype> {};

TEST_P(CudaDifferential, EveryOpMatchesTheReference) {
    REQUIRE_GPU();
    const core::dtype dt = GetParam();
    for (const auto& [kind, t] : test::differential::run_all(*gpu(), dt, 25, 20261201)) {
        std::string detail;
        for (const auto& [r, n] : t.decline_reasons) detail += "\n    declined x" + std::to_string(n) + " " + r;
        for (const auto& p : t.problems) detail += "\n    " + p;
        std::printf("%-20s %s tried %3d matched %3d declined %3d mismatched %d failed %d\n", kind.c_str(),
                    std::string(core::to_string(dt)).c_str(), t.tried, t.matched, t.declined, t.mismatched, t.failed);
        EXPECT_EQ(t.mismatched + t.failed, 0) << kind << detail;
        EXPECT_LE(t.declined, t.tried / 4) << kind << detail;
    }
}

INSTANTIATE_TEST_SUITE_P(DataTypes, CudaDifferential,
                         testing::Values(core::dtype::fp32, core::dtype::tf32, core::dtype::fp16, core::dtype::bf16),
                         [](const testing::TestParamInfo<core::dtype>& i) { return std::string(core::to_string(i.param)); });

TEST(CudaGraph, ViewsAndResidualsEndToEnd) {
    REQUIRE_GPU();
    // x -> transpose -> slice -> relu, a flatten of a strided view, a residual add, a view as an output
    core::model_builder b("views");
    b.input("x", {2, 6, 8});
    b.add("t", core::parse_op("transpose:dim0=1,dim1=2"), {"x"});            // 2x8x6, strided
    b.add("s", core::parse_op("slice:dim=2,start=1,end=5"), {"t"});          // 2x8x4, strided
    b.add("r", core::parse_op("relu"), {"s"});                               // dense copy, then relu
    b.add("f", core::parse_op("flatten:start_dim=1"), {"s"});                // a strided view made dense
    b.add("l", core::parse_op("linear:in_features=32,out_features=32"), {"f"});
    b.add("back", core::parse_op("reshape:shape=0x8x4"), {"l"});
    b.add("sum", core::parse_op("add"), {"back", "r"});
    b.add("out", core::parse_op("transpose:dim0=0,dim1=1"), {"sum"});        // an output that is a view
    for (core::dtype dt : {core::dtype::fp32, core::dtype::bf16}) {
        const auto g = core::analyze(b.build(), dt);
        const auto v = check_graph(g, dt);
        EXPECT_EQ(v.state, profiler::verification_state::passed) << core::to_string(dt) << ": " << v.message;
    }
}

TEST(CudaGraph, ResNetBlockAndBertLayerMatchTheReference) {
    REQUIRE_GPU();
    for (const char* name : {"resnet18", "bert_base"}) {
        core::model m = core::build_zoo_model(name);
        const auto g = core::analyze(m, core::dtype::fp32);
        const auto v = check_graph(g, core::dtype::fp32);
        // deep models accumulate rounding differences: the fp32 tolerance applies to the whole model
        EXPECT_EQ(v.state, profiler::verification_state::passed) << name << ": " << v.message;
    }
}

namespace {

/// conv+bn+relu6 (fold, relu6 after), conv+bn+add+relu (fold, z and relu in cudnnConvolutionBiasActivationForward),
/// conv+bn+relu (the fused call without z: alpha2 = 0, z = y), conv+add (the fused call with IDENTITY, so
/// IMPLICIT_PRECOMP_GEMM), linear+relu (RELU_BIAS epilogue), linear+gelu(tanh) (GELU, no bias), linear+add+gelu(tanh)
/// (C with beta 1 and GELU_BIAS), matmul+silu (after: ridgeline's matmul has no epilogue)
core::model fused_groups_model() {
    core::model_builder b("fused");
    b.input("x", core::shape{2, 16, 6, 6});
    b.input("w", core::shape{2, 36, 36});
    const core::op conv = core::parse_op("conv2d:in_channels=16,out_channels=16,kernel_size=3,padding=1,bias=false");
    b.add("conv1", conv, {"x"});
    b.then("bn1", core::parse_op("batch_norm2d:num_features=16"));
    const std::string s = b.then("act1", core::parse_op("relu6"));
    b.then("conv2", conv);
    const std::string bn2 = b.then("bn2", core::parse_op("batch_norm2d:num_features=16,affine=false"));
    b.add("add", core::parse_op("add"), {bn2, s});
    b.then("relu2", core::parse_op("relu"));
    b.then("conv3", conv);
    b.then("bn3", core::parse_op("batch_norm2d:num_features=16"));
    const std::string r3 = b.then("relu3", core::parse_op("relu"));
    const std::string c4 = b.then("conv4", core::parse_op("conv2d:in_channels=16,out_channels=16,kernel_size=1"));
    b.add("add4", core::parse_op("add"), {c4, r3});
    b.then("flat", core::parse_op("reshape:shape=2x16x36"));
    b.then("fc1", core::parse_op("linear:in_features=36,out_features=36"));
    b.then("act2", core::parse_op("relu"));
    b.then("fc2", core::parse_op("linear:in_features=36,out_features=36,bias=false"));
    const std::string h = b.then("act3", core::parse_op("gelu:approximate=tanh"));
    const std::string f3 = b.then("fc3", core::parse_op("linear:in_features=36,out_features=36"));
    b.add("res", core::parse_op("add"), {f3, h});
    const std::string g4 = b.then("act4", core::parse_op("gelu:approximate=tanh"));
    b.add("mm", core::parse_op("matmul"), {g4, "w"});
    b.then("act5", core::parse_op("silu"));
    return b.build();
}

}  // namespace

TEST(CudaFused, GroupsMatchTheirMembersOnTheReference) {
    const core::model m = fused_groups_model();
    // the eight groups above (checked without a device too): act1, act3 and relu3 are read twice, but each is its
    // group's tail
    EXPECT_EQ(core::describe_fusion(core::fuse(core::analyze(m, core::dtype::fp32))),
              "8 fused groups: 3 batch norms folded, 7 activations as post-ops and 3 residual adds as sum post-ops");
    REQUIRE_GPU();
    for (const core::dtype dt : {core::dtype::fp32, core::dtype::tf32, core::dtype::fp16, core::dtype::bf16}) {
        const core::model_analysis g = core::fuse(core::analyze(m, dt));
        if (!gpu()->supports(g.layers[0], dt).supported) continue;  // tf32 and bf16 need sm_80
        const auto v = check_graph(g, dt);
        EXPECT_EQ(v.state, profiler::verification_state::passed) << core::to_string(dt) << ": " << v.message;
        // each group alone, as the profiler times and verifies it
        for (const auto& la : g.layers) {
            if (la.fused.empty()) continue;
            const auto one = backend_api::single_layer_graph(la, g);
            const auto w = check_graph(one, dt);
            EXPECT_EQ(w.state, profiler::verification_state::passed)
                << core::group_label(la) << " " << core::to_string(dt) << ": " << w.message;
        }
    }
    // the notes name what the library call took
    const core::model_analysis g = core::fuse(core::analyze(m, core::dtype::fp32));
    auto prep = gpu()->prepare(g, backend_api::make_graph_data(g, core::dtype::fp32, 5));
    const std::string notes = prep->notes();
    EXPECT_NE(notes.find("bn folded"), std::string::npos) << notes;
    EXPECT_NE(notes.find("+relu+bias epilogue"), std::string::npos) << notes;
    EXPECT_NE(notes.find("+gelu epilogue"), std::string::npos) << notes;  // fc2 has no bias: CUBLASLT_EPILOGUE_GELU
    // conv2 + bn2 + add + relu2: relu(conv(x) + z + the folded bias) in one cuDNN call, act1's output as z
    EXPECT_NE(notes.find("+z+relu in cudnnConvolutionBiasActivationForward"), std::string::npos) << notes;
    // conv3 + bn3 + relu3 (alpha2 = 0 and z = y, as XLA and ONNX Runtime call it) and conv4 + add4 (IDENTITY, so
    // IMPLICIT_PRECOMP_GEMM): both one call, none refused
    EXPECT_NE(notes.find("+relu in cudnnConvolutionBiasActivationForward"), std::string::npos) << notes;
    EXPECT_NE(notes.find("+z in cudnnConvolutionBiasActivationForward"), std::string::npos) << notes;
    EXPECT_EQ(notes.find("fused call refused"), std::string::npos) << notes;
    // fc3 + res + act4: D = gelu(h W^T + b + act3's output) in one call, the residual as C with beta 1
    EXPECT_NE(notes.find("+gelu+bias epilogue +residual as C (beta 1)"), std::string::npos) << notes;
    EXPECT_NE(notes.find("ridgeline:relu6"), std::string::npos) << notes;
}

TEST(CudaGraph, GraphReplayGivesTheSameOutputs) {
    REQUIRE_GPU();
    const auto g = one_layer_graph({"conv2d:in_channels=16,out_channels=16,kernel_size=3,padding=1", {{2, 16, 12, 12}}},
                                   core::dtype::fp32);
    const auto data = backend_api::make_graph_data(g, core::dtype::fp32, 3);
    auto prep = gpu()->prepare(g, data);
    prep->run();
    const auto direct = prep->outputs();
    ASSERT_TRUE(prep->enable_graph_replay());
    EXPECT_NE(prep->notes().find("cuda graph"), std::string::npos) << prep->notes();
    prep->poison_outputs();
    prep->run();
    const auto replayed = prep->outputs();
    ASSERT_EQ(direct.size(), replayed.size());
    EXPECT_EQ(direct[0].data, replayed[0].data);  // the same kernels on the same data: bitwise equal
}

TEST(CudaBackend, DeviceDescription) {
    REQUIRE_GPU();
    const auto d = gpu()->device();
    EXPECT_EQ(d.backend, "cuda:0");
    EXPECT_EQ(d.kind, backend_api::device_kind::gpu);
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.cores, 0);
    EXPECT_EQ(d.isa.rfind("sm_", 0), 0u);
    EXPECT_GT(d.memory_bytes, 0);
    EXPECT_GT(d.last_level_cache_bytes, 0);
    std::map<std::string, std::string> details(d.details.begin(), d.details.end());
    for (const char* key : {"compute_capability", "sm_clock_mhz", "memory_bus_width_bits", "driver", "runtime", "cublas",
                            "cudnn"})
        EXPECT_TRUE(details.count(key)) << key;
    EXPECT_GT(gpu()->free_memory_bytes(), 0);
}

TEST(CudaBackend, EventTimerAndColdCache) {
    REQUIRE_GPU();
    auto& timer = gpu()->timer();
    EXPECT_EQ(timer.name(), "cuda_event");
    EXPECT_GT(timer.resolution_ns(), 0);
    EXPECT_GE(timer.overhead_ns(), 0);
    const auto g = one_layer_graph({"linear:in_features=1024,out_features=1024", {{256, 1024}}}, core::dtype::fp16);
    const auto data = backend_api::make_graph_data(g, core::dtype::fp16, 1);
    auto prep = gpu()->prepare(g, data);
    EXPECT_NE(prep->notes().find("cublasLt"), std::string::npos) << prep->notes();
    for (auto mode : {backend_api::cache_mode::hot, backend_api::cache_mode::cold}) {
        backend_api::timing_options o = backend_api::timing_options::quick();
        o.cache = mode;
        const auto t = backend_api::measure([&] { prep->run(); }, timer, o, [&] { gpu()->flush_cache(); });
        EXPECT_GT(t.samples, 0) << backend_api::to_string(mode);
        // 256 x 1024 x 1024 MACs take microseconds, never seconds, and never zero
        EXPECT_GT(t.stats.median, 0.0) << backend_api::to_string(mode);
        EXPECT_LT(t.stats.median, 100.0) << backend_api::to_string(mode);
    }
}

TEST(CudaBackend, ProfilerEndToEndWithGraphReplay) {
    REQUIRE_GPU();
    const auto a = core::analyze(core::build_zoo_model("resnet18"), core::dtype::bf16);
    profiler::profile_options o;
    o.timing = backend_api::timing_options::quick();
    o.graph_replay = true;
    const auto r = profiler::profile_model(a, *gpu(), o);
    EXPECT_EQ(r.end_to_end_state, profiler::run_state::measured) << r.end_to_end_reason;
    EXPECT_EQ(r.graph_replay_state, profiler::run_state::measured) << r.graph_replay_reason;
    for (const auto& l : r.layers) {
        if (l.state == profiler::run_state::view) continue;
        EXPECT_EQ(l.state, profiler::run_state::measured) << l.analysis.layer.name << ": " << l.reason;
        EXPECT_EQ(l.verification.state, profiler::verification_state::passed) << l.analysis.layer.name << ": " << l.verification.message;
        EXPECT_FALSE(l.implementation.empty()) << l.analysis.layer.name;
        EXPECT_TRUE(std::isfinite(l.host_ms_per_run)) << l.analysis.layer.name;
    }
}

TEST(CudaBackend, QuickCeilings) {
    REQUIRE_GPU();
    backend_api::ceilings_options o;
    o.quick = true;
    const auto c = gpu()->measure_ceilings(o);
    EXPECT_EQ(c.backend, "cuda:0");
    EXPECT_GT(c.peak_gflops.at("fp32"), 0);
    EXPECT_GT(c.bandwidth_gbs, 0);
    // the DRAM roof is the highest of ridgeline's STREAM copy, triad and read and the driver's device copy
    // (cuda_backend.cpp), each measured: whichever wins, the roof is that one, never below another
    EXPECT_GT(c.copy_gbs, 0);
    EXPECT_GT(c.read_gbs, 0);
    EXPECT_GT(c.device_copy_gbs, 0);
    EXPECT_EQ(c.bandwidth_gbs, std::max({c.copy_gbs, c.triad_gbs, c.read_gbs, c.device_copy_gbs}));
    EXPECT_NE(c.method.at("bandwidth_gbs").find("the highest of ridgeline's STREAM copy"), std::string::npos);
    EXPECT_FALSE(c.working_set_gbs.empty());
    EXPECT_GT(c.launch_overhead_ms, 0);
    EXPECT_GT(c.dispatch_overhead_ms, 0);
    // the cold fixed cost (one relu after the L2 flush) and what such a run moves: measured, not the hot ones
    EXPECT_GT(c.cold_dispatch_overhead_ms, 0);
    EXPECT_GT(c.cold_bandwidth_gbs, 0);
    EXPECT_TRUE(c.method.count("cold_dispatch_overhead_ms"));
    EXPECT_GT(c.last_level_cache_bytes, 0);
    EXPECT_TRUE(c.method.count("peak_gflops.bf16"));
    EXPECT_TRUE(c.method.count("datasheet"));
}

TEST(CudaBackend, UnknownOrdinalIsAnError) {
    REQUIRE_GPU();
    EXPECT_THROW((void)cuda::make_cuda_backend(cuda::device_count()), backend_api::backend_error);
}
