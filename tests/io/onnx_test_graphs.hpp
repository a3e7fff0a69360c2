#pragma once
// Two small graphs shared by the ONNX import tests (onnx_import_test.cpp, onnx_fold_test.cpp): a CNN and the
// pieces of a transformer block, every node named, in a file order like PyTorch's.
#include "onnx_builder.hpp"

namespace ridgeline::test {

/// A CNN with Conv, BatchNormalization, Relu, Clip, MaxPool, AveragePool, Sigmoid, Tanh, Add, Mul,
/// Concat, Identity, Dropout, GlobalAveragePool, Flatten, Gemm (transB=0) and Softmax.
inline onnx_builder cnn() {
    onnx_builder b;
    b.input("x", {-1, 3, 8, 8});
    b.init_n("conv.w", {4, 3, 3, 3});
    b.init_n("conv.b", {4});
    auto& conv = b.node("Conv", {"x", "conv.w", "conv.b"}, {"c1"}, "/conv/Conv");
    onnx_builder::set(conv, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
    onnx_builder::set(conv, "kernel_shape", std::vector<std::int64_t>{3, 3});
    b.init("bn.s", {4}, {1.0f, 0.5f, 2.0f, 1.5f});
    b.init("bn.b", {4}, {0.1f, 0.2f, -0.1f, 0.0f});
    b.init("bn.m", {4}, {0.0f, 0.1f, 0.2f, 0.3f});
    b.init("bn.v", {4}, {1.0f, 2.0f, 0.5f, 1.0f});
    b.node("BatchNormalization", {"c1", "bn.s", "bn.b", "bn.m", "bn.v"}, {"bn"}, "/bn/BatchNormalization");
    b.node("Relu", {"bn"}, {"r"}, "/relu/Relu");
    b.scalar("lo", 0.0f);
    b.scalar("hi", 6.0f);
    b.node("Clip", {"r", "lo", "hi"}, {"clip"}, "/act/Clip");
    auto& mp = b.node("MaxPool", {"clip"}, {"mp"}, "/pool/MaxPool");
    onnx_builder::set(mp, "kernel_shape", std::vector<std::int64_t>{2, 2});
    onnx_builder::set(mp, "strides", std::vector<std::int64_t>{2, 2});
    auto& ap = b.node("AveragePool", {"mp"}, {"ap"}, "/avg/AveragePool");
    onnx_builder::set(ap, "kernel_shape", std::vector<std::int64_t>{3, 3});
    onnx_builder::set(ap, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
    onnx_builder::set(ap, "count_include_pad", std::int64_t{1});
    b.node("Sigmoid", {"ap"}, {"sg"}, "/sg/Sigmoid");
    b.node("Tanh", {"ap"}, {"th"}, "/th/Tanh");
    b.node("Add", {"sg", "th"}, {"ad"}, "/Add");
    b.node("Mul", {"ad", "sg"}, {"mu"}, "/Mul");
    auto& cat = b.node("Concat", {"mu", "ad"}, {"cat"}, "/Concat");
    onnx_builder::set(cat, "axis", std::int64_t{1});
    b.node("Identity", {"cat"}, {"id"}, "/Identity");
    b.node("Dropout", {"id"}, {"dr"}, "/drop/Dropout");
    b.node("GlobalAveragePool", {"dr"}, {"gap"}, "/GlobalAveragePool");
    b.node("Flatten", {"gap"}, {"fl"}, "/Flatten");
    std::vector<float> w(40);  // B [K=8, N=5] with transB=0
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i);  // w[k][n] = 5k + n
    b.init("fc.w", {8, 5}, w);
    b.init("fc.b", {5}, {0.5f, 0.5f, 0.5f, 0.5f, 0.5f});
    b.node("Gemm", {"fl", "fc.w", "fc.b"}, {"gm"}, "/fc/Gemm");
    b.node("Softmax", {"gm"}, {"out"}, "/Softmax");
    b.output("out");
    return b;
}

/// A transformer block's pieces: Gather (embedding), MatMul + Add (linear with bias), the erf GELU
/// decomposition, LayerNormalization, Reshape, Transpose (a swap and a 3-cycle), MatMul of two
/// activations, Mul by a scalar (scale), Div by a scalar, and com.microsoft's Gelu.
inline onnx_builder transformer() {
    onnx_builder b(17);
    b.input("ids", {-1, 4}, onnx::TensorProto::INT64);
    b.init_n("wte", {10, 6});
    b.node("Gather", {"wte", "ids"}, {"emb"}, "/wte/Gather");
    b.init_n("w1", {6, 6});
    b.init_n("b1", {6});
    b.node("MatMul", {"emb", "w1"}, {"mm"}, "/fc1/MatMul");
    b.node("Add", {"b1", "mm"}, {"lin"}, "/fc1/Add");
    b.scalar("sqrt2", 1.4142135f);
    b.scalar("one", 1.0f);
    b.scalar("half", 0.5f);
    b.node("Div", {"lin", "sqrt2"}, {"g1"}, "/act/Div");
    b.node("Erf", {"g1"}, {"g2"}, "/act/Erf");
    b.node("Add", {"g2", "one"}, {"g3"}, "/act/Add");
    b.node("Mul", {"lin", "g3"}, {"g4"}, "/act/Mul");
    b.node("Mul", {"g4", "half"}, {"ge"}, "/act/Mul_1");
    b.init("ln.s", {6}, {1, 1, 1, 1, 1, 1});
    b.init("ln.b", {6}, {0, 0, 0, 0, 0, 0});
    auto& ln = b.node("LayerNormalization", {"ge", "ln.s", "ln.b"}, {"ln"}, "/ln/LayerNormalization");
    onnx_builder::set(ln, "epsilon", 1e-6f);
    b.init_ints("shape", {4}, {0, 4, 2, 3});
    b.node("Reshape", {"ln", "shape"}, {"rs"}, "/Reshape");
    auto& t1 = b.node("Transpose", {"rs"}, {"tr"}, "/Transpose");
    onnx_builder::set(t1, "perm", std::vector<std::int64_t>{0, 2, 1, 3});  // [1,2,4,3]
    auto& t2 = b.node("Transpose", {"tr"}, {"tr2"}, "/Transpose_1");
    onnx_builder::set(t2, "perm", std::vector<std::int64_t>{0, 3, 1, 2});  // [1,3,2,4]: a 3-cycle, two swaps
    auto& t3 = b.node("Transpose", {"tr2"}, {"tr3"}, "/Transpose_2");
    onnx_builder::set(t3, "perm", std::vector<std::int64_t>{0, 1, 3, 2});  // [1,3,4,2]
    b.node("MatMul", {"tr2", "tr3"}, {"att"}, "/MatMul");                  // [1,3,2,2]
    b.scalar("f", 0.25f);
    b.node("Mul", {"att", "f"}, {"sc"}, "/Mul");
    b.scalar("d", 2.0f);
    b.node("Div", {"sc", "d"}, {"dv"}, "/Div");
    auto& ms = b.node("Gelu", {"dv"}, {"out"}, "/ms/Gelu");
    ms.set_domain("com.microsoft");
    b.output("out");
    auto* o = b.proto().add_opset_import();
    o->set_domain("com.microsoft");
    o->set_version(1);
    return b;
}

}  // namespace ridgeline::test
