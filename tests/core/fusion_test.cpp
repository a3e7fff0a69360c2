// The model as a deployment runs it (core/fusion.hpp): which layers join a group, the group's inputs, counts and
// boundary bytes, and what stays apart.
#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "ridgeline/core/fusion.hpp"
#include "ridgeline/core/zoo.hpp"

using namespace ridgeline::core;

namespace {

/// A basic residual block on x [1,16,8,8]: conv1 -> bn1 -> relu1 -> conv2 -> bn2 -> add(bn2, x) -> relu2, the
/// convolutions 16 -> 16, 3x3, padding 1, no bias (torchvision's BasicBlock).
model residual_block() {
    model_builder b("block");
    b.input("x", shape{1, 16, 8, 8});
    const op conv = parse_op("conv2d:in_channels=16,out_channels=16,kernel_size=3,padding=1,bias=false");
    b.then("block.conv1", conv);
    b.then("block.bn1", parse_op("batch_norm2d:num_features=16"));
    b.then("block.relu1", parse_op("relu"));
    b.then("block.conv2", conv);
    const std::string bn2 = b.then("block.bn2", parse_op("batch_norm2d:num_features=16"));
    b.add("block.add", parse_op("add"), {bn2, "x"});
    b.then("block.relu2", parse_op("relu"));
    return b.build();
}

/// A Sequential on x [1,8,4,4] of (name, layer string) pairs, fused.
model_analysis fused_chain(const std::vector<std::pair<std::string, std::string>>& layers) {
    model_builder b("m");
    b.input("x", shape{1, 8, 4, 4});
    for (const auto& [name, text] : layers) b.then(name, parse_op(text));
    return fuse(analyze(b.build(), dtype::fp32));
}

const std::string conv_1x1 = "conv2d:in_channels=8,out_channels=8,kernel_size=1";

}  // namespace

TEST(Fusion, AResidualBlockBecomesTwoGroupsWithTheirBoundaryBytes) {
    const model_analysis plain = analyze(residual_block(), dtype::fp32);
    const model_analysis f = fuse(plain);
    ASSERT_EQ(f.layers.size(), 2u);
    const layer_analysis& g1 = f.layers[0];
    const layer_analysis& g2 = f.layers[1];
    EXPECT_EQ(g1.layer.name, "block.conv1");
    EXPECT_EQ(group_label(g1), "block.conv1+bn1+relu1");
    EXPECT_EQ(group_label(g2), "block.conv2+bn2+add+relu2");
    EXPECT_EQ(g1.layer.inputs, (std::vector<std::string>{"x"}));
    // the second group reads the first (renamed from relu1 to the group's name) and the skip, its add's other operand
    EXPECT_EQ(g2.layer.inputs, (std::vector<std::string>{"block.conv1", "x"}));
    EXPECT_EQ(outside_operand(g2, 2), std::optional<std::size_t>(1));  // member 2 is the add
    EXPECT_EQ(outside_operand(g2, 1), std::nullopt);                   // the batch norm reads the convolution only
    EXPECT_EQ(rule_of(g2, 1), fusion_rule::fold_batch_norm);
    EXPECT_EQ(rule_of(g2, 2), fusion_rule::sum_post_op);
    EXPECT_EQ(rule_of(g2, 3), fusion_rule::activation_post_op);
    EXPECT_EQ(f.outputs, (std::vector<std::string>{"block.conv2"}));
    EXPECT_EQ(g2.output_shape, (shape{1, 16, 8, 8}));
    // counts are the members' sums: conv macs 16*16*9 per output position * 64 positions = 147,456; params 2,304
    // weights + 32 gamma/beta; buffers 32 running mean/var
    EXPECT_EQ(g1.cost.macs, 147456);
    EXPECT_EQ(g1.cost.params, 2304 + 32);
    EXPECT_EQ(g1.cost.buffers, 32);
    EXPECT_EQ(g1.cost.flops, plain.layers[0].cost.flops + plain.layers[1].cost.flops + plain.layers[2].cost.flops);
    // bytes cross the boundary only: input 1,024 + weights 2,304 + folded bias 16 + output 1,024 elements, 4 bytes
    EXPECT_EQ(g1.cost.bytes, (1024 + 2304 + 16 + 1024) * 4);
    // the second group reads the skip too: + 1,024 elements
    EXPECT_EQ(g2.cost.bytes, (1024 + 1024 + 2304 + 16 + 1024) * 4);
    // totals: the same params, buffers and MACs; bytes the rows'
    EXPECT_EQ(f.totals.params, plain.totals.params);
    EXPECT_EQ(f.totals.buffers, plain.totals.buffers);
    EXPECT_EQ(f.totals.macs, plain.totals.macs);
    EXPECT_EQ(f.totals.flops, plain.totals.flops);
    EXPECT_EQ(f.totals.bytes, g1.cost.bytes + g2.cost.bytes);
    EXPECT_EQ(describe_fusion(f),
              "2 fused groups: 2 batch norms folded, 2 activations as post-ops and 1 residual add as sum post-ops");
    // a group is other work than its producer alone: twins never mix the two
    EXPECT_NE(layer_signature(g1, dtype::fp32), layer_signature(plain.layers[0], dtype::fp32));
}

TEST(Fusion, ATensorWithAnotherReaderEndsTheGroup) {
    // conv -> relu, and the convolution's output is also a model output: a deployment must write it, so no group
    model_builder b("m");
    b.input("x", shape{1, 8, 4, 4});
    const std::string c = b.then("conv", parse_op("conv2d:in_channels=8,out_channels=8,kernel_size=1"));
    b.then("relu", parse_op("relu"));
    b.add("other", parse_op("sigmoid"), {c});
    const model_analysis f = fuse(analyze(b.build(), dtype::fp32));
    ASSERT_EQ(f.layers.size(), 3u);
    for (const auto& la : f.layers) EXPECT_TRUE(la.fused.empty()) << la.layer.name;
    // fused with nothing to fuse says so (a --fuse report is told from an unfused one); a model fuse never saw, nothing
    EXPECT_EQ(describe_fusion(f), "nothing to fuse (no layer matches a rule of core/fusion.hpp)");
    EXPECT_EQ(describe_fusion(analyze(b.build(), dtype::fp32)), "");
    EXPECT_EQ(describe_fusion(unfuse(f)), "");
}

TEST(Fusion, ABatchNormAfterAnActivationIsNotFolded) {
    // conv -> relu -> bn: the batch norm cannot fold through the relu; it stays a layer, reading the group
    const model_analysis f = fused_chain({{"conv", conv_1x1}, {"relu", "relu"}, {"bn", "batch_norm2d:num_features=8"}});
    ASSERT_EQ(f.layers.size(), 2u);
    EXPECT_EQ(group_label(f.layers[0]), "conv+relu");
    EXPECT_EQ(f.layers[1].layer.name, "bn");
    EXPECT_EQ(f.layers[1].layer.inputs, (std::vector<std::string>{"conv"}));
}

TEST(Fusion, BroadcastAndSelfAddsStayApart) {
    // linear -> add(y, bias row [32]) broadcasts: not a sum post-op; a linear -> gelu is an activation post-op
    model_builder b("m");
    b.input("row", shape{32});
    b.input("x", shape{2, 8, 32});  // the current tensor: fc reads it
    const std::string y = b.then("fc", parse_op("linear:in_features=32,out_features=32"));
    b.add("shift", parse_op("add"), {y, "row"});
    b.add("fc2", parse_op("linear:in_features=32,out_features=32"), {"shift"});
    b.then("act", parse_op("gelu"));
    const std::string z = b.then("fc3", parse_op("linear:in_features=32,out_features=32"));
    b.add("twice", parse_op("add"), {z, z});  // add(z, z) reads the producer twice
    const model_analysis f = fuse(analyze(b.build(), dtype::fp32));
    std::string labels;
    for (const auto& la : f.layers) labels += group_label(la) + " ";
    ASSERT_EQ(f.layers.size(), 5u) << labels;
    EXPECT_TRUE(f.layers[0].fused.empty());  // fc
    EXPECT_TRUE(f.layers[1].fused.empty());  // shift
    EXPECT_EQ(group_label(f.layers[2]), "fc2+act");
    EXPECT_TRUE(f.layers[3].fused.empty());  // fc3
    EXPECT_EQ(f.layers[4].layer.inputs, (std::vector<std::string>{"fc3", "fc3"}));
    // the linear's output [2,8,32] written and read inside: 512 elements x 2 x 4 bytes leave the members' sum
    const model_analysis plain = analyze(b.build(), dtype::fp32);
    EXPECT_EQ(f.layers[2].cost.bytes, plain.layers[2].cost.bytes + plain.layers[3].cost.bytes - 512 * 2 * 4);
}

TEST(Fusion, Resnet18FusesAsOnnxRuntimeDoes) {
    // torchvision's resnet18: the stem conv+bn+relu; per basic block (8) conv1+bn1+relu and conv2+bn2+add+relu; per
    // downsample (3) conv+bn: 1 + 16 + 3 = 20 groups; 20 batch norms, 1 + 16 relus, 8 residual adds; the fc alone
    const model_analysis plain = analyze(build_zoo_model("resnet18"), dtype::fp32);
    const model_analysis f = fuse(plain);
    EXPECT_EQ(describe_fusion(f),
              "20 fused groups: 20 batch norms folded, 17 activations as post-ops and 8 residual adds as sum post-ops");
    EXPECT_EQ(f.totals.params, 11689512);  // torchvision's count, unchanged by fusing
    EXPECT_EQ(f.totals.macs, plain.totals.macs);
    EXPECT_LT(f.totals.bytes, plain.totals.bytes);
    EXPECT_EQ(f.outputs.size(), 1u);
}

TEST(Fusion, ASumAfterAnActivationAndPastThePostOpLimitStaysApart) {
    // conv -> relu -> add(., x): ONNX Runtime's Conv+Add(+Act) takes the activation after the sum only, so the add
    // stays a layer; conv2 -> 33 relus: the producer and 32 post-ops (oneDNN's chain), the 33rd a layer of its own
    model_builder b("m");
    b.input("x", shape{1, 8, 4, 4});
    b.then("conv", parse_op("conv2d:in_channels=8,out_channels=8,kernel_size=1"));
    const std::string r = b.then("relu", parse_op("relu"));
    b.add("add", parse_op("add"), {r, "x"});
    b.then("conv2", parse_op("conv2d:in_channels=8,out_channels=8,kernel_size=1"));
    for (int i = 0; i < 33; ++i) b.then("act" + std::to_string(i), parse_op("relu"));
    const model_analysis f = fuse(analyze(b.build(), dtype::fp32));
    ASSERT_EQ(f.layers.size(), 4u);
    EXPECT_EQ(group_label(f.layers[0]), "conv+relu");
    EXPECT_EQ(f.layers[1].layer.name, "add");
    EXPECT_EQ(f.layers[2].fused.size(), 1u + max_post_ops);
    EXPECT_EQ(f.layers[3].layer.name, "act32");
    EXPECT_EQ(f.layers[3].layer.inputs, (std::vector<std::string>{"conv2"}));
}

TEST(Fusion, UnfuseGivesTheModelBackForATrainingStep) {
    const model_analysis plain = analyze(build_zoo_model("resnet18"), dtype::fp32);
    const model_analysis back = unfuse(fuse(plain));
    // every layer back, reading what it read (a group's members stand where the group stood: another topological
    // order, the downsample's convolution before the block's second)
    ASSERT_EQ(back.layers.size(), plain.layers.size());
    std::map<std::string, const layer_analysis*> by_name;
    for (const auto& la : plain.layers) by_name[la.layer.name] = &la;
    for (const auto& la : back.layers) {
        ASSERT_TRUE(by_name.count(la.layer.name)) << la.layer.name;
        EXPECT_EQ(la.layer.inputs, by_name.at(la.layer.name)->layer.inputs) << la.layer.name;
        EXPECT_EQ(la.cost, by_name.at(la.layer.name)->cost) << la.layer.name;
    }
    EXPECT_EQ(back.outputs, plain.outputs);
    EXPECT_EQ(back.totals, plain.totals);
}

TEST(Fusion, LabelsCutSharedPrefixesAtDotsAndSlashes) {
    // an ONNX export's node names are paths: the members keep what follows the producer's shared folder
    const model_analysis f = fused_chain({{"/layer1/layer1.0/conv2/Conv", conv_1x1},
                                          {"/layer1/layer1.0/bn2/BatchNormalization", "batch_norm2d:num_features=8"},
                                          {"/layer1/layer1.0/relu_1/Relu", "relu"}});
    ASSERT_EQ(f.layers.size(), 1u);
    EXPECT_EQ(group_label(f.layers[0]), "/layer1/layer1.0/conv2/Conv+bn2/BatchNormalization+relu_1/Relu");
    // torchvision's efficientnet: the names share "/features/features.0/features.0." but a path is cut at its last
    // shared folder, so the member reads "features.0.2/Relu", not "2/Relu"
    const model_analysis e = fused_chain({{"/features/features.0/features.0.0/Conv", conv_1x1},
                                          {"/features/features.0/features.0.2/Relu", "relu"}});
    ASSERT_EQ(e.layers.size(), 1u);
    EXPECT_EQ(group_label(e.layers[0]), "/features/features.0/features.0.0/Conv+features.0.2/Relu");
}
