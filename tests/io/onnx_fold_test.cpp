// ONNX import, order-independent (issue 11 item 1): constants and shape arithmetic are folded before any
// pattern is matched, wherever the exporter put them, and any node order of the same graph imports as the same
// model. The graphs follow PyTorch's export habits: a Constant node just before its first reader, shapes
// computed at run time by Shape/Gather/Unsqueeze/Concat, torch.expand's Equal/ConstantOfShape/Where.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>

#include "onnx_builder.hpp"
#include "onnx_test_graphs.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/io/onnx_import.hpp"
#include "../support/scratch.hpp"

namespace core = ridgeline::core;
namespace io = ridgeline::io;
using ridgeline::test::fingerprint;
using ridgeline::test::import_error;
using ridgeline::test::onnx_builder;
using ridgeline::test::shuffle_topologically;
using tp = onnx::TensorProto;

namespace {

/// Attribute `name` of `n`: a tensor of this element type and dims; the caller adds its data.
onnx::TensorProto* tensor_attribute(onnx::NodeProto& n, const std::string& name, const std::vector<std::int64_t>& dims,
                                    tp::DataType type) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(type);
    for (auto d : dims) t->add_dims(d);
    return t;
}

/// A Constant node whose value is a tensor of this element type and dims; the caller adds its data.
onnx::TensorProto* constant_tensor(onnx_builder& b, const std::string& out, const std::vector<std::int64_t>& dims,
                                   tp::DataType type) {
    return tensor_attribute(b.node("Constant", {}, {out}), "value", dims, type);
}

/// A Constant node holding a float tensor.
void constant_floats(onnx_builder& b, const std::string& out, const std::vector<std::int64_t>& dims,
                     const std::vector<float>& v) {
    auto* t = constant_tensor(b, out, dims, tp::FLOAT);
    for (auto x : v) t->add_float_data(x);
}

/// A Constant node holding an int64 tensor (dims {} is a scalar).
void constant_ints(onnx_builder& b, const std::string& out, const std::vector<std::int64_t>& dims,
                   const std::vector<std::int64_t>& v) {
    auto* t = constant_tensor(b, out, dims, tp::INT64);
    for (auto x : v) t->add_int64_data(x);
}

/// A Constant node holding the bool scalar true (Dropout's training_mode).
void constant_true(onnx_builder& b, const std::string& out) { constant_tensor(b, out, {}, tp::BOOL)->add_int32_data(1); }

/// nn.Linear(4, 6) on [1, 3, 4] then nn.GELU(), as torch.onnx.export writes them: MatMul, then the bias as a
/// Constant node just before its Add, then the erf form with each constant just before its reader (after the
/// Div the pattern starts at).
onnx_builder linear_gelu() {
    onnx_builder b(14);
    b.input("x", {1, 3, 4});
    b.init_n("fc.w", {4, 6});
    b.node("MatMul", {"x", "fc.w"}, {"mm"}, "/fc/MatMul");
    constant_floats(b, "fc.b", {6}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
    b.node("Add", {"fc.b", "mm"}, {"lin"}, "/fc/Add");
    b.scalar("sqrt2", 1.4142135f);
    b.node("Div", {"lin", "sqrt2"}, {"d"}, "/act/Div");
    b.node("Erf", {"d"}, {"e"}, "/act/Erf");
    b.scalar("one", 1.0f);
    b.node("Add", {"e", "one"}, {"a"}, "/act/Add");
    b.node("Mul", {"lin", "a"}, {"m"}, "/act/Mul");
    b.scalar("half", 0.5f);
    b.node("Mul", {"m", "half"}, {"out"}, "/act/Mul_1");
    b.output("out");
    return b;
}

/// x.view(x.size(0), -1) of x [2, 3, 4]: Shape, Gather, Unsqueeze, Concat with a constant [-1], Reshape.
onnx_builder view_batch_minus_one() {
    onnx_builder b(13);
    b.input("x", {2, 3, 4});
    b.node("Shape", {"x"}, {"s"}, "/Shape");
    constant_ints(b, "i0", {}, {0});
    b.node("Gather", {"s", "i0"}, {"n"}, "/Gather");
    constant_ints(b, "axes", {1}, {0});
    b.node("Unsqueeze", {"n", "axes"}, {"n1"}, "/Unsqueeze");
    constant_ints(b, "minus1", {1}, {-1});
    auto& cat = b.node("Concat", {"n1", "minus1"}, {"t"}, "/Concat");
    onnx_builder::set(cat, "axis", std::int64_t{0});
    b.node("Reshape", {"x", "t"}, {"r"}, "/Reshape");
    b.node("Relu", {"r"}, {"out"}, "/Relu");
    b.output("out");
    return b;
}

/// A reshape target built the way torch exports expand(2, -1) and x.shape[1:]: Equal/ConstantOfShape/Where,
/// Slice to INT64_MAX ("to the end"), scalar Gathers, integer Mul, Cast.
onnx_builder expand_style_target() {
    onnx_builder b(13);
    b.input("x", {2, 3, 4});
    constant_ints(b, "s", {2}, {2, -1});
    constant_ints(b, "neg1", {}, {-1});
    b.node("Equal", {"s", "neg1"}, {"eq"}, "/Equal");  // [false, true]
    b.node("Shape", {"s"}, {"ss"}, "/Shape");           // [2]
    auto& cos = b.node("ConstantOfShape", {"ss"}, {"ones"}, "/ConstantOfShape");
    tensor_attribute(cos, "value", {1}, tp::INT64)->add_int64_data(1);
    b.node("Where", {"eq", "ones", "s"}, {"w"}, "/Where");  // [2, 1]
    b.node("Shape", {"x"}, {"xs"}, "/Shape_1");            // [2, 3, 4]
    constant_ints(b, "st", {1}, {1});
    constant_ints(b, "en", {1}, {std::numeric_limits<std::int64_t>::max()});
    b.node("Slice", {"xs", "st", "en"}, {"tail"}, "/Slice");  // [3, 4]
    constant_ints(b, "k0", {}, {0});
    constant_ints(b, "k1", {}, {1});
    b.node("Gather", {"tail", "k0"}, {"g0"}, "/Gather");  // 3
    b.node("Gather", {"tail", "k1"}, {"g1"}, "/Gather_1");  // 4
    b.node("Mul", {"g0", "g1"}, {"prod"}, "/Mul");         // 12
    constant_ints(b, "ax", {1}, {0});
    b.node("Unsqueeze", {"prod", "ax"}, {"pu"}, "/Unsqueeze");  // [12]
    constant_ints(b, "one", {1}, {1});
    auto& cat = b.node("Concat", {"one", "pu"}, {"kk"}, "/Concat");  // [1, 12]
    onnx_builder::set(cat, "axis", std::int64_t{0});
    b.node("Mul", {"w", "kk"}, {"t"}, "/Mul_1");  // [2, 12]
    auto& cast = b.node("Cast", {"t"}, {"tc"}, "/Cast");
    onnx_builder::set(cast, "to", std::int64_t{tp::INT64});
    b.node("Reshape", {"x", "tc"}, {"r"}, "/Reshape");
    b.node("Relu", {"r"}, {"out"}, "/Relu");
    b.output("out");
    return b;
}

std::vector<std::string> kinds(const core::model& m) {
    std::vector<std::string> k;
    for (const auto& l : m.layers()) k.emplace_back(core::kind_of(l.op));
    return k;
}

std::vector<std::string> op_types(const std::vector<io::skipped_node>& nodes) {
    std::vector<std::string> t;
    for (const auto& n : nodes) t.push_back(n.op_type);
    return t;
}

}  // namespace

TEST(OnnxFold, PyTorchsGeluAndLinearBiasWithConstantsAfterThePatternStart) {
    const auto p = linear_gelu().save(ridgeline::test::scratch_dir() / "linear_gelu.onnx");
    const io::onnx_model m = io::import_onnx(p);
    // MatMul + Add(Constant) is one linear with bias; Div/Erf/Add/Mul/Mul is one gelu, though the constants
    // 1 and 0.5 come after the Div
    EXPECT_EQ(kinds(m.model), (std::vector<std::string>{"linear", "gelu"}));
    EXPECT_EQ(core::to_string(m.model.layers()[0].op), "linear:in_features=4,out_features=6");  // bias=true default
    EXPECT_EQ(m.weights->tensors.at("/fc/MatMul.bias").data[5], 0.6f);
    EXPECT_TRUE(m.skipped.empty());
    EXPECT_EQ(op_types(m.folded), (std::vector<std::string>{"Constant", "Constant", "Constant", "Constant"}));
    EXPECT_EQ(m.folded[0].reason, "folded into a constant of shape 6");
    EXPECT_EQ(m.folded[1].reason, "folded into a constant scalar");
    // macs: 3 rows x 4 in x 6 out = 72 (the gelu has none)
    EXPECT_EQ(core::analyze(m.model, core::dtype::fp32).totals.macs, 72);
}

TEST(OnnxFold, ShapeArithmeticBecomesTheReshapeTarget) {
    const auto p = view_batch_minus_one().save(ridgeline::test::scratch_dir() / "view.onnx");
    const io::onnx_model m = io::import_onnx(p);
    ASSERT_EQ(kinds(m.model), (std::vector<std::string>{"reshape", "relu"}));
    // Shape [2,3,4] -> Gather 0 = 2 -> Unsqueeze [2] -> Concat with [-1] = [2, -1]
    EXPECT_EQ(core::to_string(m.model.layers()[0].op), "reshape:shape=2x-1");
    EXPECT_EQ(core::analyze(m.model, core::dtype::fp32).layers[1].output_shape, (core::shape{2, 12}));
    EXPECT_TRUE(m.skipped.empty());
    EXPECT_EQ(op_types(m.folded), (std::vector<std::string>{"Shape", "Constant", "Gather", "Constant", "Unsqueeze",
                                                           "Constant", "Concat"}));
}

TEST(OnnxFold, TorchExpandStyleTargetFoldsExactly) {
    const auto p = expand_style_target().save(ridgeline::test::scratch_dir() / "expand_target.onnx");
    const io::onnx_model m = io::import_onnx(p);
    ASSERT_EQ(kinds(m.model), (std::vector<std::string>{"reshape", "relu"}));
    // Where([2,-1] == -1, [1,1], [2,-1]) = [2,1]; Slice([2,3,4], 1, INT64_MAX) = [3,4]; 3 * 4 = 12;
    // [2,1] * [1,12] = [2,12]
    EXPECT_EQ(core::to_string(m.model.layers()[0].op), "reshape:shape=2x12");
    EXPECT_TRUE(m.skipped.empty());
    EXPECT_EQ(m.folded.size(), 21u);  // every node but Reshape and Relu
}

TEST(OnnxFold, AnyNodeOrderImportsTheSameModel) {
    std::mt19937 rng(11);
    const auto dir = ridgeline::test::scratch_dir();
    const std::vector<std::pair<std::string, onnx_builder>> graphs = {
        {"cnn", ridgeline::test::cnn()},
        {"transformer", ridgeline::test::transformer()},
        {"linear_gelu", linear_gelu()},
        {"view", view_batch_minus_one()},
        {"expand_target", expand_style_target()}};
    for (const auto& [name, graph] : graphs) {
        const std::string expected = fingerprint(io::import_onnx(graph.save(dir / (name + ".onnx"))));
        for (int trial = 0; trial < 6; ++trial) {
            onnx_builder shuffled = graph;
            auto& g = *shuffled.proto().mutable_graph();
            if (trial < 5) {
                shuffle_topologically(g, rng);
            } else {  // not topological at all: the importer sorts it
                std::vector<onnx::NodeProto> nodes(g.node().begin(), g.node().end());
                std::shuffle(nodes.begin(), nodes.end(), rng);
                std::reverse(nodes.begin(), nodes.end());
                g.clear_node();
                for (auto& n : nodes) *g.add_node() = n;
            }
            const auto file = shuffled.save(dir / (name + "_" + std::to_string(trial) + ".onnx"));
            EXPECT_EQ(fingerprint(io::import_onnx(file)), expected) << name << " order " << trial;
        }
    }
}

TEST(OnnxFold, ANodeOnACycleIsNamed) {
    onnx_builder b;
    b.input("x", {1, 4});
    b.node("Add", {"x", "b"}, {"a"}, "/A");
    b.node("Relu", {"a"}, {"b"}, "/B");
    b.output("b");
    const auto p = b.save(ridgeline::test::scratch_dir() / "cycle.onnx");
    std::string what;
    try {
        (void)io::import_onnx(p);
    } catch (const core::error& e) {
        what = e.what();
    }
    // no order puts /A after /B and /B after /A: the one that reads first says what it reads
    EXPECT_NE(what.find("reads \"b\", which no node, input or initializer produces, or only a node on a cycle"),
              std::string::npos)
        << what;
}

// From trying to break it (each was a crash, an abort, a memory blowup or a silently wrong constant)
TEST(OnnxFold, IntegersFoldExactlyAndCastsWrap) {
    onnx_builder b(13);
    b.input("x", {1, 16});
    constant_ints(b, "m240", {1}, {-240});
    auto& c1 = b.node("Cast", {"m240"}, {"u8"}, "/Cast");  // -240 as uint8 wraps to 16
    onnx_builder::set(c1, "to", std::int64_t{tp::UINT8});
    auto& c2 = b.node("Cast", {"u8"}, {"t"}, "/Cast_1");
    onnx_builder::set(c2, "to", std::int64_t{tp::INT64});
    b.node("Reshape", {"x", "t"}, {"r"}, "/Reshape");  // [16]
    constant_ints(b, "big", {1}, {(std::int64_t{1} << 53) + 1});
    constant_ints(b, "big2", {1}, {std::int64_t{1} << 53});
    b.node("Equal", {"big", "big2"}, {"eq"}, "/Equal");  // false: 2^53 + 1 is not 2^53 (equal in double)
    constant_ints(b, "yes", {2}, {4, 4});
    constant_ints(b, "no", {2}, {2, 8});
    b.node("Where", {"eq", "yes", "no"}, {"t2"}, "/Where");
    b.node("Reshape", {"r", "t2"}, {"out"}, "/Reshape_1");  // [2, 8]
    b.output("out");
    const io::onnx_model m = io::import_onnx(b.save(ridgeline::test::scratch_dir() / "exact_ints.onnx"));
    ASSERT_EQ(m.model.layers().size(), 2u);
    EXPECT_EQ(core::to_string(m.model.layers()[0].op), "reshape:shape=16");
    EXPECT_EQ(core::to_string(m.model.layers()[1].op), "reshape:shape=2x8");
}

TEST(OnnxFold, HostileGraphsFailWithOneLine) {
    {  // a Clip bound of shape [0] (was std::out_of_range from vector::at)
        onnx_builder b(13);
        b.input("x", {1, 16});
        b.init("lo", {0}, {});
        b.node("Clip", {"x", "lo"}, {"out"}, "/Clip");
        b.output("out");
        const std::string what = import_error(b, "clip_empty.onnx");
        EXPECT_NE(what.find("Clip \"/Clip\": \"lo\" is a constant of shape 0, not one value"), std::string::npos)
            << what;
    }
    {  // a decomposed-LayerNorm lookalike whose Pow has one input (was a protobuf abort)
        onnx_builder b(14);
        b.input("x", {2, 4, 8});
        auto& rm = b.node("ReduceMean", {"x"}, {"mean"}, "/ReduceMean");
        onnx_builder::set(rm, "axes", std::vector<std::int64_t>{-1});
        b.node("Sub", {"x", "mean"}, {"d"}, "/Sub");
        b.node("Pow", {"d"}, {"p"}, "/Pow");
        b.node("Div", {"d", "p"}, {"out"}, "/Div");
        b.output("out");
        const std::string what = import_error(b, "pow_one_input.onnx");
        EXPECT_NE(what.find("node(s) cannot be imported"), std::string::npos) << what;
    }
    {  // HardSigmoid with alpha NaN is not PyTorch's (NaN compared false both ways)
        onnx_builder b(14);
        b.input("x", {1, 4});
        auto& h = b.node("HardSigmoid", {"x"}, {"out"}, "/HardSigmoid");
        onnx_builder::set(h, "alpha", std::numeric_limits<float>::quiet_NaN());
        b.output("out");
        EXPECT_NE(import_error(b, "hardsigmoid_nan.onnx").find("HardSigmoid with alpha nan"), std::string::npos);
    }
    {  // Slice naming an axis twice
        onnx_builder b(13);
        b.input("x", {1, 8, 4, 4});
        b.init_ints("s", {2}, {0, 1});
        b.init_ints("e", {2}, {2, 3});
        b.init_ints("a", {2}, {2, 2});
        b.node("Slice", {"x", "s", "e", "a"}, {"out"}, "/Slice");
        b.output("out");
        EXPECT_NE(import_error(b, "slice_twice.onnx").find("axes 2x2 name an axis twice"), std::string::npos);
    }
    {  // a Where and a ScatterND of constants with an input left out (the fuzzer's null read in the folding)
        for (const std::string op : {"Where", "ScatterND", "Range", "Gather"}) {
            onnx_builder b(16);
            b.input("x", {1, 4});
            constant_ints(b, "c", {4}, {1, 0, 1, 0});
            b.node(op, {"c", "c"}, {"w"}, "/" + op);  // Where/ScatterND/Range take 3 inputs
            if (op == "Gather") b.proto().mutable_graph()->mutable_node()->rbegin()->mutable_input()->RemoveLast();
            b.node("Add", {"x", "w"}, {"out"}, "/Add");
            b.output("out");
            const std::string what = import_error(b, op + "_missing_input.onnx");
            // derived: not folded, so ONNX shape inference names the input out of bounds (Range, Gather) or the
            // node, computing on integers only, is not imported and its reader names it (Where, ScatterND)
            const bool by_shape_inference = op == "Range" || op == "Gather";
            EXPECT_NE(what.find(by_shape_inference ? "is out of bounds" : "\"/" + op + "\""), std::string::npos)
                << op << ": " << what;
            EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        }
    }
    {  // a constant of 2^26 elements is not folded (was 2 GB of index vectors per Add), and says what it is
        onnx_builder b(13);
        b.input("x", {1, 16});
        constant_ints(b, "n", {1}, {std::int64_t{1} << 26});
        b.node("ConstantOfShape", {"n"}, {"z"}, "/ConstantOfShape");
        b.node("Add", {"x", "z"}, {"out"}, "/Add");
        b.output("out");
        const std::string what = import_error(b, "huge_constant.onnx");
        EXPECT_NE(what.find("ConstantOfShape \"/ConstantOfShape\": ridgeline has no layer for ConstantOfShape"),
                  std::string::npos)
            << what;
    }
}

TEST(OnnxFold, SizeOfALargeActivationFolds) {
    onnx_builder b(13);
    b.input("x", {1, 3, 8192, 8192});  // 201,326,592 elements: more than a folded constant may hold, but Size is one
    b.node("Size", {"x"}, {"n"}, "/Size");
    b.node("Relu", {"x"}, {"out"}, "/Relu");
    b.output("out");
    b.output("n");
    const io::onnx_model m = io::import_onnx(b.save(ridgeline::test::scratch_dir() / "size.onnx"));
    ASSERT_EQ(m.folded.size(), 1u);
    EXPECT_EQ(m.folded[0].op_type, "Size");
}

// Swin-T's export (torchvision 0.14, opset 14) in small: the window padding pad_r = (w - W % w) % w through Mod,
// Sub and an integer Transpose of the pads; the window partition's Reshape target read off the Shape of the
// padded activation, which only the conversion gives a shape (the pads are folded, ONNX shape inference cannot
// see through them); the shifted-window mask built as a zeros tensor whose slices ScatterND fills with an
// expanded constant; the attention Dropout exported with training_mode true and ratio 0.
TEST(OnnxFold, SwinsWindowPaddingMaskAndDropoutFold) {
    onnx_builder b(14);
    b.input("x", {1, 14, 14, 4});
    // pad_r = (7 - 14 % 7) % 7 = 0, for both H and W
    b.node("Shape", {"x"}, {"xs"}, "/Shape");
    constant_ints(b, "two", {}, {2});
    b.node("Gather", {"xs", "two"}, {"W"}, "/Gather");
    constant_ints(b, "w", {}, {7});
    b.node("Mod", {"W", "w"}, {"m0"}, "/Mod");
    b.node("Sub", {"w", "m0"}, {"s0"}, "/Sub");
    b.node("Mod", {"s0", "w"}, {"pad_r"}, "/Mod_1");
    constant_ints(b, "ax0", {1}, {0});
    b.node("Unsqueeze", {"pad_r"}, {"pr1"}, "/Unsqueeze").add_input("ax0");
    constant_ints(b, "z2", {2}, {0, 0});
    constant_ints(b, "z1", {1}, {0});
    auto& cat = b.node("Concat", {"z2", "pr1", "z1", "z2", "pr1", "z1"}, {"p8"}, "/Concat");  // [0 0 0 0 0 0 0 0]
    onnx_builder::set(cat, "axis", std::int64_t{0});
    constant_ints(b, "to2d", {2}, {4, 2});
    b.node("Reshape", {"p8", "to2d"}, {"p42"}, "/Reshape_pads");
    auto& tr = b.node("Transpose", {"p42"}, {"p24"}, "/Transpose_pads");  // an integer Transpose
    onnx_builder::set(tr, "perm", std::vector<std::int64_t>{1, 0});
    constant_ints(b, "flat", {1}, {-1});
    b.node("Reshape", {"p24", "flat"}, {"pads"}, "/Reshape_pads_1");
    b.node("Pad", {"x", "pads"}, {"xp"}, "/Pad");
    // the window partition: [1, Hp / 7, 7, Wp / 7, 7, C] with Hp, Wp from the padded activation's Shape
    b.node("Shape", {"xp"}, {"ps"}, "/Shape_1");
    constant_ints(b, "one", {}, {1});
    b.node("Gather", {"ps", "one"}, {"Hp"}, "/Gather_1");
    b.node("Div", {"Hp", "w"}, {"nh"}, "/Div");
    b.node("Unsqueeze", {"nh", "ax0"}, {"nh1"}, "/Unsqueeze_1");
    constant_ints(b, "d1", {1}, {1});
    constant_ints(b, "d7", {1}, {7});
    constant_ints(b, "d4", {1}, {4});
    auto& tcat = b.node("Concat", {"d1", "nh1", "d7", "nh1", "d7", "d4"}, {"target"}, "/Concat_1");
    onnx_builder::set(tcat, "axis", std::int64_t{0});
    b.node("Reshape", {"xp", "target"}, {"windows"}, "/Reshape");
    b.node("Relu", {"windows"}, {"r"}, "/Relu");
    // the mask: zeros [1, 14, 14, 1]; its row 0 set to 1.0 by ScatterND from Expand(1.0, [1, 14, 1])
    constant_ints(b, "mshape", {4}, {1, 14, 14, 1});
    auto& zeros = b.node("ConstantOfShape", {"mshape"}, {"zeros"}, "/ConstantOfShape");
    tensor_attribute(zeros, "value", {1}, tp::FLOAT)->add_float_data(0.0f);
    constant_floats(b, "fill", {1}, {1.0f});
    constant_ints(b, "ushape", {3}, {1, 14, 1});
    b.node("Expand", {"fill", "ushape"}, {"upd"}, "/Expand");  // a float Expand of no parameter: folds
    constant_ints(b, "idx", {1, 2}, {0, 0});
    b.node("ScatterND", {"zeros", "idx", "upd"}, {"mask"}, "/ScatterND");
    b.node("Add", {"x", "mask"}, {"masked"}, "/Add");
    // dropout(p=0.0, training=True): nothing dropped
    constant_floats(b, "ratio", {}, {0.0f});
    constant_true(b, "train");
    b.node("Dropout", {"masked", "ratio", "train"}, {"dropped"}, "/Dropout");
    b.node("Relu", {"dropped"}, {"r2"}, "/Relu_1");
    // Mod's two signs: Python's -3 % 7 = 4 (fmod 0), C's fmod(-3, 7) = -3 (fmod 1), + 2 = -1: reshape [4, -1]
    constant_ints(b, "m3", {1}, {-3});
    constant_ints(b, "seven", {1}, {7});
    b.node("Mod", {"m3", "seven"}, {"py"}, "/Mod_2");
    auto& cm = b.node("Mod", {"m3", "seven"}, {"c"}, "/Mod_3");
    onnx_builder::set(cm, "fmod", std::int64_t{1});
    constant_ints(b, "plus2", {1}, {2});
    b.node("Add", {"c", "plus2"}, {"cm1"}, "/Add_1");
    auto& rc = b.node("Concat", {"py", "cm1"}, {"t2"}, "/Concat_2");
    onnx_builder::set(rc, "axis", std::int64_t{0});
    b.node("Reshape", {"r2", "t2"}, {"out2"}, "/Reshape_1");
    b.output("r");
    b.output("out2");
    const io::onnx_model m = io::import_onnx(b.save(ridgeline::test::scratch_dir() / "swin_bits.onnx"));
    EXPECT_TRUE(m.skipped.empty());
    // the zero Pad is nothing; the windows reshape to 1x(14/7)x7x(14/7)x7x4; the mask is a held buffer of
    // 1x14x14x1 = 196 elements; the Dropout is nothing; [Python -3 % 7, C fmod(-3, 7) + 2] = [4, -1] -> 4x196
    EXPECT_EQ(kinds(m.model), (std::vector<std::string>{"reshape", "relu", "parameter", "add", "relu", "reshape"}));
    EXPECT_EQ(core::to_string(m.model.layers()[0].op), "reshape:shape=1x2x7x2x7x4");
    EXPECT_EQ(core::to_string(m.model.layers()[2].op), "parameter:shape=1x14x14x1,trainable=false");
    EXPECT_EQ(core::to_string(m.model.layers()[5].op), "reshape:shape=4x-1");
    EXPECT_EQ(core::analyze(m.model, core::dtype::fp32).layers[5].output_shape.dims(), (std::vector<std::int64_t>{4, 196}));
    // the mask's values: flat elements 0-13 (row 0 of the 14x14 plane) are 1, the other 182 are 0
    const auto& mask = m.weights->tensors.at(m.model.layers()[2].name + ".value").data;
    ASSERT_EQ(mask.size(), 196u);
    EXPECT_EQ(std::count(mask.begin(), mask.begin() + 14, 1.0f), 14);
    EXPECT_EQ(std::count(mask.begin() + 14, mask.end(), 0.0f), 182);
    // each fold is listed: 3 Mod and the integer Transpose among them, ScatterND and the float Expand
    const auto folded = op_types(m.folded);
    for (const char* op : {"Mod", "Transpose", "ScatterND", "Expand", "Shape"})
        EXPECT_NE(std::find(folded.begin(), folded.end(), op), folded.end()) << op;
    EXPECT_EQ(std::count(folded.begin(), folded.end(), std::string("Mod")), 4);
}

// A Dropout that would drop (training mode, ratio 0.1) is refused with its reason; a ScatterND outside the data is
// no constant (the file is wrong), and the node says it cannot be imported.
TEST(OnnxFold, TrainingDropoutAndAnOutOfRangeScatterAreRefused) {
    onnx_builder b(14);
    b.input("x", {1, 4});
    constant_floats(b, "ratio", {}, {0.1f});
    constant_true(b, "train");
    b.node("Dropout", {"x", "ratio", "train"}, {"out"}, "/Dropout");
    b.output("out");
    const std::string dropout = import_error(b, "train_dropout.onnx");
    EXPECT_NE(dropout.find("Dropout \"/Dropout\": training_mode is not a constant false and the ratio not a constant 0; "
                           "ridgeline models inference"),
              std::string::npos)
        << "a training Dropout: " << dropout;
    onnx_builder s(14);
    s.input("x", {1, 4});
    constant_floats(s, "data", {4}, {0, 0, 0, 0});
    constant_ints(s, "idx", {1, 1}, {4});  // index 4 of 4 elements
    constant_floats(s, "upd", {1}, {1});
    s.node("ScatterND", {"data", "idx", "upd"}, {"c"}, "/ScatterND");
    s.node("Add", {"x", "c"}, {"out"}, "/Add");
    s.output("out");
    const std::string scatter = import_error(s, "bad_scatter.onnx");
    EXPECT_NE(scatter.find("ScatterND \"/ScatterND\""), std::string::npos) << "an out-of-range ScatterND: " << scatter;
}

// A float Expand of data computed in the graph (not a parameter) folds while it is small, up to 1 Mi elements; a
// larger one is held and broadcast, never computed: 40 Expands of 16 Mi elements once took 18 s and 756 MB only to
// be thrown away at the file's cap.
TEST(OnnxFold, AFloatExpandOfComputedDataFoldsWhenSmallAndIsHeldWhenLarge) {
    auto import = [](std::int64_t rows, std::int64_t cols) {
        onnx_builder b(14);
        b.input("x", {rows, cols});
        constant_floats(b, "c1", {1}, {0.25f});
        constant_floats(b, "c2", {1}, {0.5f});
        b.node("Add", {"c1", "c2"}, {"c"}, "/Add");  // 0.75, computed: no initializer
        constant_ints(b, "shape", {2}, {rows, cols});
        b.node("Expand", {"c", "shape"}, {"e"}, "/Expand");
        b.node("Add", {"x", "e"}, {"out"}, "/Add_1");
        b.output("out");
        return io::import_onnx(b.save(ridgeline::test::scratch_dir() / "float_expand.onnx"));
    };
    // 4 x 4 = 16 elements: folded; the Add reads a held buffer of all 16
    const io::onnx_model small = import(4, 4);
    EXPECT_EQ(core::to_string(small.model.layers()[0].op), "parameter:shape=4x4,trainable=false");
    EXPECT_EQ(core::analyze(small.model, core::dtype::fp32).totals.buffers, 16);
    // 1024 x 1025 = 1,049,600 > 2^20: held as its one stored value, broadcast
    const io::onnx_model large = import(1024, 1025);
    EXPECT_EQ(core::to_string(large.model.layers()[0].op), "parameter:shape=1,expand=1024x1025,trainable=false");
    EXPECT_EQ(core::analyze(large.model, core::dtype::fp32).totals.buffers, 1);
}
