// The datasheet table: lookups by the names devices report, dense peaks, sources.
#include <gtest/gtest.h>

#include "ridgeline/core/datasheet.hpp"

using namespace ridgeline::core;

TEST(Datasheet, FindsTheGpusByTheNamesCudaReports) {
    // cudaDeviceProp::name as the driver reports it
    struct c {
        const char* reported;
        const char* device;
    };
    const c cases[] = {
        {"NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB"},
        {"NVIDIA A100-SXM4-40GB", "NVIDIA A100 SXM4 40GB"},
        {"NVIDIA A100 80GB PCIe", "NVIDIA A100 PCIe 80GB"},
        {"NVIDIA A100-PCIE-40GB", "NVIDIA A100 PCIe 40GB"},
        {"NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB"},
        {"NVIDIA H100 PCIe", "NVIDIA H100 PCIe"},
        {"NVIDIA H200", "NVIDIA H200 SXM 141GB"},
        {"NVIDIA H200 NVL", "NVIDIA H200 NVL"},
        {"NVIDIA L4", "NVIDIA L4"},
        {"Tesla T4", "NVIDIA T4"},
        {"NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090"},
        {"nvidia  geforce rtx 4090", "NVIDIA GeForce RTX 4090"},  // case and spacing do not matter
    };
    for (const auto& k : cases) {
        const auto e = find_datasheet(k.reported);
        ASSERT_TRUE(e.has_value()) << k.reported;
        EXPECT_EQ(e->device, k.device) << k.reported;
        EXPECT_FALSE(e->source.empty()) << k.reported;
    }
    // names are matched whole: an L40S is not an L4, an unknown GPU has no entry
    EXPECT_FALSE(find_datasheet("NVIDIA L40S").has_value());
    EXPECT_FALSE(find_datasheet("NVIDIA GeForce RTX 4090 D").has_value());
    EXPECT_FALSE(find_datasheet("").has_value());
}

TEST(Datasheet, EveryEntryIsFoundByItsOwnDisplayName) {
    // A datasheet target carries the entry's display name as its device name; the op-class models find the entry's
    // SM count through it. "NVIDIA H200 SXM 141GB" is no name a driver reports ("NVIDIA H200" is), so the display
    // name must match by itself, or `predict --to h200` falls back to the same-class rule without a word.
    for (const auto& e : datasheet()) {
        const auto found = find_datasheet(e.device);
        ASSERT_TRUE(found.has_value()) << e.device;
        EXPECT_EQ(found->key, e.key) << e.device;
    }
}

TEST(Datasheet, DensePeaksPerDataType) {
    // H100 SXM datasheet: FP32 67, TF32 989 and BF16/FP16 1979 TFLOPS "with sparsity" -> dense 494.5, 989.5
    const auto h100 = find_datasheet("NVIDIA H100 80GB HBM3");
    ASSERT_TRUE(h100);
    EXPECT_EQ(h100->peak_tflops(dtype::fp32), 67.0);
    EXPECT_EQ(h100->peak_tflops(dtype::tf32), 494.5);
    EXPECT_EQ(h100->peak_tflops(dtype::bf16), 989.5);
    EXPECT_EQ(h100->memory_bandwidth_gbs, 3350.0);
    // A100 datasheet: FP32 19.5, TF32 156, BF16/FP16 312 dense; 80GB SXM 2,039 GB/s
    const auto a100 = find_datasheet("NVIDIA A100-SXM4-80GB");
    ASSERT_TRUE(a100);
    EXPECT_EQ(a100->peak_tflops(dtype::tf32), 156.0);
    EXPECT_EQ(a100->peak_tflops(dtype::fp16), 312.0);
    EXPECT_EQ(a100->memory_bandwidth_gbs, 2039.0);
    // T4 (Turing): no TF32, no BF16
    const auto t4 = find_datasheet("Tesla T4");
    ASSERT_TRUE(t4);
    EXPECT_FALSE(t4->peak_tflops(dtype::tf32).has_value());
    EXPECT_FALSE(t4->peak_tflops(dtype::bf16).has_value());
    EXPECT_EQ(t4->peak_tflops(dtype::fp16), 65.0);
    EXPECT_EQ(describe_peaks(*t4), "fp32 8.1 / fp16 65 TFLOP/s dense, 320 GB/s");
    // every entry: a source, a bandwidth, an fp32 peak, and no tensor-core peak below the fp32 one
    for (const auto& e : datasheet()) {
        EXPECT_FALSE(e.source.empty()) << e.device;
        EXPECT_GT(e.memory_bandwidth_gbs, 0) << e.device;
        ASSERT_TRUE(e.peak_tflops(dtype::fp32)) << e.device;
        for (dtype dt : {dtype::tf32, dtype::fp16, dtype::bf16}) {
            if (auto p = e.peak_tflops(dt)) {
                EXPECT_GE(*p, *e.peak_tflops(dtype::fp32)) << e.device;
            }
        }
    }
}

TEST(Datasheet, NameNormalForm) {
    EXPECT_EQ(normalize_device_name("NVIDIA A100-SXM4-80GB"), "NVIDIA A100 SXM4 80GB");
    EXPECT_EQ(normalize_device_name("  Intel(R) Xeon(R) Platinum 8480+ "), "INTEL XEON PLATINUM 8480+");
    EXPECT_EQ(normalize_device_name("AMD EPYC(TM) 7B13"), "AMD EPYC 7B13");
}

TEST(Datasheet, CpuEntriesCarryTheirDerivation) {
    // EPYC 9654: 96 cores x 2.4 GHz x 32 FLOP/cycle = 7.3728 TFLOP/s; 12 x 4800 MT/s x 8 B = 460.8 GB/s
    auto e = ridgeline::core::find_datasheet("AMD EPYC 9654 96-Core Processor");
    ASSERT_TRUE(e.has_value());
    EXPECT_NEAR(e->fp32_tflops, 96 * 2.4e9 * 32 / 1e12, 0.01);
    EXPECT_DOUBLE_EQ(e->memory_bandwidth_gbs, 12 * 4800e6 * 8 / 1e9);
    EXPECT_NE(std::string(e->source).find("derived"), std::string::npos);
    // a generic virtual-machine name is not guessed at
    EXPECT_FALSE(ridgeline::core::find_datasheet("AMD EPYC").has_value());
}
