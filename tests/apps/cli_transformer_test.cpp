// Transformers from the command line as a user runs them: a config.json of their own, a decode step with its KV
// cache, each distinct layer measured once, and the decode sweep with a prediction.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "process.hpp"
#include "../support/scratch.hpp"

using ridgeline::test::run_ridgeline;
using json = nlohmann::json;

namespace {

/// A two-layer Llama with GQA: hidden 64, 4 heads of 16, 2 kv heads, MLP 128, vocabulary 100.
std::string tiny_llama() {
    const auto dir = ridgeline::test::scratch_dir() / "tiny-llama";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.json") << R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
        "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": false})";
    return (dir / "config.json").string();
}

}  // namespace

TEST(CliTransformer, SummaryOfADecodeStepNamesItsKvCache) {
    auto r = run_ridgeline({"summary", "--hf-config", tiny_llama(), "--phase", "decode", "--kv-len", "8", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["model"], "tiny-llama");
    EXPECT_EQ(j["pass"]["phase"], "decode");
    EXPECT_EQ(j["pass"]["kv_len"], 8);
    // 2 layers x keys and values x 2 kv heads x 16 x (8 + 1) positions x batch 1 x 4 bytes = 4,608
    EXPECT_EQ(j["pass"]["kv_cache_bytes"], 4608);
    // one new token: the embedding reads 1x1 ids
    EXPECT_EQ(j["inputs"][0]["shape"], json::array({1, 1}));
    // every attention pair of a decode step executes: executed_flops = flops for attention
    for (const auto& l : j["layers"])
        if (l["op"] == "attention") {
            EXPECT_EQ(l["executed_flops"], l["flops"]);
        }
    // a model's folder is read through its config.json, as from_pretrained takes it
    const auto folder = std::filesystem::path(tiny_llama()).parent_path().string();
    auto f = run_ridgeline({"summary", "--hf-config", folder, "--format", "json"});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    EXPECT_EQ(json::parse(f.out)["model"], "tiny-llama");
    // the table says the pass and the cache
    auto t = run_ridgeline({"summary", "--hf-config", tiny_llama(), "--phase", "decode", "--kv-len", "8"});
    EXPECT_NE(t.out.find("model tiny-llama (decode step over a KV cache of 8 tokens)"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("KV cache 4.608 kB"), std::string::npos) << t.out;
}

TEST(CliTransformer, RotaryPositionsPastTheTrainedLengthAreCountedWithAWarning) {
    // tiny_llama has max_position_embeddings 64: a decode step over 64 cached tokens reads position 65. Rotary
    // positions have no table to run past, so it is counted, with a warning; 63 cached tokens (64 positions) is quiet
    auto past = run_ridgeline({"summary", "--hf-config", tiny_llama(), "--phase", "decode", "--kv-len", "64"});
    ASSERT_EQ(past.exit_code, 0) << past.err;
    EXPECT_NE(past.err.find("warning: model \"tiny-llama\": 65 positions per sequence pass its max_position_embeddings "
                            "64"),
              std::string::npos)
        << past.err;
    auto within = run_ridgeline({"summary", "--hf-config", tiny_llama(), "--phase", "decode", "--kv-len", "63"});
    ASSERT_EQ(within.exit_code, 0) << within.err;
    EXPECT_EQ(within.err.find("warning"), std::string::npos) << within.err;
    // an empty cache: the new token is the one position
    auto empty = run_ridgeline({"summary", "--hf-config", tiny_llama(), "--phase", "decode", "--kv-len", "0"});
    EXPECT_NE(empty.out.find("1 position per sequence"), std::string::npos) << empty.out;
}

TEST(CliTransformer, ProfileMeasuresEachDistinctLayerOnce) {
    auto r = run_ridgeline({"profile", "--hf-config", tiny_llama(), "--phase", "decode", "--kv-len", "8", "--quick",
                            "--quiet", "--no-roofline", "--device", "cpu", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    // layer 1 repeats layer 0: its layers report layer 0's measurement, named
    EXPECT_GT(j["layers_reused"].get<int>(), 0);
    // each reused layer names an earlier one of the same layer string and input shapes (the same work)
    int reused = 0;
    std::map<std::string, json> seen;
    for (const auto& l : j["layers"]) {
        if (l["state"] == "view") continue;
        EXPECT_EQ(l["verification"]["state"], "passed") << l["name"];
        if (!l["measured_as"].is_null()) {
            ++reused;
            ASSERT_TRUE(seen.count(l["measured_as"])) << l["name"] << " reports a later or unknown layer";
            const json& first = seen[l["measured_as"]];
            EXPECT_EQ(first["layer"], l["layer"]) << l["name"];
            EXPECT_EQ(first["input_shapes"], l["input_shapes"]) << l["name"];
            EXPECT_EQ(first["time"]["median_ms"], l["time"]["median_ms"]) << l["name"];
        }
        seen[l["name"]] = l;
    }
    // layer 1 repeats all of layer 0
    EXPECT_TRUE(seen["model.layers.1.mlp.down_proj"]["measured_as"] == "model.layers.0.mlp.down_proj");
    EXPECT_EQ(reused, j["layers_reused"].get<int>());
    EXPECT_EQ(j["memory"]["kv_cache_bytes"], 4608);
    // --every-layer measures each
    auto every = run_ridgeline({"profile", "--hf-config", tiny_llama(), "--phase", "decode", "--kv-len", "8", "--quick",
                                "--quiet", "--no-roofline", "--device", "cpu", "--format", "json", "--every-layer",
                                "--no-end-to-end"});
    ASSERT_EQ(every.exit_code, 0) << every.err;
    EXPECT_EQ(json::parse(every.out)["layers_reused"], 0);
}

TEST(CliTransformer, DecodeSweepNamesWhereTheStepTurnsAndPredicts) {
    auto r = run_ridgeline({"sweep", "--hf-config", tiny_llama(), "--phase", "decode", "--kv-len", "8", "--batch", "1,2",
                            "--quick", "--quiet", "--device", "cpu", "--to", "h100", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["schema"], "ridgeline.transformer_sweep/1");
    EXPECT_EQ(j["over"], "batch");
    ASSERT_EQ(j["points"].size(), 2u);
    for (const auto& p : j["points"]) {
        EXPECT_GT(p["measured"]["step_ms"].get<double>(), 0.0);
        EXPECT_TRUE(p["measured"]["by_class_ms"].contains("linear"));
        EXPECT_GT(p["predicted"]["step_ms"].get<double>(), 0.0);
    }
    // batch 2 does twice batch 1's work per step, two tokens
    EXPECT_EQ(j["points"][1]["tokens"], 2);
    EXPECT_EQ(j["target"]["note"], "predicted from datasheet peaks and op-class models, not measured");
    // the verdict names what takes most of the last step's time: on this tiny model a dispatch's fixed cost can
    // outweigh memory, and then the step is not called memory-bound
    {
        auto text = run_ridgeline({"sweep", "--hf-config", tiny_llama(), "--phase", "decode", "--kv-len", "8", "--batch",
                                   "1,2", "--quick", "--device", "cpu", "--format", "json", "--output",
                                   (ridgeline::test::scratch_dir() / "sweep.json").string()});
        ASSERT_EQ(text.exit_code, 0) << text.err;
        const json tj = json::parse(std::ifstream(ridgeline::test::scratch_dir() / "sweep.json"));
        const auto& tl = tj["points"][1]["measured"]["by_bound_ms"];
        const auto tat = [&](const char* k) { return tl.contains(k) ? tl[k].get<double>() : 0.0; };
        // compute leads where it takes more than memory and more than overhead; where it does not lead at the last
        // size there is no turn (even where it led at batch 1: a turn a later size contradicts is none)
        const bool compute_leads = tat("compute") > tat("memory") && tat("compute") > tat("overhead");
        if (tj["points"][1]["measured"]["trusted"] == true && !compute_leads) {
            const bool overhead = tat("overhead") > tat("memory") && tat("overhead") >= tat("compute");
            const char* want = overhead ? "the step stays overhead-bound here up to batch 2"
                                        : "the step stays memory-bound here up to batch 2";
            EXPECT_NE(text.out.find(want), std::string::npos) << text.out;
        }
    }
    // a step that other work disturbed (more than 5% of its layers' time) is never read: the JSON says so per step,
    // the warnings name its size, and the turn is never placed at it (on a quiet machine every step is trusted)
    for (std::size_t i = 0; i < j["points"].size(); ++i) {
        const auto& p = j["points"][i];
        const auto& m = p["measured"]["by_bound_ms"];
        const double total = [&] {
            double t = 0;
            for (const auto& [k, v] : m.items()) t += v.get<double>();
            return t;
        }();
        const double disturbed = m.contains("disturbed") ? m["disturbed"].get<double>() : 0.0;
        EXPECT_EQ(p["measured"]["trusted"].get<bool>(), total > 0 && disturbed <= 0.05 * total) << p.dump();
        if (!p["measured"]["trusted"].get<bool>()) {
            EXPECT_FALSE(j["turns_compute_bound_at"].is_object() && j["turns_compute_bound_at"]["batch"] == p["batch"]);
            ASSERT_FALSE(j["warnings"].empty());
            EXPECT_NE(j["warnings"][0].get<std::string>().find("the steps at batch "), std::string::npos) << j["warnings"];
        }
    }
    // size lists are decimal sizes, each once, run in order
    for (const char* bad : {"1,,2", "5,", " 1", "+2", "0x10", "1,1", "0", "2199023255553"}) {
        auto e = run_ridgeline({"sweep", "--hf-config", tiny_llama(), "--phase", "decode", "--kv-len", "8", "--batch", bad});
        EXPECT_EQ(e.exit_code, 2) << bad << ": " << e.err;
        EXPECT_EQ(e.err.find("ridgeline: error: --batch \""), 0u) << bad << ": " << e.err;
    }
    // the mistakes say what to give
    auto both = run_ridgeline({"sweep", "--hf-config", tiny_llama(), "--phase", "decode", "--kv-len", "8,16", "--batch", "1,2"});
    EXPECT_EQ(both.exit_code, 2);
    EXPECT_NE(both.err.find("sweep over --batch or over --kv-len, not both"), std::string::npos) << both.err;
    auto missing = run_ridgeline({"sweep", "--hf-config", tiny_llama(), "--phase", "decode"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("needs --kv-len"), std::string::npos) << missing.err;
}

TEST(CliTransformer, AKvCacheThatCannotFitIsRefusedBeforeAnythingRuns) {
    // the tiny Llama's cache at kv_len 8: 4,608 bytes (above) = 4.5 KiB; 4,096 bytes allowed cannot hold it. The
    // refusal comes before the ceilings and the layers: nothing is measured (no --no-roofline here, and no cached
    // ceilings in the test's home, yet it answers at once with exit 1)
    auto r = run_ridgeline({"profile", "--hf-config", tiny_llama(), "--phase", "decode", "--kv-len", "8", "--quick",
                            "--device", "cpu", "--max-memory", "4096"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("a decode step over a KV cache of 8 tokens, batch 1, needs 4.5 KiB of KV cache: only 4.0 KiB "
                         "allowed by the memory limit given"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("ceilings"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    // the sweep checks every step first: batch 1 fits (4,608 bytes), batch 2 does not (9,216 > 8,192)
    auto s = run_ridgeline({"sweep", "--hf-config", tiny_llama(), "--phase", "decode", "--kv-len", "8", "--batch", "1,2",
                            "--quick", "--device", "cpu", "--max-memory", "8192"});
    EXPECT_EQ(s.exit_code, 1);
    EXPECT_NE(s.err.find("batch 2, needs 9.0 KiB of KV cache: only 8.0 KiB allowed"), std::string::npos) << s.err;
    EXPECT_EQ(s.err.find("ceilings"), std::string::npos) << s.err;
    // a cache that fits in a model that does not: the layers are measured, the end to end is skipped with the reason
    // (the whole pass needs every layer's weights and buffers at once; 200,000 bytes hold each layer, not all)
    auto e = run_ridgeline({"profile", "--hf-config", tiny_llama(), "--phase", "decode", "--kv-len", "8", "--quick",
                            "--quiet", "--no-roofline", "--device", "cpu", "--format", "json", "--max-memory", "200000"});
    ASSERT_EQ(e.exit_code, 0) << e.err;
    const json j = json::parse(e.out);
    EXPECT_EQ(j["end_to_end"]["state"], "skipped");
    EXPECT_NE(j["end_to_end"]["reason"].get<std::string>().find("allowed by the memory limit given"), std::string::npos)
        << j["end_to_end"];
    for (const auto& l : j["layers"]) {
        if (l["state"] != "view") {
            EXPECT_EQ(l["verification"]["state"], "passed") << l["name"];
        }
    }
}

TEST(CliTransformer, CompareAndPredictKeepThePass) {
    // two decode steps over caches of 8 and 16 tokens have layers of the same names doing other work: compare refuses
    // them, naming both passes; the same pass twice compares, and its report names the pass; predict carries it
    const auto dir = ridgeline::test::scratch_dir() / "passes";
    std::filesystem::create_directories(dir);
    std::map<std::string, std::string> file;
    for (const char* kv : {"8", "16"}) {
        file[kv] = (dir / (std::string("kv") + kv + ".json")).string();
        auto r = run_ridgeline({"profile", "--hf-config", tiny_llama(), "--phase", "decode", "--kv-len", kv, "--quick",
                                "--quiet", "--no-end-to-end", "--device", "cpu", "--format", "json", "--output",
                                file[kv]});
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    auto bad = run_ridgeline({"compare", file["8"], file["16"]});
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_NE(bad.err.find("compare: \"kv16 ("), std::string::npos) << bad.err;
    EXPECT_NE(bad.err.find(" is a decode step over a KV cache of 16 tokens, batch 1, \"kv8 ("), std::string::npos)
        << bad.err;
    EXPECT_NE(bad.err.find(" a decode step over a KV cache of 8 tokens, batch 1: the same layers do other work"),
              std::string::npos)
        << bad.err;
    // a pass that is not one of the two phases is refused by name, not read as "no pass"
    {
        json j = json::parse(std::ifstream(file["8"]));
        j["pass"]["phase"] = "train";
        const std::string broken = (dir / "broken_pass.json").string();
        std::ofstream(broken) << j.dump();
        auto r = run_ridgeline({"compare", file["8"], broken});
        EXPECT_EQ(r.exit_code, 1);
        EXPECT_NE(r.err.find("$.pass.phase"), std::string::npos) << r.err;
    }
    // one pass in two dtypes compares, and each run's label says its dtype where it is not fp32
    {
        json j = json::parse(std::ifstream(file["8"]));
        j["dtype"] = "bf16";
        const std::string other = (dir / "kv8_bf16.json").string();
        std::ofstream(other) << j.dump();
        auto r = run_ridgeline({"compare", file["8"], other, "--format", "json", "--quiet"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const json c = json::parse(r.out);
        EXPECT_EQ(c["runs"][0]["label"].get<std::string>().find("fp32"), std::string::npos) << c["runs"][0]["label"];
        EXPECT_NE(c["runs"][1]["label"].get<std::string>().find(", bf16)"), std::string::npos) << c["runs"][1]["label"];
    }
    // two configs saved under one name (a wider hidden size): the same layer names do other work; the first layer
    // whose FLOPs differ is named with both counts (the attention of a 16-token cache: 4 x 4 heads x 16 x (16 + 1)
    // x 1 query = 4,352 FLOPs against 4 x 4 x 16 x 9 = 2,304 at 8)
    {
        json j = json::parse(std::ifstream(file["16"]));
        j["pass"]["kv_len"] = 8;  // the pass says 8, the layers' work is 16's
        const std::string other = (dir / "renamed.json").string();
        std::ofstream(other) << j.dump();
        auto r = run_ridgeline({"compare", file["8"], other});
        EXPECT_EQ(r.exit_code, 1);
        EXPECT_NE(r.err.find("does 4,352 FLOPs in \"renamed ("), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("2,304 in the baseline \"kv8 ("), std::string::npos) << r.err;
    }
    // a report's strings reach the terminal escaped; an unknown dtype and a pass without its length are refused
    {
        json j = json::parse(std::ifstream(file["8"]));
        j["device"]["backend"] = "cpu\x1b[31m";
        j["layers"][0]["name"] = std::string("emb\x1b[2J");
        const std::string evil = (dir / "evil.json").string();
        std::ofstream(evil) << j.dump();
        auto r = run_ridgeline({"predict", "--from", evil, "--to", "h100"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
        EXPECT_EQ(r.err.find('\x1b'), std::string::npos);
        EXPECT_NE(r.out.find("emb[U+001B][2J"), std::string::npos) << r.out;
        j = json::parse(std::ifstream(file["8"]));
        j["dtype"] = "int4";
        std::ofstream(evil) << j.dump();
        EXPECT_NE(run_ridgeline({"compare", file["8"], evil}).err.find("$.dtype: expected fp32, tf32, fp16 or bf16"),
                  std::string::npos);
        j = json::parse(std::ifstream(file["8"]));
        j["pass"].erase("kv_len");
        std::ofstream(evil) << j.dump();
        EXPECT_NE(run_ridgeline({"compare", file["8"], evil}).err.find("$.pass.kv_len: expected an integer >= 0"),
                  std::string::npos);
    }
    // predict without a model predicts the report's pass: a flag that would describe another is refused
    for (const std::vector<std::string>& extra : {std::vector<std::string>{"--kv-len", "7"}, {"--phase", "prefill"},
                                                  {"--seq", "9"}}) {
        std::vector<std::string> args{"predict", "--from", file["8"], "--to", "h100"};
        args.insert(args.end(), extra.begin(), extra.end());
        auto r = run_ridgeline(args);
        EXPECT_EQ(r.exit_code, 2) << extra[0] << ": " << r.err;
        EXPECT_NE(r.err.find("without one, the report's model and pass are predicted"), std::string::npos) << r.err;
    }
    auto same = run_ridgeline({"compare", file["8"], file["8"], "--format", "json"});
    ASSERT_EQ(same.exit_code, 0) << same.err;
    EXPECT_EQ(json::parse(same.out)["pass"]["kv_len"], 8);
    auto p = run_ridgeline({"predict", "--from", file["16"], "--to", "h100", "--format", "json", "--quiet"});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    const json pj = json::parse(p.out);
    EXPECT_EQ(pj["pass"]["phase"], "decode");
    EXPECT_EQ(pj["pass"]["kv_len"], 16);
    // a prediction of the kv-16 step is compared with the kv-16 profile, not the kv-8 one
    const std::string pred = (dir / "pred16.json").string();
    std::ofstream(pred) << pj.dump();
    EXPECT_EQ(run_ridgeline({"compare", file["16"], pred}).exit_code, 0);
    EXPECT_EQ(run_ridgeline({"compare", file["8"], pred}).exit_code, 1);
}

TEST(CliTransformer, CountsTooLargeNameTheConfigsSizes) {
    // hidden 2^20 x intermediate 2^40 MACs per token overflow int64 (2^60 x 2048 tokens = 2^71 > 2^63): the error
    // names the first layer it breaks in and the sizes of the file that made it
    const auto dir = ridgeline::test::scratch_dir() / "huge-mlp";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.json") << R"({"model_type": "llama", "hidden_size": 1048576, "num_attention_heads": 8,
        "intermediate_size": 1099511627776, "num_hidden_layers": 2, "vocab_size": 32000, "max_position_embeddings": 4096})";
    auto r = run_ridgeline({"summary", "--hf-config", (dir / "config.json").string()});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("\"model.layers.0.mlp.gate_proj\": linear macs: count does not fit in int64"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("hidden_size 1048576, intermediate_size 1099511627776, vocab_size 32000, 2 layers, prefill of "
                         "2048 tokens at batch 1: too large to count"),
              std::string::npos)
        << r.err;
}
