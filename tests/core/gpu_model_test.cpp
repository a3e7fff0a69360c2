// core/gpu_model.hpp: the op-class models of a GPU on hand-computed layers.
#include <gtest/gtest.h>

#include <cmath>

#include "ridgeline/core/datasheet.hpp"
#include "ridgeline/core/gpu_model.hpp"
#include "ridgeline/core/layer.hpp"
#include "ridgeline/core/model.hpp"

namespace ridgeline::core {
namespace {

// An H100 SXM5 in bf16 (datasheet): 132 SMs, 989.5 TFLOP/s dense, 3350 GB/s; a large GEMM attains 0.8 of the peak,
// a stream 0.9 of the bandwidth; a launch 5 us. One SM's share of the attained peak: 0.8 x 989,500 GFLOP/s / 132 =
// 5.9970e9 FLOP per ms.
gpu_spec h100_bf16() { return gpu_spec_of(datasheet_by_name("h100"), dtype::bf16, 0.005); }
constexpr double per_sm = 0.8 * 989'500e6 / 132;

TEST(GpuModel, TheDatasheetGivesTheSpec) {
    const gpu_spec s = h100_bf16();
    EXPECT_EQ(s.sms, 132);
    EXPECT_DOUBLE_EQ(s.matrix_gflops, 989'500.0);
    EXPECT_DOUBLE_EQ(s.vector_gflops, 67'000.0);
    EXPECT_DOUBLE_EQ(s.memory_gbs, 3350.0);
    EXPECT_TRUE(s.flash_attention);                 // bf16 on compute capability 9.0
    EXPECT_DOUBLE_EQ(s.flash_fraction, 0.35);       // FlashAttention-2 on Hopper
    EXPECT_FALSE(gpu_spec_of(datasheet_by_name("h100"), dtype::fp32, 0.005).flash_attention);  // no fp32 flash kernel
    EXPECT_FALSE(gpu_spec_of(datasheet_by_name("t4"), dtype::fp16, 0.005).flash_attention);    // Turing: none
    EXPECT_DOUBLE_EQ(gpu_spec_of(datasheet_by_name("a100-pcie-40gb"), dtype::fp16, 0.005).flash_fraction, 0.60);
}

TEST(GpuModel, ALargeGemmRunsInWavesOfTiles) {
    // 8192^3 bf16: 128x128 tiles: 64 x 64 = 4,096 tiles, ceil(4096 / 132) = 32 waves (31.03 full), each tile
    // 2 x 128 x 128 x 8192 = 268,435,456 FLOP = 0.044762 ms on one SM; 256x128 tiles: 2,048 in 16 waves of twice the
    // work: the same 1.43238 ms. Bytes 3 x 8192^2 x 2 = 402,653,184 at 0.9 x 3350 GB/s = 0.13355 ms, under it.
    const double bytes = 3.0 * 8192 * 8192 * 2;
    const gpu_estimate e = gemm_on_gpu({1, 8192, 8192, 8192}, bytes, h100_bf16());
    const double tile_ms = 2.0 * 128 * 128 * 8192 / per_sm;
    EXPECT_NEAR(e.compute_ms, 32 * tile_ms, 1e-9);
    EXPECT_NEAR(e.memory_ms, bytes / (0.9 * 3350e6), 1e-12);
    EXPECT_NEAR(e.time_ms, 0.005 + 32 * tile_ms, 1e-9);
    EXPECT_EQ(e.model, "gemm");
    // 2 x 8192^3 FLOP in 1.43738 ms: 765 TFLOP/s, 0.77 of the peak (the wave of 4,096 / 132 = 31.03 rounds up)
    EXPECT_NEAR(2.0 * 8192 * 8192 * 8192 / (e.time_ms * 1e9), 765.0, 1.0);
}

TEST(GpuModel, OneRowPastAFullWaveCostsAWave) {
    // 16,896 = 132 x 128 rows, 128 columns, k 4096: 132 tiles of 128x128 fill one wave: 2 x 128 x 128 x 4096 FLOP on
    // one SM. One row more: 133 tiles, 2 waves (or 67 tiles of 256x128, one wave of twice the work): twice the time
    const gpu_spec s = h100_bf16();
    const double tile_ms = 2.0 * 128 * 128 * 4096 / per_sm;
    EXPECT_NEAR(gemm_on_gpu({1, 16'896, 128, 4096}, 0, s).compute_ms, tile_ms, 1e-12);
    EXPECT_NEAR(gemm_on_gpu({1, 16'897, 128, 4096}, 0, s).compute_ms, 2 * tile_ms, 1e-12);
}

TEST(GpuModel, FewTilesSplitK) {
    // 128 x 128 x 65,536: one tile; split-K min(132 / 1, 65,536 / 128) = 132 ways, one wave of slices of 65,536 / 132
    const gpu_estimate e = gemm_on_gpu({1, 128, 128, 65'536}, 0, h100_bf16());
    EXPECT_NEAR(e.compute_ms, 2.0 * 128 * 128 * (65'536.0 / 132) / per_sm, 1e-12);
    EXPECT_NE(e.detail.find("split-K 132 ways"), std::string::npos) << e.detail;
}

TEST(GpuModel, ADecodeProjectionIsASmallMKernelWhoseBytesDecide) {
    // one decode token through a 4096 -> 4096 bf16 projection: 1 row, no tile padding: 2 x 4096^2 FLOP at 0.8 x
    // 989.5 TFLOP/s = 0.0000424 ms; its weights, 4096^2 x 2 B = 33.554 MB (+ 16 kB in and out), at 0.9 x 3350 GB/s =
    // 0.011134 ms decide
    const gpu_spec s = h100_bf16();
    const double bytes = 4096.0 * 4096 * 2 + 2 * 4096 * 2;
    const gpu_estimate one = gemm_on_gpu({1, 1, 4096, 4096}, bytes, s);
    EXPECT_NEAR(one.compute_ms, 2.0 * 4096 * 4096 / (0.8 * 989'500e6), 1e-15);
    EXPECT_NEAR(one.time_ms, 0.005 + bytes / (0.9 * 3350e6), 1e-12);
    EXPECT_EQ(one.detail.rfind("its bytes decide", 0), 0U) << one.detail;
    EXPECT_NE(one.detail.find("small-M kernel (1 rows"), std::string::npos) << one.detail;
    // 16 rows still fill one MMA (m16n8k16): 16 x the FLOPs, no padding
    EXPECT_NEAR(gemm_on_gpu({1, 16, 4096, 4096}, bytes, s).compute_ms, 16 * one.compute_ms, 1e-12);
    // 17 rows take the tiles of a large GEMM, padded to 64 rows at least: more arithmetic time than 17 rows' share
    const gpu_estimate tiled = gemm_on_gpu({1, 17, 4096, 4096}, bytes, s);
    EXPECT_NE(tiled.detail.find("tiles of"), std::string::npos) << tiled.detail;
    EXPECT_GT(tiled.compute_ms, 17 * one.compute_ms);
}

TEST(GpuModel, AStreamMovesItsBytesAtTheAttainedBandwidth) {
    // 1 GB at 0.9 x 3350 GB/s: 1e9 / 3.015e9 per ms = 0.33167 ms, plus the launch
    const gpu_estimate e = stream_on_gpu(1e9, h100_bf16());
    EXPECT_NEAR(e.time_ms, 0.005 + 1e9 / (0.9 * 3350e6), 1e-12);
    EXPECT_EQ(e.model, "stream");
}

TEST(GpuModel, EachLayerByItsClass) {
    const gpu_spec s = h100_bf16();
    // a causal flash attention, bf16: q [1, 32, 4096, 128], k and v alike: 32 x ceil(4096 / 128) = 1,024 tiles, 8
    // waves of 132 (1.03125 of the tiles' share), the executed pairs' FLOPs (4 x 32 x 128 x 4096 x 4097 / 2) at 0.35 of
    // the peak
    const shape q{1, 32, 4096, 128};
    model_builder mb("attn");
    mb.input("q", q);
    mb.input("k", q);
    mb.input("v", q);
    attention a;
    a.is_causal = true;
    mb.add("attention", a, {"q", "k", "v"});
    const model_analysis an = analyze(mb.build(), dtype::bf16);
    const layer_analysis& la = an.layers.at(0);
    const gpu_estimate fa = estimate_on_gpu(la.layer.op, la.input_shapes, la.output_shape, dtype::bf16, la.cost, s);
    const double executed = 4.0 * 32 * 128 * (4096.0 * 4097 / 2);
    EXPECT_EQ(la.cost.executed_flops(), static_cast<std::int64_t>(executed));
    EXPECT_EQ(fa.model, "flash attention");
    EXPECT_NEAR(fa.compute_ms, executed / (0.35 * 989'500e6) * (8.0 * 132 / 1024), 1e-9);
    // in fp32 the math path: two GEMMs, two passes over the 1 x 32 x 4096 x 4096 scores, four launches
    const gpu_spec f32 = gpu_spec_of(datasheet_by_name("h100"), dtype::fp32, 0.005);
    const model_analysis an32 = analyze(mb.build(), dtype::fp32);
    const layer_analysis& l32 = an32.layers.at(0);
    const gpu_estimate math = estimate_on_gpu(l32.layer.op, l32.input_shapes, l32.output_shape, dtype::fp32, l32.cost, f32);
    EXPECT_EQ(math.model, "attention math path");
    EXPECT_EQ(math.kernels, 4);
    // a view has no kernel; a relu is a stream of its bytes
    EXPECT_EQ(estimate_on_gpu(parse_op("reshape:shape=4096x128"), {shape{4096, 128}}, shape{4096, 128}, dtype::bf16,
                              cost{}, s)
                  .model,
              "view");
    cost relu;
    relu.bytes = 2'000'000;
    EXPECT_NEAR(estimate_on_gpu(parse_op("relu"), {shape{1000, 1000}}, shape{1000, 1000}, dtype::bf16, relu, s).time_ms,
                0.005 + 2e6 / (0.9 * 3350e6), 1e-12);
    // a linear over [8, 512, 1024] -> 4096: the GEMM of 4,096 rows, 4,096 columns, depth 1,024
    cost lin;
    lin.bytes = 1;
    const gpu_estimate g = estimate_on_gpu(parse_op("linear:in_features=1024,out_features=4096"), {shape{8, 512, 1024}},
                                           shape{8, 512, 4096}, dtype::bf16, lin, s);
    EXPECT_NEAR(g.compute_ms, gemm_on_gpu({1, 4096, 4096, 1024}, 1, s).compute_ms, 1e-12);
}

}  // namespace
}  // namespace ridgeline::core
