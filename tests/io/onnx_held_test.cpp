// ONNX import of tensors a model holds and reads directly (issue 11 items 2 and 4): a float constant read where an
// activation goes becomes a `parameter` layer (ViT's class token and position embedding, ConvNeXt's layer scale),
// Where(mask, -inf, x) becomes an add of a held mask buffer (a finite fill a where layer), Gather of one index of an activation a slice, and the
// tanh GELU spelled out (GPT-2's NewGELU) one gelu.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "onnx_builder.hpp"
#include "ridgeline/backend_api/tensor.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/io/onnx_import.hpp"
#include "../support/scratch.hpp"

namespace core = ridgeline::core;
namespace io = ridgeline::io;
using ridgeline::test::onnx_builder;

namespace {

std::vector<std::string> layer_strings(const core::model& m) {
    std::vector<std::string> k;
    for (const auto& l : m.layers()) k.push_back(core::to_string(l.op));
    return k;
}

io::onnx_model import(onnx_builder& b, const std::string& file) {
    return io::import_onnx(b.save(ridgeline::test::scratch_dir() / file));
}

std::string import_error(onnx_builder& b, const std::string& file) {
    try {
        (void)import(b, file);
    } catch (const core::error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST(OnnxImportHeld, ViTsClassTokenAndPositionEmbeddingAreParameters) {
    // torchvision's VisionTransformer._process_input and forward, batch 2, 4 patches of width 8:
    // cat([class_token.expand(2, -1, -1), x], dim=1) + pos_embedding, then x[:, 0]
    onnx_builder b(14);
    b.input("x", {2, 4, 8});
    b.init_n("class_token", {1, 1, 8});
    b.init_ints("batch_shape", {3}, {2, 1, 8});
    b.node("Expand", {"class_token", "batch_shape"}, {"cls"}, "/Expand");
    auto& cat = b.node("Concat", {"cls", "x"}, {"cat"}, "/Concat");
    onnx_builder::set(cat, "axis", std::int64_t{1});
    b.init_n("encoder.pos_embedding", {1, 5, 8});
    b.node("Add", {"cat", "encoder.pos_embedding"}, {"sum"}, "/encoder/Add");
    b.init_ints("zero", {}, {0});
    auto& g = b.node("Gather", {"sum", "zero"}, {"out"}, "/Gather");
    onnx_builder::set(g, "axis", std::int64_t{1});
    b.output("out");
    const io::onnx_model m = import(b, "vit_stem.onnx");
    EXPECT_EQ(layer_strings(m.model),
              (std::vector<std::string>{"parameter:shape=1x1x8,expand=2x1x8", "concat", "parameter:shape=1x5x8",
                                        "add", "slice:dim=1,end=1", "reshape:shape=2x8"}));
    EXPECT_EQ(m.model.layers()[0].name, "class_token");
    EXPECT_EQ(m.model.layers()[2].name, "encoder.pos_embedding");
    const auto a = core::analyze(m.model, core::dtype::fp32);
    // params: the class token 8 (not its broadcast, 16) + the position embedding 5 x 8 = 40: 48, as
    // model.parameters(); flops: the add, 2 x 5 x 8 = 80
    EXPECT_EQ(a.totals.params, 48);
    EXPECT_EQ(a.totals.flops, 80);
    EXPECT_EQ(a.layers.back().output_shape, (core::shape{2, 8}));
    // the held values are the file's (init_n: 0.01 * ((i * 7) % 23 - 11); i = 1: -0.04)
    const auto& token = m.weights->tensors.at("class_token.value");
    EXPECT_EQ(token.dims, (core::shape{1, 1, 8}));
    EXPECT_FLOAT_EQ(token.data.at(1), -0.04F);
    EXPECT_TRUE(m.folded.empty() || m.folded.front().op_type != "Concat");
}

TEST(OnnxImportHeld, ALayerScaleIsAParameterReadByMul) {
    // ConvNeXt's CNBlock: layer_scale [C, 1, 1] * x, then the residual add
    onnx_builder b(14);
    b.input("x", {1, 3, 2, 2});
    b.init_n("features.1.0.layer_scale", {3, 1, 1});
    b.node("Mul", {"features.1.0.layer_scale", "x"}, {"scaled"}, "/features.1.0/Mul");
    b.node("Add", {"scaled", "x"}, {"out"}, "/features.1.0/Add");
    b.output("out");
    const io::onnx_model m = import(b, "layer_scale.onnx");
    EXPECT_EQ(layer_strings(m.model), (std::vector<std::string>{"parameter:shape=3x1x1", "mul", "add"}));
    // the constant was the first operand and stays first
    EXPECT_EQ(m.model.layers()[1].inputs, (std::vector<std::string>{"features.1.0.layer_scale", "x"}));
    const auto a = core::analyze(m.model, core::dtype::fp32);
    EXPECT_EQ(a.totals.params, 3);
    EXPECT_EQ(a.totals.flops, 2 * 12);  // mul and add over 1 x 3 x 2 x 2
}

TEST(OnnxImportHeld, MaskedFillWithMinusInfinityIsAnAddOfAHeldMask) {
    // GPT-2's att.masked_fill(bias[:, :, :T, :T] == 0, -inf): Where(Equal(tril, 0), -inf, scores)
    onnx_builder b(14);
    b.input("scores", {1, 2, 3, 3});
    b.init_ints("bias", {1, 1, 3, 3}, {1, 0, 0, 1, 1, 0, 1, 1, 1});
    b.init_ints("zero", {}, {0});
    b.node("Equal", {"bias", "zero"}, {"masked"}, "/Equal");
    b.scalar("fill", -std::numeric_limits<float>::infinity());
    b.node("Where", {"masked", "fill", "scores"}, {"out"}, "/Where");
    b.output("out");
    const io::onnx_model m = import(b, "mask.onnx");
    EXPECT_EQ(layer_strings(m.model), (std::vector<std::string>{"parameter:shape=1x1x3x3,trainable=false", "add"}));
    const auto a = core::analyze(m.model, core::dtype::fp32);
    EXPECT_EQ(a.totals.params, 0);  // a buffer, as PyTorch's register_buffer
    EXPECT_EQ(a.totals.buffers, 9);
    EXPECT_EQ(a.totals.flops, 18);  // one add per score, 1 x 2 x 3 x 3
    // -inf where the mask was 0 (above the diagonal), 0 elsewhere: x + 0 = x, x + -inf = -inf, as masked_fill
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_EQ(m.weights->tensors.at(m.model.layers()[0].name + ".value").data,
              (std::vector<float>{0, -inf, -inf, 0, 0, -inf, 0, 0, 0}));

    // a finite fill (HF GPT-2's finfo.min) is a where layer: the condition a held 0/1 buffer, the fill one held value
    onnx_builder f(14);
    f.input("scores", {1, 3, 3});
    f.init_ints("bias", {3, 3}, {1, 0, 0, 1, 1, 0, 1, 1, 1});
    f.init_ints("zero", {}, {0});
    f.node("Equal", {"bias", "zero"}, {"masked"}, "/Equal");
    f.scalar("fill", -1e4F);
    f.node("Where", {"masked", "fill", "scores"}, {"out"}, "/Where");
    f.output("out");
    const io::onnx_model w = import(f, "finite_mask.onnx");
    EXPECT_EQ(layer_strings(w.model), (std::vector<std::string>{"parameter:shape=3x3,trainable=false",
                                                                "parameter:shape=1,trainable=false", "where"}));
    const auto wa = core::analyze(w.model, core::dtype::fp32);
    EXPECT_EQ(wa.totals.buffers, 10);  // the 3x3 condition and the one fill value
    EXPECT_EQ(wa.totals.flops, 0);     // a selection
    EXPECT_EQ(wa.layers.back().output_shape, (core::shape{1, 3, 3}));
    // the condition is true (1) where the mask was 0: there the fill is chosen
    EXPECT_EQ(w.weights->tensors.at(w.model.layers()[0].name + ".value").data,
              (std::vector<float>{0, 1, 1, 0, 0, 1, 0, 0, 0}));
    // a condition computed at run time is refused, saying why
    onnx_builder r(14);
    r.input("scores", {1, 3, 3});
    r.input("other", {1, 3, 3});
    r.node("Less", {"scores", "other"}, {"less"}, "/Less");
    r.node("Where", {"less", "scores", "other"}, {"out"}, "/Where");
    r.output("out");
    const std::string what = import_error(r, "runtime_condition.onnx");
    EXPECT_NE(what.find("Where \"/Where\": reads the output of node \"/Less\" (Less), which was not imported"),
              std::string::npos) << what;
}

namespace {

/// GPT-2's NewGELU as torch.onnx.export writes it: 0.5 * h * (1 + tanh(sqrt(2/pi) * (h + 0.044715 * h^3))),
/// with the 0.5 applied to h first (`half_first`) or to the product last.
void tanh_gelu_graph(onnx_builder& b, bool half_first) {
    b.input("h", {1, 4, 8});
    b.scalar("c_half", 0.5F);
    b.scalar("c_three", 3.0F);
    b.scalar("c_cube", 0.044715F);
    b.scalar("c_scale", 0.7978845608F);
    b.scalar("c_one", 1.0F);
    if (half_first) b.node("Mul", {"h", "c_half"}, {"half"}, "/mlp/Mul_1");
    b.node("Pow", {"h", "c_three"}, {"cube"}, "/mlp/Pow");
    b.node("Mul", {"cube", "c_cube"}, {"cube_s"}, "/mlp/Mul_2");
    b.node("Add", {"h", "cube_s"}, {"inner"}, "/mlp/Add_1");
    b.node("Mul", {"inner", "c_scale"}, {"arg"}, "/mlp/Mul_3");
    b.node("Tanh", {"arg"}, {"t"}, "/mlp/Tanh");
    b.node("Add", {"t", "c_one"}, {"one_t"}, "/mlp/Add_2");
    if (half_first) {
        b.node("Mul", {"half", "one_t"}, {"out"}, "/mlp/Mul_4");
    } else {
        b.node("Mul", {"h", "one_t"}, {"prod"}, "/mlp/Mul_4");
        b.node("Mul", {"prod", "c_half"}, {"out"}, "/mlp/Mul_5");
    }
    b.output("out");
}

}  // namespace

TEST(OnnxImportHeld, TheTanhGeluSpelledOutIsOneGelu) {
    for (bool half_first : {true, false}) {
        SCOPED_TRACE(half_first);
        onnx_builder b(14);
        tanh_gelu_graph(b, half_first);
        const io::onnx_model m = import(b, "tanh_gelu.onnx");
        EXPECT_EQ(layer_strings(m.model), (std::vector<std::string>{"gelu:approximate=tanh"}));
        EXPECT_EQ(m.model.layers()[0].name, "/mlp/Gelu");
        // gelu tanh: 9 flops per element (docs/conventions.md), 1 x 4 x 8 = 32 elements
        EXPECT_EQ(core::analyze(m.model, core::dtype::fp32).totals.flops, 9 * 32);
    }
    // another constant (0.5 -> 0.6, or 0.044715 -> 0.0448) is no GELU: it is imported op by op, each node one
    // layer (the scalar constants of Add held as parameters of shape [1], buffers)
    for (const auto& [out, v] : std::vector<std::pair<std::string, float>>{{"c_half", 0.6F}, {"c_cube", 0.0448F}}) {
        SCOPED_TRACE(out);
        onnx_builder b(14);
        tanh_gelu_graph(b, true);
        for (auto& n : *b.proto().mutable_graph()->mutable_node())
            if (n.output(0) == out) n.mutable_attribute(0)->mutable_t()->set_float_data(0, v);
        const io::onnx_model m = import(b, "not_gelu.onnx");
        const auto strings = layer_strings(m.model);
        // scale (the 0.5), pow, scale, add, scale, tanh, parameter (the 1), add, mul
        EXPECT_EQ(strings.size(), 9u);
        EXPECT_EQ(std::count(strings.begin(), strings.end(), "pow:exponent=3"), 1);
        EXPECT_EQ(std::count(strings.begin(), strings.end(), "tanh"), 1);
        EXPECT_EQ(std::count(strings.begin(), strings.end(), "parameter:shape=1,trainable=false"), 1);
        // flops: 1 per element for each of the 8 computing layers (the parameter computes nothing), 1 x 4 x 8 = 32
        // elements: 256, against the fused gelu's 9 x 32 = 288 (tanh counts 1 here, its composition 9 there)
        EXPECT_EQ(core::analyze(m.model, core::dtype::fp32).totals.flops, 8 * 32);
    }
}

TEST(OnnxImportHeld, GatherOfSeveralIndicesOfAnActivationIsSlicesAndAConcat) {
    // x[:, [0, 3]] of [2, 5, 8]: once refused, now a slice per index (no two are consecutive) and a concat along
    // axis 1 -> [2, 2, 8] (values checked in onnx_compute_test.cpp)
    onnx_builder b(14);
    b.input("x", {2, 5, 8});
    b.init_ints("idx", {2}, {0, 3});
    auto& g = b.node("Gather", {"x", "idx"}, {"out"}, "/Gather");
    onnx_builder::set(g, "axis", std::int64_t{1});
    b.output("out");
    const io::onnx_model m = import(b, "gather2.onnx");
    EXPECT_EQ(layer_strings(m.model), (std::vector<std::string>{"slice:dim=1,end=1", "slice:dim=1,start=3,end=4",
                                                                "concat"}));
    EXPECT_EQ(core::analyze(m.model, core::dtype::fp32).layers.back().output_shape.dims(),
              (std::vector<std::int64_t>{2, 2, 8}));
}

TEST(OnnxImportHeld, AParameterTableReadThroughAConstantIndexMapIsAnEmbeddingHoldingItsIds) {
    // Swin's attention: relative_position_bias_table[relative_position_index.view(-1)] in two blocks that share one
    // index initializer (the export ties identical buffers through Identity); a 4 x 2 table, 2 x 2 = 4 ids
    onnx_builder b(14);
    b.input("x", {2, 4});
    b.init_n("block0.table", {4, 2});
    b.init_n("block1.table", {4, 2});
    b.init_ints("block0.index", {4}, {3, 0, -1, 2});  // -1 is row 3, as ONNX Gather counts from the end
    b.node("Identity", {"block0.index"}, {"block1.index"}, "/block1/Identity");
    b.node("Gather", {"block0.table", "block0.index"}, {"bias0"}, "/block0/Gather");
    b.node("Gather", {"block1.table", "block1.index"}, {"bias1"}, "/block1/Gather");
    auto& t0 = b.node("Transpose", {"bias0"}, {"b0t"}, "/block0/Transpose");  // [2, 4]
    onnx_builder::set(t0, "perm", std::vector<std::int64_t>{1, 0});
    auto& t1 = b.node("Transpose", {"bias1"}, {"b1t"}, "/block1/Transpose");
    onnx_builder::set(t1, "perm", std::vector<std::int64_t>{1, 0});
    b.node("Add", {"x", "b0t"}, {"y"}, "/block0/Add");
    b.node("Add", {"y", "b1t"}, {"out"}, "/block1/Add");
    b.output("out");
    const io::onnx_model m = import(b, "held_ids.onnx");
    const auto layers = layer_strings(m.model);
    EXPECT_EQ(std::count(layers.begin(), layers.end(), "embedding:num_embeddings=4,embedding_dim=2,indices=4"), 2)
        << ::testing::PrintToString(layers);
    // params: the two tables, 8 each = 16 (not the gathered copies as buffers); buffers: the one index map, 4
    const auto a = core::analyze(m.model, core::dtype::fp32);
    EXPECT_EQ(a.totals.params, 16);
    EXPECT_EQ(a.totals.buffers, 4);
    // the ids as rows of the table: 3, 0, 3, 2 (the -1 counted from the end)
    const auto& ids = m.weights->tensors.at(ridgeline::backend_api::param_key(m.model.layers()[0], "indices"));
    EXPECT_EQ(ids.data, (std::vector<float>{3, 0, 3, 2}));

    onnx_builder r(14);
    r.input("x", {2, 4});
    r.init_n("table", {4, 2});
    r.init_ints("index", {4}, {0, 1, 4, 2});
    r.node("Gather", {"table", "index"}, {"bias"}, "/Gather");
    r.node("Add", {"x", "bias"}, {"out"}, "/Add");
    r.output("out");
    const std::string what = import_error(r, "held_ids_range.onnx");
    EXPECT_NE(what.find("Gather \"/Gather\": index 4 is out of range for a table of 4 rows"), std::string::npos) << what;
}
