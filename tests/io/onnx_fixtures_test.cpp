// The graph-only PyTorch exports in tests/data/onnx (scripts/onnx_fixtures.py; issue 11 items 3 and 4): nineteen
// models, each exported with BatchNorm folded and kept, import whole with --shapes-only (their weights are not
// committed), count the MACs PyTorch's own forward hooks count, and the params of model.parameters() where
// BatchNorm is kept; any valid node order of each gives the same model.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "onnx_test_graphs.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/transformer.hpp"
#include "ridgeline/io/onnx_import.hpp"
#include "../support/scratch.hpp"

namespace core = ridgeline::core;
namespace io = ridgeline::io;
namespace fs = std::filesystem;

namespace {

const fs::path fixtures = fs::path(RIDGELINE_SOURCE_DIR) / "tests" / "data" / "onnx";

nlohmann::json manifest() {
    std::ifstream f(fixtures / "manifest.json");
    if (!f) throw std::runtime_error("tests/data/onnx/manifest.json is missing");
    return nlohmann::json::parse(f);
}

/// The fixture alone in a scratch folder: whether or not a developer made its weights file beside the original,
/// the import sees a graph whose external data is absent, as on a clean clone.
fs::path graph_only(const std::string& file) {
    const fs::path dir = ridgeline::test::scratch_dir() / "graph_only";
    fs::create_directories(dir);
    const fs::path p = dir / file;
    fs::copy_file(fixtures / file, p, fs::copy_options::overwrite_existing);
    return p;
}

io::onnx_options shapes_only() {
    io::onnx_options o;
    o.shapes_only = true;
    return o;
}

/// MACs PyTorch's forward hooks on nn.Conv2d and nn.Linear cannot see, derived by hand. nn.TransformerEncoder
/// (d_model 64, 4 heads of 16, feed-forward 128, 2 layers, 16 tokens): nn.MultiheadAttention applies its
/// projections with F.linear on its own weights, not through modules: per layer the input projection
/// 16 x 64 x 192 = 196,608, the output projection 16 x 64 x 64 = 65,536, Q K^T 4 x 16 x 16 x 16 = 16,384 and
/// attention x V 16,384: 294,912, x 2 layers = 589,824 (the hooks see the feed-forward linears, 524,288).
/// vit_b_16 (197 tokens: 196 patches and the class token, width 768, 12 heads of 64, 12 layers), nn.MultiheadAttention
/// again: per layer the input projection 197 x 768 x 2,304 = 348,585,984, the output projection 197 x 768 x 768 =
/// 116,195,328, Q K^T 12 x 197 x 197 x 64 = 29,805,312 and attention x V 29,805,312: 524,391,936, x 12 =
/// 6,292,703,232. The GPT-2 block (16 tokens, width 64, 4 heads of 16) has its projections as nn.Linear (hooked);
/// its two matmuls are not modules: Q K^T 4 x 16 x 16 x 16 = 16,384 and attention x V 16,384: 32,768.
/// swin_t (torchvision 0.14: stages at 56x56, 28x28, 14x14 and 7x7 tokens of width C = 96, 192, 384, 768, with
/// 2, 2, 6 and 2 blocks, 7x7 windows of N = 49 tokens, heads of 32): its attention calls F.linear on the qkv and
/// proj weights, not the modules, so the hooks miss per block HW x C x 3C + HW x C x C = 4 HW C^2, which is
/// 4 x 3136 x 96^2 = 115,605,504 in every stage (HW quarters as C doubles): x 12 blocks = 1,387,266,048; and the
/// two matmuls, per block (HW / 49 windows) x heads x 49 x 49 x 32 each, 2 x HW x 49 x C in all: 29,503,488 per
/// block at every stage halving (2 x 3136 x 49 x 96; 14,751,744; 7,375,872; 3,687,936), x 2, 2, 6, 2 blocks =
/// 59,006,976 + 29,503,488 + 44,255,232 + 7,375,872 = 140,141,568. Together 1,527,407,616.
/// The Llama block (scripts/onnx_fixtures.py: 2 layers, 16 tokens, 4 heads of 16 after repeat_kv) has its two
/// attention matmuls outside the hooks: 4 x 16 x 16 x (16 + 16) = 32,768 per layer, 65,536.
const std::map<std::string, std::int64_t> macs_hooks_miss = {{"transformer_encoder", 589'824},
                                                            {"vit_b_16", 6'292'703'232},
                                                            {"gpt2_block", 32'768},
                                                            {"llama_block", 65'536},
                                                            {"swin_t", 1'387'266'048 + 140'141'568}};

}  // namespace

TEST(OnnxFixtures, EveryExportImportsWholeWithPyTorchsCounts) {
    const auto j = manifest();
    ASSERT_GE(j["models"].size(), 15u);
    for (const auto& [name, e] : j["models"].items()) {
        const std::int64_t macs =
            e["hook_macs"].get<std::int64_t>() + (macs_hooks_miss.count(name) ? macs_hooks_miss.at(name) : 0);
        for (const char* variant : {"folded", "bn"}) {
            SCOPED_TRACE(name + " " + variant);
            const io::onnx_model m = io::import_onnx(graph_only(e["files"][variant]), shapes_only());
            EXPECT_TRUE(m.skipped.empty());
            EXPECT_FALSE(m.absent_initializers.empty());
            const auto a = core::analyze(m.model, core::dtype::fp32);
            EXPECT_EQ(a.totals.macs, macs);
            // with BatchNorm kept nothing is folded away: params are model.parameters() (BatchNorm's running
            // statistics are buffers, as in PyTorch); folded, the BatchNorm scales are gone and convolutions
            // gained biases, so only the MACs are PyTorch's
            if (std::string(variant) == "bn") {
                EXPECT_EQ(a.totals.params, e["params"].get<std::int64_t>());
            }
            if (name == "swin_t") {
                // the shifted blocks' attention masks, computed in the graph and folded: (nW, 49, 49) for the
                // shifted block of stage 1 (64 windows) and 2 (16), and the three of stage 3 (4 windows each;
                // stage 4's one window is not shifted): 153,664 + 38,416 + 3 x 9,604 = 220,892. With BatchNorm kept
                // also relative_position_index, 49 x 49 = 2,401 ids, one initializer that every block reads (the
                // export ties them): each block's relative_position_bias_table (169 x heads, 23,322 in all, so
                // params equal PyTorch's) is read through it by an embedding that holds the ids. The folded export
                // stores the gathered 49 x 49 x heads tables as initializers, which count as params there
                EXPECT_EQ(a.totals.buffers, std::string(variant) == "bn" ? 220'892 + 2'401 : 220'892);
            }
        }
    }
}

TEST(OnnxFixtures, AbsentWeightsAreAnErrorUnlessShapesOnly) {
    const fs::path p = graph_only("resnet18_folded.onnx");
    std::string what;
    try {
        (void)io::import_onnx(p);
    } catch (const core::error& e) {
        what = e.what();
    }
    EXPECT_NE(what.find("is stored in the external file \"resnet18_folded.data\""), std::string::npos) << what;
    EXPECT_NE(what.find("which does not exist"), std::string::npos) << what;
    const io::onnx_model m = io::import_onnx(p, shapes_only());
    // the absent weights are not in the weights the backends get: they generate seeded random ones
    EXPECT_EQ(m.weights->tensors.count("/conv1/Conv.weight"), 0u);
    EXPECT_EQ(m.absent_initializers.size(), 42u);  // the script moved 42 float initializers of resnet18_folded
}

TEST(OnnxFixtures, ABatchTheExportFixedIsRefusedWithTheReason) {
    // the GPT-2 block was traced at batch 1: its Reshape to heads holds the constant target 1x16x4x16, so batch 2
    // (2x16x64, 2,048 elements) cannot take it. One error says why, not one per node that follows
    io::onnx_options o = shapes_only();
    o.batch = 2;
    std::string what;
    try {
        (void)io::import_onnx(graph_only("gpt2_block_bn.onnx"), o);
    } catch (const core::error& e) {
        what = e.what();
    }
    EXPECT_NE(what.find("the export fixes its shapes at the file's input shape, and the batch or input shape given changed it"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("cannot reshape 2x16x64 (2048 elements) to 1x16x4x16 (1024 elements)"), std::string::npos)
        << what;
    EXPECT_NE(what.find("dynamic_axes"), std::string::npos) << what;
    // resnet18's export has no such Reshape (its flatten keeps the batch): batch 2 imports
    EXPECT_EQ(io::import_onnx(graph_only("resnet18_bn.onnx"), o).model.inputs()[0].dims[0], 2);
}

TEST(OnnxFixtures, AShuffledNodeOrderGivesTheSameModel) {
    const auto j = manifest();
    std::mt19937 rng(5);
    for (const auto& [name, e] : j["models"].items()) {
        SCOPED_TRACE(name);
        const fs::path p = graph_only(e["files"]["bn"]);
        const std::string expected = ridgeline::test::fingerprint(io::import_onnx(p, shapes_only()));
        onnx::ModelProto proto;
        {
            std::ifstream f(p, std::ios::binary);
            ASSERT_TRUE(proto.ParseFromIstream(&f));
        }
        ridgeline::test::shuffle_topologically(*proto.mutable_graph(), rng);
        const fs::path shuffled = p.parent_path() / ("shuffled_" + p.filename().string());
        {
            std::ofstream f(shuffled, std::ios::binary);
            ASSERT_TRUE(proto.SerializeToOstream(&f));
        }
        EXPECT_EQ(ridgeline::test::fingerprint(io::import_onnx(shuffled, shapes_only())), expected);
    }
}

// A Llama decoder written in plain torch (scripts/onnx_fixtures.py's LlamaModel: RMSNorm, rotary, GQA through
// repeat_kv, a causal masked_fill, SwiGLU) and exported by torch 1.13 imports with the built-in's counts for the same
// config: its RMSNorms as rms_norm layers, each MatMul -> Div -> Where -> Softmax -> MatMul as one causal attention
// layer. Parameters 86,848 (tests/data/onnx/manifest.json, PyTorch's count) and MACs 1,347,584 (the projections and
// head 1,282,048 by hooks, attention 2 x 4 x 16 x 16 x 32 = 65,536) equal the config's built transformer, and so do
// FLOPs, executed FLOPs and bytes: q * cos + rotate_half(q) * sin (its cos and sin tables computed in the graph and
// folded) is one rotary layer of theta 10000, and repeat_kv's expand of k and v is read past, so attention reads the
// 2 kv heads (grouped-query, no copy) as the built-in does.
TEST(OnnxFixtures, AnExportedLlamaHasTheBuiltInsCounts) {
    const auto j = manifest();
    core::transformer_config c;
    c.family = core::transformer_family::llama;
    c.name = "llama_block";
    c.vocab_size = 100;
    c.hidden_size = 64;
    c.intermediate_size = 128;
    c.num_layers = 2;
    c.num_heads = 4;
    c.num_kv_heads = 2;
    c.head_dim = 16;
    c.max_position_embeddings = 16;
    c.hidden_act = "silu";
    c.tie_word_embeddings = false;
    c.qkv_bias = c.o_bias = c.mlp_bias = false;
    const auto built = core::analyze(core::build_transformer(c, {core::transformer_phase::prefill, 1, 16, 0}),
                                     core::dtype::fp32);
    for (const char* variant : {"folded", "bn"}) {
        SCOPED_TRACE(variant);
        const io::onnx_model m =
            io::import_onnx(graph_only(j["models"]["llama_block"]["files"][variant]), shapes_only());
        ASSERT_TRUE(m.skipped.empty());
        const auto a = core::analyze(m.model, core::dtype::fp32);
        EXPECT_EQ(a.totals.params, 86848);
        EXPECT_EQ(a.totals.params, built.totals.params);
        EXPECT_EQ(a.totals.macs, 1347584);
        EXPECT_EQ(a.totals.macs, built.totals.macs);
        EXPECT_EQ(a.totals.flops, built.totals.flops);
        EXPECT_EQ(a.totals.executed_flops(), built.totals.executed_flops());
        EXPECT_EQ(a.totals.bytes, built.totals.bytes);
        EXPECT_EQ(a.totals.buffers, 0);  // the rotary tables are the layers' own, not held tensors
        int attention = 0, rms = 0, softmax = 0, rotary = 0, copies = 0;
        for (const auto& l : a.layers) {
            if (const auto* at = std::get_if<core::attention>(&l.layer.op)) {
                ++attention;
                EXPECT_TRUE(at->is_causal) << l.layer.name;
                EXPECT_EQ(at->scale, 0.0) << "1/sqrt(16), the default";
                // queries [1, 4, 16, 16], keys and values [1, 2, 16, 16]: the kv heads before repeat_kv
                EXPECT_EQ(l.input_shapes.at(0).dims(), (std::vector<std::int64_t>{1, 4, 16, 16})) << l.layer.name;
                EXPECT_EQ(l.input_shapes.at(1).dims(), (std::vector<std::int64_t>{1, 2, 16, 16})) << l.layer.name;
                EXPECT_EQ(l.input_shapes.at(2).dims(), (std::vector<std::int64_t>{1, 2, 16, 16})) << l.layer.name;
            }
            if (const auto* r = std::get_if<core::rotary>(&l.layer.op)) {
                ++rotary;
                EXPECT_EQ(r->theta, 10000.0) << l.layer.name;
                EXPECT_EQ(r->offset, 0) << l.layer.name;
            }
            rms += std::holds_alternative<core::rms_norm>(l.layer.op);
            softmax += std::holds_alternative<core::softmax>(l.layer.op);
            copies += std::holds_alternative<core::expand>(l.layer.op) || std::holds_alternative<core::neg>(l.layer.op);
        }
        EXPECT_EQ(attention, 2);
        EXPECT_EQ(rotary, 4);  // q and k in each layer
        EXPECT_EQ(rms, 5);     // two per layer and the final norm
        EXPECT_EQ(softmax, 0);
        EXPECT_EQ(copies, 0);
        // causal: the executed MACs are those of the kept pairs, 16 x 17 / 2 of 256 per head
        EXPECT_EQ(a.totals.skipped_macs, 2LL * 4 * (256 - 136) * 32);
    }
}
