// report::chrome_trace against the Trace Event Format (its JSON object form): metadata naming the process and the two
// threads, a complete event per pass and per layer with work in each pass (ts and dur in microseconds, the layers
// tiling their pass), args with the layer's counts and its own verdict, and counter events that step with the slices
// and fall to 0 at each pass's end. The passes are made by hand, so every time below is derived.
#include <gtest/gtest.h>

#include "../support/measured_layer.hpp"
#include "ridgeline/report/trace.hpp"

using namespace ridgeline;

namespace {

/// x [10, 100] -> linear 100 -> 100 "fc" -> flatten "flat" (a view) -> relu "act"; two traced passes.
profiler::profile_result traced() {
    profiler::profile_result r = test::chain_profile(
        "tiny", {10, 100}, {{"fc", "linear:in_features=100,out_features=100"}, {"flat", "flatten"}, {"act", "relu"}});
    r.device.backend = "cpu";
    r.device.name = "a CPU";
    r.layers.push_back(test::measured_layer(r.analysis.layers[0], 0.010));
    profiler::layer_profile view;
    view.analysis = r.analysis.layers[1];
    view.state = profiler::run_state::view;
    r.layers.push_back(view);
    r.layers.push_back(test::measured_layer(r.analysis.layers[2], 0.002));
    core::roofline_point v;
    v.bound = core::bound_class::compute;
    v.rule = "C>M";
    v.roof_fraction = 0.5;
    v.compute_ms = 0.005;
    r.layers[0].roofline = v;
    // pass 1 from 1,000 ns: fc ends at 11,000 (10 us), act at 13,000 (2 us); the pass ends at 14,000
    // pass 2 from 20,000 ns: fc ends at 32,000 (12 us), act at 34,500 (2.5 us); the pass ends at 35,000
    r.trace = {{1000, 14000, {{0, 11000}, {2, 13000}}}, {20000, 35000, {{0, 32000}, {2, 34500}}}};
    return r;
}

std::vector<nlohmann::json> of_phase(const nlohmann::json& t, const std::string& ph) {
    std::vector<nlohmann::json> out;
    for (const auto& e : t["traceEvents"])
        if (e["ph"] == ph) out.push_back(e);
    return out;
}

}  // namespace

TEST(ChromeTrace, PassesAndLayersAsCompleteEventsInMicroseconds) {
    const nlohmann::json t = report::chrome_trace(traced());
    ASSERT_TRUE(t["traceEvents"].is_array());
    EXPECT_EQ(t["displayTimeUnit"], "ns");
    EXPECT_EQ(t["otherData"]["passes"], 2);
    // every event has the fields its phase needs (the format: name, ph, pid; X: ts, dur, tid; C: ts, args)
    for (const auto& e : t["traceEvents"]) {
        ASSERT_TRUE(e.contains("name") && e.contains("ph") && e.contains("pid")) << e;
        if (e["ph"] == "X") {
            ASSERT_TRUE(e["ts"].is_number() && e["dur"].is_number() && e["tid"].is_number_integer()) << e;
            EXPECT_GE(e["dur"].get<double>(), 0.0) << e;
        }
        if (e["ph"] == "C") {
            ASSERT_TRUE(e["ts"].is_number() && e["args"].is_object()) << e;
        }
    }
    // metadata: the process and the two threads named
    const auto meta = of_phase(t, "M");
    ASSERT_EQ(meta.size(), 3u);
    EXPECT_EQ(meta[0]["args"]["name"], "ridgeline: tiny on cpu (a CPU)");
    // two passes on tid 1, two layers with work each on tid 2 (the view has none)
    const auto x = of_phase(t, "X");
    ASSERT_EQ(x.size(), 6u);
    EXPECT_EQ(x[0]["name"], "pass 1");
    EXPECT_EQ(x[0]["tid"], 1);
    EXPECT_DOUBLE_EQ(x[0]["ts"].get<double>(), 1.0);    // 1,000 ns
    EXPECT_DOUBLE_EQ(x[0]["dur"].get<double>(), 13.0);  // 14,000 - 1,000 ns
    EXPECT_EQ(x[1]["name"], "fc");
    EXPECT_EQ(x[1]["tid"], 2);
    EXPECT_DOUBLE_EQ(x[1]["ts"].get<double>(), 1.0);
    EXPECT_DOUBLE_EQ(x[1]["dur"].get<double>(), 10.0);
    EXPECT_EQ(x[2]["name"], "act");
    EXPECT_DOUBLE_EQ(x[2]["ts"].get<double>(), 11.0);  // from fc's end
    EXPECT_DOUBLE_EQ(x[2]["dur"].get<double>(), 2.0);
    EXPECT_EQ(x[4]["name"], "fc");
    EXPECT_DOUBLE_EQ(x[4]["ts"].get<double>(), 20.0);
    EXPECT_DOUBLE_EQ(x[4]["dur"].get<double>(), 12.0);
    // fc's args: its counts (100,000 MACs: 201,000 FLOPs with the bias), its own verdict and median, and this pass's
    // rate: 201,000 FLOPs in 10 us = 20.1 GFLOP/s; bytes (4 x (1,000 + 10,000 + 100 + 1,000)) in 10 us
    const auto& a = x[1]["args"];
    EXPECT_EQ(a["op"], "linear");
    EXPECT_EQ(a["flops"], 201'000);
    EXPECT_EQ(a["bound"], "compute");
    EXPECT_EQ(a["rule"], "C>M");
    EXPECT_DOUBLE_EQ(a["median_ms"].get<double>(), 0.010);
    EXPECT_NEAR(a["gflops"].get<double>(), 201'000.0 / 10e3, 1e-9);
    EXPECT_NEAR(a["gbs"].get<double>(), a["bytes"].get<double>() / 10e3, 1e-9);
    // counters: a GFLOP/s and a GB/s value at each layer's start, 0 at each pass's end
    const auto c = of_phase(t, "C");
    ASSERT_EQ(c.size(), 2u * (2 + 1) * 2);
    EXPECT_EQ(c[0]["name"], "GFLOP/s");
    EXPECT_DOUBLE_EQ(c[0]["ts"].get<double>(), 1.0);
    EXPECT_NEAR(c[0]["args"]["GFLOP/s"].get<double>(), 20.1, 1e-9);
    EXPECT_EQ(c[5]["name"], "GB/s");
    EXPECT_DOUBLE_EQ(c[5]["ts"].get<double>(), 14.0);
    EXPECT_DOUBLE_EQ(c[5]["args"]["GB/s"].get<double>(), 0.0);
}

TEST(ChromeTrace, NoPassSaysWhy) {
    profiler::profile_result r = traced();
    r.trace.clear();
    r.end_to_end_state = profiler::run_state::skipped;
    r.end_to_end_reason = "needs about 45.8 GiB, only 22.6 GiB free";
    const nlohmann::json t = report::chrome_trace(r);
    EXPECT_TRUE(of_phase(t, "X").empty());
    EXPECT_EQ(t["otherData"]["note"], "no end-to-end pass to trace (skipped: needs about 45.8 GiB, only 22.6 GiB free)");
    r.trace_note = "the cpu-ref backend cannot tell its layers' work apart in a pass";
    EXPECT_EQ(report::chrome_trace(r)["otherData"]["note"], r.trace_note);
}
