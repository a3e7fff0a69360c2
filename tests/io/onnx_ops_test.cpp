// ONNX import of the ops PyTorch's exports use beyond the basic table (issue 11 item 2): HardSwish,
// HardSigmoid, x * Sigmoid(x) as silu, Pad (zeros fused into the Conv or AveragePool that reads them, else a pad
// layer), Resize and Upsample (interpolate),
// ReduceMean over H and W, Slice of an activation, and LayerNorm decomposed before opset 17.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "onnx_builder.hpp"
#include "onnx_test_graphs.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/io/onnx_import.hpp"
#include "../support/scratch.hpp"

namespace core = ridgeline::core;
namespace io = ridgeline::io;
using ridgeline::test::import_error;
using ridgeline::test::onnx_builder;
using tp = onnx::TensorProto;

namespace {

std::vector<std::string> kinds(const core::model& m) {
    std::vector<std::string> k;
    for (const auto& l : m.layers()) k.emplace_back(core::kind_of(l.op));
    return k;
}

std::vector<std::string> layer_strings(const core::model& m) {
    std::vector<std::string> k;
    for (const auto& l : m.layers()) k.push_back(core::to_string(l.op));
    return k;
}

/// The import error of x -> Pad (pads as an initializer, `mode`) -> out at this opset.
std::string pad_error(int opset, const std::vector<std::int64_t>& x, const std::vector<std::int64_t>& pads,
                      const std::string& mode, const std::string& file) {
    onnx_builder b(opset);
    b.input("x", x);
    b.init_ints("pads", {static_cast<std::int64_t>(pads.size())}, pads);
    auto& pad = b.node("Pad", {"x", "pads"}, {"out"}, "/Pad");
    onnx_builder::set(pad, "mode", mode);
    b.output("out");
    return import_error(b, file);
}

}  // namespace

TEST(OnnxImportOps, PadOfZerosIsNoLayerAndZerosAroundHwFuseIntoTheirReader) {
    onnx_builder b(14);
    b.input("x", {1, 2, 6, 6});
    b.init_ints("none", {8}, {0, 0, 0, 0, 0, 0, 0, 0});
    b.node("Pad", {"x", "none"}, {"p0"}, "/pool/Pad");  // PyTorch writes one before every AvgPool2d
    auto& ap = b.node("AveragePool", {"p0"}, {"a"}, "/pool/AveragePool");
    onnx_builder::set(ap, "kernel_shape", std::vector<std::int64_t>{2, 2});
    onnx_builder::set(ap, "strides", std::vector<std::int64_t>{2, 2});  // [1, 2, 3, 3]
    b.init_ints("hw1", {8}, {0, 0, 1, 1, 0, 0, 1, 1});                   // N C H W begins, then ends
    b.node("Pad", {"a", "hw1"}, {"p1"}, "/conv/Pad");
    b.init_n("w", {4, 2, 3, 3});
    b.node("Conv", {"p1", "w"}, {"c"}, "/conv/Conv");  // [1, 4, 3, 3]
    b.node("Pad", {"c", "hw1"}, {"p2"}, "/avg/Pad");
    auto& ap2 = b.node("AveragePool", {"p2"}, {"out"}, "/avg/AveragePool");
    onnx_builder::set(ap2, "kernel_shape", std::vector<std::int64_t>{3, 3});  // [1, 4, 3, 3]
    b.output("out");
    const io::onnx_model m = io::import_onnx(b.save(ridgeline::test::scratch_dir() / "pads.onnx"));
    // the zero Pad is nothing; the others become the padding of the layer that reads them, and the average
    // counts the padded zeros as the exported graph does (they were real elements there)
    EXPECT_EQ(layer_strings(m.model),
              (std::vector<std::string>{"avg_pool2d:kernel_size=2,count_include_pad=false",
                                        "conv2d:in_channels=2,out_channels=4,kernel_size=3,padding=1,bias=false",
                                        "avg_pool2d:kernel_size=3,stride=1,padding=1"}));
    EXPECT_EQ(m.model.layers()[1].name, "/conv/Conv");
    // conv macs: 4 out channels x 3 x 3 positions x 2 x 3 x 3 taps = 648
    EXPECT_EQ(core::analyze(m.model, core::dtype::fp32).totals.macs, 648);

}

TEST(OnnxImportOps, PadsNotFusedAreAPadLayer) {
    // ONNX pads: all begins, then all ends, in axis order; the layer's: (before, after) from the last axis backwards
    onnx_builder r(14);
    r.input("x", {1, 2, 6, 6});
    r.init_ints("hw", {8}, {0, 0, 1, 2, 0, 0, 3, 4});  // H 1 before 3 after, W 2 before 4 after
    auto& pad = r.node("Pad", {"x", "hw"}, {"r"}, "/reflect/Pad");
    onnx_builder::set(pad, "mode", std::string("reflect"));
    auto& edge = r.node("Pad", {"r", "hw"}, {"e"}, "/edge/Pad");
    onnx_builder::set(edge, "mode", std::string("edge"));
    r.init_ints("c1", {8}, {0, 1, 0, 0, 0, 0, 0, 0});  // one channel before, a constant 0.5
    r.init("half", {}, {0.5f});
    r.node("Pad", {"e", "c1", "half"}, {"out"}, "/constant/Pad");
    r.output("out");
    const io::onnx_model m = io::import_onnx(r.save(ridgeline::test::scratch_dir() / "pad_layers.onnx"));
    EXPECT_EQ(layer_strings(m.model), (std::vector<std::string>{"pad:pad=2x4x1x3,mode=reflect",
                                                                "pad:pad=2x4x1x3,mode=replicate",
                                                                "pad:pad=0x0x0x0x1x0,value=0.5"}));
    // 6x6 -> 10x12 -> 14x18, then one more channel: 1x3x14x18; copies, no flops
    const auto a = core::analyze(m.model, core::dtype::fp32);
    EXPECT_EQ(a.layers.back().output_shape, (core::shape{1, 3, 14, 18}));
    EXPECT_EQ(a.totals.flops, 0);

    std::string what = pad_error(19, {1, 2, 6, 6}, {0, 0, 1, 1, 0, 0, 1, 1}, "wrap", "wrap_pad.onnx");
    EXPECT_NE(what.find("Pad \"/Pad\": Pad mode \"wrap\"; ridgeline maps constant, reflect and edge"),
              std::string::npos) << what;
    what = pad_error(14, {1, 2, 3, 3}, {0, 0, 3, 0, 0, 0, 0, 0}, "reflect", "far_reflect.onnx");
    EXPECT_NE(what.find("reflect padding 3, 0 of dimension 2 must be less than its size 3"), std::string::npos) << what;
}

TEST(OnnxImportOps, ResizeAndUpsampleAsPyTorchExportsThem) {
    // F.interpolate(scale_factor=2, mode="nearest") at opset 13: Resize(x, roi "", scales [1, 1, 2, 2]) asymmetric,
    // floor; mode="bilinear" to a size: sizes [1, 4, 5, 7], pytorch_half_pixel; align_corners=True: align_corners
    onnx_builder b(13);
    b.input("x", {1, 4, 3, 3});
    b.init("s2", {4}, {1, 1, 2, 2});
    auto& near = b.node("Resize", {"x", "", "s2"}, {"n"}, "/up/Resize");
    onnx_builder::set(near, "mode", std::string("nearest"));
    onnx_builder::set(near, "coordinate_transformation_mode", std::string("asymmetric"));
    onnx_builder::set(near, "nearest_mode", std::string("floor"));
    b.init_ints("to57", {4}, {1, 4, 5, 7});
    auto& lin = b.node("Resize", {"n", "", "", "to57"}, {"l"}, "/bilinear/Resize");
    onnx_builder::set(lin, "mode", std::string("linear"));
    onnx_builder::set(lin, "coordinate_transformation_mode", std::string("pytorch_half_pixel"));
    b.init_ints("to99", {4}, {1, 4, 9, 9});
    auto& ac = b.node("Resize", {"l", "", "", "to99"}, {"out"}, "/corners/Resize");
    onnx_builder::set(ac, "mode", std::string("linear"));
    onnx_builder::set(ac, "coordinate_transformation_mode", std::string("align_corners"));
    b.output("out");
    const io::onnx_model m = io::import_onnx(b.save(ridgeline::test::scratch_dir() / "resize.onnx"));
    EXPECT_EQ(layer_strings(m.model), (std::vector<std::string>{"interpolate:size=6", "interpolate:size=5x7,mode=bilinear",
                                                                "interpolate:size=9,mode=bilinear,align_corners=true"}));
    // bilinear flops: 9 per output element (docs/conventions.md): 4 x (35 + 81) x 9 = 4,176
    EXPECT_EQ(core::analyze(m.model, core::dtype::fp32).totals.flops, 4176);

    // opset 9's Upsample(x, scales) with mode nearest (nn.Upsample(scale_factor=3))
    onnx_builder u(9);
    u.input("x", {2, 1, 2, 5});
    u.init("s3", {4}, {1, 1, 3, 3});
    u.node("Upsample", {"x", "s3"}, {"out"}, "/Upsample");
    u.output("out");
    EXPECT_EQ(layer_strings(io::import_onnx(u.save(ridgeline::test::scratch_dir() / "upsample.onnx")).model),
              (std::vector<std::string>{"interpolate:size=6x15"}));

    // refused, each with its reason: a scale that gives no whole size, a nearest rounding PyTorch's nearest does not
    // use, cubic
    auto refused = [](const std::string& coords, const std::string& mode, float scale, const std::string& file) {
        onnx_builder g(13);
        g.input("x", {1, 1, 3, 3});
        g.init("s", {4}, {1, 1, scale, scale});
        auto& r = g.node("Resize", {"x", "", "s"}, {"out"}, "/Resize");
        onnx_builder::set(r, "mode", mode);
        onnx_builder::set(r, "coordinate_transformation_mode", coords);
        if (coords == "asymmetric") onnx_builder::set(r, "nearest_mode", std::string("floor"));
        g.output("out");
        return import_error(g, file);
    };
    std::string what = refused("asymmetric", "nearest", 1.5f, "resize_half.onnx");
    EXPECT_NE(what.find("Resize scale 1.5 of axis 2 (size 3) gives no whole output size"), std::string::npos) << what;
    what = refused("half_pixel", "nearest", 2.0f, "resize_round.onnx");
    EXPECT_NE(what.find("Resize mode nearest with half_pixel coordinates, rounding round_prefer_floor; ridgeline maps"),
              std::string::npos) << what;
    what = refused("half_pixel", "cubic", 2.0f, "resize_cubic.onnx");
    EXPECT_NE(what.find("Resize mode cubic with half_pixel coordinates; ridgeline maps"), std::string::npos) << what;
}

TEST(OnnxImportOps, ReduceMeanOverHwIsAGlobalAveragePool) {
    onnx_builder b(13);
    b.input("x", {2, 8, 5, 5});
    auto& rm = b.node("ReduceMean", {"x"}, {"out"}, "/ReduceMean");  // mnasnet's x.mean([2, 3])
    onnx_builder::set(rm, "axes", std::vector<std::int64_t>{-1, 2});
    onnx_builder::set(rm, "keepdims", std::int64_t{0});
    b.output("out");
    const io::onnx_model m = io::import_onnx(b.save(ridgeline::test::scratch_dir() / "reduce_mean.onnx"));
    EXPECT_EQ(layer_strings(m.model), (std::vector<std::string>{"adaptive_avg_pool2d:output_size=1", "flatten"}));
    const auto a = core::analyze(m.model, core::dtype::fp32);
    EXPECT_EQ(a.layers.back().output_shape, (core::shape{2, 8}));
    // flops: the window size per output (24 adds and a divide, docs/conventions.md): 25 x 2 x 8 outputs = 400
    EXPECT_EQ(a.totals.flops, 400);

    onnx_builder c(13);
    c.input("x", {2, 8, 5});
    auto& rc = c.node("ReduceMean", {"x"}, {"out"}, "/ReduceMean");
    onnx_builder::set(rc, "axes", std::vector<std::int64_t>{1});
    c.output("out");
    // over other axes: a mean layer (keepdims 1 by default): 2 x 8 x 5 -> 2 x 1 x 5
    const io::onnx_model mc = io::import_onnx(c.save(ridgeline::test::scratch_dir() / "reduce_mean_c.onnx"));
    EXPECT_EQ(layer_strings(mc.model), (std::vector<std::string>{"mean:dim=1,keepdim=true"}));
}

TEST(OnnxImportOps, SliceOfAnActivationIsOneSliceLayerPerCutAxis) {
    onnx_builder b(13);
    b.input("x", {1, 8, 4, 4});
    b.init_ints("z", {1}, {0});
    b.init_ints("four", {1}, {4});
    b.init_ints("one", {1}, {1});
    b.init_ints("end", {1}, {std::numeric_limits<std::int64_t>::max()});
    b.node("Slice", {"x", "z", "four", "one"}, {"lo"}, "/Slice");    // shufflenet's x[:, :4]
    b.node("Slice", {"x", "four", "end", "one"}, {"hi"}, "/Slice_1");  // x[:, 4:]
    b.init_ints("s2", {2}, {1, 0});
    b.init_ints("e2", {2}, {std::numeric_limits<std::int64_t>::max(), 4});
    b.init_ints("a2", {2}, {2, 3});
    b.init_ints("st2", {2}, {1, 2});
    b.node("Slice", {"hi", "s2", "e2", "a2", "st2"}, {"out"}, "/Slice_2");  // [:, :, 1:, ::2], two layers
    b.node("Relu", {"lo"}, {"r"}, "/Relu");
    b.output("out");
    b.output("r");
    const io::onnx_model m = io::import_onnx(b.save(ridgeline::test::scratch_dir() / "slices.onnx"));
    EXPECT_EQ(layer_strings(m.model),
              (std::vector<std::string>{"slice:dim=1,end=4", "slice:dim=1,start=4", "slice:dim=2,start=1",
                                        "slice:dim=3,step=2", "relu"}));
    const auto a = core::analyze(m.model, core::dtype::fp32);
    EXPECT_EQ(a.layers[3].output_shape, (core::shape{1, 4, 3, 2}));
    EXPECT_EQ(m.model.layers()[3].name, "/Slice_2#2");
}

namespace {
/// torch.onnx.export(nn.LayerNorm(8)) before opset 17, up to the Div (input "x" [1, 5, 8], output "n"): each
/// Constant just before its reader; the affine Mul and Add are the caller's.
void decomposed_layer_norm(onnx_builder& b, float eps) {
    b.input("x", {1, 5, 8});
    auto& rm1 = b.node("ReduceMean", {"x"}, {"mean"}, "/norm/ReduceMean");
    onnx_builder::set(rm1, "axes", std::vector<std::int64_t>{-1});
    b.node("Sub", {"x", "mean"}, {"d"}, "/norm/Sub");
    b.scalar("two", 2.0f);
    b.node("Pow", {"d", "two"}, {"sq"}, "/norm/Pow");
    auto& rm2 = b.node("ReduceMean", {"sq"}, {"var"}, "/norm/ReduceMean_1");
    onnx_builder::set(rm2, "axes", std::vector<std::int64_t>{-1});
    b.scalar("eps", eps);
    b.node("Add", {"var", "eps"}, {"ve"}, "/norm/Add");
    b.node("Sqrt", {"ve"}, {"sd"}, "/norm/Sqrt");
    b.node("Div", {"d", "sd"}, {"n"}, "/norm/Div");
}
}  // namespace

TEST(OnnxImportOps, LayerNormDecomposedBeforeOpset17IsOneLayerNorm) {
    onnx_builder b(14);
    decomposed_layer_norm(b, 1e-6f);
    b.init("norm.weight", {8}, {1, 2, 3, 4, 5, 6, 7, 8});
    b.node("Mul", {"n", "norm.weight"}, {"m"}, "/norm/Mul");
    b.init("norm.bias", {8}, {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f});
    b.node("Add", {"m", "norm.bias"}, {"out"}, "/norm/Add_1");
    b.output("out");
    const io::onnx_model m = io::import_onnx(b.save(ridgeline::test::scratch_dir() / "layer_norm.onnx"));
    EXPECT_EQ(layer_strings(m.model), (std::vector<std::string>{"layer_norm:normalized_shape=8,eps=1e-06"}));
    EXPECT_EQ(m.model.layers()[0].name, "/norm/LayerNorm");
    EXPECT_EQ(m.weights->tensors.at("/norm/LayerNorm.weight").data[7], 8.0f);
    EXPECT_EQ(m.weights->tensors.at("/norm/LayerNorm.bias").data[0], 0.5f);
    // params: weight 8 + bias 8; flops 8 per element x 40 elements = 320
    const auto a = core::analyze(m.model, core::dtype::fp32);
    EXPECT_EQ(a.totals.params, 16);
    EXPECT_EQ(a.totals.flops, 320);
}

TEST(OnnxImportOps, LayerNormWithoutABiasCountsTheWeightAlone) {
    // nn.LayerNorm(8, bias=False) at opset 17: LayerNormalization with no B. Nothing is counted for a bias that
    // is not there: params 8 (the weight); flops 7 per element (normalise 6, the weight's multiply 1) x 40 = 280
    onnx_builder b(17);
    b.input("x", {1, 5, 8});
    b.init("norm.weight", {8}, {1, 2, 3, 4, 5, 6, 7, 8});
    b.node("LayerNormalization", {"x", "norm.weight"}, {"out"}, "/norm/LayerNormalization");
    b.output("out");
    const io::onnx_model m = io::import_onnx(b.save(ridgeline::test::scratch_dir() / "layer_norm_no_b.onnx"));
    EXPECT_EQ(layer_strings(m.model), (std::vector<std::string>{"layer_norm:normalized_shape=8,bias=false"}));
    EXPECT_FALSE(m.weights->tensors.count("/norm/LayerNormalization.bias"));
    const auto a = core::analyze(m.model, core::dtype::fp32);
    EXPECT_EQ(a.totals.params, 8);
    EXPECT_EQ(a.totals.flops, 280);
    // bytes: input 40 + output 40 + weight 8 = 88 floats = 352
    EXPECT_EQ(a.totals.bytes, 352);

    // the same before opset 17: the decomposition's Mul by the weight with no Add after it
    onnx_builder d(14);
    decomposed_layer_norm(d, 1e-5f);
    d.init("norm.weight", {8}, {1, 2, 3, 4, 5, 6, 7, 8});
    d.node("Mul", {"n", "norm.weight"}, {"out"}, "/norm/Mul");
    d.output("out");
    const io::onnx_model md = io::import_onnx(d.save(ridgeline::test::scratch_dir() / "layer_norm_no_b_14.onnx"));
    ASSERT_EQ(md.model.layers().size(), 1u);
    EXPECT_EQ(core::to_string(md.model.layers()[0].op).find("bias=false") != std::string::npos, true)
        << core::to_string(md.model.layers()[0].op);
    EXPECT_EQ(core::analyze(md.model, core::dtype::fp32).totals.params, 8);
}

TEST(OnnxImportOps, HardSwishHardSigmoidAndSiluSpelledOut) {
    onnx_builder b(14);
    b.input("x", {1, 8, 4, 4});
    b.node("HardSwish", {"x"}, {"hs"}, "/features.1/HardSwish");
    auto& hsig = b.node("HardSigmoid", {"hs"}, {"hsig"}, "/se/HardSigmoid");
    onnx_builder::set(hsig, "alpha", 1.0f / 6.0f);
    onnx_builder::set(hsig, "beta", 0.5f);
    b.node("Sigmoid", {"hsig"}, {"s"}, "/act/Sigmoid");
    b.node("Mul", {"s", "hsig"}, {"silu"}, "/act/Mul");  // x * sigmoid(x), operands swapped
    b.node("Sigmoid", {"silu"}, {"s2"}, "/gate/Sigmoid");
    b.node("Mul", {"s2", "hs"}, {"out"}, "/gate/Mul");  // a gate: another tensor times a sigmoid, not a silu
    b.output("out");
    const auto p = b.save(ridgeline::test::scratch_dir() / "activations.onnx");
    const io::onnx_model m = io::import_onnx(p);
    EXPECT_EQ(kinds(m.model), (std::vector<std::string>{"hardswish", "hardsigmoid", "silu", "sigmoid", "mul"}));
    EXPECT_EQ(m.model.layers()[2].name, "/act/Sigmoid");
    EXPECT_EQ(m.model.layers()[3].inputs, std::vector<std::string>{"/act/Sigmoid"});
    // flops per element: hardswish 4, hardsigmoid 3, silu 4, sigmoid 3, mul 1 = 15, on 128 elements each
    EXPECT_EQ(core::analyze(m.model, core::dtype::fp32).totals.flops, 15 * 128);

    // ONNX's own default HardSigmoid (alpha 0.2) is not PyTorch's
    onnx_builder d(14);
    d.input("x", {1, 4});
    d.node("HardSigmoid", {"x"}, {"out"}, "/HardSigmoid");
    d.output("out");
    const std::string what = import_error(d, "hardsigmoid_default.onnx");
    EXPECT_NE(what.find("HardSigmoid \"/HardSigmoid\": HardSigmoid with alpha 0.2 and beta 0.5; ridgeline's "
                        "hardsigmoid is PyTorch's (alpha 1/6, beta 0.5)"),
              std::string::npos)
        << what;
}

TEST(OnnxImportOps, PadFusesIntoAConvWithAutoPadValid) {
    onnx_builder b(14);
    b.input("x", {1, 3, 8, 8});
    b.init_ints("hw1", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
    b.node("Pad", {"x", "hw1"}, {"p"}, "/Pad");
    b.init_n("w", {4, 3, 3, 3});
    auto& conv = b.node("Conv", {"p", "w"}, {"out"}, "/Conv");
    onnx_builder::set(conv, "auto_pad", std::string("VALID"));  // no padding of its own: the Pad's is the padding
    b.output("out");
    const io::onnx_model m = io::import_onnx(b.save(ridgeline::test::scratch_dir() / "pad_valid.onnx"));
    EXPECT_EQ(layer_strings(m.model),
              (std::vector<std::string>{"conv2d:in_channels=3,out_channels=4,kernel_size=3,padding=1,bias=false"}));
}

TEST(OnnxImportOps, SqueezeUnsqueezeAndSplitOfActivationsAreViews) {
    onnx_builder b(13);
    b.input("x", {2, 6, 4});
    b.init_ints("ax0", {1}, {1});
    b.node("Unsqueeze", {"x", "ax0"}, {"u"}, "/Unsqueeze");  // [2, 1, 6, 4]
    b.node("Squeeze", {"u", "ax0"}, {"s"}, "/Squeeze");      // [2, 6, 4]
    auto& sp = b.node("Split", {"s"}, {"a", "b", "c"}, "/Split");  // torch.chunk(x, 3, dim=1): 2 + 2 + 2
    onnx_builder::set(sp, "axis", std::int64_t{1});
    b.init_ints("sizes", {2}, {1, 3});
    auto& sp2 = b.node("Split", {"x", "sizes"}, {"d", "e"}, "/Split_1");  // torch.split(x, [1, 3], dim=-1)
    onnx_builder::set(sp2, "axis", std::int64_t{-1});
    b.node("Add", {"a", "c"}, {"ac"}, "/Add");
    for (const char* o : {"ac", "b", "d", "e"}) b.output(o);
    const io::onnx_model m = io::import_onnx(b.save(ridgeline::test::scratch_dir() / "split.onnx"));
    EXPECT_EQ(layer_strings(m.model),
              (std::vector<std::string>{"reshape:shape=2x1x6x4", "reshape:shape=2x6x4", "slice:dim=1,end=2",
                                        "slice:dim=1,start=2,end=4", "slice:dim=1,start=4", "slice:dim=2,end=1",
                                        "slice:dim=2,start=1", "add"}));
    const auto a = core::analyze(m.model, core::dtype::fp32);
    EXPECT_EQ(a.layers[6].output_shape, (core::shape{2, 6, 3}));
    // only the add computes: 2 x 2 x 4 = 16 flops
    EXPECT_EQ(a.totals.flops, 16);
}

TEST(OnnxImportOps, ElementwiseNodesNoPatternTakesAreOneLayerEach) {
    // a hand-written normalisation no pattern matches: (x - m) / sqrt(v) with m, v computed elsewhere, then
    // exp(-x), erf, x^2, 1 - x and 1 / x: every node one layer, operand order kept
    onnx_builder b(14);
    b.input("x", {1, 4, 8});
    b.input("m", {1, 4, 1});
    b.node("Sub", {"x", "m"}, {"d"}, "/Sub");
    b.node("Sqrt", {"m"}, {"s"}, "/Sqrt");
    b.node("Div", {"d", "s"}, {"q"}, "/Div");
    b.node("Neg", {"q"}, {"n"}, "/Neg");
    b.node("Exp", {"n"}, {"e"}, "/Exp");
    b.node("Erf", {"e"}, {"f"}, "/Erf");
    b.scalar("two", 2.0F);
    b.node("Pow", {"f", "two"}, {"p"}, "/Pow");
    b.scalar("one", 1.0F);
    b.node("Sub", {"one", "p"}, {"r"}, "/Sub_1");
    b.node("Div", {"one", "r"}, {"out"}, "/Div_1");
    b.output("out");
    const io::onnx_model m = io::import_onnx(b.save(ridgeline::test::scratch_dir() / "elementwise.onnx"));
    EXPECT_EQ(layer_strings(m.model),
              (std::vector<std::string>{"sub", "sqrt", "div", "neg", "exp", "erf", "pow:exponent=2",
                                        "parameter:shape=1,trainable=false", "sub", "div"}));
    // 1 - p reads the held 1 first; 1 / r reads the same held 1 (one layer per ONNX tensor)
    const auto& layers = m.model.layers();
    EXPECT_EQ(layers[8].inputs.front(), layers[7].name);
    EXPECT_EQ(layers[9].inputs.front(), layers[7].name);
    // flops: sqrt over m (4), then 1 per output element of 1 x 4 x 8 = 32 for the other 8 computing layers: 260
    EXPECT_EQ(core::analyze(m.model, core::dtype::fp32).totals.flops, 4 + 8 * 32);

    onnx_builder t(14);
    t.input("x", {1, 4});
    t.input("e", {1, 4});
    t.node("Pow", {"x", "e"}, {"out"}, "/Pow");
    t.output("out");
    const std::string what = import_error(t, "pow_tensor.onnx");
    EXPECT_NE(what.find("Pow \"/Pow\": input 1 (\"e\") is computed at run time; ridgeline needs a constant"),
              std::string::npos)
        << what;
}

TEST(OnnxImportOps, ReductionsOverAnyAxesAreMeanSumAmax) {
    // attention-pooling style reductions over the last axis: ReduceMean (axes attribute, opset 13), ReduceSum
    // (axes input from opset 13), ReduceMax (attribute), keepdims as ONNX (default 1)
    onnx_builder b(13);
    b.input("x", {2, 4, 8});
    auto& rm = b.node("ReduceMean", {"x"}, {"m"}, "/ReduceMean");
    onnx_builder::set(rm, "axes", std::vector<std::int64_t>{1});  // [2, 1, 8]
    b.init_ints("last", {1}, {-1});
    auto& rs = b.node("ReduceSum", {"m", "last"}, {"s"}, "/ReduceSum");  // [2, 1]
    onnx_builder::set(rs, "keepdims", std::int64_t{0});
    auto& mx = b.node("ReduceMax", {"x"}, {"out2"}, "/ReduceMax");
    onnx_builder::set(mx, "axes", std::vector<std::int64_t>{0, 2});  // [1, 4, 1]
    b.output("s");
    b.output("out2");
    const io::onnx_model m = io::import_onnx(b.save(ridgeline::test::scratch_dir() / "reductions.onnx"));
    EXPECT_EQ(layer_strings(m.model),
              (std::vector<std::string>{"mean:dim=1,keepdim=true", "sum:dim=-1", "amax:dim=0x2,keepdim=true"}));
    // flops: mean 64 inputs -> 16 outputs: 48 adds + 16 divides = 64; sum 16 -> 2: 14; amax 64 -> 4: 60
    EXPECT_EQ(core::analyze(m.model, core::dtype::fp32).totals.flops, 64 + 14 + 60);
}

TEST(OnnxImportOps, ExpandOfAnActivationIsAnExpandLayer) {
    // x [1, 3, 1] expanded to [2, 1, 4]: ONNX broadcasts both ways, to [2, 3, 4]; an Expand to its own shape is none
    onnx_builder b(13);
    b.input("x", {1, 3, 1});
    b.init_ints("to", {3}, {2, 1, 4});
    b.node("Expand", {"x", "to"}, {"e"}, "/Expand");
    b.init_ints("same", {2}, {3, 4});
    b.node("Expand", {"e", "same"}, {"out"}, "/Expand_1");
    b.output("out");
    const io::onnx_model m = io::import_onnx(b.save(ridgeline::test::scratch_dir() / "expand.onnx"));
    EXPECT_EQ(layer_strings(m.model), (std::vector<std::string>{"expand:size=2x3x4"}));
    // a copy: (3 read + 24 written) * 4 bytes = 108
    EXPECT_EQ(core::analyze(m.model, core::dtype::fp32).totals.bytes, 108);
    // read by an Add whose other operand has the expanded shape: a view the Add broadcasts, no layer
    onnx_builder v(13);
    v.input("x", {1, 3, 1});
    v.input("y", {2, 3, 4});
    v.init_ints("to", {3}, {2, 3, 4});
    v.node("Expand", {"x", "to"}, {"e"}, "/Expand");
    v.node("Add", {"e", "y"}, {"out"}, "/Add");
    v.output("out");
    const io::onnx_model vm = io::import_onnx(v.save(ridgeline::test::scratch_dir() / "expand_view.onnx"));
    EXPECT_EQ(layer_strings(vm.model), (std::vector<std::string>{"add"}));
    EXPECT_EQ(core::analyze(vm.model, core::dtype::fp32).layers.back().output_shape, (core::shape{2, 3, 4}));
    // an Add whose other operand is smaller would give another shape from x: the Expand stays a copy
    onnx_builder c(13);
    c.input("x", {1, 3, 1});
    c.input("y", {3, 1});
    c.init_ints("to", {3}, {2, 3, 4});
    c.node("Expand", {"x", "to"}, {"e"}, "/Expand");
    c.node("Add", {"e", "y"}, {"out"}, "/Add");
    c.output("out");
    EXPECT_EQ(layer_strings(io::import_onnx(c.save(ridgeline::test::scratch_dir() / "expand_copy.onnx")).model),
              (std::vector<std::string>{"expand:size=2x3x4", "add"}));

    onnx_builder r(13);
    r.input("x", {2, 3});
    r.init_ints("to", {2}, {4, 3});
    r.node("Expand", {"x", "to"}, {"out"}, "/Expand");
    r.output("out");
    const std::string what = import_error(r, "bad_expand.onnx");
    EXPECT_NE(what.find("Expand \"/Expand\": cannot expand 2x3 to 4x3 (dimension 0: 2 vs 4)"), std::string::npos) << what;
}

// Attention as exported, spelled out: MatMul(q, kT) -> Div(sqrt d) -> Add(mask) -> Softmax -> MatMul(., v). An all-zero
// mask (BERT's extended mask without padding) is dropped; a causal 0/-inf mask is is_causal; any other additive mask
// stays, held as the attention's fourth input; without a Softmax after it the MatMul is a plain matmul.
TEST(OnnxImportOps, AttentionSpelledOutIsOneAttentionLayer) {
    auto graph = [](const std::vector<float>& mask, bool with_softmax) {
        onnx_builder b;
        b.input("q", {1, 2, 3, 4});
        b.input("kt", {1, 2, 4, 3});
        b.input("v", {1, 2, 3, 4});
        b.scalar("d", 2.0f);  // sqrt(4)
        b.init("mask", {1, 1, 3, 3}, mask);
        b.node("MatMul", {"q", "kt"}, {"s"}, "/attn/MatMul");
        b.node("Div", {"s", "d"}, {"sd"}, "/attn/Div");
        b.node("Add", {"sd", "mask"}, {"sm"}, "/attn/Add");
        if (with_softmax) {
            auto& sm = b.node("Softmax", {"sm"}, {"p"}, "/attn/Softmax");
            onnx_builder::set(sm, "axis", std::int64_t{-1});
        } else {
            b.node("Relu", {"sm"}, {"p"}, "/attn/Relu");
        }
        b.node("MatMul", {"p", "v"}, {"y"}, "/attn/MatMul_1");
        b.output("y");
        return b;
    };
    const float inf = std::numeric_limits<float>::infinity();
    auto import = [](onnx_builder b, const std::string& file) {
        return io::import_onnx(b.save(ridgeline::test::scratch_dir() / file)).model;
    };
    const auto zeros = import(graph(std::vector<float>(9, 0.0f), true), "zeros.onnx");
    EXPECT_EQ(layer_strings(zeros), (std::vector<std::string>{"transpose:dim0=2,dim1=3", "attention"}));
    const auto causal = import(graph({0, -inf, -inf, 0, 0, -inf, 0, 0, 0}, true), "causal.onnx");
    EXPECT_EQ(layer_strings(causal), (std::vector<std::string>{"transpose:dim0=2,dim1=3", "attention:is_causal=true"}));
    const auto padded = import(graph({0, 0, -inf, 0, 0, -inf, 0, 0, -inf}, true), "padded.onnx");
    EXPECT_EQ(kinds(padded), (std::vector<std::string>{"transpose", "parameter", "attention"}));
    EXPECT_EQ(padded.layers().back().inputs.size(), 4u);
    const auto plain = import(graph(std::vector<float>(9, 0.0f), false), "plain.onnx");
    EXPECT_EQ(kinds(plain), (std::vector<std::string>{"matmul", "scale", "parameter", "add", "relu", "matmul"}));
}

// q * cos + rotate_half(q) * sin, rotate_half(q) = Concat(Neg(q[..., D/2:]), q[..., :D/2]) (modeling_llama's
// apply_rotary_pos_emb as exported) with the default rope type's tables is one rotary layer; theta is read back
// from the tables (500000, Llama 3's); tables of another kind (scaled, or shifted by a position offset) stay the
// elementwise layers they are.
TEST(OnnxImportOps, RotateHalfWithRopeTablesIsOneRotaryLayer) {
    constexpr std::int64_t s = 5, d = 8;
    auto graph = [&](const core::rotary::tables& t, bool add_swapped) {
        onnx_builder b;
        b.input("q", {1, 2, s, d});
        b.init("cos", {s, d}, t.cos);
        b.init("sin", {s, d}, t.sin);
        b.init_ints("half", {1}, {d / 2});
        b.init_ints("zero", {1}, {0});
        b.init_ints("end", {1}, {std::numeric_limits<std::int64_t>::max()});
        b.init_ints("last", {1}, {-1});
        b.node("Mul", {"q", "cos"}, {"qc"}, "/attn/Mul");
        b.node("Slice", {"q", "half", "end", "last"}, {"hi"}, "/attn/Slice");
        b.node("Neg", {"hi"}, {"nhi"}, "/attn/Neg");
        b.node("Slice", {"q", "zero", "half", "last"}, {"lo"}, "/attn/Slice_1");
        auto& cat = b.node("Concat", {"nhi", "lo"}, {"rot"}, "/attn/Concat");
        onnx_builder::set(cat, "axis", std::int64_t{-1});
        b.node("Mul", {"sin", "rot"}, {"rs"}, "/attn/Mul_1");
        b.node("Add", add_swapped ? std::vector<std::string>{"rs", "qc"} : std::vector<std::string>{"qc", "rs"}, {"y"},
               "/attn/Add_1");
        b.output("y");
        return b;
    };
    auto import = [](onnx_builder b, const std::string& file) {
        return io::import_onnx(b.save(ridgeline::test::scratch_dir() / file)).model;
    };
    core::rotary llama3_theta;
    llama3_theta.theta = 500000;
    const auto m = import(graph(llama3_theta.make_tables(d, s), false), "rope.onnx");
    EXPECT_EQ(layer_strings(m), (std::vector<std::string>{"rotary:theta=500000"}));
    EXPECT_EQ(m.layers().at(0).name, "/attn/rotary_1");  // the Add's scope and suffix
    const auto swapped = import(graph(llama3_theta.make_tables(d, s), true), "rope_swapped.onnx");
    EXPECT_EQ(layer_strings(swapped), (std::vector<std::string>{"rotary:theta=500000"}));
    // linear scaling (positions / 2): not the default tables of any theta
    core::rotary scaled = llama3_theta;
    scaled.scaling = core::rotary::scaling_t::linear;
    scaled.factor = 2;
    EXPECT_EQ(kinds(import(graph(scaled.make_tables(d, s), false), "rope_scaled.onnx")),
              (std::vector<std::string>{"parameter", "mul", "slice", "neg", "slice", "concat", "parameter", "mul", "add"}));
    // the tables of positions 3..7 (a decode export's offset): not recognised either
    core::rotary shifted = llama3_theta;
    shifted.offset = 3;
    EXPECT_EQ(kinds(import(graph(shifted.make_tables(d, s), false), "rope_shifted.onnx")).size(), 9u);
}
