// Zoo totals against torchvision's published num_params and GMACs (batch 1), and the transformer
// totals derived in the comments.
#include <gtest/gtest.h>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/zoo.hpp"

using namespace ridgeline::core;

namespace {
cost totals(const char* name, std::optional<shape> input = std::nullopt, std::optional<std::int64_t> batch = std::nullopt) {
    return analyze(build_zoo_model(name, input, batch), dtype::fp32).totals;
}
}  // namespace

TEST(Zoo, TorchvisionPublishedTotals) {
    // torchvision.models docs: num_params and GFLOPS (which are GMACs) at 224x224.
    struct row {
        const char* name;
        std::int64_t params;
        std::int64_t macs;
    };
    const row rows[] = {
        {"resnet18", 11689512, 1814073344},
        {"resnet50", 25557032, 4089184256},
        {"mobilenet_v2", 3504872, 300774272},
        {"vgg16", 138357544, 15470264320},
        {"squeezenet1_0", 1248424, 818924576},  // also the ONNX export's macs
    };
    for (const auto& r : rows) {
        SCOPED_TRACE(r.name);
        const cost c = totals(r.name);
        EXPECT_EQ(c.params, r.params);
        EXPECT_EQ(c.macs, r.macs);
    }
}

TEST(Zoo, OtherTorchvisionModelsMatchPublishedParams) {
    // torchvision num_params: resnet34 21,797,672; resnet101 44,549,160; vgg11 132,863,336;
    // vgg16_bn 138,365,992 (vgg16 + 13 BatchNorms: 2*(2*64 + 2*128 + 3*256 + 6*512) = 8,448);
    // alexnet 61,100,840. GMACs (published to 2 decimals): 3.66, 7.80, 7.61, 15.47, 0.71.
    EXPECT_EQ(totals("resnet34").params, 21797672);
    EXPECT_EQ(totals("resnet101").params, 44549160);
    EXPECT_EQ(totals("vgg11").params, 132863336);
    EXPECT_EQ(totals("vgg16_bn").params, 138365992);
    EXPECT_EQ(totals("alexnet").params, 61100840);
    EXPECT_NEAR(static_cast<double>(totals("resnet34").macs) / 1e9, 3.66, 0.005);
    EXPECT_NEAR(static_cast<double>(totals("resnet101").macs) / 1e9, 7.80, 0.005);
    EXPECT_NEAR(static_cast<double>(totals("vgg11").macs) / 1e9, 7.61, 0.005);
    EXPECT_EQ(totals("vgg16_bn").macs, totals("vgg16").macs);  // BatchNorm has no MACs
    EXPECT_NEAR(static_cast<double>(totals("alexnet").macs) / 1e9, 0.71, 0.005);
}

TEST(Zoo, BertBase) {
    // params: embeddings 30522*768 + 512*768 + 2*768 + LayerNorm 2*768 = 23,837,184
    //   per layer: 4*(768*768 + 768) + (768*3072 + 3072) + (3072*768 + 768) + 2 LayerNorms 2*1536 = 7,087,872
    //   pooler 768*768 + 768 = 590,592; total 23,837,184 + 12*7,087,872 + 590,592 = 109,482,240
    // macs at S=128: per layer 128*(4*768*768 + 2*768*3072) + 2 attention matmuls 2*12*128*128*64
    //   = 905,969,664 + 25,165,824 = 931,135,488; 12 layers + pooler 768*768 = 11,174,215,680
    const cost c = totals("bert_base");
    EXPECT_EQ(c.params, 109482240);
    EXPECT_EQ(c.macs, 11174215680);
    // --batch scales every layer's MACs (the pooler reads one token per sample)
    EXPECT_EQ(totals("bert_base", std::nullopt, 4).macs, 4 * 11174215680LL);
}

TEST(Zoo, Gpt2WithTiedHead) {
    // params: wte 50257*768 = 38,597,376 + wpe 1024*768 = 786,432 + 12 * 7,087,872 + ln_f 1,536
    //   = 124,439,808; the LM head reuses wte and is not counted again.
    // macs at S=1024: per layer 1024*(768*2304 + 768*768 + 2*768*3072) = 7,247,757,312
    //   + attention 2*12*1024*1024*64 = 1,610,612,736; 12 layers = 106,300,440,576
    //   + LM head 1024*768*50257 = 39,523,713,024 -> 145,824,153,600
    const auto a = analyze(build_zoo_model("gpt2"), dtype::fp32);
    EXPECT_EQ(a.totals.params, 124439808);
    EXPECT_EQ(a.totals.macs, 145824153600);
    // the head still shows its own (shared) weight in its row
    EXPECT_EQ(a.layers.back().layer.name, "lm_head");
    EXPECT_EQ(a.layers.back().cost.params, 38597376);
}

TEST(Zoo, BatchAndInputScaleMacs) {
    // macs are linear in the batch
    EXPECT_EQ(totals("resnet18", std::nullopt, 8).macs, 8 * 1814073344LL);
    EXPECT_EQ(totals("resnet18", shape{8, 3, 224, 224}).macs, 8 * 1814073344LL);
    // params do not depend on the input
    EXPECT_EQ(totals("resnet50", shape{2, 3, 160, 160}).params, 25557032);
}

TEST(Zoo, BadRequestsAreErrors) {
    EXPECT_THROW((void)build_zoo_model("resnet19"), error);
    // an input, batch or sequence the model cannot take is the request's mistake (request_error, exit 2)
    EXPECT_THROW((void)build_zoo_model("resnet18", shape{1, 3, 224}), request_error);
    EXPECT_THROW((void)build_zoo_model("resnet18", shape{2, 3, 224, 224}, 4), request_error);
    EXPECT_THROW((void)build_zoo_model("bert_base", shape{1, 513}), request_error);
    // a 3-channel stem cannot take 1-channel images: the error names the layer
    try {
        (void)analyze(build_zoo_model("vgg16", shape{1, 3, 16, 16}), dtype::fp32);
        FAIL();
    } catch (const invalid_layer& e) {
        EXPECT_NE(std::string(e.what()).find("max_pool2d \"features."), std::string::npos) << e.what();
    }
}
