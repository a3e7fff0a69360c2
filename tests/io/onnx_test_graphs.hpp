#pragma once
// Shared by the ONNX import tests: two small graphs (a CNN and the pieces of a transformer block, every node
// named, in a file order like PyTorch's), an order-independent fingerprint of an import, a random
// topological shuffle of a graph's nodes, and the error an import raises.
#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "onnx_builder.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/model.hpp"
#include "ridgeline/io/onnx_import.hpp"
#include "../support/scratch.hpp"

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

/// Everything an import gives, independent of the order of layers: each layer's name, op string and inputs,
/// the weights' keys and values, the totals, and the folded and skipped nodes.
inline std::string fingerprint(const ridgeline::io::onnx_model& m) {
    std::vector<std::string> rows;
    for (const auto& l : m.model.layers()) {
        std::string r = l.name + " " + ridgeline::core::to_string(l.op) + " <-";
        for (const auto& i : l.inputs) r += " " + i;
        rows.push_back(r);
    }
    for (const auto& [key, t] : m.weights->tensors) {
        std::string r = "w " + key + " " + t.dims.to_string();
        for (float v : t.data) r += " " + std::to_string(v);
        rows.push_back(r);
    }
    for (const auto& f : m.folded) rows.push_back("folded " + f.op_type + " " + f.name + " " + f.reason);
    for (const auto& s : m.skipped) rows.push_back("skipped " + s.op_type + " " + s.name + " " + s.reason);
    std::sort(rows.begin(), rows.end());
    const auto a = ridgeline::core::analyze(m.model, ridgeline::core::dtype::fp32);
    std::string out = "params " + std::to_string(a.totals.params) + " macs " + std::to_string(a.totals.macs) +
                      " flops " + std::to_string(a.totals.flops) + " bytes " + std::to_string(a.totals.bytes) + "\n";
    for (const auto& r : rows) out += r + "\n";
    return out;
}

/// The graph's nodes in a random order that is still topological (a random ready node each step).
inline void shuffle_topologically(onnx::GraphProto& g, std::mt19937& rng) {
    std::map<std::string, int> writer;
    for (int i = 0; i < g.node_size(); ++i)
        for (const auto& t : g.node(i).output()) writer[t] = i;
    std::vector<int> order;
    std::vector<bool> placed(static_cast<std::size_t>(g.node_size()), false);
    while (static_cast<int>(order.size()) < g.node_size()) {
        std::vector<int> ready;
        for (int i = 0; i < g.node_size(); ++i) {
            if (placed[static_cast<std::size_t>(i)]) continue;
            bool ok = true;
            for (const auto& t : g.node(i).input())
                if (auto w = writer.find(t); w != writer.end() && !placed[static_cast<std::size_t>(w->second)]) ok = false;
            if (ok) ready.push_back(i);
        }
        const int pick = ready[std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(rng)];
        placed[static_cast<std::size_t>(pick)] = true;
        order.push_back(pick);
    }
    google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
    for (int i : order) *sorted.Add() = g.node(i);
    g.mutable_node()->Swap(&sorted);
}

/// The message of the core::error importing `b` (saved as `file` in the test's scratch folder) raises; empty when
/// it imports.
inline std::string import_error(const onnx_builder& b, const std::string& file) {
    try {
        (void)io::import_onnx(b.save(scratch_dir() / file));
    } catch (const core::error& e) {
        return e.what();
    }
    return "";
}

}  // namespace ridgeline::test
