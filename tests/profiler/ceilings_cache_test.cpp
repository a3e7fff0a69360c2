// The ceilings cache and its checks (profiler::obtain_ceilings, docs/roofline.md "Ceilings that stay true"), with a
// fake backend whose measurements and spot checks the test sets: a disturbed measurement is never cached, a
// quick one never answers a full request, and the spot check raises the roofs (never lowers them).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "../support/scratch.hpp"
#include "ridgeline/backend_api/timing.hpp"
#include "ridgeline/config.hpp"
#include <nlohmann/json.hpp>
#include "ridgeline/profiler/ceilings_store.hpp"

using namespace ridgeline;

namespace {

class fake_backend final : public backend_api::backend {
public:
    backend_api::ceilings next;                              // what measure_ceilings returns
    std::vector<backend_api::ceilings_spot_check> checks;    // what the spot checks return, in order (then the last)
    int measured = 0, spot_checks = 0;

    [[nodiscard]] std::string name() const override { return "fake"; }
    [[nodiscard]] backend_api::device_info device() const override {
        backend_api::device_info d;
        d.backend = "fake";
        d.kind = ridgeline::backend_api::device_kind::cpu;
        d.name = "Fake CPU";
        d.threads = 1;
        return d;
    }
    [[nodiscard]] backend_api::support supports(const core::layer_analysis&, core::dtype) const override {
        return backend_api::support::yes();
    }
    std::unique_ptr<backend_api::prepared> prepare(const core::model_analysis&, const backend_api::graph_data&) override {
        throw backend_api::unsupported("fake");
    }
    void synchronize() override {}
    backend_api::device_timer& timer() override { return timer_; }
    void flush_cache() override {}
    [[nodiscard]] std::int64_t free_memory_bytes() const override { return 1 << 30; }
    [[nodiscard]] bool measures_ceilings() const override { return true; }
    backend_api::ceilings measure_ceilings(const backend_api::ceilings_options& o) override {
        ++measured;
        backend_api::ceilings c = next;
        c.backend = "fake";
        c.quick = o.quick;
        c.ridgeline_version = RIDGELINE_VERSION;
        c.measured_at = "measurement " + std::to_string(measured);
        return c;
    }
    std::optional<backend_api::ceilings_spot_check> spot_check_ceilings(const backend_api::ceilings&,
                                                                     const backend_api::ceilings_options&) override {
        if (checks.empty()) return std::nullopt;
        const std::size_t i = std::min<std::size_t>(static_cast<std::size_t>(spot_checks), checks.size() - 1);
        ++spot_checks;
        return checks[i];
    }

private:
    backend_api::steady_timer timer_;
};

/// A machine: FMA 100 GFLOP/s (avx2), GEMM 90, triad 20 GB/s; the sweep: 1 MB at 100 GB/s, 200 MB (DRAM) at 20.
backend_api::ceilings machine() {
    backend_api::ceilings c;
    c.device_name = "Fake CPU";
    c.fma_peak_gflops = {{"fp32", 100}};
    c.fma_peak_by_isa_gflops = {{"fp32 avx2", 100}};
    c.gemm_gflops = {{"fp32", 90}};
    c.peak_gflops = {{"fp32", 100}};
    c.triad_gbs = 20;
    c.bandwidth_gbs = 20;
    c.working_set_gbs = {{1'000'000, 100}, {200'000'000, 20}};
    c.dispatch_overhead_ms = 0.001;
    return c;
}

backend_api::ceilings_spot_check spot(double fma, double dram, double cache, bool clean = true) {
    backend_api::ceilings_spot_check s;
    s.fma_isa = "fp32 avx2";
    s.fma_gflops = fma;
    s.dram_working_set_bytes = 200'000'000;
    s.dram_gbs = dram;
    s.cache_working_set_bytes = 1'000'000;
    s.cache_gbs = cache;
    s.clean = clean;
    return s;
}

/// A private cache folder per test.
void private_cache(const std::string& name) {
    ::setenv("XDG_CACHE_HOME", test::fresh_scratch_dir(name).c_str(), 1);
}

/// A private cache folder `name` holding machine()'s ceilings, measured by `b` (whose next measurement is machine()
/// again); returns the device fingerprint the cache is keyed by.
std::string cached_machine(const std::string& name, fake_backend& b) {
    private_cache(name);
    b.next = machine();
    (void)profiler::obtain_ceilings(b, {});
    return backend_api::device_fingerprint(b.device());
}

}  // namespace

TEST(CeilingsCache, ADisturbedMeasurementIsNeverCached) {
    private_cache("disturbed");
    fake_backend b;
    b.next = machine();
    b.next.disturbed = true;
    b.next.disturbed_ceilings = {"triad"};
    const std::string fp = backend_api::device_fingerprint(b.device());
    auto got = profiler::obtain_ceilings(b, {});
    EXPECT_TRUE(got.measured);
    EXPECT_TRUE(got.ceilings.disturbed);
    ASSERT_EQ(got.warnings.size(), 1u);
    EXPECT_NE(got.warnings[0].find("triad"), std::string::npos) << got.warnings[0];
    EXPECT_NE(got.warnings[0].find("not cached"), std::string::npos) << got.warnings[0];
    EXPECT_FALSE(std::filesystem::exists(profiler::ceilings_cache_path(fp)));
    // the next run measures again, and the cache refuses disturbed ceilings outright
    (void)profiler::obtain_ceilings(b, {});
    EXPECT_EQ(b.measured, 2);
    EXPECT_THROW(profiler::save_cached_ceilings(got.ceilings), std::logic_error);
    // a clean measurement is cached and answers the next request
    b.next.disturbed = false;
    b.next.disturbed_ceilings.clear();
    (void)profiler::obtain_ceilings(b, {});
    EXPECT_TRUE(std::filesystem::exists(profiler::ceilings_cache_path(fp)));
    const auto again = profiler::obtain_ceilings(b, {});
    EXPECT_FALSE(again.measured);
    EXPECT_EQ(again.ceilings.source, ridgeline::backend_api::ceilings_source::cache);
    EXPECT_EQ(b.measured, 3);
}

TEST(CeilingsCache, AQuickMeasurementNeverAnswersAFullRequest) {
    private_cache("quick");
    fake_backend b;
    b.next = machine();
    profiler::ceilings_request quick;
    quick.quick = true;
    (void)profiler::obtain_ceilings(b, quick);  // measured quick, cached apart
    EXPECT_EQ(b.measured, 1);
    EXPECT_FALSE(profiler::obtain_ceilings(b, quick).measured);  // a quick request: the quick cache answers
    EXPECT_EQ(b.measured, 1);
    const auto full = profiler::obtain_ceilings(b, {});  // a full request: measured in full
    EXPECT_TRUE(full.measured);
    EXPECT_FALSE(full.ceilings.quick);
    EXPECT_EQ(b.measured, 2);
    const auto quick_again = profiler::obtain_ceilings(b, quick);  // now the full ceilings answer a quick request
    EXPECT_FALSE(quick_again.measured);
    EXPECT_FALSE(quick_again.ceilings.quick);
    EXPECT_EQ(b.measured, 2);
}

TEST(CeilingsCache, TheSpotCheckRaisesTheRoofsAndNeverLowersThem) {
    fake_backend b;
    (void)cached_machine("spot", b);  // measured and cached: FMA 100; 1 MB at 100, 200 MB at 20
    // within 10%: the cache answers
    b.checks = {spot(105, 19, 95)};
    auto within = profiler::obtain_ceilings(b, {});
    EXPECT_FALSE(within.measured);
    EXPECT_TRUE(within.warnings.empty());
    EXPECT_NE(within.spot_check.find("agrees"), std::string::npos) << within.spot_check;
    // 20% below on the cache level: the machine does less now; said, not acted on (a roof is what it can do)
    b.checks = {spot(100, 20, 80)};
    auto below = profiler::obtain_ceilings(b, {});
    EXPECT_FALSE(below.measured);
    ASSERT_EQ(below.warnings.size(), 1u);
    EXPECT_NE(below.warnings[0].find("does less now"), std::string::npos) << below.warnings[0];
    EXPECT_EQ(b.measured, 1);
    // 30% above on DRAM: the cached roofs understate the machine: measured again, the higher of each kept.
    // The new measurement met a busy spell on the cache level (60 GB/s) but found the DRAM at 26
    b.checks = {spot(100, 26, 100)};
    b.next.triad_gbs = 26;
    b.next.bandwidth_gbs = 26;
    b.next.working_set_gbs = {{1'000'000, 60}, {200'000'000, 26}};
    auto above = profiler::obtain_ceilings(b, {});
    EXPECT_TRUE(above.measured);
    EXPECT_TRUE(above.warnings.empty());  // measured again and raised: nothing left to mistrust, a note only
    EXPECT_EQ(b.measured, 2);
    EXPECT_DOUBLE_EQ(above.ceilings.triad_gbs, 26);                   // raised
    EXPECT_DOUBLE_EQ(above.ceilings.working_set_gbs[1].second, 26);   // raised
    EXPECT_DOUBLE_EQ(above.ceilings.working_set_gbs[0].second, 100);  // not lowered to 60
    EXPECT_TRUE(above.ceilings.method.count("merged"));
    // a spot check disturbed twice proves nothing: the cache is used, unchecked, with a warning
    b.checks = {spot(50, 5, 5, false)};
    auto disturbed = profiler::obtain_ceilings(b, {});
    EXPECT_FALSE(disturbed.measured);
    EXPECT_EQ(b.spot_checks, 5);  // 1 + 1 + 1 + the disturbed one tried twice
    ASSERT_EQ(disturbed.warnings.size(), 1u);
    EXPECT_NE(disturbed.warnings[0].find("unchecked"), std::string::npos) << disturbed.warnings[0];
}

TEST(CeilingsCache, ADamagedOrEditedCacheIsMeasuredAgainNeverUsed) {
    fake_backend b;
    const std::string fp = cached_machine("edited", b);
    const std::string path = profiler::ceilings_cache_path(fp);
    // a hand edit: a negative compute roof (it made a 96%-compute layer read "memory 4%")
    {
        std::ifstream in(path);
        nlohmann::json j = nlohmann::json::parse(in);
        j["peak_gflops"]["fp32"] = -5.0;
        std::ofstream(path) << j.dump();
    }
    auto got = profiler::obtain_ceilings(b, {});
    EXPECT_TRUE(got.measured);
    EXPECT_EQ(b.measured, 2);
    EXPECT_DOUBLE_EQ(got.ceilings.peak_gflops.at("fp32"), 100);
    // a FIFO where the cache file should be: read_regular_file refuses it instead of blocking in open()
    std::filesystem::remove(path);
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    auto fifo = profiler::obtain_ceilings(b, {});
    EXPECT_TRUE(fifo.measured);
    EXPECT_EQ(b.measured, 3);
    ASSERT_EQ(fifo.warnings.size(), 1u);  // and it could not be replaced by the cache file: said, not hidden
    EXPECT_NE(fifo.warnings[0].find("could not cache"), std::string::npos) << fifo.warnings[0];
}

// The cache levels travel with the cached ceilings; a cache written before they were recorded still answers;
// levels that do not grow mark a damaged file.
TEST(CeilingsCache, CacheLevelsRoundTripAndAnOlderCacheWithoutThemStillAnswers) {
    private_cache("levels");
    backend_api::ceilings c = machine();
    c.backend = "cpu";
    c.fingerprint = "cpu|levels test";
    c.ridgeline_version = RIDGELINE_VERSION;
    c.measured_at = "2026-12-01T00:00:00Z";
    c.cache_level_bytes = {49'152, 2'097'152, 272'629'760};
    c.stream_bytes = 417'000'000;
    (void)profiler::save_cached_ceilings(c);
    const auto loaded = profiler::load_cached_ceilings(c.fingerprint, false);
    ASSERT_TRUE(loaded.has_value());
    EXPECT_EQ(loaded->cache_level_bytes, c.cache_level_bytes);
    EXPECT_EQ(loaded->stream_bytes, 417'000'000);  // where the STREAM kernels' readings lie (dram_roof_gbs(bytes))
    {  // an older file without it: 0, one DRAM roof for every size
        nlohmann::json j = profiler::ceilings_json(c);
        j.erase("stream_bytes");
        EXPECT_EQ(profiler::ceilings_from_json(j).stream_bytes, 0);
        j["stream_bytes"] = 1.5;
        EXPECT_THROW((void)profiler::ceilings_from_json(j), core::error);
    }
    c.stream_bytes = 0;
    EXPECT_EQ(profiler::ceilings_json(c)["cache_level_bytes"], nlohmann::json({49'152, 2'097'152, 272'629'760}));

    // a CPU cache without levels was measured where the OS gave no cache topology, before ridgeline read them from
    // CPUID and its sweep: every sweep point counted as DRAM, and its DRAM roof was the L1 point (443-586 GB/s on a
    // 2-vCPU Zen 5 VM whose STREAM reads 40-60). It is measured again, saying why
    c.cache_level_bytes.clear();
    (void)profiler::save_cached_ceilings(c);
    std::string refused;
    EXPECT_FALSE(profiler::load_cached_ceilings(c.fingerprint, false, &refused).has_value());
    EXPECT_NE(refused.find("it has no cache levels"), std::string::npos) << refused;
    // another backend's cache without levels still answers (the sweep's points are then used one by one)
    c.backend = "cpu-ref";
    (void)profiler::save_cached_ceilings(c);
    const auto older = profiler::load_cached_ceilings(c.fingerprint, false);
    ASSERT_TRUE(older.has_value());
    EXPECT_TRUE(older->cache_level_bytes.empty());
    c.backend = "cpu";

    c.cache_level_bytes = {2'097'152, 49'152};
    EXPECT_EQ(backend_api::implausible_ceilings(c),
              "cache level 2 is 49152 bytes (levels must grow, each between 1 B and 1 TiB)");
    // such a file is not used, and the reason is given (the measurement that follows says it)
    {
        std::ofstream f(profiler::ceilings_cache_path(c.fingerprint, false));
        f << profiler::ceilings_json(c).dump();  // as an edit by hand would leave it
    }
    std::string why;
    EXPECT_FALSE(profiler::load_cached_ceilings(c.fingerprint, false, &why).has_value());
    EXPECT_EQ(why, profiler::ceilings_cache_path(c.fingerprint, false) +
                       " is not used: cache level 2 is 49152 bytes (levels must grow, each between 1 B and 1 TiB)");

    // a file of schema 2 was measured by the older method (its sweep's streaming copy read a cached source, its
    // DRAM roof came from past twice the LLC): measured again, and the reason says so
    c.cache_level_bytes = {49'152, 2'097'152, 272'629'760};
    {
        nlohmann::json j = profiler::ceilings_json(c);
        j["schema"] = "ridgeline.ceilings/2";
        std::ofstream f(profiler::ceilings_cache_path(c.fingerprint, false));
        f << j.dump();
    }
    EXPECT_FALSE(profiler::load_cached_ceilings(c.fingerprint, false, &why).has_value());
    EXPECT_NE(why.find("it was measured by an older method (ridgeline.ceilings/2; ridgeline.ceilings/3 has the DRAM "
                       "level at 4x the sum of the caches)"),
              std::string::npos)
        << why;
    // a newer schema is not "older"
    {
        nlohmann::json j = profiler::ceilings_json(c);
        j["schema"] = "ridgeline.ceilings/9";
        std::ofstream f(profiler::ceilings_cache_path(c.fingerprint, false));
        f << j.dump();
    }
    EXPECT_FALSE(profiler::load_cached_ceilings(c.fingerprint, false, &why).has_value());
    EXPECT_NE(why.find("a newer ridgeline wrote it (ridgeline.ceilings/9; this one writes ridgeline.ceilings/3)"),
              std::string::npos)
        << why;
}

TEST(CeilingsCache, AMistypedFieldIsNamedWithWhatItHolds) {
    backend_api::ceilings c = machine();
    c.backend = "cpu";
    c.fingerprint = "cpu|types test";
    const nlohmann::json good = profiler::ceilings_json(c);
    auto message = [](const nlohmann::json& j) {
        try {
            (void)profiler::ceilings_from_json(j);
        } catch (const std::runtime_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message(good), "no error");
    nlohmann::json j = good;
    j["bandwidth_gbs"] = "fast";
    EXPECT_EQ(message(j), "ceilings: field \"bandwidth_gbs\" has the wrong type (string \"fast\")");
    j = good;
    j["peak_gflops"] = {{"fp32", nullptr}};
    EXPECT_EQ(message(j), "ceilings: field \"peak_gflops.fp32\" has the wrong type (null)");
    j = good;
    j["spread"] = {{"copy", "x"}};
    EXPECT_EQ(message(j), "ceilings: field \"spread.copy\" has the wrong type (string \"x\")");
    j = good;
    j["cache_level_bytes"] = nlohmann::json::array({1024, 1.5});
    EXPECT_EQ(message(j), "ceilings: field \"cache_level_bytes[1]\" must be an integer of int64 (got 1.5)");
    j = good;
    j["last_level_cache_bytes"] = 18446744073709551615ULL;  // 2^64 - 1 would wrap to -1
    EXPECT_EQ(message(j), "ceilings: field \"last_level_cache_bytes\" must be an integer of int64 (got 18446744073709551615)");
    j = good;
    j["working_set_gbs"] = nullptr;
    EXPECT_EQ(message(j), "ceilings: field \"working_set_gbs\" has the wrong type (null)");
    j = good;
    j["working_set_gbs"] = nlohmann::json::array({{1024, 40.0}, {2048, "x"}});
    EXPECT_EQ(message(j), "ceilings: field \"working_set_gbs[1]\" must be [bytes, GB/s], an integer and a number (got [2048,\"x\"])");
    j = good;
    j.erase("dispatch_overhead_ms");
    EXPECT_EQ(message(j), "ceilings: missing field \"dispatch_overhead_ms\"");
    EXPECT_EQ(message(nlohmann::json::array()), "ceilings: expected a JSON object, got array");
}

// The dispatch cost is a floor: a clean spot check below the cached one lowers it and the cache keeps it (a VM's
// 1-element relu ran at 0.9-1.5 us in some minutes and 2.2-2.7 us in others; a cache that kept 2.14 us called a
// 5.6 us relu overhead-bound). A check above it changes nothing: one slow minute must not raise a floor.
TEST(CeilingsCache, TheDispatchCostIsAFloorTheSpotCheckLowers) {
    fake_backend b;
    (void)cached_machine("dispatch_floor", b);  // dispatch 0.001 ms
    auto slower = spot(100, 20, 100);
    slower.dispatch_ms = 0.0025;
    b.checks = {slower};
    auto got = profiler::obtain_ceilings(b, {});
    EXPECT_DOUBLE_EQ(got.ceilings.dispatch_overhead_ms, 0.001);
    EXPECT_TRUE(got.warnings.empty()) << got.warnings[0];
    auto faster = spot(100, 20, 100);
    faster.dispatch_ms = 0.0006;  // 40% below the cached 1 us: beyond the 2% margin
    b.checks = {faster};
    b.spot_checks = 0;
    got = profiler::obtain_ceilings(b, {});
    EXPECT_DOUBLE_EQ(got.ceilings.dispatch_overhead_ms, 0.0006);
    EXPECT_NE(got.spot_check.find("dispatch cost lowered to 600.0 ns (cached 1.00 us)"), std::string::npos) << got.spot_check;
    EXPECT_EQ(b.measured, 1);  // lowered in place, not measured again
    // the cache keeps the lower floor
    b.checks = {spot(100, 20, 100)};  // dispatch not measured (0): nothing changes
    const auto next = profiler::obtain_ceilings(b, {});
    EXPECT_DOUBLE_EQ(next.ceilings.dispatch_overhead_ms, 0.0006);
    EXPECT_NE(next.ceilings.method.at("dispatch_overhead_ms").find("lowered to 600.0 ns"), std::string::npos);
}

// "The machine does less now" is said only below the ceiling's median: a short check reads anywhere between a
// ceiling's best sample and its median, and a VM's DRAM readings spread by 30-60%.
TEST(CeilingsCache, BelowTheCacheWarnsOnlyBeyondTheCeilingsSpread) {
    private_cache("below_spread");
    fake_backend b;
    b.next = machine();                // DRAM point 20 GB/s
    b.next.spread["dram_level"] = 0.5;  // its readings: best 20, lowest median 20 / 1.5 = 13.3
    (void)profiler::obtain_ceilings(b, {});
    // 13 GB/s: 13 x 1.5 = 19.5 >= 0.9 x 20 = 18: within the spread, no warning
    b.checks = {spot(100, 13, 100)};
    auto got = profiler::obtain_ceilings(b, {});
    EXPECT_TRUE(got.warnings.empty()) << got.warnings[0];
    EXPECT_NE(got.spot_check.find("agrees"), std::string::npos) << got.spot_check;
    // 11 GB/s: 11 x 1.5 = 16.5 < 18: more than 10% under the ceiling's median
    b.checks = {spot(100, 11, 100)};
    b.spot_checks = 0;
    got = profiler::obtain_ceilings(b, {});
    ASSERT_EQ(got.warnings.size(), 1u);
    EXPECT_NE(got.warnings[0].find("does less now"), std::string::npos) << got.warnings[0];
    EXPECT_NE(got.warnings[0].find("45% below"), std::string::npos) << got.warnings[0];  // 1 - 11 / 20
    // without a measured spread the band is 10%: 17 GB/s (15% below) warns
    b.next.spread.clear();
    profiler::ceilings_request again;
    again.recalibrate = true;
    (void)profiler::obtain_ceilings(b, again);
    b.checks = {spot(100, 17, 100)};
    b.spot_checks = 0;
    got = profiler::obtain_ceilings(b, {});
    ASSERT_EQ(got.warnings.size(), 1u);
}

// A spot check that finds more measures again; when that measurement meets other work, the cached ceilings (clean
// when measured) still judge the layers and stay cached: a run once had no verdicts at all for it.
TEST(CeilingsCache, ADisturbedMeasurementAfterASpotCheckKeepsTheCachedCeilings) {
    fake_backend b;
    const std::string fp = cached_machine("more_then_disturbed", b);
    b.checks = {spot(100, 30, 100)};  // DRAM 30 against 20 cached: 50% above
    b.next.disturbed = true;
    b.next.disturbed_ceilings = {"copy"};
    auto got = profiler::obtain_ceilings(b, {});
    EXPECT_EQ(b.measured, 2);
    EXPECT_FALSE(got.ceilings.disturbed);
    EXPECT_DOUBLE_EQ(got.ceilings.bandwidth_gbs, 20);
    ASSERT_TRUE(std::move(got).roofs_for_verdicts().has_value());
    bool said = false;
    for (const auto& w : profiler::obtain_ceilings(b, {}).warnings) said = said || w.find("the cached ones are used") != std::string::npos;
    EXPECT_TRUE(said);
    EXPECT_TRUE(profiler::load_cached_ceilings(fp, false).has_value());
}

TEST(CeilingsCache, ARelativeCacheHomeIsIgnoredAndTheFallbackIsTheUsersOwn) {
    // the XDG Base Directory specification: a relative path in XDG_CACHE_HOME is invalid and ignored; a relative HOME
    // likewise (the cache would land wherever the command ran); without either, a folder named for the user's id,
    // never a /tmp/ridgeline another user could have made first
    const char* old_xdg = std::getenv("XDG_CACHE_HOME");
    const char* old_home = std::getenv("HOME");
    const std::string saved_xdg = old_xdg ? old_xdg : "", saved_home = old_home ? old_home : "";
    ::setenv("XDG_CACHE_HOME", "relative/cache", 1);
    ::setenv("HOME", "/home/someone", 1);
    EXPECT_EQ(profiler::ceilings_cache_path("fp", false).rfind("/home/someone/.cache/ridgeline/ceilings/", 0), 0U)
        << profiler::ceilings_cache_path("fp", false);
    ::setenv("HOME", "relative-home", 1);
    const std::string own = (std::filesystem::temp_directory_path() / ("ridgeline-" + std::to_string(::getuid())) /
                             "ceilings").string();
    EXPECT_EQ(profiler::ceilings_cache_path("fp", true).rfind(own + "/", 0), 0U) << profiler::ceilings_cache_path("fp", true);
    ::unsetenv("XDG_CACHE_HOME");
    ::unsetenv("HOME");
    EXPECT_EQ(profiler::ceilings_cache_path("fp", false).rfind(own + "/", 0), 0U);
    ::setenv("XDG_CACHE_HOME", "/abs/cache", 1);
    EXPECT_EQ(profiler::ceilings_cache_path("fp", false).rfind("/abs/cache/ridgeline/ceilings/", 0), 0U);
    if (old_xdg) ::setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1); else ::unsetenv("XDG_CACHE_HOME");
    if (old_home) ::setenv("HOME", saved_home.c_str(), 1); else ::unsetenv("HOME");
}
