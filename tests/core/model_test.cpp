// The model DAG: validation errors, tied parameters, and every layer of resnet18 by hand.
#include <gtest/gtest.h>

#include <map>

#include "helpers.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/zoo.hpp"

using namespace ridgeline::core;

namespace {
std::string error_of(const model& m) {
    try {
        (void)analyze(m, dtype::fp32);
    } catch (const error& e) {
        return e.what();
    }
    return "(no error)";
}
op relu_op() { return parse_op("relu"); }
}  // namespace

TEST(Model, DagErrorsNameTheCulprit) {
    {
        model m("m");
        m.add_input({"x", shape{1, 4}});
        m.add_layer({"a", relu_op(), {"b"}, {}});
        m.add_layer({"b", relu_op(), {"a"}, {}});
        EXPECT_EQ(error_of(m), "model \"m\": the layers form a cycle (involving \"a\", \"b\")");
    }
    {
        model m("m");
        m.add_input({"x", shape{1, 4}});
        m.add_layer({"a", relu_op(), {"y"}, {}});
        EXPECT_EQ(error_of(m), "relu \"a\": reads unknown tensor \"y\"");
    }
    {
        model m("m");
        m.add_input({"x", shape{1, 4}});
        m.add_layer({"a", relu_op(), {"x"}, {}});
        m.add_layer({"a", relu_op(), {"x"}, {}});
        EXPECT_EQ(error_of(m), "model \"m\": duplicate tensor name \"a\"");
    }
    {
        model m("m");
        m.add_input({"x", shape{1, 4}});
        m.add_layer({"x", relu_op(), {"x"}, {}});
        EXPECT_EQ(error_of(m), "model \"m\": duplicate tensor name \"x\"");
    }
    {
        model m("m");
        m.add_input({"x", shape{1, 4}});
        m.add_layer({"sum", parse_op("add"), {"x"}, {}});
        EXPECT_EQ(error_of(m), "add \"sum\": takes 2 inputs, got 1");
    }
    {
        model m("m");
        m.add_input({"x", shape{1, 4}});
        EXPECT_EQ(error_of(m), "model \"m\": has no layers");
    }
    {
        model m("m");
        m.add_input({"ids", shape{1, 4}, true});
        m.add_layer({"fc", parse_op("linear:in_features=4,out_features=2"), {"ids"}, {}});
        EXPECT_EQ(error_of(m), "linear \"fc\": reads token ids \"ids\"; only embedding layers read ids");
    }
    {  // a declared output must be a layer's tensor: a model input or an unknown name is refused by name
        model m("m");
        m.add_input({"x", shape{1, 4}});
        m.add_layer({"a", relu_op(), {"x"}, {}});
        m.add_layer({"b", relu_op(), {"a"}, {}});
        m.add_output("x");
        EXPECT_EQ(error_of(m), "model \"m\": output \"x\" names no layer (an output is a layer's tensor)");
        model n("n");
        n.add_input({"x", shape{1, 4}});
        n.add_layer({"a", relu_op(), {"x"}, {}});
        n.add_output("nope");
        EXPECT_EQ(error_of(n), "model \"n\": output \"nope\" names no layer (an output is a layer's tensor)");
    }
}

TEST(Model, ADeclaredOutputALayerReadsIsAnOutputInLayerOrder) {
    // a -> b -> c: only c is unread; a declared too, so the outputs are a and c, in layer order, each once
    model m("m");
    m.add_input({"x", shape{1, 4}});
    m.add_layer({"a", relu_op(), {"x"}, {}});
    m.add_layer({"b", relu_op(), {"a"}, {}});
    m.add_layer({"c", relu_op(), {"b"}, {}});
    m.add_output("c");
    m.add_output("a");
    EXPECT_EQ(analyze(m, dtype::fp32).outputs, (std::vector<std::string>{"a", "c"}));
}

TEST(Model, LayersMayBeListedInAnyOrder) {
    // b reads a, listed first: analysis sorts topologically; outputs are the unread tensors
    model m("m");
    m.add_input({"x", shape{2, 4}});
    m.add_layer({"b", parse_op("linear:in_features=3,out_features=1"), {"a"}, {}});
    m.add_layer({"a", parse_op("linear:in_features=4,out_features=3"), {"x"}, {}});
    const auto an = analyze(m, dtype::fp32);
    ASSERT_EQ(an.layers.size(), 2u);
    EXPECT_EQ(an.layers[0].layer.name, "a");
    EXPECT_EQ(an.layers[1].layer.name, "b");
    EXPECT_EQ(an.outputs, std::vector<std::string>{"b"});
    // macs 2*4*3 + 2*3*1 = 30
    EXPECT_EQ(an.totals.macs, 30);
}

TEST(Model, TiedTensorsCountOnce) {
    // embedding 10x4 (40 params) and a head 4->10 without bias sharing its weight: 40 in total, not 80
    model_builder b("tied");
    b.input("ids", shape{1, 3}, true);
    b.then("emb", parse_op("embedding:num_embeddings=10,embedding_dim=4"));
    b.then("head", parse_op("linear:in_features=4,out_features=10,bias=false"));
    b.tie_last("weight", "emb.weight");
    const auto a = analyze(b.build(), dtype::fp32);
    EXPECT_EQ(a.totals.params, 40);
    EXPECT_EQ(a.layers[1].cost.params, 40);
    // a tie of mismatched sizes is an error
    model_builder bad("bad");
    bad.input("ids", shape{1, 3}, true);
    bad.then("emb", parse_op("embedding:num_embeddings=10,embedding_dim=4"));
    bad.then("head", parse_op("linear:in_features=4,out_features=9,bias=false"));
    bad.tie_last("weight", "emb.weight");
    EXPECT_EQ(error_of(bad.build()),
              "linear \"head\": tied tensor \"emb.weight\" has 36 elements here but 40 elsewhere");
}

TEST(Model, SameModelTwiceGivesIdenticalCounts) {
    const auto a = analyze(build_zoo_model("mobilenet_v2"), dtype::fp32);
    const auto b = analyze(build_zoo_model("mobilenet_v2"), dtype::fp32);
    EXPECT_EQ(a.totals, b.totals);
    ASSERT_EQ(a.layers.size(), b.layers.size());
    for (std::size_t i = 0; i < a.layers.size(); ++i) EXPECT_EQ(a.layers[i].cost, b.layers[i].cost);
}

// ---------------------------------------------------------------- resnet18, every layer by hand
//
// Derivation. Stem: conv1 3->64 k7 s2 p3 on 224: (224+6-7)/2+1 = 112; maxpool k3 s2 p1: (112+2-3)/2+1 = 56.
// Stage s (1..4) has C = 64*2^(s-1) channels at spatial size S = 56/2^(s-1) (56, 28, 14, 7).
// Each 3x3 conv: macs = C*S*S * Cin*9, params Cin*9*C; first conv of stages 2-4 reads Cin = C/2 at 2S
// with stride 2; downsample 1x1 s2: macs C*S*S*C/2. BatchNorm: params 2C, buffers 2C, flops 2*C*S*S.
// ReLU / add: flops C*S*S. fc: 512*1000 macs, 513,000 params.
// bytes (fp32) = 4 * (input elements + params + buffers + output elements).
TEST(Model, Resnet18EveryLayerByHand) {
    std::map<std::string, ridgeline::test::expected_layer> want;
    // stem
    want["conv1"] = {9408, 0, 64 * 112 * 112 * 147LL, 2 * 64 * 112 * 112 * 147LL,
                     4 * (3 * 224 * 224 + 9408 + 64 * 112 * 112LL), shape{1, 64, 112, 112}};
    want["bn1"] = {128, 128, 0, 2 * 64 * 112 * 112LL, 4 * (2 * 64 * 112 * 112LL + 256), shape{1, 64, 112, 112}};
    want["relu"] = {0, 0, 0, 64 * 112 * 112LL, 4 * 2 * 64 * 112 * 112LL, shape{1, 64, 112, 112}};
    want["maxpool"] = {0, 0, 0, 8 * 64 * 56 * 56LL, 4 * (64 * 112 * 112LL + 64 * 56 * 56LL), shape{1, 64, 56, 56}};
    for (int s = 1; s <= 4; ++s) {
        const std::int64_t C = 64LL << (s - 1), S = 56 >> (s - 1), n = C * S * S;
        for (int blk = 0; blk < 2; ++blk) {
            const std::string p = "layer" + std::to_string(s) + "." + std::to_string(blk) + ".";
            const bool down = s > 1 && blk == 0;
            const std::int64_t cin = down ? C / 2 : C;
            const std::int64_t in_elems = down ? cin * (2 * S) * (2 * S) : n;
            want[p + "conv1"] = {cin * 9 * C, 0, n * cin * 9, 2 * n * cin * 9, 4 * (in_elems + cin * 9 * C + n),
                                 shape{1, C, S, S}};
            want[p + "conv2"] = {C * 9 * C, 0, n * C * 9, 2 * n * C * 9, 4 * (n + C * 9 * C + n), shape{1, C, S, S}};
            for (const char* bn : {"bn1", "bn2"})
                want[p + bn] = {2 * C, 2 * C, 0, 2 * n, 4 * (2 * n + 4 * C), shape{1, C, S, S}};
            for (const char* r : {"relu1", "relu2"}) want[p + r] = {0, 0, 0, n, 4 * 2 * n, shape{1, C, S, S}};
            want[p + "add"] = {0, 0, 0, n, 4 * 3 * n, shape{1, C, S, S}};
            if (down) {
                want[p + "downsample.0"] = {cin * C, 0, n * cin, 2 * n * cin, 4 * (in_elems + cin * C + n),
                                            shape{1, C, S, S}};
                want[p + "downsample.1"] = {2 * C, 2 * C, 0, 2 * n, 4 * (2 * n + 4 * C), shape{1, C, S, S}};
            }
        }
    }
    // global average pool: 49 per output element (48 adds + 1 divide)
    want["avgpool"] = {0, 0, 0, 512 * 49, 4 * (512 * 49 + 512), shape{1, 512, 1, 1}};
    want["flatten"] = {0, 0, 0, 0, 0, shape{1, 512}};
    want["fc"] = {513000, 0, 512000, 2 * 512000 + 1000, 4 * (512 + 513000 + 1000), shape{1, 1000}};

    const auto a = analyze(build_zoo_model("resnet18"), dtype::fp32);
    ASSERT_EQ(a.layers.size(), want.size());
    for (const auto& l : a.layers) {
        SCOPED_TRACE(l.layer.name);
        auto it = want.find(l.layer.name);
        ASSERT_NE(it, want.end());
        ridgeline::test::expect_layer(l, it->second);  // every field: the map gives them all
    }
    // totals: conv macs 118,013,952 + 4*115,605,504 + 3*(57,802,752 + 3*115,605,504 + 6,422,528) + fc 512,000
    EXPECT_EQ(a.totals.macs, 1814073344);
    EXPECT_EQ(a.totals.params, 11689512);
    // buffers: 2 per BatchNorm channel: 2*(64 + 4*64 + 5*128 + 5*256 + 5*512) = 9,600
    EXPECT_EQ(a.totals.buffers, 9600);
}

// A tensor read twice is read once (docs/conventions.md, "A tensor read twice"): bytes count each storage once per
// layer, views resolved to their source.
TEST(Model, ATensorReadTwiceIsCountedOnce) {
    {
        // add(x, x), x 1x64x32x32 fp32 = 65,536 elements: read x once (262,144 B) + write 262,144 B = 524,288
        model_builder b("twice");
        b.input("x", shape{1, 64, 32, 32});
        b.add("a", parse_op("add"), {"x", "x"});
        EXPECT_EQ(analyze(b.build(), dtype::fp32).layers.at(0).cost.bytes, 524288);
    }
    {
        // matmul(x, transpose(x)), x 1x128x64 = 8,192 elements: read x once (32,768 B) + write 1x128x128 (65,536 B)
        // = 98,304; the transpose is a view of x (0 bytes)
        model_builder b("gram");
        b.input("x", shape{1, 128, 64});
        b.add("t", parse_op("transpose:dim0=1,dim1=2"), {"x"});
        b.add("mm", parse_op("matmul"), {"x", "t"});
        const auto a = analyze(b.build(), dtype::fp32);
        EXPECT_EQ(a.layers.at(0).cost.bytes, 0);
        EXPECT_EQ(a.layers.at(1).cost.bytes, 98304);
        EXPECT_EQ(a.totals.bytes, 98304);
    }
    {
        // concat of two disjoint halves of x (2x8 fp16, 16 elements): each half counts its own 8 elements, the
        // output 16: (8 + 8 + 16) * 2 B = 64; halves [0, 6) and [2, 8) overlap: 12 + 12 = 24 elements read from a
        // source of 16, counted as 16 (an upper bound on their union, 16): (16 + 24) * 2 = 80
        model_builder b("halves");
        b.input("x", shape{2, 8});
        b.add("lo", parse_op("slice:dim=1,end=4"), {"x"});
        b.add("hi", parse_op("slice:dim=1,start=4"), {"x"});
        b.add("cat", parse_op("concat:dim=1"), {"lo", "hi"});
        b.add("a", parse_op("slice:dim=1,end=6"), {"x"});
        b.add("b", parse_op("slice:dim=1,start=2"), {"x"});
        b.add("cat2", parse_op("concat:dim=1"), {"a", "b"});
        const auto a = analyze(b.build(), dtype::fp16);
        EXPECT_EQ(a.layers.at(2).cost.bytes, 64);
        EXPECT_EQ(a.layers.at(5).cost.bytes, 80);
    }
    {
        // the same slice read twice: s = x[:, 1:4] of x 2x6x4x5 (240 elements) has 120; add(s, s) reads s once and
        // writes 120: (120 + 120) * 4 = 960. u = x[::2] of x 6x4 is 3x4 (12); matmul(u, transpose(u)) reads u once
        // (the transpose keeps u's element set) and writes 3x3: (12 + 9) * 4 = 84
        model_builder b("slices");
        b.input("x", shape{2, 6, 4, 5});
        b.input("y", shape{6, 4});
        b.add("s", parse_op("slice:dim=1,start=1,end=4"), {"x"});
        b.add("sum", parse_op("add"), {"s", "s"});
        b.add("u", parse_op("slice:dim=0,step=2"), {"y"});
        b.add("ut", parse_op("transpose:dim0=0,dim1=1"), {"u"});
        b.add("gram", parse_op("matmul"), {"u", "ut"});
        const auto a = analyze(b.build(), dtype::fp32);
        EXPECT_EQ(a.layers.at(1).cost.bytes, 960);
        EXPECT_EQ(a.layers.at(4).cost.bytes, 84);
    }
    {
        // two different tensors of the same shape are two reads: add(x, y) = (3 * 65,536) * 4 = 786,432
        model_builder b("two");
        b.input("x", shape{1, 64, 32, 32});
        b.input("y", shape{1, 64, 32, 32});
        b.add("a", parse_op("add"), {"x", "y"});
        EXPECT_EQ(analyze(b.build(), dtype::fp32).layers.at(0).cost.bytes, 786432);
    }
}
