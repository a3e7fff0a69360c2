// Writes the seed corpus of fuzz_onnx (fuzz/corpus/onnx/): a few small models that together use every
// node type the importer maps, so the fuzzer starts from inputs that get past the protobuf parser.
//   cmake --build build/fuzz --target fuzz_onnx_seeds && build/fuzz/fuzz/fuzz_onnx_seeds fuzz/corpus/onnx
#include <cstdint>
#include <filesystem>
#include <iostream>

#include "../tests/io/onnx_builder.hpp"

using ridgeline::test::onnx_builder;
using tp = onnx::TensorProto;
using ints = std::vector<std::int64_t>;

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: fuzz_onnx_seeds FOLDER\n";
        return 2;
    }
    const std::filesystem::path dir = argv[1];
    {  // Conv, BatchNormalization, Relu, Clip, pools, Add, Mul, Concat, Identity, Dropout, Flatten, Gemm, Softmax
        onnx_builder b;
        b.input("x", {-1, 2, 6, 6});
        b.init_n("w", {3, 2, 3, 3});
        b.init_n("cb", {3});
        auto& conv = b.node("Conv", {"x", "w", "cb"}, {"c"});
        onnx_builder::set(conv, "pads", ints{1, 1, 1, 1});
        for (const char* n : {"s", "bb", "m", "v"}) b.init("bn." + std::string(n), {3}, {1.0f, 0.5f, 2.0f});
        b.node("BatchNormalization", {"c", "bn.s", "bn.bb", "bn.m", "bn.v"}, {"bn"});
        b.node("Relu", {"bn"}, {"r"});
        b.scalar("lo", 0.0f);
        b.scalar("hi", 6.0f);
        b.node("Clip", {"r", "lo", "hi"}, {"cl"});
        auto& mp = b.node("MaxPool", {"cl"}, {"mp"});
        onnx_builder::set(mp, "kernel_shape", ints{2, 2});
        onnx_builder::set(mp, "strides", ints{2, 2});
        auto& ap = b.node("AveragePool", {"mp"}, {"ap"});
        onnx_builder::set(ap, "kernel_shape", ints{3, 3});
        onnx_builder::set(ap, "auto_pad", std::string("SAME_UPPER"));
        b.node("Sigmoid", {"ap"}, {"sg"});
        b.node("Tanh", {"ap"}, {"th"});
        b.node("Add", {"sg", "th"}, {"ad"});
        b.node("Mul", {"ad", "sg"}, {"mu"});
        auto& cat = b.node("Concat", {"mu", "ad"}, {"cat"});
        onnx_builder::set(cat, "axis", std::int64_t{1});
        b.node("Identity", {"cat"}, {"id"});
        b.node("Dropout", {"id"}, {"dr"});
        b.node("GlobalAveragePool", {"dr"}, {"gap"});
        b.node("Flatten", {"gap"}, {"fl"});
        b.init_n("fc.w", {6, 4});
        b.init_n("fc.b", {4});
        b.node("Gemm", {"fl", "fc.w", "fc.b"}, {"gm"});
        b.node("Softmax", {"gm"}, {"out"});
        b.output("out");
        b.save(dir / "cnn.onnx");
    }
    {  // Gather, MatMul + Add, the erf GELU, LayerNormalization, Reshape, Transpose, MatMul, Mul/Div by a scalar
        onnx_builder b(17);
        b.input("ids", {-1, 4}, tp::INT64);
        b.init_n("wte", {10, 6});
        b.node("Gather", {"wte", "ids"}, {"emb"});
        b.init_n("w1", {6, 6});
        b.init_n("b1", {6});
        b.node("MatMul", {"emb", "w1"}, {"mm"});
        b.node("Add", {"mm", "b1"}, {"lin"});
        b.scalar("sqrt2", 1.4142135f);
        b.scalar("one", 1.0f);
        b.scalar("half", 0.5f);
        b.node("Div", {"lin", "sqrt2"}, {"g1"});
        b.node("Erf", {"g1"}, {"g2"});
        b.node("Add", {"g2", "one"}, {"g3"});
        b.node("Mul", {"lin", "g3"}, {"g4"});
        b.node("Mul", {"g4", "half"}, {"ge"});
        b.init("ln.s", {6}, {1, 1, 1, 1, 1, 1});
        b.init("ln.b", {6}, {0, 0, 0, 0, 0, 0});
        b.node("LayerNormalization", {"ge", "ln.s", "ln.b"}, {"ln"});
        b.init_ints("shape", {4}, {0, 4, 2, 3});
        b.node("Reshape", {"ln", "shape"}, {"rs"});
        auto& t1 = b.node("Transpose", {"rs"}, {"tr"});
        onnx_builder::set(t1, "perm", ints{0, 2, 3, 1});
        auto& t2 = b.node("Transpose", {"tr"}, {"tt"});
        onnx_builder::set(t2, "perm", ints{0, 1, 3, 2});
        b.node("MatMul", {"tr", "tt"}, {"att"});
        b.scalar("f", 0.25f);
        b.node("Mul", {"att", "f"}, {"sc"});
        b.scalar("d", 2.0f);
        b.node("Div", {"sc", "d"}, {"out"});
        b.output("out");
        b.save(dir / "transformer.onnx");
    }
    {  // an initializer shared through Identity, and one in an external data file (absent: an error path)
        onnx_builder b;
        b.input("x", {1, 3, 4, 4});
        b.init_n("w", {3, 3, 1, 1});
        b.node("Conv", {"x", "w"}, {"c1"});
        b.node("Identity", {"w"}, {"w2"});
        b.node("Conv", {"c1", "w2"}, {"c2"});
        b.node("Flatten", {"c2"}, {"f"});
        b.init_external("fc.w", {2, 48}, {{"location", "weights.bin"}, {"offset", "0"}, {"length", "384"}});
        auto& g = b.node("Gemm", {"f", "fc.w"}, {"y"});
        onnx_builder::set(g, "transB", std::int64_t{1});
        b.output("y");
        b.save(dir / "shared_external.onnx");
    }
    {  // folding and PyTorch's node order: shape arithmetic (Shape, Gather, Unsqueeze, Concat, Equal,
       // ConstantOfShape, Where, Slice, Mul, Cast) into a Reshape target, constants after the pattern start,
       // HardSwish, HardSigmoid and Sigmoid + Mul (silu)
        onnx_builder b(14);
        b.input("x", {1, 4, 2, 2});
        b.node("HardSwish", {"x"}, {"hs"});
        auto& hsig = b.node("HardSigmoid", {"hs"}, {"hg"});
        onnx_builder::set(hsig, "alpha", 1.0f / 6.0f);
        b.node("Sigmoid", {"hg"}, {"sg"});
        b.node("Mul", {"hg", "sg"}, {"si"});
        b.node("Shape", {"si"}, {"s"});
        b.init_ints("i0", {}, {0});
        b.node("Gather", {"s", "i0"}, {"n"});
        b.init_ints("ax", {1}, {0});
        b.node("Unsqueeze", {"n", "ax"}, {"n1"});
        b.init_ints("st", {1}, {1});
        b.init_ints("en", {1}, {INT64_MAX});
        b.node("Slice", {"s", "st", "en"}, {"tail"});
        b.init_ints("m1", {}, {-1});
        b.node("Equal", {"tail", "m1"}, {"eq"});
        b.node("Shape", {"tail"}, {"ts"});
        b.node("ConstantOfShape", {"ts"}, {"z"});
        b.node("Cast", {"z"}, {"zi"});
        onnx_builder::set(b.proto().mutable_graph()->mutable_node()->at(b.proto().graph().node_size() - 1), "to",
                          std::int64_t{tp::INT64});
        b.node("Where", {"eq", "zi", "tail"}, {"w"});
        b.node("Mul", {"w", "ax"}, {"w0"});
        b.node("Concat", {"n1", "m1u"}, {"t"});
        onnx_builder::set(b.proto().mutable_graph()->mutable_node()->at(b.proto().graph().node_size() - 1), "axis",
                          std::int64_t{0});
        b.init_ints("m1u", {1}, {-1});
        b.node("Reshape", {"si", "t"}, {"y"});
        b.output("y");
        b.save(dir / "folding.onnx");
    }
    std::cout << "wrote 4 seeds to " << dir.string() << "\n";
    return 0;
}
