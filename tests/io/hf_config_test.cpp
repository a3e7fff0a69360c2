// Hugging Face config.json -> transformer: each family's keys and defaults, the refusals (a key that may change the
// architecture, a value ridgeline does not model), and the built model against the named built-in of the same config.
#include <gtest/gtest.h>

#include <fstream>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/zoo.hpp"
#include "ridgeline/io/hf_config.hpp"
#include "../support/scratch.hpp"

namespace core = ridgeline::core;
namespace io = ridgeline::io;
using nlohmann::json;

namespace {

std::string error_of(const json& doc) {
    try {
        (void)io::parse_hf_config(doc, "config.json", "m");
    } catch (const core::error& e) {
        return e.what();
    }
    return "(no error)";
}

// TinyLlama-1.1B-Chat-v1.0's config.json as published (its keys and values)
json tinyllama() {
    return json::parse(R"({
      "architectures": ["LlamaForCausalLM"], "attention_bias": false, "bos_token_id": 1, "eos_token_id": 2,
      "hidden_act": "silu", "hidden_size": 2048, "initializer_range": 0.02, "intermediate_size": 5632,
      "max_position_embeddings": 2048, "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 22,
      "num_key_value_heads": 4, "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": null,
      "rope_theta": 10000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
      "transformers_version": "4.35.0", "use_cache": true, "vocab_size": 32000})");
}

std::int64_t params_of(const core::transformer_config& c, core::transformer_phase phase = core::transformer_phase::prefill) {
    core::transformer_run r;
    r.phase = phase;
    r.seq = 16;
    r.kv_len = 16;
    return core::analyze(core::build_transformer(c, r), core::dtype::fp32).totals.params;
}

}  // namespace

TEST(HfConfig, APublishedConfigBuildsTheNamedModel) {
    const core::transformer_config c = io::parse_hf_config(tinyllama(), "config.json", "tinyllama");
    EXPECT_EQ(c.family, core::transformer_family::llama);
    EXPECT_EQ(c.num_kv_heads, 4);
    EXPECT_EQ(c.head_dim, 64);  // 2048 / 32
    // the same 1,100,048,384 parameters as the built-in (tests/core/transformer_test.cpp derives them)
    EXPECT_EQ(params_of(c), 1100048384);
    // and the same MACs per decode step
    core::zoo_request q;
    q.phase = core::transformer_phase::decode;
    q.phase_given = true;
    q.kv_len = 16;
    core::transformer_run r{core::transformer_phase::decode, 1, 0, 16};
    EXPECT_EQ(core::analyze(core::build_transformer(c, r), core::dtype::fp32).totals.macs,
              core::analyze(core::build_zoo_model("tinyllama-1.1b", q), core::dtype::fp32).totals.macs);
}

TEST(HfConfig, EachFamilysDefaultsAreItsConfigClasss) {
    // GPT2Config(): 124,439,808 parameters; BertConfig(): BERT-base, 109,482,240 with the pooler
    EXPECT_EQ(params_of(io::parse_hf_config(json{{"model_type", "gpt2"}}, "c", "gpt2")), 124439808);
    EXPECT_EQ(params_of(io::parse_hf_config(json{{"model_type", "bert"}}, "c", "bert")), 109482240);
    // OPTConfig(): opt-125m's shape, 125,239,296
    EXPECT_EQ(params_of(io::parse_hf_config(json{{"model_type", "opt"}}, "c", "opt")), 125239296);
    // MistralConfig(): 8 kv heads, 14336 intermediate, a 4096 window
    const auto m = io::parse_hf_config(json{{"model_type", "mistral"}}, "c", "mistral");
    EXPECT_EQ(m.num_kv_heads, 8);
    EXPECT_EQ(m.intermediate_size, 14336);
    EXPECT_EQ(m.sliding_window, 4096);
    // Qwen2: q, k and v with bias, o_proj without; no window unless use_sliding_window
    const auto q = io::parse_hf_config(json{{"model_type", "qwen2"}, {"sliding_window", 128}}, "c", "qwen2");
    EXPECT_TRUE(q.qkv_bias);
    EXPECT_FALSE(q.o_bias);
    EXPECT_EQ(q.sliding_window, 0);
    EXPECT_EQ(io::parse_hf_config(json{{"model_type", "qwen2"}, {"use_sliding_window", true}, {"sliding_window", 128}},
                                  "c", "qwen2")
                  .sliding_window,
              128);
}

TEST(HfConfig, ANullWindowIsNoWindow) {
    // Mistral-7B-v0.2/v0.3's config.json has "sliding_window": null: MistralConfig keeps None, and the attention has
    // no window (absent, the class default 4096 applies, as above); Qwen2 with use_sliding_window and a null window
    // is the same
    EXPECT_EQ(io::parse_hf_config(json{{"model_type", "mistral"}, {"sliding_window", nullptr}}, "c", "m").sliding_window,
              0);
    EXPECT_EQ(io::parse_hf_config(json{{"model_type", "qwen2"}, {"use_sliding_window", true}, {"sliding_window", nullptr}},
                                  "c", "q")
                  .sliding_window,
              0);
    // and no attention layer of the built model carries a window
    const auto m = io::parse_hf_config(json{{"model_type", "mistral"}, {"sliding_window", nullptr}, {"num_hidden_layers", 1},
                                            {"hidden_size", 64}, {"num_attention_heads", 4}, {"num_key_value_heads", 2},
                                            {"intermediate_size", 128}, {"vocab_size", 100}},
                                       "c", "m");
    core::transformer_run run;
    run.seq = 16;
    const core::model built = core::build_transformer(m, run);
    int attentions = 0;
    for (const auto& l : built.layers()) {
        if (const auto* a = std::get_if<core::attention>(&l.op)) {
            EXPECT_EQ(a->sliding_window, 0) << l.name;
            ++attentions;
        }
    }
    EXPECT_EQ(attentions, 1);
    // "sliding_window": "4096" is still a bad value
    EXPECT_NE(error_of(json{{"model_type", "mistral"}, {"sliding_window", "4096"}}).find("\"sliding_window\" must be an integer"),
              std::string::npos);
}

TEST(HfConfig, GeluPythonIsTheErfGelu) {
    // activations.py: "gelu_python" is GELUActivation(use_gelu_python=True), x * 0.5 * (1 + erf(x / sqrt(2))), the
    // same function as "gelu"
    json doc = {{"model_type", "bert"}, {"hidden_act", "gelu_python"}, {"num_hidden_layers", 1}};
    core::transformer_run run;
    run.seq = 8;
    int gelus = 0;
    const core::model built = core::build_transformer(io::parse_hf_config(doc, "c", "b"), run);
    for (const auto& l : built.layers()) {
        if (const auto* g = std::get_if<core::gelu>(&l.op)) {
            EXPECT_FALSE(g->tanh_approximation) << l.name;
            ++gelus;
        }
    }
    EXPECT_EQ(gelus, 1);
    // quick_gelu (x * sigmoid(1.702 x)) is another function: refused by name, not taken for gelu
    doc["hidden_act"] = "quick_gelu";
    EXPECT_NE(error_of(doc).find("hidden_act \"quick_gelu\" is not one ridgeline models"), std::string::npos) << error_of(doc);
}

TEST(HfConfig, Llama3RopeScalingIsRead) {
    json doc = tinyllama();
    doc["rope_theta"] = 500000.0;
    doc["rope_scaling"] = {{"factor", 32.0}, {"high_freq_factor", 4.0}, {"low_freq_factor", 1.0},
                           {"original_max_position_embeddings", 8192}, {"rope_type", "llama3"}};
    const auto c = io::parse_hf_config(doc, "config.json", "m");
    EXPECT_EQ(c.rope.scaling, core::rotary::scaling_t::llama3);
    EXPECT_EQ(c.rope.factor, 32);
    EXPECT_EQ(c.rope.original_max_position_embeddings, 8192);
    // the older spelling "type" is Hugging Face's too
    doc["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
    EXPECT_EQ(io::parse_hf_config(doc, "config.json", "m").rope.scaling, core::rotary::scaling_t::linear);
}

TEST(HfConfig, WhatCouldChangeTheArchitectureIsRefusedByName) {
    json extra = tinyllama();
    extra["rope_interleaved"] = true;
    EXPECT_EQ(error_of(extra), "config.json: key \"rope_interleaved\" (model_type llama) is not one ridgeline knows: it "
                               "may change the architecture, so it is refused rather than ignored");
    json longrope = tinyllama();
    longrope["rope_scaling"] = {{"rope_type", "longrope"}, {"short_factor", {1.0}}, {"long_factor", {1.0}}};
    EXPECT_EQ(error_of(longrope), "config.json: \"rope_scaling\" type \"longrope\" is not modelled (ridgeline has "
                                  "default, linear, dynamic, yarn and llama3)");
    json unknown = tinyllama();
    unknown["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}, {"mscale", 1.0}};
    EXPECT_EQ(error_of(unknown), "config.json: \"rope_scaling.mscale\" is not a key ridgeline models (rope type linear)");
    json cross = json{{"model_type", "gpt2"}, {"add_cross_attention", true}};
    EXPECT_EQ(error_of(cross), "config.json: \"add_cross_attention\" is true: cross-attention is not modelled");
    json relative = json{{"model_type", "bert"}, {"position_embedding_type", "relative_key"}};
    EXPECT_EQ(error_of(relative),
              "config.json: \"position_embedding_type\" is \"relative_key\": relative position embeddings are not modelled");
    json t5 = json{{"model_type", "t5"}};
    EXPECT_EQ(error_of(t5), "config.json: \"model_type\" is \"t5\"; ridgeline builds bert, gpt2, opt, llama, mistral and qwen2");
    EXPECT_EQ(error_of(json{{"hidden_size", 8}}),
              "config.json: \"model_type\" is required (bert, gpt2, opt, llama, mistral or qwen2)");
}

TEST(HfConfig, BadValuesNameTheKey) {
    json heads = tinyllama();
    heads["num_key_value_heads"] = "8";
    EXPECT_EQ(error_of(heads), "config.json: \"num_key_value_heads\" must be an integer >= 1, got \"8\"");
    json uneven = tinyllama();
    uneven["num_key_value_heads"] = 5;
    EXPECT_EQ(error_of(uneven), "config.json: config \"m\": num_attention_heads 32 is not a multiple of "
                                "num_key_value_heads 5");
    json act = tinyllama();
    act["hidden_act"] = "mish";
    EXPECT_NE(error_of(act).find("hidden_act \"mish\" is not one ridgeline models"), std::string::npos);
    json negative = tinyllama();
    negative["rope_scaling"] = {{"rope_type", "linear"}, {"factor", -2.0}};
    EXPECT_EQ(error_of(negative), "config.json: \"rope_scaling.factor\" must be > 0");
}

TEST(HfConfig, AFileIsReadWithItsFolderAsTheName) {
    const auto dir = ridgeline::test::scratch_dir() / "TinyLlama-1.1B";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.json") << tinyllama().dump();
    EXPECT_EQ(io::read_hf_config(dir / "config.json").name, "TinyLlama-1.1B");
    std::ofstream(dir / "broken.json") << "{\"model_type\": ";
    try {
        (void)io::read_hf_config(dir / "broken.json");
        FAIL() << "a broken file was read";
    } catch (const core::error& e) {
        EXPECT_EQ(std::string(e.what()).rfind((dir / "broken.json").string() + ": not valid JSON", 0), 0u) << e.what();
    }
}

TEST(HfConfig, ArchitecturesChooseTheHead) {
    // LlamaForCausalLM has the LM head (tinyllama: 1,100,048,384); LlamaModel is the base model without it:
    // 1,100,048,384 - 32,000 x 2,048 (lm_head, untied) = 1,034,512,384
    json doc = tinyllama();
    EXPECT_EQ(params_of(io::parse_hf_config(doc, "c", "m")), 1100048384);
    doc["architectures"] = {"LlamaModel"};
    EXPECT_EQ(params_of(io::parse_hf_config(doc, "c", "m")), 1100048384 - 32000LL * 2048);
    // a classification head is refused by name
    doc["architectures"] = {"LlamaForSequenceClassification"};
    EXPECT_NE(error_of(doc).find("\"architectures\" names LlamaForSequenceClassification, whose head ridgeline does "
                                 "not model (it builds LlamaForCausalLM or LlamaModel)"),
              std::string::npos)
        << error_of(doc);
    // bert-base-uncased's own config says BertForMaskedLM: built as BertModel with its pooler (109,482,240), said so
    std::vector<std::string> warnings;
    const auto bert = io::parse_hf_config(json{{"model_type", "bert"}, {"architectures", {"BertForMaskedLM"}}}, "b.json",
                                          "b", &warnings);
    EXPECT_EQ(params_of(bert), 109482240);
    ASSERT_FALSE(warnings.empty());
    EXPECT_NE(warnings[0].find("architectures BertForMaskedLM: built as BertModel with its pooler"), std::string::npos);
    // BertModel without the pooler is not a class: BertModel has it (the pooler is h x h + h = 590,592 of them)
    warnings.clear();
    EXPECT_EQ(params_of(io::parse_hf_config(json{{"model_type", "bert"}, {"architectures", {"BertModel"}}}, "b", "b")),
              109482240);
}

TEST(HfConfig, WhatNewerTransformersWriteIsRead) {
    // Qwen2.5-0.5B's config.json as published has "use_mrope": false (Qwen2-VL's multimodal rotary, off); true is
    // refused
    json q = {{"model_type", "qwen2"}, {"use_mrope", false}};
    EXPECT_NO_THROW((void)io::parse_hf_config(q, "c", "q"));
    q["use_mrope"] = true;
    EXPECT_NE(error_of(q).find("\"use_mrope\" is true: multimodal rotary embeddings (Qwen2-VL) are not modelled"),
              std::string::npos)
        << error_of(q);
    // layer_types (transformers 4.54 on) that agree with sliding_window and max_window_layers are read; another
    // pattern is refused: a qwen2 of 4 layers, the window from layer 2 on
    json w = {{"model_type", "qwen2"}, {"num_hidden_layers", 4}, {"use_sliding_window", true}, {"sliding_window", 64},
              {"max_window_layers", 2}};
    w["layer_types"] = {"full_attention", "full_attention", "sliding_attention", "sliding_attention"};
    EXPECT_EQ(io::parse_hf_config(w, "c", "q").max_window_layers, 2);
    w["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention", "sliding_attention"};
    EXPECT_NE(error_of(w).find("\"layer_types\" entry 0 is \"sliding_attention\" where sliding_window and "
                               "max_window_layers give \"full_attention\""),
              std::string::npos)
        << error_of(w);
    w["layer_types"] = {"full_attention"};
    EXPECT_NE(error_of(w).find("must be a list of 4 entries"), std::string::npos) << error_of(w);
    // rope_parameters (transformers 5) holds rope_theta and the scaling type together
    json r = tinyllama();
    r.erase("rope_scaling");
    r.erase("rope_theta");
    r["rope_parameters"] = {{"rope_type", "linear"}, {"factor", 2.0}, {"rope_theta", 500000.0}};
    const auto c = io::parse_hf_config(r, "c", "m");
    EXPECT_EQ(c.rope.theta, 500000.0);
    EXPECT_EQ(c.rope.scaling, core::rotary::scaling_t::linear);
    EXPECT_EQ(c.rope.factor, 2.0);
    r["rope_theta"] = 10000.0;  // two thetas that disagree
    EXPECT_NE(error_of(r).find("\"rope_theta\" is 10000.0 and rope_parameters.rope_theta 500000.0: give one"),
              std::string::npos)
        << error_of(r);
    // and the flag of an automatic attention choice is bookkeeping
    EXPECT_NO_THROW((void)io::parse_hf_config(json{{"model_type", "llama"}, {"_attn_implementation_autoset", true}}, "c",
                                              "m"));
}

TEST(HfConfig, SizesAreNeverSilentlyAssumed) {
    // a size key that is null is refused (the class would take None and fail); one that is absent is the class's
    // default, and the warning lists it
    EXPECT_NE(error_of(json{{"model_type", "llama"}, {"hidden_size", nullptr}})
                  .find("\"hidden_size\" is null; give its value (the llama default is 4096)"),
              std::string::npos);
    std::vector<std::string> warnings;
    (void)io::parse_hf_config(json{{"model_type", "llama"}, {"hidden_size", 64}, {"num_attention_heads", 4}}, "l.json",
                              "l", &warnings);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0], "l.json: not in the file, so LlamaConfig's defaults: vocab_size 32000, intermediate_size "
                           "11008, num_hidden_layers 32, max_position_embeddings 2048");
    // a published config has them all: no warning
    warnings.clear();
    (void)io::parse_hf_config(tinyllama(), "c", "m", &warnings);
    EXPECT_TRUE(warnings.empty());
    // more blocks than ridgeline builds (4,096): refused before any is built
    EXPECT_NE(error_of(json{{"model_type", "llama"}, {"num_hidden_layers", std::int64_t{1} << 40}})
                  .find("num_hidden_layers 1099511627776 is more than ridgeline builds (4096 blocks)"),
              std::string::npos);
}

TEST(HfConfig, MessagesUseTheFilesOwnKeys) {
    // GPT-2's keys are n_embd, n_head and activation_function: a rule broken says those
    EXPECT_NE(error_of(json{{"model_type", "gpt2"}, {"n_embd", 64}, {"n_head", 3}})
                  .find("n_embd 64 is not a multiple of n_head 3"),
              std::string::npos)
        << error_of(json{{"model_type", "gpt2"}, {"n_embd", 64}, {"n_head", 3}});
    EXPECT_NE(error_of(json{{"model_type", "gpt2"}, {"activation_function", "weird"}}).find("activation_function \"weird\""),
              std::string::npos);
    // a negative eps names its key
    EXPECT_NE(error_of(json{{"model_type", "llama"}, {"rms_norm_eps", -1e-6}}).find("\"rms_norm_eps\" must be a number >= 0"),
              std::string::npos);
    // a number past a double names the file
    const auto dir = ridgeline::test::scratch_dir() / "huge-theta";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.json") << R"({"model_type": "llama", "rope_theta": 1e999})";
    try {
        (void)io::read_hf_config(dir / "config.json");
        ADD_FAILURE() << "no error";
    } catch (const core::error& e) {
        EXPECT_NE(std::string(e.what()).find("config.json: not valid JSON"), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find("[json.exception"), std::string::npos) << e.what();
    }
}

TEST(HfConfig, NullIsNeverTheClassDefault) {
    // Hugging Face's modelling code reads a null flag as false (`bias=config.enable_bias` -> nn.Linear(bias=None): no
    // bias) and fails on a null eps or activation, so taking the class default for null would count another model:
    // opt-125m with enable_bias true has 125,239,296 parameters, with false 125,156,352 (82,944 = 12 blocks x
    // (4 x 768 + 3072 + 768) biases). Each such null is refused by name.
    for (const char* key : {"enable_bias", "do_layer_norm_before", "layer_norm_elementwise_affine", "tie_word_embeddings",
                            "activation_function"}) {
        const std::string e = error_of(json{{"model_type", "opt"}, {key, nullptr}});
        EXPECT_NE(e.find(std::string("\"") + key + "\" is null; give its value"), std::string::npos) << key << ": " << e;
    }
    EXPECT_NE(error_of(json{{"model_type", "llama"}, {"rms_norm_eps", nullptr}}).find("\"rms_norm_eps\" is null"),
              std::string::npos);
    EXPECT_NE(error_of(json{{"model_type", "bert"}, {"add_cross_attention", nullptr}}).find("\"add_cross_attention\" is null"),
              std::string::npos);
    // where the class reads null as "derive it" (`x if x is not None else ...`), null is that: GPT2's n_inner (4 x
    // n_embd), head_dim (hidden_size / heads), and MistralConfig's num_key_value_heads, whose absent default is 8
    // but whose null is num_attention_heads ("for backward compatibility")
    EXPECT_EQ(io::parse_hf_config(json{{"model_type", "gpt2"}, {"n_embd", 64}, {"n_head", 4}, {"n_inner", nullptr}}, "c", "m")
                  .intermediate_size,
              256);
    EXPECT_EQ(io::parse_hf_config(json{{"model_type", "mistral"}}, "c", "m").num_kv_heads, 8);
    EXPECT_EQ(io::parse_hf_config(json{{"model_type", "mistral"}, {"num_key_value_heads", nullptr}}, "c", "m").num_kv_heads,
              32);
    EXPECT_EQ(io::parse_hf_config(json{{"model_type", "llama"}, {"head_dim", nullptr}}, "c", "m").head_dim, 4096 / 32);
    // Qwen2Attention reads a null head_dim as None and fails: refused; Qwen2Config's absent num_key_value_heads is its
    // default 32 (said in the defaults warning), so 14 heads cannot take it, as in Hugging Face
    EXPECT_NE(error_of(json{{"model_type", "qwen2"}, {"head_dim", nullptr}}).find("\"head_dim\" is null"), std::string::npos);
    std::vector<std::string> notes;
    EXPECT_EQ(io::parse_hf_config(json{{"model_type", "qwen2"}}, "c", "m", &notes).num_kv_heads, 32);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("num_key_value_heads 32"), std::string::npos) << notes[0];
    EXPECT_NE(error_of(json{{"model_type", "qwen2"}, {"hidden_size", 896}, {"num_attention_heads", 14}})
                  .find("num_attention_heads 14 is not a multiple of num_key_value_heads 32"),
              std::string::npos);
}

TEST(HfConfig, NamesAndLengthsAreChecked) {
    // a name with control characters is shown escaped, never raw (it reaches the table's header and every warning)
    const auto named = io::parse_hf_config(json{{"model_type", "llama"}, {"_name_or_path", "evil\n\x1b[2Jname"}}, "c", "m");
    EXPECT_EQ(named.name.find('\n'), std::string::npos) << named.name;
    EXPECT_EQ(named.name.find('\x1b'), std::string::npos) << named.name;
    // a length of tokens in the rope scaling is a whole number in range: 1e30 would overflow int64 (undefined), 100.7
    // would truncate silently
    for (const double bad : {1e30, 100.7, 0.0}) {
        json r = json{{"model_type", "llama"},
                      {"rope_scaling", {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                                        {"high_freq_factor", 4.0}, {"original_max_position_embeddings", bad}}}};
        EXPECT_NE(error_of(r).find("\"rope_scaling.original_max_position_embeddings\" must be a whole number of tokens"),
                  std::string::npos)
            << bad << ": " << error_of(r);
    }
    // a bad key inside rope_parameters is named as rope_parameters', not rope_scaling's
    EXPECT_NE(error_of(json{{"model_type", "llama"}, {"rope_parameters", {{"rope_type", "linear"}, {"factor", 2.0}, {"wat", 1}}}})
                  .find("\"rope_parameters.wat\" is not a key ridgeline models"),
              std::string::npos);
    // a legacy "type" that disagrees with "rope_type" (Llama's config copies "type" over it) is refused; a key of
    // another rope type is left alone but must be a number
    EXPECT_NE(error_of(json{{"model_type", "llama"}, {"rope_scaling", {{"rope_type", "linear"}, {"type", "dynamic"}, {"factor", 2.0}}}})
                  .find("has \"rope_type\" \"linear\" and \"type\" \"dynamic\": give one"),
              std::string::npos);
    EXPECT_NE(error_of(json{{"model_type", "llama"},
                            {"rope_scaling", {{"rope_type", "linear"}, {"factor", 2.0}, {"original_max_position_embeddings", "x"}}}})
                  .find("\"rope_scaling.original_max_position_embeddings\" must be a number, got \"x\""),
              std::string::npos);
    // a dynamic scaling without original_max_position_embeddings takes max_position_embeddings, which is an integer
    EXPECT_EQ(io::parse_hf_config(json{{"model_type", "llama"}, {"max_position_embeddings", 8192},
                                       {"rope_scaling", {{"rope_type", "dynamic"}, {"factor", 2.0}}}},
                                  "c", "m")
                  .rope.max_position_embeddings,
              8192);
    // sizes that overflow int64 are refused by their key, never wrapped: GPT-2's 4 x n_embd, heads x head_dim
    EXPECT_NE(error_of(json{{"model_type", "gpt2"}, {"n_embd", std::int64_t{1} << 61}, {"n_head", 1}, {"n_layer", 1}})
                  .find("\"n_embd\" is 2305843009213693952: 4 x n_embd (the MLP's width) does not fit in int64"),
              std::string::npos);
    EXPECT_NE(error_of(json{{"model_type", "llama"}, {"hidden_size", 4}, {"num_attention_heads", 2},
                            {"head_dim", std::int64_t{1} << 62}})
                  .find("num_attention_heads x head_dim: count does not fit in int64"),
              std::string::npos);
    EXPECT_NE(error_of(json{{"model_type", "opt"}, {"max_position_embeddings", INT64_MAX}})
                  .find("max_position_embeddings 9223372036854775807 is more than ridgeline builds (2^40 positions)"),
              std::string::npos);
    // GPT-2 has no head_dim key: more heads than n_embd is said in its own keys
    EXPECT_NE(error_of(json{{"model_type", "gpt2"}, {"n_embd", 4}, {"n_head", 8}}).find("n_embd 4 is not a multiple of n_head 8"),
              std::string::npos);
    // a value shown in a message is cut short: a list of 20,000 entries is named by its size
    EXPECT_NE(error_of(json{{"model_type", "llama"}, {"hidden_size", json(std::vector<int>(20000, 1))}})
                  .find("\"hidden_size\" must be an integer >= 1, got a list of 20000 entries"),
              std::string::npos);
    // a control character in a value reaches the message escaped
    const std::string act = error_of(json{{"model_type", "llama"}, {"hidden_act", "\x1b[31mRED\x07"}});
    EXPECT_NE(act.find("hidden_act \"[U+001B][31mRED[U+0007]\""), std::string::npos) << act;
    // two architectures would leave the head to a guess
    EXPECT_NE(error_of(json{{"model_type", "llama"}, {"architectures", {"LlamaModel", "LlamaForCausalLM"}}})
                  .find("\"architectures\" names 2 classes"),
              std::string::npos);
}
