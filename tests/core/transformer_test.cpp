// Transformers built from configurations: every named built-in's parameter total against Hugging Face's (derived
// here from its config.json), the per-token MACs of prefill and decode, GQA, biases, ties, phases and their errors.
#include <gtest/gtest.h>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/memory.hpp"
#include "ridgeline/core/zoo.hpp"

using namespace ridgeline::core;

namespace {

model_analysis built(const std::string& name, zoo_request q = {}) {
    return analyze(build_zoo_model(name, q), dtype::fp32);
}

zoo_request decode(std::int64_t kv_len, std::int64_t batch = 1) {
    zoo_request q;
    q.phase = transformer_phase::decode;
    q.phase_given = true;
    q.kv_len = kv_len;
    q.batch = batch;
    return q;
}

}  // namespace

// Each total: embeddings + layers * per layer + final norm + an untied LM head, with Hugging Face's module shapes.
TEST(Transformer, NamedConfigsHaveHuggingFacesParameterCounts) {
    // bert-base: embeddings 30522*768 + 512*768 + 2*768 + LayerNorm 1,536 = 23,837,184; per layer 4*(768^2 + 768)
    // + (768*3072 + 3072) + (3072*768 + 768) + 2 LayerNorms 3,072 = 7,087,872; pooler 590,592 -> 109,482,240
    EXPECT_EQ(built("bert-base").totals.params, 109482240);
    // bert-large: 30522*1024 + 512*1024 + 2*1024 + 2,048 = 31,782,912; per layer 4*(1024^2 + 1024) + (1024*4096 +
    // 4096) + (4096*1024 + 1024) + 4,096 = 12,596,224 (x24 = 302,309,376); pooler 1,049,600 -> 335,141,888
    EXPECT_EQ(built("bert-large").totals.params, 335141888);
    // gpt2: wte 50257*768 + wpe 1024*768 + 12 * 7,087,872 + ln_f 1,536 = 124,439,808 (the head is wte)
    EXPECT_EQ(built("gpt2").totals.params, 124439808);
    // gpt2-medium: 50257*1024 + 1024*1024 + 24 * 12,596,224 + 2,048 = 354,823,168
    EXPECT_EQ(built("gpt2-medium").totals.params, 354823168);
    // gpt2-large: 50257*1280 + 1024*1280 + 36 * (12*1280^2 + 13*1280 = 19,677,440) + 2,560 = 774,030,080
    EXPECT_EQ(built("gpt2-large").totals.params, 774030080);
    // gpt2-xl: 50257*1600 + 1024*1600 + 48 * (12*1600^2 + 13*1600 = 30,740,800) + 3,200 = 1,557,611,200
    EXPECT_EQ(built("gpt2-xl").totals.params, 1557611200);
    // gpt3-xl: 50257*2048 + 2048*2048 + 24 * (12*2048^2 + 13*2048 = 50,358,272) + 4,096 = 1,315,723,264
    EXPECT_EQ(built("gpt3-xl").totals.params, 1315723264);
    // gpt3-2.7b: 50257*2560 = 128,657,920 + 2048*2560 = 5,242,880 + 32 * (12*2560^2 + 13*2560 = 78,676,480)
    // = 2,517,647,360 + 5,120 -> 2,651,553,280
    EXPECT_EQ(built("gpt3-2.7b").totals.params, 2651553280);
    // opt-125m: embed_tokens 50272*768 = 38,608,896 + positions 2050*768 = 1,574,400 + 12 * 7,087,872 + final
    // LayerNorm 1,536 = 125,239,296 (the head is embed_tokens)
    EXPECT_EQ(built("opt-125m").totals.params, 125239296);
    // opt-350m: embed_tokens 50272*512 = 25,739,264 + positions 2050*1024 = 2,099,200 + project_in and project_out
    // 2*512*1024 = 1,048,576 + 24 * 12,596,224 = 302,309,376 (post-norm: no final LayerNorm) -> 331,196,416
    EXPECT_EQ(built("opt-350m").totals.params, 331196416);
    // opt-1.3b: 50272*2048 = 102,957,056 + 2050*2048 = 4,198,400 + 24 * (4*(2048^2 + 2048) + (2048*8192 + 8192) +
    // (8192*2048 + 2048) + 2*4,096 = 50,358,272) = 1,208,598,528 + final 4,096 -> 1,315,758,080
    EXPECT_EQ(built("opt-1.3b").totals.params, 1315758080);
    // llama-2-7b: embed 32000*4096 = 131,072,000; per layer 4*4096^2 + 3*4096*11008 + 2*4096 = 202,383,360
    // (x32 = 6,476,267,520); norm 4,096; lm_head 131,072,000 -> 6,738,415,616
    EXPECT_EQ(built("llama-2-7b").totals.params, 6738415616);
    // llama-3-8b: embed 128256*4096 = 525,336,576; per layer q, o 4096^2 each, k, v 4096*1024 each (GQA 32/8):
    // 41,943,040 + MLP 3*4096*14336 = 176,160,768 + 8,192 = 218,112,000 (x32 = 6,979,584,000); norm 4,096;
    // lm_head 525,336,576 -> 8,030,261,248
    EXPECT_EQ(built("llama-3-8b").totals.params, 8030261248);
    // llama-3.2-1b (tied): embed 128256*2048 = 262,668,288; per layer q, o 2048^2, k, v 2048*512: 10,485,760 + MLP
    // 3*2048*8192 = 50,331,648 + 4,096 = 60,821,504 (x16 = 973,144,064); norm 2,048 -> 1,235,814,400
    EXPECT_EQ(built("llama-3.2-1b").totals.params, 1235814400);
    // tinyllama-1.1b: embed 32000*2048 = 65,536,000; per layer 2*2048^2 + 2*2048*256 + 3*2048*5632 + 4,096
    // = 44,044,288 (x22 = 968,974,336); norm 2,048; lm_head 65,536,000 -> 1,100,048,384
    EXPECT_EQ(built("tinyllama-1.1b").totals.params, 1100048384);
    // qwen2.5-0.5b (tied): embed 151936*896 = 136,134,656; per layer q 896*896 + 896, k and v 896*128 + 128 each,
    // o 896*896 (no bias): 1,836,160 + MLP 3*896*4864 = 13,074,432 + 1,792 = 14,912,384 (x24 = 357,897,216);
    // norm 896 -> 494,032,768
    EXPECT_EQ(built("qwen2.5-0.5b").totals.params, 494032768);
    // mistral-7b: embed 32000*4096 = 131,072,000; per layer 218,112,000 as llama-3-8b (x32); norm 4,096; lm_head
    // 131,072,000 -> 7,241,732,096
    EXPECT_EQ(built("mistral-7b").totals.params, 7241732096);
}

TEST(Transformer, TheTwoFirstBuiltInsKeepTheirNumbers) {
    // bert_base (sequence 128) and gpt2 (1024) as before: the same parameters and MACs (tests/core/zoo_test.cpp
    // derives them); attention is one layer now, with the same MACs as its two matmuls
    EXPECT_EQ(built("bert_base").totals.params, 109482240);
    EXPECT_EQ(built("bert_base").totals.macs, 11174215680);
    EXPECT_EQ(built("bert_base").totals.macs, built("bert-base").totals.macs);
    EXPECT_EQ(built("gpt2").totals.macs, 145824153600);
}

TEST(Transformer, DecodeStepMacsPerToken) {
    // llama-3-8b, one new token over 1,024 cached: the projections 2*4096^2 + 2*4096*1024 + 3*4096*14336 =
    // 218,103,808 per layer, attention 32 heads * 1 * 1025 * (128 + 128) = 8,396,800 per layer; x32 =
    // 7,248,019,456; lm_head 4096*128256 = 525,336,576 -> 7,773,356,032
    const auto a = built("llama-3-8b", decode(1024));
    EXPECT_EQ(a.totals.macs, 7773356032);
    // the embedding input is one token per sequence
    EXPECT_EQ(a.inputs.at(0).dims, (shape{1, 1}));
    // at batch 4 every MAC is 4x
    EXPECT_EQ(built("llama-3-8b", decode(1024, 4)).totals.macs, 4 * 7773356032);
}

TEST(Transformer, TheKvCacheIsABufferOfTheIssuesSize) {
    // 2 * layers * kv_heads * head_dim * (L + 1 appended) * batch * bytes: tinyllama 2*22*4*64*(1024 + 1)*2 * 4
    // = 92,364,800 bytes in fp32
    const auto a = built("tinyllama-1.1b", decode(1024, 2));
    EXPECT_EQ(memory_of(a).kv_cache_bytes, 92364800);
    // buffers are exactly the caches (llama has no other buffer)
    EXPECT_EQ(a.totals.buffers * 4, 92364800);
}

TEST(Transformer, CausalAttentionExecutesHalfTheSquare) {
    // gpt2 at sequence 1024: each layer's attention keeps 1024*1025/2 = 524,800 pairs of 1024^2 per head; skipped
    // MACs per layer 12 heads * 523,776 pairs * (64 + 64) = 804,519,936; x12 layers = 9,654,239,232
    const auto a = built("gpt2");
    EXPECT_EQ(a.totals.skipped_macs, 9654239232);
    // BERT attends every pair: nothing skipped
    EXPECT_EQ(built("bert-base").totals.skipped_macs, 0);
}

TEST(Transformer, MistralsWindowBoundsTheExecutedPairs) {
    // prefill of 8,192 tokens with the 4,096 window: 25,167,872 pairs per head kept (TransformerCost.
    // SlidingWindowPairsInClosedForm) of 8192^2 = 67,108,864; skipped MACs 32 layers * 32 heads * 41,940,992 * 256
    // = 10,994,579,406,848
    zoo_request q;
    q.seq = 8192;
    EXPECT_EQ(built("mistral-7b", q).totals.skipped_macs, 10994579406848);
}

TEST(Transformer, LayerNamesAreHuggingFacesModulePaths) {
    const auto a = built("qwen2.5-0.5b", decode(16));
    auto has = [&](const std::string& n) {
        for (const auto& l : a.layers)
            if (l.layer.name == n) return true;
        return false;
    };
    EXPECT_TRUE(has("model.embed_tokens"));
    EXPECT_TRUE(has("model.layers.0.self_attn.q_proj"));
    EXPECT_TRUE(has("model.layers.0.self_attn.k_cache"));
    EXPECT_TRUE(has("model.layers.23.mlp.down_proj"));
    EXPECT_TRUE(has("lm_head"));
    // qwen2: q, k, v with bias, o_proj without
    for (const auto& l : a.layers) {
        if (l.layer.name == "model.layers.0.self_attn.k_proj") {
            EXPECT_TRUE(std::get<linear>(l.layer.op).bias);
        }
        if (l.layer.name == "model.layers.0.self_attn.o_proj") {
            EXPECT_FALSE(std::get<linear>(l.layer.op).bias);
        }
    }
}

TEST(Transformer, PhaseErrorsSayWhatToGive) {
    auto message = [](const std::string& name, const zoo_request& q) {
        try {
            (void)build_zoo_model(name, q);
        } catch (const error& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    EXPECT_EQ(message("bert-base", decode(8)),
              "model \"bert-base\": bert is an encoder, it has no decode phase (its pass is a prefill)");
    zoo_request no_len;
    no_len.phase = transformer_phase::decode;
    no_len.phase_given = true;
    EXPECT_EQ(message("gpt2", no_len), "model \"gpt2\": a decode step needs the KV cache length: the tokens already in the KV cache");
    // the message speaks of the request; the error names the request's field, and a front end its own name for it
    try {
        (void)build_zoo_model("gpt2", no_len);
        ADD_FAILURE() << "no error";
    } catch (const request_error& e) {
        EXPECT_EQ(e.fields(), (std::vector<std::string>{"kv_len"}));
    }
    EXPECT_EQ(message("gpt2", decode(1024)),
              "model \"gpt2\": positions up to 1025 (a KV cache of 1024 and the new token) pass its 1024 learned position "
              "embeddings");
    EXPECT_EQ(message("resnet18", decode(8)),
              "model \"resnet18\" is not a transformer: a phase, a sequence length or a KV cache length applies to transformers");
    zoo_request both;
    both.seq = 64;
    both.input = shape{1, 32};
    EXPECT_EQ(message("gpt2", both), "model \"gpt2\": sequence length 64 disagrees with the sequence of the input 1x32");
}
