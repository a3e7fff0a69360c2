// The Profiler on the oneDNN backend: states, verification, views, interruption, repeatability.
#include <gtest/gtest.h>

#include "../support/delegating_backend.hpp"
#include <omp.h>

#include "ridgeline/profiler/profiler.hpp"
#include "ridgeline/profiler/registry.hpp"
#include "ridgeline/core/zoo.hpp"

using namespace ridgeline;

namespace {

profiler::profile_options fast_options() {
    profiler::profile_options o;
    o.timing = backend_api::timing_options::quick();
    o.timing.max_time_s = 0.05;
    return o;
}

/// `a` profiled on the CPU backend (one thread) against ceilings `c` given by the test, with one roof recheck
/// expected (the roof tests make a roof impossible on purpose).
profiler::profile_result profiled_against(const core::model_analysis& a, const backend_api::ceilings& c) {
    auto o = fast_options();
    o.ceilings = c;
    auto sel = profiler::select_backend("cpu", 1);
    auto r = profiler::profile_model(a, *sel.chosen, o);
    EXPECT_TRUE(r.layers.at(0).has_time());
    EXPECT_EQ(r.roof_rechecks.size(), 1U);
    return r;
}

/// The CPU backend, except that it declines adaptive_avg_pool2d (the CPU backend itself runs every op the
/// differential tests generate, so a declined layer is made here).
class declining_backend final : public test::delegating_backend {
public:
    declining_backend() : delegating_backend(0) {}
    [[nodiscard]] backend_api::support supports(const core::layer_analysis& l, core::dtype dt) const override {
        if (std::holds_alternative<core::adaptive_avg_pool2d>(l.layer.op))
            return backend_api::support::no("this test's backend declines adaptive pooling");
        return inner().supports(l, dt);
    }
    std::unique_ptr<backend_api::prepared> prepare(const core::model_analysis& g, const backend_api::graph_data& d) override {
        for (const auto& la : g.layers)
            if (const auto s = supports(la, g.data_type); !s.supported) throw backend_api::unsupported(s.reason);
        return inner().prepare(g, d);
    }
};

core::model_analysis small_model() {
    core::model_builder b("small");
    b.input("x", core::shape{1, 8, 12, 12});
    b.then("conv", core::parse_op("conv2d:in_channels=8,out_channels=8,kernel_size=3,padding=1"));
    b.then("relu", core::parse_op("relu"));
    b.then("pool", core::parse_op("adaptive_avg_pool2d:output_size=5"));  // declined by declining_backend
    b.then("flat", core::parse_op("flatten"));
    b.then("fc", core::parse_op("linear:in_features=200,out_features=10"));
    return core::analyze(b.build(), core::dtype::fp32);
}

}  // namespace

TEST(Profiler, StatesOfEveryLayer) {
    declining_backend b;
    const auto r = profiler::profile_model(small_model(), b, fast_options());
    ASSERT_EQ(r.layers.size(), 5u);
    EXPECT_EQ(r.layers[0].state, profiler::run_state::measured);
    EXPECT_EQ(r.layers[0].verification.state, profiler::verification_state::passed);
    EXPECT_TRUE(r.layers[0].has_time());
    EXPECT_GT(r.layers[0].time->stats.median, 0.0);
    EXPECT_GE(r.layers[0].time->samples, 5);
    EXPECT_EQ(r.layers[1].state, profiler::run_state::measured);
    EXPECT_EQ(r.layers[2].state, profiler::run_state::unsupported);
    EXPECT_EQ(r.layers[2].reason, "this test's backend declines adaptive pooling");
    EXPECT_EQ(r.layers[3].state, profiler::run_state::view);
    EXPECT_FALSE(r.layers[3].has_time());
    EXPECT_EQ(r.layers[4].state, profiler::run_state::measured);
    // achieved rates are the executed flops (bytes) over the median. The conv 8->8, 3x3, padding 1 on 12x12:
    // macs 144*8*8*9 = 82,944, flops 2*82,944 + 1,152 bias adds = 167,040; per dimension 12*3 - 2 = 34 of 36
    // (position, tap) pairs read the input, so 8*8*34*34 = 73,984 MACs execute: 167,040 - 2*(82,944 - 73,984)
    // = 149,120 executed FLOPs
    const auto& conv = r.layers[0];
    EXPECT_EQ(conv.analysis.cost.flops, 167040);
    EXPECT_EQ(conv.analysis.cost.executed_flops(), 149120);
    EXPECT_NEAR(conv.achieved_gflops(), 149120.0 / (conv.time->stats.median * 1e6), 1e-9);
    // sum of layers adds the measured medians only
    EXPECT_NEAR(r.sum_of_layers_ms,
                r.layers[0].time->stats.median + r.layers[1].time->stats.median + r.layers[4].time->stats.median, 1e-12);
    // the whole model contains a layer the backend declines: end to end is unsupported, with the reason
    EXPECT_EQ(r.end_to_end_state, profiler::run_state::unsupported);
    EXPECT_TRUE(r.complete);
}

TEST(Profiler, EndToEndOfAModelTheBackendRuns) {
    auto sel = profiler::select_backend("cpu", 0);
    auto o = fast_options();
    const auto a = core::analyze(core::build_zoo_model("squeezenet1_0", core::shape{1, 3, 64, 64}), core::dtype::fp32);
    const auto r = profiler::profile_model(a, *sel.chosen, o);
    // measured; or, on a busy machine (CI beside other builds), disturbed with the reason: other work took the samples
    EXPECT_TRUE(r.end_to_end_state == profiler::run_state::measured ||
                r.end_to_end_state == profiler::run_state::disturbed)
        << r.end_to_end_state << ": " << r.end_to_end_reason;
    if (r.end_to_end_state == profiler::run_state::disturbed)
        EXPECT_NE(r.end_to_end_reason.find("other work"), std::string::npos) << r.end_to_end_reason;
    else
        EXPECT_GT(r.end_to_end.value().stats.median, 0.0);
    for (const auto& l : r.layers) {
        SCOPED_TRACE(l.analysis.layer.name);
        EXPECT_TRUE(l.state == profiler::run_state::measured || l.state == profiler::run_state::view) << l.state << ": " << l.reason;
        if (l.state == profiler::run_state::measured) {
            EXPECT_EQ(l.verification.state, profiler::verification_state::passed) << l.verification.message;
        }
    }
    EXPECT_EQ(r.memory.parameter_bytes, 1248424LL * 4);
    // the pass's outputs against the reference run of the whole model (0.2 G MACs, within the limit)
    EXPECT_EQ(r.end_to_end_verification.state, profiler::verification_state::passed)
        << r.end_to_end_verification.message;
}

TEST(Profiler, AnEndToEndPassWithWrongOutputsFailsWhereEveryLayerPasses) {
    // a reference that is wrong for the whole model only (every output + 1: relative L2 error >> 1e-4) stands in for
    // a pass that reuses a buffer too early: every layer alone passes, the end to end fails and is not timed
    auto sel = profiler::select_backend("cpu", 1);
    core::model_builder b("two");
    b.input("x", core::shape{4, 16});
    b.then("fc", core::parse_op("linear:in_features=16,out_features=16"));
    b.then("act", core::parse_op("relu"));
    const auto a = core::analyze(b.build(), core::dtype::fp32);
    profiler::profile_options o = fast_options();
    o.reference.outputs = [n = a.layers.size()](const core::model_analysis& g, const backend_api::graph_data& d) {
        auto want = profiler::cpu_reference().outputs(g, d);
        if (g.layers.size() == n)
            for (auto& t : want)
                for (float& v : t.data) v += 1.0F;
        return want;
    };
    const auto r = profiler::profile_model(a, *sel.chosen, o);
    for (const auto& l : r.layers) EXPECT_EQ(l.verification.state, profiler::verification_state::passed);
    EXPECT_EQ(r.end_to_end_state, profiler::run_state::failed);
    EXPECT_EQ(r.end_to_end_reason.rfind("verification: ", 0), 0u) << r.end_to_end_reason;
    EXPECT_EQ(r.end_to_end_verification.state, profiler::verification_state::failed);
    EXPECT_FALSE(r.end_to_end.has_value());

    o.verify = false;  // nothing compared: timed, the verification skipped with the reason
    const auto off = profiler::profile_model(a, *sel.chosen, o);
    EXPECT_TRUE(off.end_to_end.has_value());
    EXPECT_EQ(off.end_to_end_verification.state, profiler::verification_state::skipped);
    EXPECT_EQ(off.end_to_end_verification.message, "verification turned off");
}

TEST(Profiler, InterruptionMarksTheRestNotMeasured) {
    auto sel = profiler::select_backend("cpu", 0);
    std::atomic<bool> stop{false};
    auto o = fast_options();
    o.stop = &stop;
    o.on_progress = [&](const profiler::progress_event& e) {
        if (e.index == 2) stop = true;
    };
    const auto r = profiler::profile_model(small_model(), *sel.chosen, o);
    EXPECT_FALSE(r.complete);
    EXPECT_EQ(r.layers.size(), 5u);
    EXPECT_EQ(r.layers[0].state, profiler::run_state::measured);
    EXPECT_EQ(r.layers[2].state, profiler::run_state::not_measured);
    EXPECT_EQ(r.not_measured, (std::vector<std::string>{"pool", "flat", "fc"}));
    EXPECT_EQ(r.end_to_end_state, profiler::run_state::not_measured);
}

TEST(Profiler, SameModelTwiceGivesIdenticalCountsAndIndependentTimes) {
    auto sel = profiler::select_backend("cpu", 0);
    const auto a = small_model();
    const auto r1 = profiler::profile_model(a, *sel.chosen, fast_options());
    const auto r2 = profiler::profile_model(a, *sel.chosen, fast_options());
    ASSERT_EQ(r1.layers.size(), r2.layers.size());
    for (std::size_t i = 0; i < r1.layers.size(); ++i) {
        EXPECT_EQ(r1.layers[i].analysis.cost, r2.layers[i].analysis.cost);
        EXPECT_EQ(r1.layers[i].state, r2.layers[i].state);
        for (const auto* r : {&r1, &r2}) {
            const auto& l = r->layers[i];
            if (!l.has_time()) continue;
            // every run warms up afresh and counts only its own samples
            EXPECT_GE(l.time->warmup_runs, 1);
            EXPECT_EQ(static_cast<std::size_t>(l.time->samples), l.time->sample_ms.size());
        }
    }
}

TEST(Profiler, MemoryLimitSkipsALayerAndTheRunGoesOn) {
    auto sel = profiler::select_backend("cpu", 0);
    auto o = fast_options();
    o.max_memory_bytes = 4096;  // the conv needs far more (profiler::layer_bytes_needed): over the limit
    o.end_to_end = false;
    const auto r = profiler::profile_model(small_model(), *sel.chosen, o);
    EXPECT_EQ(r.layers[0].state, profiler::run_state::skipped);
    EXPECT_NE(r.layers[0].reason.find("allowed by the memory limit given"), std::string::npos) << r.layers[0].reason;
    EXPECT_TRUE(r.complete);
}

TEST(Profiler, TheMemoryAStepNeedsCountsVerificationsCopies) {
    // the conv of small_model: input 8x12x12 = 1,152, output 1,152, params 8*8*9 + 8 = 584
    const core::model_analysis m = small_model();
    const core::layer_analysis& conv = m.layers[0];
    // GPU memory: the backend's tensors alone, (1,152 + 584 + 1,152) x 4 = 11,552 bytes in fp32, half in bf16
    EXPECT_EQ(profiler::layer_bytes_needed(conv, core::dtype::fp32, true, false), 11'552);
    EXPECT_EQ(profiler::layer_bytes_needed(conv, core::dtype::bf16, true, false), 5'776);
    // host memory, not verified: plus the float32 host data (1,152 + 584) x 4 = 6,944 -> 18,496
    EXPECT_EQ(profiler::layer_bytes_needed(conv, core::dtype::fp32, false, true), 18'496);
    // verified: plus the reference's inputs 1,152 and three float32 outputs 3 x 1,152, x 4 = 18,432 -> 36,928
    EXPECT_EQ(profiler::layer_bytes_needed(conv, core::dtype::fp32, true, true), 36'928);
    // bf16 on the host: the backend's half (5,776) and the same float32 copies (6,944 + 18,432) -> 31,152
    EXPECT_EQ(profiler::layer_bytes_needed(conv, core::dtype::bf16, true, true), 31'152);
}

TEST(Profiler, UnknownDeviceAndMissingCuda) {
    EXPECT_THROW((void)profiler::select_backend("tpu", 0), backend_api::backend_error);
    try {
        (void)profiler::select_backend("cuda", 0);
        FAIL();
    } catch (const backend_api::backend_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind("no CUDA device: ", 0), 0u) << e.what();
    }
    auto sel = profiler::select_backend("auto", 0);
    EXPECT_EQ(sel.chosen->name(), "cpu");
    EXPECT_FALSE(sel.notice.empty());
}

// A layer timed alone reads its inputs as in the model: add(x, x) gets one input read twice; matmul(x, transpose(x))
// one input and the transpose (a view) re-created before it; a layer with two distinct inputs keeps two.
TEST(Profiler, ALayerReadingOneTensorTwiceIsTimedOnOneTensor) {
    core::model_builder b("alias");
    b.input("x", core::shape{1, 32, 16});
    b.input("y", core::shape{1, 32, 16});
    b.add("sum", core::parse_op("add"), {"x", "x"});
    b.add("t", core::parse_op("transpose:dim0=1,dim1=2"), {"sum"});
    b.add("gram", core::parse_op("matmul"), {"sum", "t"});
    b.add("other", core::parse_op("add"), {"x", "y"});
    const auto a = core::analyze(b.build(), core::dtype::fp32);

    const auto sum = backend_api::single_layer_graph(a.layers.at(0), a);
    ASSERT_EQ(sum.inputs.size(), 1U);
    EXPECT_EQ(sum.layers.back().layer.inputs, (std::vector<std::string>{"in0", "in0"}));

    const auto gram = backend_api::single_layer_graph(a.layers.at(2), a);
    ASSERT_EQ(gram.inputs.size(), 1U);
    EXPECT_EQ(gram.inputs[0].dims, (core::shape{1, 32, 16}));  // the storage: "sum"
    ASSERT_EQ(gram.layers.size(), 2U);
    EXPECT_EQ(gram.layers[0].layer.name, "t");
    EXPECT_EQ(gram.layers[0].layer.inputs, (std::vector<std::string>{"in0"}));
    EXPECT_EQ(gram.layers[1].layer.inputs, (std::vector<std::string>{"in0", "t"}));
    EXPECT_EQ(gram.outputs, (std::vector<std::string>{"gram"}));

    EXPECT_EQ(backend_api::single_layer_graph(a.layers.at(3), a).inputs.size(), 2U);

    // profiled layer by layer on the CPU backend: each verified against the reference on the aliased graph
    auto sel = profiler::select_backend("cpu", 0);
    const auto r = profiler::profile_model(a, *sel.chosen, fast_options());
    for (const auto& l : r.layers) {
        SCOPED_TRACE(l.analysis.layer.name);
        if (l.state == profiler::run_state::view) continue;
        EXPECT_EQ(l.state, profiler::run_state::measured) << l.reason;
        EXPECT_EQ(l.verification.state, profiler::verification_state::passed) << l.verification.message;
    }
}

// Verification runs the reference loops without touching the OpenMP thread count: a cpu-ref backend made for it
// would set it to its own (1), and every later layer would be timed on one thread whatever --threads said (the
// busy-process test saw 0 disturbed samples of 68 layers on 2 threads that way).
TEST(Profiler, VerificationLeavesTheThreadCountAsItWas) {
    auto sel = profiler::select_backend("cpu", 2);
    const int before = omp_get_max_threads();
    ASSERT_EQ(before, 2);
    const auto a = core::analyze(core::single_layer_model(core::parse_op("relu"), {core::shape{64, 64}}), core::dtype::fp32);
    const auto p = profiler::profile_layer(a.layers.at(0), a, *sel.chosen, fast_options());
    EXPECT_EQ(p.verification.state, profiler::verification_state::passed);
    EXPECT_EQ(omp_get_max_threads(), before);
}

// Verification compares with what the options' reference provider computes, not with a fixed backend: a
// provider that adds 1 to every output fails a correct relu; one that names the backend under test as itself
// skips the comparison ("the backend is the reference"); none at all skips it and says so.
TEST(Profiler, VerificationUsesTheReferenceProviderItIsGiven) {
    auto sel = profiler::select_backend("cpu", 1);
    const auto a = core::analyze(core::single_layer_model(core::parse_op("relu"), {core::shape{16, 16}}), core::dtype::fp32);
    profiler::profile_options o = fast_options();
    ASSERT_EQ(o.reference.backend, "cpu-ref");  // the default: the reference loops
    o.reference.outputs = [](const core::model_analysis& g, const backend_api::graph_data& d) {
        auto want = profiler::cpu_reference().outputs(g, d);
        for (auto& t : want)
            for (float& v : t.data) v += 1.0F;  // relative L2 error ||1|| / ||relu(x) + 1|| >> 1e-4
        return want;
    };
    const auto wrong = profiler::profile_layer(a.layers.at(0), a, *sel.chosen, o);
    EXPECT_EQ(wrong.state, profiler::run_state::failed);
    EXPECT_EQ(wrong.verification.state, profiler::verification_state::failed);

    o.reference.backend = sel.chosen->name();  // "cpu": this provider is the backend under test itself
    const auto self = profiler::profile_layer(a.layers.at(0), a, *sel.chosen, o);
    EXPECT_EQ(self.state, profiler::run_state::measured);
    EXPECT_EQ(self.verification.state, profiler::verification_state::skipped);
    EXPECT_EQ(self.verification.message, "the backend is the reference");

    o.reference = {};
    const auto none = profiler::profile_layer(a.layers.at(0), a, *sel.chosen, o);
    EXPECT_EQ(none.state, profiler::run_state::measured);
    EXPECT_EQ(none.verification.state, profiler::verification_state::skipped);
    EXPECT_EQ(none.verification.message, "no reference to verify against");
}

namespace {

/// A steady clock whose disturbance meter says every sample lost half its time to other work.
class always_disturbed_timer final : public backend_api::device_timer {
public:
    void start() override { clock_.start(); }
    double stop_ms() override { return clock_.stop_ms(); }
    [[nodiscard]] double resolution_ns() const override { return clock_.resolution_ns(); }
    [[nodiscard]] double overhead_ns() const override { return clock_.overhead_ns(); }
    [[nodiscard]] std::string name() const override { return "always disturbed"; }
    backend_api::disturbance_meter* disturbance() override { return &meter_; }

private:
    class half_lost final : public backend_api::disturbance_meter {
    public:
        void arm() override {}
        void before_sample() override {}
        backend_api::sample_disturbance after_sample(double wall_ms) override {
            backend_api::sample_disturbance d;
            d.wall_ms = wall_ms;
            d.run_queue_wait_ms = d.max_thread_wait_ms = 0.5 * wall_ms;  // 50% > the 5% rule
            d.threads = 1;
            return d;
        }
        [[nodiscard]] std::string source() const override { return "scripted"; }
    };
    backend_api::steady_timer clock_;
    half_lost meter_;
};

/// The CPU backend timed by always_disturbed_timer.
class disturbed_backend final : public test::delegating_backend {
public:
    disturbed_backend() : delegating_backend(1) {}
    backend_api::device_timer& timer() override { return timer_; }

private:
    always_disturbed_timer timer_;
};

}  // namespace

// A layer whose every sample other work disturbed has the bound "disturbed" whether or not the profile has roofs
// (--no-roofline, cpu-ref, disturbed ceilings): every format reads it from the same place. Without roofs it once
// had no bound at all: JSON null, CSV empty, no time_by_bound entry, while the table said "disturbed".
TEST(Profiler, ADisturbedLayerIsDisturbedWithoutRoofsToo) {
    disturbed_backend b;
    const auto a = core::analyze(core::single_layer_model(core::parse_op("relu"), {core::shape{64, 64}}), core::dtype::fp32);
    profiler::profile_options o = fast_options();
    ASSERT_FALSE(o.ceilings.has_value());
    const auto r = profiler::profile_model(a, b, o);
    const auto& p = r.layers.at(0);
    ASSERT_TRUE(p.has_time());
    EXPECT_TRUE(p.time->disturbed);
    ASSERT_TRUE(p.roofline.has_value());
    EXPECT_EQ(p.roofline->bound, core::bound_class::disturbed);
    ASSERT_EQ(r.bound_ms.count(core::bound_class::disturbed), 1u);
    EXPECT_DOUBLE_EQ(r.bound_ms.at(core::bound_class::disturbed), p.time->stats.median);
    EXPECT_EQ(p.roofline->rule, "!");
}

// The end-to-end pass takes the layers' rule: without enough clean samples it is "disturbed", its time kept for
// the record (report/predict and compare read no measurement from it).
TEST(Profiler, ADisturbedEndToEndPassIsDisturbedNotMeasured) {
    disturbed_backend b;
    const auto a = core::analyze(core::single_layer_model(core::parse_op("relu"), {core::shape{64, 64}}), core::dtype::fp32);
    profiler::profile_options o = fast_options();
    o.end_to_end = true;
    const auto r = profiler::profile_model(a, b, o);
    EXPECT_EQ(r.end_to_end_state, profiler::run_state::disturbed);
    ASSERT_TRUE(r.end_to_end.has_value());
    EXPECT_TRUE(r.end_to_end->disturbed);
    EXPECT_NE(r.end_to_end_reason.find("other work took more than 5% of the time"), std::string::npos) << r.end_to_end_reason;
    EXPECT_EQ(profiler::to_string(r.end_to_end_state), "disturbed");
}

// A roof that a layer beats is measured again at once (a shared host's cache bandwidth drifts by 10-20% between
// the ceilings and the layers; CI saw resnet50's layer4 adds 11% above an L2 roof measured in a slow minute).
// Here the roof is made impossible on purpose: 1 GB/s at the one sweep point, which any CPU's STREAM kernels beat.
TEST(Profiler, ARoofALayerBeatsIsMeasuredAgainAndRaised) {
    core::model_builder b("residual");
    b.input("x", core::shape{1, 2048, 7, 7});
    b.input("y", core::shape{1, 2048, 7, 7});
    b.add("sum", core::parse_op("add"), {"x", "y"});
    const auto a = core::analyze(b.build(), core::dtype::fp32);
    ASSERT_EQ(a.layers[0].cost.bytes, 3 * 2048 * 7 * 7 * 4);  // 1,204,224 B: two inputs read, one output written

    backend_api::ceilings c;
    c.backend = "cpu";
    c.peak_gflops["fp32"] = 1e4;  // the add's 100,352 flops take 10 ns at this roof: never the binding one
    c.bandwidth_gbs = 0.5;
    c.working_set_gbs = {{1'572'864, 1.0}};  // the working set's only point: 1.2 ms for the add, far above its time
    auto o = fast_options();
    o.ceilings = c;
    auto sel = profiler::select_backend("cpu", 1);
    const auto r = profiler::profile_model(a, *sel.chosen, o);
    ASSERT_TRUE(r.layers[0].has_time());
    ASSERT_EQ(r.roof_rechecks.size(), 1U);
    EXPECT_NE(r.roof_rechecks[0].find("1 layer (sum) beat its memory roof by more than the tolerance: its sweep points, "
                                      "measured again now: 1.573 MB 1.0 GB/s -> "),
              std::string::npos)
        << r.roof_rechecks[0];
    ASSERT_TRUE(r.ceilings.has_value());
    EXPECT_TRUE(r.ceilings_raised);
    // the point measured again: far above 1 GB/s (a single core's DRAM stream alone moves several GB/s)
    const double raised = r.ceilings->working_set_gbs.at(0).second;
    EXPECT_GT(raised, 2.0);
    EXPECT_EQ(r.ceilings->method.count("working_set_rechecked"), 1U);
    // the layer judged again against the raised point, and time_by_bound summed from the new verdicts
    EXPECT_DOUBLE_EQ(r.layers[0].roofs_used.bandwidth_gbs, raised);
    ASSERT_TRUE(r.layers[0].roofline.has_value());
    double by_bound = 0;
    for (const auto& [bound, ms] : r.bound_ms) by_bound += ms;
    EXPECT_DOUBLE_EQ(by_bound, r.layers[0].time->stats.median);
    EXPECT_EQ(r.bound_ms.count(r.layers[0].roofline->bound), 1U);

    // without a sweep there is nothing to measure again, and the warning says so
    backend_api::ceilings bare = c;
    bare.working_set_gbs.clear();
    o.ceilings = bare;
    const auto none = profiler::profile_model(a, *sel.chosen, o);
    ASSERT_EQ(none.roof_rechecks.size(), 1U);
    EXPECT_EQ(none.roof_rechecks[0], "1 layer (sum) beat its memory roof by more than the tolerance; the ceilings have no "
                                     "working-set sweep to measure again");
    EXPECT_FALSE(none.ceilings_raised);
    o.ceilings = c;

    // with a cold cache every layer is judged against the DRAM roof, which the recheck does not touch
    o.timing.cache = backend_api::cache_mode::cold;
    const auto cold = profiler::profile_model(a, *sel.chosen, o);
    EXPECT_TRUE(cold.roof_rechecks.empty());
    EXPECT_FALSE(cold.ceilings_raised);
}

// Past the sweep's DRAM points a layer's roof is the STREAM kernels' readings (ceilings::dram_roof_gbs(bytes)), which
// a recheck of the sweep does not touch: a layer that beats it has its own working set measured, a new point of the
// sweep. Impossible roofs on purpose: caches of 48 KiB (the DRAM level from 196,608 B), the one DRAM point at
// 393,216 B and the kernels (stream_bytes 1 MB) at 1 GB/s; the relu of 1 Mi floats moves 8,388,608 B, past them all.
TEST(Profiler, ALayerPastTheKernelsThatBeatsItsRoofHasItsOwnWorkingSetMeasured) {
    const auto a = core::analyze(core::single_layer_model(core::parse_op("relu"), {core::shape{1024, 1024}}),
                                 core::dtype::fp32);
    ASSERT_EQ(a.layers[0].cost.bytes, 8'388'608);  // 1 Mi floats read and written
    backend_api::ceilings c;
    c.backend = "cpu";
    c.peak_gflops["fp32"] = 1e4;
    c.cache_level_bytes = {49'152};
    c.working_set_gbs = {{393'216, 1.0}};
    c.copy_gbs = 1.0;
    c.triad_gbs = 1.0;
    c.read_gbs = 1.0;
    c.bandwidth_gbs = 1.0;
    c.stream_bytes = 1'000'000;
    ASSERT_DOUBLE_EQ(c.dram_roof_gbs(8'388'608), 1.0);
    const auto r = profiled_against(a, c);
    ASSERT_EQ(r.roof_rechecks.size(), 1U);
    EXPECT_NE(r.roof_rechecks[0].find("measured again now: 393.2 kB 1.0 GB/s -> "), std::string::npos) << r.roof_rechecks[0];
    EXPECT_NE(r.roof_rechecks[0].find(", 8.389 MB (a layer's own working set) "), std::string::npos) << r.roof_rechecks[0];
    ASSERT_TRUE(r.ceilings.has_value());
    ASSERT_EQ(r.ceilings->working_set_gbs.size(), 2U);
    EXPECT_EQ(r.ceilings->working_set_gbs[1].first, 8'388'608);  // the new point, in order
    const double own = r.ceilings->working_set_gbs[1].second;
    EXPECT_GT(own, 2.0);  // any CPU's streaming kernels move far more than 1 GB/s
    EXPECT_TRUE(r.ceilings_raised);
    // the layer judged again: its roof is now its own working set's reading (the largest, so the envelope's end)
    EXPECT_DOUBLE_EQ(r.layers[0].roofs_used.bandwidth_gbs, own);
}

// Vector work is judged against the vector units' FMA peak where the dtype's roof is set by matrix units: on an H100
// in bf16 the tensor-core GEMM (~790 TFLOP/s measured) is the roof, the CUDA cores' HFMA2 peak (~120 TFLOP/s here)
// what a softmax or layer_norm can reach; matrix work (linear, conv2d, matmul, attention) keeps the roof. Where the
// FMA peak is the roof itself (fp32 on a CPU), nothing changes.
TEST(Profiler, VectorWorkIsJudgedAgainstTheFmaPeakBelowAMatrixRoof) {
    core::model_builder mb("mixed");
    mb.input("x", core::shape{8, 64});
    mb.then("fc", core::linear{64, 64, true});
    mb.then("sm", core::softmax{-1});
    const core::model_analysis a = core::analyze(mb.build(), core::dtype::bf16);
    backend_api::ceilings c;
    c.peak_gflops = {{"bf16", 790000.0}, {"fp32", 60000.0}};
    c.gemm_gflops = {{"bf16", 790000.0}, {"fp32", 50000.0}};
    c.fma_peak_gflops = {{"bf16", 120000.0}, {"fp32", 60000.0}};
    c.bandwidth_gbs = 4000;
    const auto hot = backend_api::cache_mode::hot;
    EXPECT_DOUBLE_EQ(profiler::roofs_for(a.layers[0], core::dtype::bf16, c, hot).compute_gflops, 790000.0);  // linear
    EXPECT_DOUBLE_EQ(profiler::roofs_for(a.layers[1], core::dtype::bf16, c, hot).compute_gflops, 120000.0);  // softmax
    EXPECT_DOUBLE_EQ(profiler::roofs_for(a.layers[1], core::dtype::fp32, c, hot).compute_gflops, 60000.0);
    c.fma_peak_gflops.erase("bf16");  // not measured: the roof stands
    EXPECT_DOUBLE_EQ(profiler::roofs_for(a.layers[1], core::dtype::bf16, c, hot).compute_gflops, 790000.0);
}

// A whole model's bandwidth roof (sweep --model) is its bytes over the sum of its layers' floors, not the roof of
// the sum of its bytes taken as one working set. Two relus: 1 Mi floats (8,388,608 B moved) and 64 Mi floats
// (536,870,912 B). Ceilings: the DRAM level from 196,608 B (caches of 48 KiB), one sweep point, 200 MB at 40
// (bandwidth 40), STREAM (stream_bytes 300 MB) copy 20 at 200 MB, triad and read 30 at 300 MB: the envelope is 40 up
// to 200 MB, 30 from 300 MB. Cold: the small relu at 40, the large at 30; the sum, 545,259,520 B, would get 30 alone.
TEST(Profiler, AWholeModelIsJudgedByTheSumOfItsLayersFloors) {
    core::model_builder b("two");
    b.input("x", core::shape{1024, 1024});
    b.then("small", core::parse_op("relu"));
    b.input("y", core::shape{64, 1024, 1024});
    b.add("large", core::parse_op("relu"), {"y"});
    const auto a = core::analyze(b.build(), core::dtype::fp32);
    ASSERT_EQ(a.layers[0].cost.bytes, 8'388'608);
    ASSERT_EQ(a.layers[1].cost.bytes, 536'870'912);
    ASSERT_EQ(a.totals.bytes, 545'259'520);
    backend_api::ceilings c;
    c.cache_level_bytes = {49'152};
    c.copy_gbs = 20;
    c.triad_gbs = 30;
    c.read_gbs = 30;
    c.bandwidth_gbs = 40;
    c.working_set_gbs = {{200'000'000, 40}};
    c.stream_bytes = 300'000'000;
    ASSERT_DOUBLE_EQ(c.dram_roof_gbs(8'388'608), 40);
    ASSERT_DOUBLE_EQ(c.dram_roof_gbs(536'870'912), 30);
    const double floor_ns = 8'388'608 / 40.0 + 536'870'912 / 30.0;  // 209,715.2 + 17,895,697.07 ns
    EXPECT_NEAR(profiler::model_bandwidth_gbs(a, c, backend_api::cache_mode::cold), 545'259'520 / floor_ns, 1e-9);
    EXPECT_NEAR(profiler::model_bandwidth_gbs(a, c, backend_api::cache_mode::cold), 30.116, 0.001);
    // hot: the small relu's 8.4 MB sits in the transition (48 KiB to 196,608 B is cache, DRAM from there): past the
    // DRAM level too here, so the same
    EXPECT_NEAR(profiler::model_bandwidth_gbs(a, c, backend_api::cache_mode::hot), 545'259'520 / floor_ns, 1e-9);
    // no bytes at all: the DRAM roof
    core::model_analysis none = a;
    for (auto& la : none.layers) la.cost.bytes = 0;
    none.totals.bytes = 0;
    EXPECT_DOUBLE_EQ(profiler::model_bandwidth_gbs(none, c, backend_api::cache_mode::cold), 40);
}
