// The transformer layers in core: rms_norm, rotary, attention, kv_cache. Counts with their derivation, the causal and
// window pair counts against a brute-force walk of the mask, RoPE's frequencies per scaling type against Hugging
// Face's formulas worked by hand, errors, and round trips through the layer string.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "helpers.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/memory.hpp"

using namespace ridgeline::core;
using ridgeline::test::expect_layer;
using ridgeline::test::one_layer;

namespace {

std::string error_of(const std::string& layer, const std::vector<shape>& in) {
    try {
        (void)analyze(single_layer_model(parse_op(layer, "blk"), in, "blk", "m"), dtype::fp32);
    } catch (const error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(TransformerCost, RmsNorm) {
    // [2, 7, 4096]: 57,344 elements; flops 4 each = 229,376 (square, accumulate, normalise, weight);
    // params 4,096 (the weight); bytes (57,344 in + 57,344 out + 4,096 weight) * 4 = 475,136
    expect_layer(one_layer("rms_norm:normalized_shape=4096", {{2, 7, 4096}}),
                 {.params = 4096, .macs = 0, .flops = 229376, .bytes = 475136});
    // without the weight: 3 per element, no parameters
    const auto n = one_layer("rms_norm:normalized_shape=4096,elementwise_affine=false", {{2, 7, 4096}});
    EXPECT_EQ(n.cost.flops, 3 * 57344);
    EXPECT_EQ(n.cost.params, 0);
}

TEST(TransformerCost, Rotary) {
    // [1, 8, 16, 64]: 8,192 elements, 3 flops each = 24,576; bytes (8,192 in + 8,192 out + cos and sin 2*16*64) * 4
    // = 18,432 * 4 = 73,728
    const auto l = one_layer("rotary:theta=500000,offset=7", {{1, 8, 16, 64}});
    EXPECT_EQ(l.output_shape, (shape{1, 8, 16, 64}));
    EXPECT_EQ(l.cost.flops, 24576);
    EXPECT_EQ(l.cost.bytes, 73728);
    EXPECT_EQ(l.cost.params + l.cost.buffers, 0);
}

TEST(TransformerCost, CausalPrefillWithGroupedQueryHeads) {
    // q [2, 32, 128, 128], k and v [2, 8, 128, 128] (GQA: 4 query heads per kv head, no copy counted)
    // macs = B*H*Sq*Skv*(D + Dv) = 2*32*128*128*256 = 268,435,456; flops 2*macs = 536,870,912 (FlopCounterMode's
    // 4*B*H*Sq*Skv*D). Causal: Sq(Sq+1)/2 = 8,256 pairs per head kept of 16,384, so executed macs
    // 64 * 8,256 * 256 = 135,266,304 and skipped 268,435,456 - 135,266,304 = 133,169,152.
    // bytes: q 1,048,576 + k 262,144 + v 262,144 + out 1,048,576 = 2,621,440 elements * 4 = 10,485,760
    const auto l = one_layer("attention:is_causal=true", {{2, 32, 128, 128}, {2, 8, 128, 128}, {2, 8, 128, 128}});
    EXPECT_EQ(l.output_shape, (shape{2, 32, 128, 128}));
    EXPECT_EQ(l.cost.macs, 268435456);
    EXPECT_EQ(l.cost.flops, 536870912);
    EXPECT_EQ(l.cost.executed_macs(), 135266304);
    EXPECT_EQ(l.cost.executed_flops(), 270532608);
    EXPECT_EQ(l.cost.skipped_macs, 133169152);
    EXPECT_EQ(l.cost.bytes, 10485760);
    // not causal: every pair executes
    const auto full = one_layer("attention", {{2, 32, 128, 128}, {2, 8, 128, 128}, {2, 8, 128, 128}});
    EXPECT_EQ(full.cost.executed_macs(), full.cost.macs);
}

TEST(TransformerCost, DecodeStepOverTheCache) {
    // one query per sequence over 1,024 cached tokens and itself: Skv = 1,025, every pair kept (the new token sits
    // last). macs = 4*32*1*1025*256 = 33,587,200, none skipped. bytes: q 4*32*128 = 16,384, k and v
    // 4*8*1025*128 = 4,198,400 each, out 16,384: 8,429,568 elements * 2 (bf16) = 16,859,136
    const auto l = one_layer("attention:is_causal=true", {{4, 32, 1, 128}, {4, 8, 1025, 128}, {4, 8, 1025, 128}},
                             dtype::bf16);
    EXPECT_EQ(l.cost.macs, 33587200);
    EXPECT_EQ(l.cost.skipped_macs, 0);
    EXPECT_EQ(l.cost.bytes, 16859136);
}

TEST(TransformerCost, SlidingWindowPairsInClosedForm) {
    attention a;
    a.is_causal = true;
    a.sliding_window = 4096;
    // Mistral prefill of 8,192 tokens: query p keeps min(p + 1, 4096) keys:
    // 1 + 2 + ... + 4096 = 8,390,656, then 4,096 for each of the other 4,096 queries = 16,777,216: 25,167,872
    EXPECT_EQ(a.pairs(8192, 8192), 25167872);
    // decode at 5,000 cached tokens: the window bounds the one query's keys to 4,096
    EXPECT_EQ(a.pairs(1, 5001), 4096);
    a.sliding_window = 0;
    EXPECT_EQ(a.pairs(8192, 8192), 8192LL * 8193 / 2);  // 33,558,528
    // prefill over a cache (chunked): 3 queries at positions 5, 6, 7 keep 6 + 7 + 8 = 21
    EXPECT_EQ(a.pairs(3, 8), 21);
}

TEST(TransformerCost, PairCountsAgreeWithTheMaskItself) {
    // the closed form against a walk of keeps() over every (query, key): any size, window or none
    for (std::int64_t sq = 1; sq <= 9; ++sq)
        for (std::int64_t extra = 0; extra <= 6; ++extra)
            for (std::int64_t window = 0; window <= 12; ++window) {
                attention a;
                a.is_causal = true;
                a.sliding_window = window;
                const std::int64_t skv = sq + extra;
                std::int64_t kept = 0;
                for (std::int64_t i = 0; i < sq; ++i)
                    for (std::int64_t j = 0; j < skv; ++j) kept += a.keeps(i, j, sq, skv) ? 1 : 0;
                EXPECT_EQ(a.pairs(sq, skv), kept) << "sq " << sq << " skv " << skv << " window " << window;
            }
}

TEST(TransformerCost, KvCacheCountsItsBufferAndMovesOnlyTheNewEntries) {
    // batch 2, 8 kv heads of 128, 1,024 cached: the buffer holds 2*8*1025*128 = 2,099,200 elements (buffers);
    // the step reads and writes the new entries 2*8*1*128 = 2,048: bytes 2 * 2,048 * 4 = 16,384
    expect_layer(one_layer("kv_cache:batch=2,num_heads=8,head_dim=128,past=1024", {{2, 8, 1, 128}}),
                 {.params = 0, .buffers = 2099200, .flops = 0, .bytes = 16384, .out = shape{2, 8, 1025, 128}});
}

TEST(TransformerCost, TheMemorySummaryNamesTheKvCache) {
    // keys and values of one layer: two caches of 1*2*(16 + 1)*8 = 272 elements, 1,088 bytes each in fp32: 2,176
    model m("kv");
    m.add_input({"k", shape{1, 2, 1, 8}});
    m.add_input({"v", shape{1, 2, 1, 8}});
    m.add_input({"q", shape{1, 4, 1, 8}});
    m.add_layer({"k_cache", parse_op("kv_cache:batch=1,num_heads=2,head_dim=8,past=16"), {"k"}, {}});
    m.add_layer({"v_cache", parse_op("kv_cache:batch=1,num_heads=2,head_dim=8,past=16"), {"v"}, {}});
    m.add_layer({"attn", parse_op("attention:is_causal=true"), {"q", "k_cache", "v_cache"}, {}});
    const auto a = analyze(m, dtype::fp32);
    const memory_summary s = memory_of(a);
    EXPECT_EQ(s.kv_cache_bytes, 2176);
    EXPECT_EQ(s.buffer_bytes, 2176);
    // the caches' outputs are their buffers, not activations: only the attention's output [1, 4, 1, 8] is
    EXPECT_EQ(s.total_activation_bytes, 32 * 4);
}

TEST(Rope, DefaultFrequenciesAndTables) {
    // theta 10,000, D = 4: inv_freq = 1 / 10000^(0/4), 1 / 10000^(2/4) = 1, 0.01. Token 0 at position 3 (offset 3):
    // angles 3 and 0.03, repeated for the second half (cat(freqs, freqs))
    rotary r;
    r.offset = 3;
    const auto f = r.inv_freq(4, 4);
    ASSERT_EQ(f.size(), 2u);
    EXPECT_FLOAT_EQ(f[0], 1.0f);
    EXPECT_FLOAT_EQ(f[1], 0.01f);
    const auto t = r.make_tables(4, 2);
    EXPECT_FLOAT_EQ(t.cos[0], static_cast<float>(std::cos(3.0)));
    EXPECT_FLOAT_EQ(t.sin[1], static_cast<float>(std::sin(static_cast<double>(3.0f * 0.01f))));
    EXPECT_FLOAT_EQ(t.cos[2], t.cos[0]);
    EXPECT_FLOAT_EQ(t.cos[4], static_cast<float>(std::cos(4.0)));  // the second token: position 4
}

TEST(Rope, ScalingTypesAsHuggingFaceDefinesThem) {
    rotary lin = std::get<rotary>(parse_op("rotary:scaling=linear,factor=4"));
    EXPECT_FLOAT_EQ(lin.inv_freq(4, 1)[1], 0.01f / 4);  // linear: inv_freq / factor
    // dynamic NTK, D = 4, factor 2, max 16: unchanged up to 16 positions; at 32, base 10000 * (2*32/16 - 1)^(4/2)
    // = 90,000 and inv_freq[1] = 1 / 90000^(2/4) = 1/300
    rotary dyn = std::get<rotary>(parse_op("rotary:scaling=dynamic,factor=2,max_position_embeddings=16"));
    EXPECT_FLOAT_EQ(dyn.inv_freq(4, 16)[1], 0.01f);
    EXPECT_FLOAT_EQ(dyn.inv_freq(4, 32)[1], 1.0f / 300);
    // yarn's attention factor: 0.1 ln(factor) + 1 = 1.138629 for factor 4, unless given
    EXPECT_NEAR(std::get<rotary>(parse_op("rotary:scaling=yarn,factor=4,max_position_embeddings=4096")).table_scale(),
                0.1 * std::log(4.0) + 1, 1e-12);
    EXPECT_EQ(std::get<rotary>(parse_op("rotary:scaling=yarn,factor=4,max_position_embeddings=4096,attention_factor=1.5"))
                  .table_scale(),
              1.5);
    // llama3 (Llama 3.1's config: factor 8, low 1, high 4, original 8192, theta 500,000, D = 128). Wavelength 2 pi /
    // inv_freq: below 8192/4 = 2048 kept, above 8192/1 divided by 8, between: (1 - s) inv/8 + s inv with
    // s = (8192 / wavelength - 1) / (4 - 1)
    rotary l3 = std::get<rotary>(parse_op("rotary:theta=500000,scaling=llama3,factor=8,"
                                          "original_max_position_embeddings=8192,low_freq_factor=1,high_freq_factor=4"));
    rotary plain = std::get<rotary>(parse_op("rotary:theta=500000"));
    const auto got = l3.inv_freq(128, 1), base = plain.inv_freq(128, 1);
    int kept = 0, divided = 0, smoothed = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double wavelen = 2 * std::numbers::pi / base[i];
        if (wavelen < 2048) {
            EXPECT_FLOAT_EQ(got[i], base[i]);
            ++kept;
        } else if (wavelen > 8192) {
            EXPECT_FLOAT_EQ(got[i], base[i] / 8);
            ++divided;
        } else {
            const double s = (8192 / wavelen - 1) / 3;
            EXPECT_FLOAT_EQ(got[i], static_cast<float>((1 - s) * base[i] / 8 + s * base[i]));
            ++smoothed;
        }
    }
    // every band is reached: i < 40 kept (2 pi * 500000^(2*39/128) = 1,915 < 2048), 48 and up divided
    EXPECT_GT(kept, 0);
    EXPECT_GT(divided, 0);
    EXPECT_GT(smoothed, 0);
}

TEST(TransformerErrors, EachRuleNamesTheLayerAndTheShape) {
    EXPECT_EQ(error_of("attention", {{1, 4, 8}, {1, 4, 8}, {1, 4, 8}}),
              "attention \"blk\": expects queries (input 0) of rank 4 [batch, heads, sequence, head_dim], got 1x4x8 (rank 3)");
    EXPECT_EQ(error_of("attention", {{1, 6, 4, 8}, {1, 4, 4, 8}, {1, 4, 4, 8}}),
              "attention \"blk\": 6 query heads are not a multiple of 4 kv heads (grouped-query attention shares each kv "
              "head among H/KVH query heads)");
    EXPECT_EQ(error_of("attention:is_causal=true", {{1, 2, 5, 8}, {1, 2, 4, 8}, {1, 2, 4, 8}}),
              "attention \"blk\": is_causal with 5 queries but only 4 keys: each query attends the keys up to its own "
              "position, so there are at least as many keys");
    EXPECT_EQ(error_of("attention:is_causal=true", {{1, 2, 4, 8}, {1, 2, 4, 8}, {1, 2, 4, 8}, {4, 4}}),
              "attention \"blk\": has both a mask (input 3) and is_causal=true; give one (PyTorch refuses both too)");
    EXPECT_EQ(error_of("attention", {{1, 2, 4, 8}, {1, 2, 4, 8}, {1, 2, 4, 8}, {3, 4}}),
              "attention \"blk\": mask (input 3) 3x4 does not broadcast to the scores 1x2x4x4: dimension 2 is 3 in "
              "one and 4 in the other");
    EXPECT_EQ(error_of("attention", {{1, 2, 4, 8}, {1, 2, 4, 6}, {1, 2, 4, 8}}),
              "attention \"blk\": keys have head_dim 6 (1x2x4x6) but queries 8 (1x2x4x8)");
    EXPECT_EQ(error_of("attention:sliding_window=16", {{1, 2, 4, 8}, {1, 2, 4, 8}, {1, 2, 4, 8}}),
              "attention \"blk\": sliding_window needs is_causal=true (a window of the keys before each query, as "
              "Mistral's)");
    EXPECT_EQ(error_of("rotary", {{1, 2, 4, 7}}),
              "rotary \"blk\": head_dim 7 (dimension 3 of 1x2x4x7) is odd: rotate-half pairs element i with i + head_dim/2");
    EXPECT_EQ(error_of("rotary:factor=8", {{1, 2, 4, 8}}),
              "rotary \"blk\": factor applies to scaling=linear, dynamic, yarn or llama3, not to scaling=none");
    EXPECT_EQ(error_of("rotary:scaling=llama3,factor=8", {{1, 2, 4, 8}}),
              "rotary \"blk\": original_max_position_embeddings is required");
    EXPECT_EQ(error_of("rotary:scaling=dynamic,factor=2,max_position_embeddings=16", {{1, 2, 4, 2}}),
              "rotary \"blk\": scaling=dynamic needs head_dim > 2 (its exponent is head_dim / (head_dim - 2)), got 2");
    EXPECT_EQ(error_of("kv_cache:batch=1,num_heads=2,head_dim=8,past=4", {{1, 4, 1, 8}}),
              "kv_cache \"blk\": input 1x4x1x8 is not the new entries 1x2x1x8 [batch, num_heads, new_tokens, head_dim] "
              "the cache appends");
    EXPECT_EQ(error_of("rms_norm:normalized_shape=5", {{4, 6}}),
              "rms_norm \"blk\": normalized_shape 5 does not match the trailing dimensions of the input 4x6");
}

TEST(TransformerLayerString, CanonicalFormsRoundTrip) {
    for (const char* s : {"rms_norm:normalized_shape=4096", "rms_norm:normalized_shape=64,eps=1e-05,elementwise_affine=false",
                          "rotary", "rotary:theta=500000,offset=1024",
                          "rotary:theta=500000,scaling=llama3,factor=8,original_max_position_embeddings=8192,"
                          "low_freq_factor=1,high_freq_factor=4",
                          "rotary:scaling=yarn,factor=4,max_position_embeddings=4096,attention_factor=1.2,beta_fast=16",
                          "attention", "attention:is_causal=true,scale=0.125,sliding_window=4096",
                          "kv_cache:batch=4,num_heads=8,head_dim=128,past=1024,new_tokens=2"})
        EXPECT_EQ(to_string(parse_op(s)), s);
}
