// The twin check (profiler.hpp, twin_check): layers of one run with the same signature take the same time, and a
// twin that reads apart is measured again; one that stays apart says so.
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "../support/delegating_backend.hpp"
#include "ridgeline/core/layer.hpp"
#include "ridgeline/core/model.hpp"
#include "ridgeline/profiler/profiler.hpp"
#include "ridgeline/profiler/registry.hpp"

using namespace ridgeline;

namespace {

/// A simulated device clock: each run of a layer advances it by a set time, so the twins' medians are what the
/// test sets, never what this machine's speed of the moment makes of a 64x64 relu (a few us that moved 2x from one
/// minute to the next and made the twins disagree on a quiet VM).
struct simulated_clock {
    double now_ms = 0;
};

class simulated_timer final : public backend_api::device_timer {
public:
    explicit simulated_timer(simulated_clock& c) : clock_(c) {}
    void start() override { started_ = clock_.now_ms; }
    double stop_ms() override { return clock_.now_ms - started_; }
    [[nodiscard]] double resolution_ns() const override { return 1.0; }
    [[nodiscard]] double overhead_ns() const override { return 0.0; }
    [[nodiscard]] std::string name() const override { return "simulated clock"; }

private:
    simulated_clock& clock_;
    double started_ = 0;
};

/// A prepared graph that runs `inner` (its outputs are real, for verification) and takes `ms` on the simulated clock.
class timed final : public backend_api::prepared {
public:
    timed(std::unique_ptr<backend_api::prepared> inner, simulated_clock& c, double ms)
        : inner_(std::move(inner)), clock_(c), ms_(ms) {}
    void run() override {
        inner_->run();
        clock_.now_ms += ms_;
    }
    void poison_outputs() override { inner_->poison_outputs(); }
    std::vector<backend_api::host_tensor> outputs() override { return inner_->outputs(); }

private:
    std::unique_ptr<backend_api::prepared> inner_;
    simulated_clock& clock_;
    double ms_;
};

/// The CPU backend on a simulated clock: every graph takes 10 us a run, except that the single-layer graph of layer
/// "b" takes 200 us more on its first `slow_times` preparations (all of them when negative).
class slowing_backend final : public test::delegating_backend {
public:
    explicit slowing_backend(int slow_times) : delegating_backend(1), slow_times_(slow_times), timer_(clock_) {}
    int prepared_b = 0;
    std::atomic<bool>* stop_at_second_b = nullptr;  // raised as b is prepared the second time (measured again)
    std::unique_ptr<backend_api::prepared> prepare(const core::model_analysis& g, const backend_api::graph_data& d) override {
        auto p = inner().prepare(g, d);
        double ms = 0.01;
        if (g.layers.size() == 1 && g.layers[0].layer.name == "b") {
            const bool slow = slow_times_ < 0 || prepared_b < slow_times_;
            ++prepared_b;
            if (stop_at_second_b && prepared_b == 2) stop_at_second_b->store(true);
            if (slow) ms += 0.2;
        }
        return std::make_unique<timed>(std::move(p), clock_, ms);
    }
    backend_api::device_timer& timer() override { return timer_; }

private:
    int slow_times_;
    simulated_clock clock_;
    simulated_timer timer_;
};

/// x [64, 64] -> relu a -> relu b -> relu c [64, 64] (a, b, c: twins) -> sum d (no twin).
core::model_analysis three_relus() {
    core::model_builder mb("twins");
    mb.input("x", core::shape{64, 64});
    mb.then("a", core::relu{});
    mb.then("b", core::relu{});
    mb.then("c", core::relu{});
    return core::analyze(mb.build(), core::dtype::fp32);
}

profiler::profile_options options() {
    profiler::profile_options o;
    o.timing = backend_api::timing_options::quick();
    o.timing.max_time_s = 0.05;
    o.end_to_end = false;
    o.every_layer = true;  // twins are checked where each is measured
    return o;
}

}  // namespace

TEST(Twins, TheSignatureIsTheWorkNotTheName) {
    const auto m = three_relus();
    const std::string a = core::layer_signature(m.layers[0], core::dtype::fp32);
    EXPECT_EQ(a, "relu|64x64|fp32");
    EXPECT_EQ(a, core::layer_signature(m.layers[2], core::dtype::fp32));
    EXPECT_NE(a, core::layer_signature(m.layers[0], core::dtype::bf16));
    const auto other = core::analyze(core::single_layer_model(core::parse_op("relu"), {core::shape{64, 65}}), core::dtype::fp32);
    EXPECT_NE(a, core::layer_signature(other.layers[0], core::dtype::fp32));
}

// b runs 200 us slower the first time it is prepared, then as fast as a and c (10 us): measured again, it agrees
TEST(Twins, ATwinSlowedOnceIsMeasuredAgainAndAgrees) {
    slowing_backend b(1);
    const auto r = profiler::profile_model(three_relus(), b, options());
    const auto& lb = r.layers.at(1);
    ASSERT_TRUE(lb.twins.has_value());
    EXPECT_EQ(lb.twins->twins, (std::vector<std::string>{"a", "c"}));
    EXPECT_TRUE(lb.twins->remeasured);
    EXPECT_GT(lb.twins->first_median_ms, 0.2);  // the slowed run: over 200 us
    EXPECT_NEAR(lb.time->stats.median, 0.01, 1e-9);  // measured again: 10 us on the simulated clock
    EXPECT_FALSE(lb.twins->disagree);
    EXPECT_TRUE(r.twins_disagreeing.empty());
    EXPECT_EQ(r.twins_remeasured, (std::vector<std::string>{"a", "b", "c"}));
    // the sum of the layers counts the lower median
    double sum = 0;
    for (const auto& p : r.layers) sum += p.time->stats.median;
    EXPECT_DOUBLE_EQ(r.sum_of_layers_ms, sum);
}

// b is always 200 us slower: three more measurements cannot bring it back, and both sides say so
TEST(Twins, TwinsThatStayApartSaySo) {
    slowing_backend b(-1);
    const auto r = profiler::profile_model(three_relus(), b, options());
    // b prepared once in the layers' pass, once measured again, twice more as the straggler (twin_extra_tries)
    EXPECT_EQ(b.prepared_b, 2 + profiler::twin_extra_tries);
    EXPECT_EQ(r.twins_disagreeing, (std::vector<std::string>{"a", "b", "c"}));
    for (const auto& p : r.layers) {
        ASSERT_TRUE(p.twins.has_value());
        EXPECT_TRUE(p.twins->disagree) << p.analysis.layer.name;
    }
}

// a layer with no twin has no twin check; twins name each other
TEST(Twins, ALayerWithoutTwinsHasNoCheck) {
    slowing_backend b(0);
    core::model_builder mb("mixed");
    mb.input("x", core::shape{64, 64});
    mb.then("a", core::relu{});
    mb.then("b", core::relu{});
    mb.then("s", core::sigmoid{});
    const auto r = profiler::profile_model(core::analyze(mb.build(), core::dtype::fp32), b, options());
    EXPECT_FALSE(r.layers.at(2).twins.has_value());
    ASSERT_TRUE(r.layers.at(0).twins.has_value());
    EXPECT_EQ(r.layers.at(0).twins->twins, (std::vector<std::string>{"b"}));
    EXPECT_EQ(r.layers.at(1).twins->twins, (std::vector<std::string>{"a"}));
}

// Ctrl-C while twins are measured again: each keeps what it had, the sums add up, and the report says it was cut
// short (it once claimed "they agree now" and kept stale sums)
TEST(Twins, AnInterruptedCheckSaysSoAndItsSumsAddUp) {
    slowing_backend b(-1);
    std::atomic<bool> stop{false};
    b.stop_at_second_b = &stop;
    profiler::profile_options o = options();
    o.stop = &stop;
    const auto r = profiler::profile_model(three_relus(), b, o);
    EXPECT_TRUE(r.twins_interrupted);
    EXPECT_FALSE(r.complete);
    double sum = 0;
    for (const auto& p : r.layers)
        if (p.has_time()) sum += p.time->stats.median;
    EXPECT_DOUBLE_EQ(r.sum_of_layers_ms, sum);
}
