// `ridgeline profile` as a user runs it: JSON field by field, the table, CSV, exit codes, Ctrl-C.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "process.hpp"
#include "../support/scratch.hpp"

#ifdef RIDGELINE_HAVE_ZLIB
#include <zlib.h>
#endif

using ridgeline::test::run_ridgeline;
using json = nlohmann::json;

namespace {
const std::vector<std::string> quick_linear = {"profile", "--layer", "linear:in_features=64,out_features=32", "--input",
                                               "8x64", "--quick", "--quiet", "--device", "cpu"};
std::vector<std::string> with(std::vector<std::string> base, std::initializer_list<std::string> more) {
    base.insert(base.end(), more);
    return base;
}
}  // namespace

TEST(CliProfile, JsonFieldByField) {
    auto r = run_ridgeline(with(quick_linear, {"--format", "json"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["schema"], "ridgeline.profile/2");
    EXPECT_EQ(j["complete"], true);
    EXPECT_EQ(j["device"]["backend"], "cpu");
    EXPECT_EQ(j["device"]["kind"], "cpu");
    EXPECT_GE(j["device"]["threads"].get<int>(), 1);
    EXPECT_EQ(j["timing"]["mode"], "hot");
    EXPECT_EQ(j["timing"]["min_samples"], 5);  // --quick
    EXPECT_DOUBLE_EQ(j["timing"]["max_time_s"].get<double>(), 0.2);
    EXPECT_GT(j["timing"]["timer_resolution_ns"].get<double>(), 0.0);
    EXPECT_GE(j["timing"]["timer_overhead_ns"].get<double>(), 0.0);
    const json& l = j["layers"][0];
    // costs as in summary: macs 8*64*32 = 16,384; flops 2*16,384 + 8*32 = 33,024;
    // bytes (512 + 2,080 + 256) * 4 = 11,392
    EXPECT_EQ(l["macs"], 16384);
    EXPECT_EQ(l["flops"], 33024);
    EXPECT_EQ(l["bytes"], 11392);
    EXPECT_EQ(l["state"], "measured");
    EXPECT_EQ(l["verification"]["state"], "passed");
    EXPECT_LE(l["verification"]["rel_l2_error"].get<double>(), 1e-4);
    const json& t = l["time"];
    for (const char* k : {"median_ms", "mean_ms", "stddev_ms", "min_ms", "max_ms", "p5_ms", "p95_ms", "ci95_low_ms",
                          "ci95_high_ms", "samples", "runs", "noise_target_met"})
        EXPECT_TRUE(t.contains(k)) << k;
    const double median = t["median_ms"];
    EXPECT_GT(median, 0.0);
    EXPECT_LE(t["min_ms"].get<double>(), median);
    EXPECT_LE(t["ci95_low_ms"].get<double>(), median);
    EXPECT_GE(t["ci95_high_ms"].get<double>(), median);
    EXPECT_GE(t["samples"].get<int>(), 5);
    EXPECT_GE(t["runs"].get<int>(), t["samples"].get<int>());
    // achieved rates are the counts over the median
    EXPECT_NEAR(l["achieved_gflops"].get<double>(), 33024.0 / (median * 1e-3) / 1e9, 1e-6);
    EXPECT_NEAR(l["achieved_gbs"].get<double>(), 11392.0 / (median * 1e-3) / 1e9, 1e-6);
    EXPECT_EQ(j["end_to_end"]["state"], "measured");
    EXPECT_GT(j["end_to_end"]["time"]["median_ms"].get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(j["sum_of_layers_ms"].get<double>(), median);
    // memory: params 2,080 * 4 = 8,320 bytes; peak = input 2 KiB + output 1 KiB = 3,072
    EXPECT_EQ(j["memory"]["parameter_bytes"], 8320);
    EXPECT_EQ(j["memory"]["peak_activation_bytes"], 3072);
    EXPECT_EQ(j["training_estimate"]["backward_flops"], 2 * 33024);
}

TEST(CliProfile, TableAndCsv) {
    // the default table fits 120 columns: the counts go, a line says which; no line of it is wider
    auto narrow = run_ridgeline(quick_linear);
    ASSERT_EQ(narrow.exit_code, 0) << narrow.err;
    // the counts go first, the largest rank first: FLOP/B, bytes, MACs (then FLOPs, params, output when needed)
    EXPECT_TRUE(std::regex_search(
        narrow.out, std::regex(R"(\ncolumns left out to fit 120: (output, )?(params, )?MACs, (FLOPs, )?bytes, FLOP/B \(--wide)")))
        << narrow.out;
    std::istringstream lines(narrow.out);
    for (std::string line; std::getline(lines, line);) {
        std::size_t columns = 0;  // UTF-8 code points ("±" is two bytes)
        for (unsigned char ch : line) columns += (ch & 0xC0) != 0x80;
        EXPECT_LE(columns, 120u) << line;
    }
    // --wide: every column
    auto r = run_ridgeline(with(quick_linear, {"--wide"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(median\s+%time\s+CI95\s+GFLOP/s\s+GB/s\s+bound\s+rule\s+%roof\s+verify)"))) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\nlinear\s+linear\s+8x32\s+2,080\s+16\.38 k\s+33\.02 k\s+11\.39 kB\s+2\.90\s+[0-9.]+ [mun]?s\s+100\.0%\s+±[0-9.]+%\*?\s+[0-9.?]+\s+[0-9.?]+\s+(compute|memory|overhead|ambiguous|mistrusted|disturbed)\s+(C>M|M>C|<=4D|~4D O\|[CM]|~ridge C\|M|>C|>M|!)\s+[0-9]*%?\s+passed)")))
        << r.out;
    EXPECT_NE(r.out.find("end to end: "), std::string::npos);
    EXPECT_NE(r.out.find("device cpu: "), std::string::npos);
    auto c = run_ridgeline(with(quick_linear, {"--format", "csv"}));
    ASSERT_EQ(c.exit_code, 0) << c.err;
    EXPECT_EQ(c.out.substr(0, c.out.find('\n')),
              "name,op,layer,inputs,input_shapes,output_shape,params,buffers,macs,flops,bytes,arithmetic_intensity,state,"
              "median_ms,ci95_low_ms,ci95_high_ms,samples,runs,noise_target_met,achieved_gflops,achieved_gbs,"
              "verification,rel_l2_error,executed_macs,executed_flops,disturbed,disturbed_samples,stolen_fraction,bound,"
              "roof_fraction,"
              "bound_rule,twins_disagree,time_share,measured_as");
    // the linear layer executes all its 8*32*64 = 16,384 MACs (no padding) and 2 x 16,384 + 8 x 32 bias adds =
    // 33,024 FLOPs; its time was clean on a quiet machine
    EXPECT_TRUE(std::regex_search(c.out, std::regex(R"(\nlinear,linear,.*,measured,[0-9.e-]+,.*,passed,[0-9.e-]*,16384,33024,(true|false),[0-9]+,[0-9.e-]+,[a-z]+,[0-9.e-]*,[^,\n]*,,1,\n)")))
        << c.out;
}

TEST(CliProfile, ReferenceDeviceAndUnsupportedDtype) {
    auto ref = run_ridgeline({"profile", "--layer", "relu", "--input", "4x4", "--quick", "--quiet", "--device", "cpu-ref",
                              "--format", "json"});
    ASSERT_EQ(ref.exit_code, 0) << ref.err;
    const json j = json::parse(ref.out);
    EXPECT_EQ(j["device"]["backend"], "cpu-ref");
    EXPECT_EQ(j["layers"][0]["verification"]["state"], "skipped");
    EXPECT_EQ(j["layers"][0]["verification"]["message"], "the backend is the reference");
    // tf32 is an NVIDIA tensor-core format: every layer declined -> the report is written, exit 1, one line
    auto tf = run_ridgeline({"profile", "--layer", "relu", "--input", "4x4", "--quick", "--quiet", "--device", "cpu",
                             "--dtype", "tf32"});
    EXPECT_EQ(tf.exit_code, 1);
    EXPECT_NE(tf.out.find("unsupported"), std::string::npos);
    EXPECT_NE(tf.err.find("no layer could be measured on cpu in tf32: tf32 is a tensor-core format"), std::string::npos)
        << tf.err;
}

TEST(CliProfile, InterruptWritesAPartialReport) {
    namespace fs = std::filesystem;
    const fs::path dir = ridgeline::test::fresh_scratch_dir("sigint");
    const std::string path = (dir / "partial.json").string();
    // SIGINT lands once the fourth layer's progress line is on stderr (not a terminal: one line per layer),
    // whatever the machine's speed; --no-roofline: an uncached ceilings measurement would come first
    auto r = ridgeline::test::run_ridgeline_signalled_at(
        {"profile", "--model", "resnet50", "--device", "cpu", "--format", "json", "--output", path, "--no-roofline"}, SIGINT,
        "[4/");
    EXPECT_EQ(r.exit_code, 130) << r.err;
    EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
    std::ifstream f(path);
    ASSERT_TRUE(f.good());
    const json j = json::parse(f);
    EXPECT_EQ(j["complete"], false);
    EXPECT_FALSE(j["not_measured"].empty());
    std::size_t measured = 0;
    for (const auto& l : j["layers"]) measured += l["state"] == "measured";
    EXPECT_GE(measured, 1u);  // what was measured before the signal is kept
    EXPECT_EQ(j["layers"].size(), j["not_measured"].size() + measured +
                                      static_cast<std::size_t>(std::count_if(j["layers"].begin(), j["layers"].end(),
                                                                             [](const json& l) {
                                                                                 return l["state"] != "measured" &&
                                                                                        l["state"] != "not_measured";
                                                                             })));
    fs::remove_all(dir);
}

// The case that reached a user (avg_pool2d ceil_mode with count_include_pad, no padding): verification passes now,
// on the one thread the report used; PyTorch's values for this input are checked in tests/backend_api/differential_test.cpp.
TEST(CliProfile, AvgPoolCeilModeIsVerified) {
    auto r = run_ridgeline({"profile", "--layer", "avg_pool2d:kernel_size=3,stride=2,ceil_mode=true", "--input", "1x1x4x4",
                            "--device", "cpu", "--threads", "1", "--quick", "--quiet", "--no-roofline", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["layers"][0]["state"], "measured");
    EXPECT_EQ(j["layers"][0]["verification"]["state"], "passed");
}

// A tensor read twice through --model-file: matmul(x, transpose(x)) for x of 1x128x64 moves 98,304 bytes (x once,
// 32,768 B, and the 1x128x128 product, 65,536 B), and the layer, timed on x alone, is verified.
TEST(CliProfile, ATensorReadTwiceIsCountedAndTimedOnce) {
    const auto model = ridgeline::test::fresh_scratch_dir("read-twice") / "gram.json";
    std::ofstream(model) << R"({"name": "gram", "inputs": [{"name": "x", "shape": [1, 128, 64]}], "layers": [
        {"name": "t", "op": "transpose", "dim0": 1, "dim1": 2, "inputs": ["x"]},
        {"name": "mm", "op": "matmul", "inputs": ["x", "t"]}]})";
    auto r = run_ridgeline({"profile", "--model-file", model.string(), "--device", "cpu", "--quick", "--quiet",
                            "--no-roofline", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j["layers"][1]["bytes"], 98304);
    EXPECT_EQ(j["layers"][1]["verification"]["state"], "passed");
}

namespace {
/// A file's bytes, gunzipped where it ends in .gz (zlib reads a plain file as it is, too).
std::string read_maybe_gzip(const std::filesystem::path& p) {
#ifdef RIDGELINE_HAVE_ZLIB
    gzFile f = gzopen(p.c_str(), "rb");
    if (!f) return {};
    std::string out;
    char buf[65536];
    for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    gzclose(f);
    return out;
#else
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
#endif
}
}  // namespace

TEST(CliProfile, TraceOfTheEndToEndPass) {
    // a two-layer model (linear then relu): each traced pass holds one slice per layer, on the layers' thread, inside
    // its pass's slice, in order; the file is gzip where its name ends in .gz
    const auto dir = ridgeline::test::fresh_scratch_dir("trace");
    const auto model = dir / "two.json";
    std::ofstream(model) << R"({"inputs": [{"name": "x", "shape": [8, 64]}], "layers": [)"
                         << R"({"name": "fc", "op": "linear", "in_features": 64, "out_features": 32},)"
                         << R"({"name": "act", "op": "relu"}]})";
#ifdef RIDGELINE_HAVE_ZLIB
    const auto file = dir / "t.json.gz";
#else
    const auto file = dir / "t.json";
#endif
    auto r = run_ridgeline({"profile", "--model-file", model.string(), "--quick", "--quiet", "--device", "cpu",
                            "--trace", file.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string text = read_maybe_gzip(file);
#ifdef RIDGELINE_HAVE_ZLIB
    std::ifstream raw(file, std::ios::binary);
    unsigned char magic[2] = {0, 0};
    raw.read(reinterpret_cast<char*>(magic), 2);
    EXPECT_EQ(magic[0], 0x1f);  // gzip's magic bytes (RFC 1952)
    EXPECT_EQ(magic[1], 0x8b);
#endif
    const json t = json::parse(text);
    const int passes = t["otherData"]["passes"].get<int>();
    EXPECT_GE(passes, 3);
    EXPECT_LE(passes, 20);
    std::vector<json> pass_slices, layer_slices;
    for (const auto& e : t["traceEvents"])
        if (e["ph"] == "X") (e["tid"] == 1 ? pass_slices : layer_slices).push_back(e);
    ASSERT_EQ(static_cast<int>(pass_slices.size()), passes);
    ASSERT_EQ(layer_slices.size(), 2u * static_cast<std::size_t>(passes));
    for (int p = 0; p < passes; ++p) {
        const json& pass = pass_slices[static_cast<std::size_t>(p)];
        const json& fc = layer_slices[2 * static_cast<std::size_t>(p)];
        const json& act = layer_slices[2 * static_cast<std::size_t>(p) + 1];
        EXPECT_EQ(fc["name"], "fc");
        EXPECT_EQ(act["name"], "act");
        const double start = pass["ts"].get<double>(), end = start + pass["dur"].get<double>();
        EXPECT_DOUBLE_EQ(fc["ts"].get<double>(), start);  // the first layer starts with its pass
        EXPECT_DOUBLE_EQ(act["ts"].get<double>(), fc["ts"].get<double>() + fc["dur"].get<double>());
        EXPECT_LE(act["ts"].get<double>() + act["dur"].get<double>(), end + 1e-6);
        EXPECT_EQ(fc["args"]["flops"], 2 * 8 * 64 * 32 + 8 * 32);  // 2 x MACs + the bias adds
    }
    // --no-end-to-end leaves nothing to trace: a usage error before anything runs
    auto none = run_ridgeline({"profile", "--model-file", model.string(), "--quick", "--no-end-to-end", "--trace",
                               (dir / "u.json").string()});
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_NE(none.err.find("--trace records the end-to-end pass"), std::string::npos) << none.err;
}
