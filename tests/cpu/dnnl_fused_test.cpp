// Fused groups on oneDNN (cpu/src/dnnl_graph_fused.cpp) against their members run one by one on the reference
// loops: a folded batch norm, activation post-ops, and a residual sum whose addend is a model input (copied once,
// restored by poison_outputs), a tensor nothing reads later (written in place), or one read later (copied).
#include <gtest/gtest.h>

#include "ridgeline/core/fusion.hpp"
#include "ridgeline/core/transformer.hpp"
#include "ridgeline/core/zoo.hpp"
#include "ridgeline/cpu/cpu_backends.hpp"
#include "ridgeline/cpu/reference.hpp"
#include "ridgeline/profiler/profiler.hpp"

using namespace ridgeline;

namespace {

/// stem conv+relu -> s; s -> conv1+bn1+relu -> conv2+bn2 -> add(., s) -> relu (s is dead after the add: in place);
/// then add(., x) with the model input x (its addend copied once); then a transformer-style tail: linear -> gelu (h),
/// linear -> add(., h) where h is read again later (its addend copied every run).
core::model residual_and_linear_model() {
    core::model_builder b("fused");
    b.input("x", core::shape{2, 16, 6, 6});
    b.then("stem", core::parse_op("conv2d:in_channels=16,out_channels=16,kernel_size=1"));
    const std::string s = b.then("stem_relu", core::parse_op("relu"));
    const core::op conv = core::parse_op("conv2d:in_channels=16,out_channels=16,kernel_size=3,padding=1,bias=false");
    b.then("conv1", conv);
    b.then("bn1", core::parse_op("batch_norm2d:num_features=16"));
    b.then("relu1", core::parse_op("relu6"));
    b.then("conv2", conv);
    const std::string bn2 = b.then("bn2", core::parse_op("batch_norm2d:num_features=16"));
    b.add("add", core::parse_op("add"), {bn2, s});
    b.then("relu2", core::parse_op("relu"));
    b.then("conv3", core::parse_op("conv2d:in_channels=16,out_channels=16,kernel_size=1"));
    const std::string c3 = b.then("bn3", core::parse_op("batch_norm2d:num_features=16,affine=false"));
    b.add("add_x", core::parse_op("add"), {"x", c3});
    b.then("flat", core::parse_op("reshape:shape=2x16x36"));
    b.then("fc1", core::parse_op("linear:in_features=36,out_features=36"));
    const std::string h = b.then("act", core::parse_op("gelu"));
    const std::string f2 = b.then("fc2", core::parse_op("linear:in_features=36,out_features=36"));
    const std::string sum = b.add("res", core::parse_op("add"), {f2, h});
    b.add("out", core::parse_op("mul"), {sum, h});  // h read after the sum
    return b.build();
}

profiler::verification_result run_and_verify(backend_api::backend& b, const core::model_analysis& g, core::dtype dt,
                                             std::string* notes = nullptr) {
    const auto data = backend_api::make_graph_data(g, dt, 11);
    auto fast = b.prepare(g, data);
    if (notes) *notes = fast->notes();
    fast->run();  // a pass before the checked one: a sum that accumulates in place must start again from its addend
    fast->poison_outputs();
    fast->run();
    return profiler::compare_outputs(fast->outputs(), cpu::reference_graph_outputs(g, data),
                                     profiler::verification_tolerance(dt));
}

/// How many times `needle` occurs in `notes`.
std::size_t occurrences(const std::string& notes, const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t at = notes.find(needle); at != std::string::npos; at = notes.find(needle, at + 1)) ++n;
    return n;
}

}  // namespace

TEST(DnnlFused, GroupsMatchTheirMembersOnTheReference) {
    auto b = cpu::make_dnnl_backend(0);
    for (const core::dtype dt : {core::dtype::fp32, core::dtype::bf16}) {
        const core::model_analysis plain = core::analyze(residual_and_linear_model(), dt);
        const core::model_analysis g = core::fuse(plain);
        if (!b->supports(g.layers[0], dt).supported) continue;  // bf16 needs AVX-512 (oneDNN 2.6)
        // stem+relu, conv1+bn1+relu1, conv2+bn2+add+relu2, conv3+bn3+add_x, fc1+act, fc2+res
        EXPECT_EQ(core::describe_fusion(g),
                  "6 fused groups: 3 batch norms folded, 4 activations as post-ops and 3 residual adds as sum post-ops");
        std::string notes;
        const auto v = run_and_verify(*b, g, dt, &notes);
        EXPECT_EQ(v.state, profiler::verification_state::passed) << core::to_string(dt) << ": " << v.message;
        EXPECT_NE(notes.find("sum in place"), std::string::npos) << notes;  // conv2's sum writes into s
        EXPECT_EQ(notes.find("ref:"), std::string::npos) << notes;          // no scalar reference kernels
        // each group alone, as the profiler times it: its inputs are model inputs (the sum's addend copied once)
        for (const auto& la : g.layers) {
            if (la.fused.empty()) continue;
            const auto one = backend_api::single_layer_graph(la, g);
            const auto w = run_and_verify(*b, one, dt);
            EXPECT_EQ(w.state, profiler::verification_state::passed)
                << core::group_label(la) << " " << core::to_string(dt) << ": " << w.message;
        }
    }
}

TEST(DnnlFused, TheReferenceRunsAGroupAsItsMembers) {
    // the fused graph and the plain one give the same outputs on the reference loops, for the same data
    const core::model_analysis plain = core::analyze(residual_and_linear_model(), core::dtype::fp32);
    const core::model_analysis g = core::fuse(plain);
    const auto data = backend_api::make_graph_data(plain, core::dtype::fp32, 5);
    const auto fused_data = backend_api::make_graph_data(g, core::dtype::fp32, 5);
    EXPECT_EQ(fused_data.tensors.size(), data.tensors.size());  // every member's parameters, by the same keys
    const auto v = profiler::compare_outputs(cpu::reference_graph_outputs(g, fused_data),
                                             cpu::reference_graph_outputs(plain, data), 0.0);
    EXPECT_EQ(v.state, profiler::verification_state::passed) << v.message;
}

TEST(DnnlFused, WholeModelsMatchTheReferenceWithDeadTensorsBuffersReused) {
    // the end-to-end pass draws each producer's output from the buffers of tensors no later layer reads (a memory
    // planner's reuse): resnet18's and mobilenet_v2's blocks (residual adds read a tensor three layers back, so a
    // buffer freed too early shows), and two transformer blocks (BERT: post-norm layer norms; llama: rms_norm,
    // rotary, GQA attention), plain and fused, each run twice (the second after poisoning the outputs) and compared
    // with the reference loops run layer by layer
    auto b = cpu::make_dnnl_backend(0);
    core::transformer_config bert;
    bert.family = core::transformer_family::bert;
    bert.name = "tiny-bert";
    bert.vocab_size = 50;
    bert.hidden_size = 32;
    bert.num_layers = 2;
    bert.num_heads = 4;
    bert.num_kv_heads = 4;
    bert.head_dim = 8;
    bert.intermediate_size = 64;
    bert.max_position_embeddings = 16;
    bert.hidden_act = "gelu";
    bert.pre_norm = false;
    bert.norm_eps = 1e-12;
    core::transformer_config llama = bert;
    llama.family = core::transformer_family::llama;
    llama.name = "tiny-llama";
    llama.num_kv_heads = 2;
    llama.hidden_act = "silu";
    llama.pre_norm = true;
    llama.qkv_bias = llama.o_bias = llama.mlp_bias = false;
    llama.tie_word_embeddings = false;
    const core::transformer_run prefill{core::transformer_phase::prefill, 2, 8, 0};
    const std::vector<std::pair<std::string, core::model>> models{
        {"resnet18", core::build_zoo_model("resnet18", core::shape{1, 3, 32, 32})},
        {"mobilenet_v2", core::build_zoo_model("mobilenet_v2", core::shape{1, 3, 32, 32})},
        {"tiny-bert", core::build_transformer(bert, prefill)},
        {"tiny-llama", core::build_transformer(llama, prefill)}};
    for (const auto& [name, m] : models) {
        const core::model_analysis plain = core::analyze(m, core::dtype::fp32);
        for (const auto& g : {plain, core::fuse(plain)}) {
            const auto data = backend_api::make_graph_data(g, core::dtype::fp32, 5);
            auto fast = b->prepare(g, data);
            fast->run();
            fast->poison_outputs();
            fast->run();
            const auto v = profiler::compare_outputs(fast->outputs(), cpu::reference_graph_outputs(g, data),
                                                     profiler::verification_tolerance(core::dtype::fp32, g));
            EXPECT_EQ(v.state, profiler::verification_state::passed)
                << name << (g.layers.size() < plain.layers.size() ? " fused" : "") << ": " << v.message;
        }
    }
}

TEST(DnnlFused, LargeSiluRunsAsTheOwnLoopInPlaceAndSmallOnesAsPostOps) {
    // conv (8 -> 32 channels on 16x16: 8,192 outputs, >= silu_loop_min_elements = 4,096) + silu: the convolution,
    // then ridgeline's silu loop over its output in place; conv (32 -> 8 on 4x4 after a stride-4 average: 128
    // outputs) + silu: oneDNN's swish post-op; then a standalone silu of a tensor read again later (by the mul: not
    // in place), a relu of one nothing reads later (in place) and their product. Both runs (fp32) match the reference layer by
    // layer; in bf16 every silu stays oneDNN's (the loop is float32 only)
    core::model_builder b("silu");
    b.input("x", core::shape{1, 8, 16, 16});
    b.then("conv_big", core::parse_op("conv2d:in_channels=8,out_channels=32,kernel_size=1"));
    b.then("act_big", core::parse_op("silu"));
    b.then("pool", core::parse_op("avg_pool2d:kernel_size=4"));
    b.then("conv_small", core::parse_op("conv2d:in_channels=32,out_channels=8,kernel_size=1"));
    const std::string s = b.then("act_small", core::parse_op("silu"));
    const std::string t = b.then("act_alone", core::parse_op("silu"));
    const std::string r = b.then("relu", core::parse_op("relu"));
    b.add("out", core::parse_op("mul"), {r, s});
    const core::model m = b.build();
    auto dnnl = cpu::make_dnnl_backend(0);
    for (const core::dtype dt : {core::dtype::fp32, core::dtype::bf16}) {
        const core::model_analysis plain = core::analyze(m, dt);
        if (!dnnl->supports(plain.layers[0], dt).supported) continue;  // bf16 needs AVX-512 (oneDNN 2.6)
        const core::model_analysis g = core::fuse(plain);
        ASSERT_EQ(core::describe_fusion(g), "2 fused groups: 2 activations as post-ops");
        std::string notes;
        const auto v = run_and_verify(*dnnl, g, dt, &notes);
        EXPECT_EQ(v.state, profiler::verification_state::passed) << core::to_string(dt) << ": " << v.message;
        // fp32: conv_big's group and act_alone; bf16: none
        EXPECT_EQ(occurrences(notes, "ridgeline silu loop"), dt == core::dtype::fp32 ? 2u : 0u) << notes;
        // act_alone's input (act_small's output) is read again by the mul: a buffer of its own; relu's input dies
        // there (in place), and so does the mul's first operand, relu's output (in place): 2 in both dtypes
        EXPECT_EQ(occurrences(notes, "in place"), 2u) << notes;
    }
}

TEST(DnnlFused, NothingIsWrittenInPlaceOverATensorAnotherOneStillReadsThrough) {
    // x = relu(input); m = mean of x over its dimension of size 1 (oneDNN refuses such a reduction: m is x's buffer
    // viewed, though no view layer made it); y = sigmoid(x), x's last reader; out = y + m. Written in place, the
    // sigmoid would overwrite m before the add reads it (relative L2 error 0.44 in the breaking run); it must take a
    // buffer of its own, and the add may then write over y
    core::model_builder b("alias");
    b.input("in", core::shape{1, 1, 8, 8});
    const std::string x = b.then("x", core::parse_op("relu"));
    const std::string m = b.then("m", core::parse_op("mean:dim=1"));
    const std::string y = b.add("y", core::parse_op("sigmoid"), {x});
    b.add("out", core::parse_op("add"), {y, m});
    const core::model_analysis g = core::analyze(b.build(), core::dtype::fp32);
    auto dnnl = cpu::make_dnnl_backend(0);
    std::string notes;
    const auto v = run_and_verify(*dnnl, g, core::dtype::fp32, &notes);
    EXPECT_EQ(v.state, profiler::verification_state::passed) << v.message;
    EXPECT_NE(notes.find("view (reduces dimensions of size 1)"), std::string::npos) << notes;
    EXPECT_EQ(occurrences(notes, "in place"), 1u) << notes;  // the add over y, not the sigmoid over x
}
