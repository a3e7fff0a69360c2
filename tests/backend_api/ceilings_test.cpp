// The ceilings' arithmetic (backend_api/ceilings.hpp, docs/roofline.md): the compute roof is the highest measured
// compute ceiling, the bandwidth roof of a working set, the tolerances from the measured spread, merging.
#include <gtest/gtest.h>

#include "ridgeline/backend_api/ceilings.hpp"

#include <cmath>

using namespace ridgeline;
using backend_api::ceilings;

TEST(Ceilings, TheComputeRoofIsTheHighestMeasuredCeiling) {
    ceilings c;
    // CPU: FMA 236 > GEMM 211 -> the roof is the FMA peak; bf16 has a GEMM only -> the GEMM
    c.fma_peak_gflops = {{"fp32", 236.0}};
    c.gemm_gflops = {{"fp32", 211.0}, {"bf16", 400.0}};
    c.spread = {{"fma_peak.fp32", 0.012}, {"gemm.bf16", 0.03}};
    backend_api::finish_compute_roofs(c);
    EXPECT_DOUBLE_EQ(c.peak_gflops.at("fp32"), 236.0);
    EXPECT_DOUBLE_EQ(c.peak_gflops.at("bf16"), 400.0);
    EXPECT_NE(c.method.at("peak_gflops.fp32").find("FMA kernel"), std::string::npos);
    EXPECT_NE(c.method.at("peak_gflops.fp32").find("89%"), std::string::npos);  // 211 / 236 = 0.894
    EXPECT_NE(c.method.at("peak_gflops.bf16").find("no FMA kernel"), std::string::npos);
    // the spread follows the ceiling that won: tolerance = 2% + spread
    EXPECT_DOUBLE_EQ(c.compute_tolerance(core::dtype::fp32), 0.02 + 0.012);
    EXPECT_DOUBLE_EQ(c.compute_tolerance(core::dtype::bf16), 0.02 + 0.03);
    // no spread known: 2%; a large spread is capped at 10%
    EXPECT_DOUBLE_EQ(c.compute_tolerance(core::dtype::fp16), 0.02);
    c.spread["peak_gflops.fp32"] = 0.5;
    EXPECT_DOUBLE_EQ(c.compute_tolerance(core::dtype::fp32), 0.10);
}

TEST(Ceilings, AWorkingSetIsJudgedAgainstTheLevelItFits) {
    ceilings c;
    c.bandwidth_gbs = 30;
    // sweep: L1 400, L2 228, L3 190, then DRAM
    c.working_set_gbs = {{49'152, 400}, {786'432, 228}, {12'582'912, 190}, {201'326'592, 33}};
    // exactly a sweep size: that point, or the one below when higher (the sweep's step must not undercut)
    EXPECT_DOUBLE_EQ(c.bandwidth_for_working_set_gbs(49'152), 400);
    // 6.4 MB lies between the 786 kB (228) and 12.6 MB (190) points: the higher of the two
    EXPECT_DOUBLE_EQ(c.bandwidth_for_working_set_gbs(6'400'000), 228);
    // smaller than every point: the first
    EXPECT_DOUBLE_EQ(c.bandwidth_for_working_set_gbs(1'000), 400);
    // larger than every point: the last point or DRAM, whichever is higher
    EXPECT_DOUBLE_EQ(c.bandwidth_for_working_set_gbs(1'000'000'000), 33);
    // no levels known: a point's neighbours only
    EXPECT_EQ(c.sweep_points_for_working_set(6'400'000), (std::vector<std::int64_t>{786'432, 12'582'912}));
    // levels known (L1 48 KiB, L2 2 MiB, L3 256 MiB): a level's roof is its best point (L1 400; L2 180 of 180, 160
    // and 150; L3 90), and a working set draws on each level up to the one it fits, fastest first, each level serving
    // at most its capacity (bytes / GB/s = ns below)
    ceilings l;
    l.bandwidth_gbs = 30;
    l.cache_level_bytes = {49'152, 2'097'152, 268'435'456};
    l.working_set_gbs = {{49'152, 400}, {196'608, 180}, {786'432, 160}, {1'572'864, 150}, {6'291'456, 90}, {402'653'184, 31}};
    EXPECT_DOUBLE_EQ(l.level_roof_gbs(1), 180);
    // the DRAM level: 4 x (49,152 + 2,097,152 + 268,435,456) = 1,082,327,040 B; the 402 MB point is the transition's
    EXPECT_EQ(l.dram_level_bytes(), 1'082'327'040);
    EXPECT_EQ(l.level_of(1'204'224), ceilings::memory_level::cache);
    EXPECT_EQ(l.level_of(402'653'184), ceilings::memory_level::transition);
    EXPECT_EQ(l.level_of(1'082'327'040), ceilings::memory_level::dram);
    // all of a working set that fits L1 comes from L1
    EXPECT_DOUBLE_EQ(l.bandwidth_for_working_set_gbs(49'152), 400);
    // 1.2 MB in L2: 49,152 B from L1 (122.88 ns), 1,155,072 from L2 (6,417.07 ns): 1,204,224 / 6,539.95 = 184.1
    EXPECT_NEAR(l.bandwidth_for_working_set_gbs(1'204'224), 1'204'224 / (49'152 / 400.0 + 1'155'072 / 180.0), 1e-9);
    EXPECT_NEAR(l.bandwidth_for_working_set_gbs(1'204'224), 184.13, 0.01);
    EXPECT_EQ(l.sweep_points_for_working_set(1'204'224), (std::vector<std::int64_t>{49'152, 196'608, 786'432, 1'572'864}));
    // just past L1: 60,000 B = 49,152 at 400 and 10,848 at 180: 327.6, between the two levels' roofs
    EXPECT_NEAR(l.bandwidth_for_working_set_gbs(60'000), 60'000 / (122.88 + 10'848 / 180.0), 1e-9);
    // 5 MB in L3: 122.88 + 2,097,152 / 180 + 2,853,696 / 90 ns = 43,481.45 ns: 115.0 (not L2's 180: the step from
    // one level to the next is the capacities', not the sweep's)
    EXPECT_NEAR(l.bandwidth_for_working_set_gbs(5'000'000), 115.0, 0.05);
    // the transition: every level full, DRAM the rest; 402,653,184 B: 122.88 + 11,650.84 + 268,435,456 / 90 +
    // 132,071,424 / 30 ns = 7,396,770.7 ns: 54.44, above the point measured there (31)
    EXPECT_NEAR(l.bandwidth_for_working_set_gbs(402'653'184), 54.44, 0.01);
    EXPECT_EQ(l.sweep_points_for_working_set(402'653'184),
              (std::vector<std::int64_t>{49'152, 196'608, 786'432, 1'572'864, 6'291'456, 402'653'184}));
    // 1e9 B: (1e9 - 270,581,760) / 30 ns from DRAM, 27,308,331 ns in all: 36.62
    EXPECT_NEAR(l.bandwidth_for_working_set_gbs(1'000'000'000), 36.62, 0.01);
    // the DRAM level: the DRAM roof only
    EXPECT_DOUBLE_EQ(l.bandwidth_for_working_set_gbs(2'000'000'000), 30);
    // a transition point that read more than the derived roof (a cache larger than its nominal size) is the roof
    // there, log-linear between two points: 469,762,048 B between 402,653,184 (31) and 536,870,912 (70):
    // w = ln(7/6) / ln(4/3) = 0.5358, 31 + 0.5358 x 39 = 51.90 (derived: 48.76)
    l.working_set_gbs.emplace_back(536'870'912, 70);
    EXPECT_DOUBLE_EQ(l.bandwidth_for_working_set_gbs(536'870'912), 70);
    EXPECT_NEAR(l.bandwidth_for_working_set_gbs(469'762'048), 31 + std::log(7.0 / 6.0) / std::log(4.0 / 3.0) * 39, 1e-9);
    EXPECT_NEAR(l.bandwidth_for_working_set_gbs(469'762'048), 51.90, 0.01);
    // a DRAM-level point above bandwidth_gbs (raised by a recheck) is the DRAM roof
    l.working_set_gbs.emplace_back(2'147'483'648, 33);
    EXPECT_DOUBLE_EQ(l.dram_roof_gbs(), 33);
    EXPECT_DOUBLE_EQ(l.bandwidth_for_working_set_gbs(4'000'000'000), 33);
    // levels that do not grow are not trusted past the fault: one level of 2 MiB (its roof 400), DRAM from 8 MiB
    l.cache_level_bytes = {2'097'152, 49'152};
    l.working_set_gbs.resize(6);  // the sweep as first given (DRAM roof 30)
    EXPECT_EQ(l.dram_level_bytes(), 8'388'608);
    EXPECT_DOUBLE_EQ(l.bandwidth_for_working_set_gbs(1'204'224), 400);
    // 3 MB: the transition, where the 6.3 MB point read 90, above the derived 2,097,152 / 400 + 902,848 / 30 = 84.9
    EXPECT_DOUBLE_EQ(l.bandwidth_for_working_set_gbs(3'000'000), 90);
    // no sweep: DRAM
    ceilings d;
    d.bandwidth_gbs = 30;
    EXPECT_DOUBLE_EQ(d.bandwidth_for_working_set_gbs(1'000), 30);
}

TEST(Ceilings, ALargerWorkingSetInTheDramLevelIsJudgedByTheReadingsAtItsSizeOrAbove) {
    // this VM's full calibration of 2026-12-07 (2 threads): caches 65,536 + 2,097,152 + 33,554,432 B, so the DRAM
    // level starts at 4x their sum, 142,868,480 B; its one sweep point, 201 MB, read 54.9 GB/s; STREAM over 3 arrays
    // of 139 MB (stream_bytes 417 MB; copy moves 2 of them, 278 MB) read copy 33.5, triad 36.1, read 41.6
    ceilings c;
    c.cache_level_bytes = {65'536, 2'097'152, 33'554'432};
    c.working_set_gbs = {{49'152, 591}, {12'582'912, 194}, {100'663'296, 65.5}, {201'326'592, 54.9}};
    c.copy_gbs = 33.5;
    c.triad_gbs = 36.1;
    c.read_gbs = 41.6;
    c.bandwidth_gbs = 54.9;  // the highest of the kernels and the DRAM level's points, as calibration sets it
    EXPECT_EQ(c.dram_level_bytes(), 142'868'480);
    // without the kernels' working set (an older file): one DRAM roof for every size, as before
    EXPECT_DOUBLE_EQ(c.dram_roof_gbs(1'000'000'000), 54.9);
    EXPECT_DOUBLE_EQ(c.bandwidth_for_working_set_gbs(538'000'000), 54.9);
    c.stream_bytes = 417'000'000;
    // the readings by size: 201 MB 54.9, 278 MB (copy) 33.5, 417 MB max(triad, read) 41.6; the envelope (the highest
    // at that size or above): 54.9, 41.6, 41.6
    EXPECT_DOUBLE_EQ(c.dram_roof_gbs(), 54.9);                // the one-number roof is unchanged
    EXPECT_DOUBLE_EQ(c.dram_roof_gbs(150'000'000), 54.9);     // below the smallest reading: the highest
    EXPECT_DOUBLE_EQ(c.dram_roof_gbs(201'326'592), 54.9);
    EXPECT_DOUBLE_EQ(c.dram_roof_gbs(278'000'000), 41.6);     // copy's 33.5 is raised by read at a larger size
    EXPECT_DOUBLE_EQ(c.dram_roof_gbs(417'000'000), 41.6);
    // pad of 4x64x512x512 floats, 538 MB moved: past every reading, the largest's (was 54.9, above STREAM copy)
    EXPECT_DOUBLE_EQ(c.dram_roof_gbs(538'000'000), 41.6);
    EXPECT_DOUBLE_EQ(c.bandwidth_for_working_set_gbs(538'000'000), 41.6);
    // 250 MB, log-linear between 201,326,592 (54.9) and 278,000,000 (41.6): w = ln(250e6 / 201,326,592) /
    // ln(278e6 / 201,326,592) = 0.21655 / 0.32269 = 0.6711; 54.9 - 0.6711 x 13.3 = 45.97
    const double w = std::log(250e6 / 201'326'592.0) / std::log(278e6 / 201'326'592.0);
    EXPECT_NEAR(c.dram_roof_gbs(250'000'000), 54.9 + w * (41.6 - 54.9), 1e-9);
    EXPECT_NEAR(c.dram_roof_gbs(250'000'000), 45.97, 0.01);
    // the transition does not change: 100,663,296 B draws 65,536 B from L1 (591), 33,554,432 from L3 (194; L2 has
    // no point) and the rest from DRAM at the highest reading, 54.9: 100,663,296 / 1,394,249 ns = 72.20
    EXPECT_NEAR(c.bandwidth_for_working_set_gbs(100'663'296),
                100'663'296 / (65'536 / 591.0 + 33'554'432 / 194.0 + (100'663'296 - 65'536 - 33'554'432) / 54.9), 1e-9);
    EXPECT_NEAR(c.bandwidth_for_working_set_gbs(100'663'296), 72.20, 0.01);
    // a DRAM roof above every reading (a file edited by hand, a recheck's merge): kept for every size
    ceilings raised = c;
    raised.bandwidth_gbs = 60;
    EXPECT_DOUBLE_EQ(raised.dram_roof_gbs(538'000'000), 60);
    // a kernel not measured (0) reads nothing: read and triad 0 leave copy's reading, which the 201 MB point raises
    ceilings no_read = c;
    no_read.read_gbs = 0;
    no_read.triad_gbs = 0;
    EXPECT_DOUBLE_EQ(no_read.dram_roof_gbs(538'000'000), 33.5);
    // a reading that falls with size only past the kernels: a 2 GB point at 30 lowers nothing below 417 MB and
    // gives the sizes past it its own value
    ceilings longer = c;
    longer.working_set_gbs.emplace_back(2'000'000'000, 30);
    EXPECT_DOUBLE_EQ(longer.dram_roof_gbs(417'000'000), 41.6);
    EXPECT_DOUBLE_EQ(longer.dram_roof_gbs(4'000'000'000), 30);
    EXPECT_NEAR(longer.dram_roof_gbs(1'000'000'000),
                41.6 + std::log(1e9 / 417e6) / std::log(2e9 / 417e6) * (30 - 41.6), 1e-9);

    // the knots the reports name: 54.9 up to 201 MB, 41.6 from 278 MB (copy's size, where read's 41.6 already
    // holds: the 417 MB reading adds no knot); with the 2 GB point the flat stretch keeps both its ends (41.6 at
    // 278 and at 417 MB), then 30 from 2 GB
    using knots = std::vector<std::pair<std::int64_t, double>>;
    EXPECT_EQ(c.dram_roof_knots(), (knots{{201'326'592, 54.9}, {278'000'000, 41.6}}));
    EXPECT_EQ(longer.dram_roof_knots(),
              (knots{{201'326'592, 54.9}, {278'000'000, 41.6}, {417'000'000, 41.6}, {2'000'000'000, 30}}));
    EXPECT_TRUE(raised.dram_roof_knots().empty());  // flat: one number
    // a stream_bytes of 2 written by hand puts copy at 2 / 3 * 2 = 0 B: placed at 1 B, so no log(0), no NaN roof
    ceilings tiny = c;
    tiny.stream_bytes = 2;
    for (const std::int64_t bytes : {1, 2, 3, 1'000'000'000})
        EXPECT_TRUE(std::isfinite(tiny.dram_roof_gbs(bytes)) && tiny.dram_roof_gbs(bytes) > 0) << bytes;
}

TEST(Ceilings, WhatTheHotCacheHoldsIsTheLargestSweepSizeAboveDram) {
    ceilings c;
    c.bandwidth_gbs = 22;  // no spread known: tolerance 2%, so "above DRAM" is above 22.44 GB/s
    // the Xeon VM's sweep at one thread: 31.9 GB/s at 201 MB, 17.1 at 402 MB (at DRAM speed)
    c.working_set_gbs = {{49'152, 274}, {12'582'912, 35.4}, {201'326'592, 31.9}, {402'653'184, 17.1}};
    EXPECT_EQ(c.hot_cache_capacity_bytes(), 201'326'592);
    // never above the last level's nominal size: a point past it at 23 GB/s is the DRAM roof's noise
    c.working_set_gbs.push_back({805'306'368, 23.0});
    c.last_level_cache_bytes = 272'629'760;
    EXPECT_EQ(c.hot_cache_capacity_bytes(), 272'629'760);
    // a point within the tolerance of the DRAM roof (22.4 <= 22.44) is DRAM speed
    c.working_set_gbs.back().second = 22.4;
    EXPECT_EQ(c.hot_cache_capacity_bytes(), 201'326'592);
    // no size beat DRAM: the cache holds nothing a pass could reuse
    c.working_set_gbs = {{49'152, 20.0}, {805'306'368, 22.0}};
    EXPECT_EQ(c.hot_cache_capacity_bytes(), 0);
    // no sweep: the nominal size; neither known: -1
    ceilings d;
    d.bandwidth_gbs = 22;
    EXPECT_EQ(d.hot_cache_capacity_bytes(), -1);
    d.last_level_cache_bytes = 50'331'648;
    EXPECT_EQ(d.hot_cache_capacity_bytes(), 50'331'648);
}

TEST(Ceilings, BandwidthToleranceFromTheStreamSpreads) {
    ceilings c;
    c.spread = {{"copy", 0.01}, {"triad", 0.04}, {"working_set", 0.03}};
    EXPECT_DOUBLE_EQ(c.bandwidth_tolerance(), 0.02 + 0.04);  // the largest of the three
}

TEST(Ceilings, SampleSpreadIsMedianOverBest) {
    // best 1.0, median 1.1: (1.1 - 1.0) / 1.0 = 0.1
    EXPECT_NEAR(backend_api::sample_spread({1.2, 1.0, 1.1}), 0.1, 1e-12);
    // an even count: the median is the mean of the middle two, (1.0 + 1.2) / 2 = 1.1 over the best 1.0
    EXPECT_NEAR(backend_api::sample_spread({1.0, 1.0, 1.2, 1.3}), 0.1, 1e-12);
    EXPECT_DOUBLE_EQ(backend_api::sample_spread({}), 0.0);
}

TEST(Ceilings, MergingKeepsTheHigherOfEachCeilingAndTheLowerDispatchCost) {
    // fp32's peak (and its avx2 FMA roof), triad, bandwidth, the working set at 48 KiB and 768 KiB, dispatch cost
    const auto measured = [](double peak, double triad, double bandwidth, double at_48k, double at_768k,
                             double dispatch_ms) {
        ceilings c;
        c.peak_gflops = {{"fp32", peak}};
        c.fma_peak_by_isa_gflops = {{"fp32 avx2", peak}};
        c.triad_gbs = triad;
        c.bandwidth_gbs = bandwidth;
        c.working_set_gbs = {{49'152, at_48k}, {786'432, at_768k}};
        c.dispatch_overhead_ms = dispatch_ms;
        return c;
    };
    ceilings earlier = measured(240, 40, 40, 300, 240, 0.001);
    earlier.measured_at = "2026-11-30T10:00:00Z";
    ceilings now = measured(236, 30, 31, 400, 228, 0.002);
    backend_api::merge_ceilings(now, earlier);
    EXPECT_DOUBLE_EQ(now.peak_gflops.at("fp32"), 240);
    EXPECT_DOUBLE_EQ(now.fma_peak_by_isa_gflops.at("fp32 avx2"), 240);
    EXPECT_DOUBLE_EQ(now.triad_gbs, 40);
    EXPECT_DOUBLE_EQ(now.bandwidth_gbs, 40);
    EXPECT_DOUBLE_EQ(now.working_set_gbs[0].second, 400);  // the new one was higher
    EXPECT_DOUBLE_EQ(now.working_set_gbs[1].second, 240);  // the old one was
    // a floor: the lower of the two (a measurement in a VM's slow mode must not raise it: 1 us kept, not 2)
    EXPECT_DOUBLE_EQ(now.dispatch_overhead_ms, 0.001);
    EXPECT_NE(now.method.at("merged").find("2026-11-30T10:00:00Z"), std::string::npos);
    // the STREAM kernels' working set: the smaller of the two (the higher readings may come from either size, and
    // placed at the smaller the roof errs high); unknown in either, unknown (one DRAM roof for every size)
    ceilings big = measured(236, 30, 31, 400, 228, 0.002), small = big;
    big.stream_bytes = 417'000'000;
    small.stream_bytes = 300'000'000;
    ceilings merged = big;
    backend_api::merge_ceilings(merged, small);
    EXPECT_EQ(merged.stream_bytes, 300'000'000);
    small.stream_bytes = 0;
    merged = big;
    backend_api::merge_ceilings(merged, small);
    EXPECT_EQ(merged.stream_bytes, 0);
    // a sweep point only the earlier file has (a layer's own working set, kept by a roof recheck) stays, in order:
    // dropped, it would leave bandwidth_gbs (the higher of the two) above every reading, and the roof flat
    ceilings rechecked = measured(236, 30, 31, 400, 228, 0.002);
    rechecked.working_set_gbs.emplace_back(538'972'160, 52.5);
    merged = measured(236, 30, 31, 390, 230, 0.002);
    backend_api::merge_ceilings(merged, rechecked);
    EXPECT_EQ(merged.working_set_gbs,
              (std::vector<std::pair<std::int64_t, double>>{{49'152, 400}, {786'432, 230}, {538'972'160, 52.5}}));
}

TEST(Ceilings, ImpossibleCeilingsAreRefused) {
    // a machine as ridgeline measures it
    ceilings c;
    c.fma_peak_gflops = {{"fp32", 236}};
    c.gemm_gflops = {{"fp32", 211}};
    c.peak_gflops = {{"fp32", 236}};
    c.copy_gbs = 29;
    c.triad_gbs = 31;
    c.read_gbs = 30;
    c.bandwidth_gbs = 31;
    c.working_set_gbs = {{49'152, 400}, {201'326'592, 33}};
    c.dispatch_overhead_ms = 0.0009;
    c.last_level_cache_bytes = 33'554'432;
    EXPECT_EQ(backend_api::implausible_ceilings(c), "");
    // what a damaged or edited cache file holds: each one refused with what is wrong
    auto refused = [&](auto edit, const std::string& what) {
        ceilings e = c;
        edit(e);
        const std::string why = backend_api::implausible_ceilings(e);
        EXPECT_NE(why.find(what), std::string::npos) << "'" << why << "' does not name " << what;
    };
    refused([](ceilings& e) { e.peak_gflops["fp32"] = -5; }, "compute ceiling fp32");
    refused([](ceilings& e) { e.peak_gflops["fp32"] = 1e300; }, "compute ceiling fp32");
    refused([](ceilings& e) { e.peak_gflops["fp32"] = 100; }, "not the highest");  // below its own FMA peak
    refused([](ceilings& e) { e.peak_gflops.clear(); }, "no compute roof");
    refused([](ceilings& e) { e.bandwidth_gbs = 0; }, "DRAM bandwidth");
    refused([](ceilings& e) { e.triad_gbs = 50; }, "beats the DRAM roof");
    refused([](ceilings& e) { e.working_set_gbs = {{10, 100}}; }, "working-set point");  // arrays of 0 elements
    refused([](ceilings& e) { e.working_set_gbs = {{49'152, std::nan("")}}; }, "working-set point");
    // a point larger than any memory (2^41 B) would make a recheck allocate it; sizes must grow (the neighbours
    // of a working set are found in order)
    refused([](ceilings& e) { e.working_set_gbs = {{std::int64_t{1} << 41, 10}}; }, "working-set point");
    refused([](ceilings& e) { e.working_set_gbs = {{201'326'592, 33}, {49'152, 400}}; },
            "the working-set sweep's sizes do not grow (49152 B after 201326592 B)");
    refused([](ceilings& e) { e.working_set_gbs = {{49'152, 400}, {49'152, 300}}; }, "do not grow");
    refused([](ceilings& e) { e.dispatch_overhead_ms = -1; }, "dispatch");
    refused([](ceilings& e) { e.stream_bytes = -3; }, "STREAM kernels' working set is -3 B");
    refused([](ceilings& e) { e.last_level_cache_bytes = static_cast<std::int64_t>(1e14); }, "last-level cache");
    // values too small for any device, written with 4 digits, not as "0.000000" (a cold bandwidth of 1e-300 GB/s
    // made predicted times of 300 digits)
    refused([](ceilings& e) { e.cold_bandwidth_gbs = 1e-300; }, "cold bandwidth is 1e-300 GB/s");
    refused([](ceilings& e) { e.bandwidth_gbs = 1e-9; }, "DRAM bandwidth is 1e-09 GB/s");
    refused([](ceilings& e) { e.working_set_gbs = {{49'152, 1e-5}}; }, "is 49152 B at 1e-05 GB/s");
    refused([](ceilings& e) { e.dispatch_overhead_ms = -5; }, "dispatch overhead is -5 ms");
    // a dispatch cost above 1 ms (a cached 8 ms once called a profile's every layer overhead-bound, each 2000x
    // faster than its "floor"), a cold one above 100 ms
    refused([](ceilings& e) { e.dispatch_overhead_ms = 8; }, "dispatch overhead is 8 ms (10 ns to 1 ms)");
    // nor a dispatch cost of 0 (or under 10 ns): nothing dispatches for free, and the spot check only lowers it
    refused([](ceilings& e) { e.dispatch_overhead_ms = 0; }, "dispatch overhead is 0 ms (10 ns to 1 ms)");
    refused([](ceilings& e) { e.dispatch_overhead_ms = 5e-6; }, "dispatch overhead is 5e-06 ms");
    refused([](ceilings& e) { e.cold_dispatch_overhead_ms = 500; }, "cold dispatch overhead is 500 ms (0 to 100 ms)");
    // at most 8 cache levels (100,000 of them made a prediction run for minutes); the last no larger than the LLC
    refused([](ceilings& e) {
        e.cache_level_bytes.clear();
        for (int i = 1; i <= 9; ++i) e.cache_level_bytes.push_back(1024 * i);
    }, "9 cache levels (at most 8)");
    refused([](ceilings& e) { e.cache_level_bytes = {49'152, std::int64_t{1} << 40}; },
            "the last cache level (1099511627776 bytes) is larger than the last-level cache (33554432 bytes)");
    // a point of the DRAM level above the DRAM roof: levels of 1 KiB put the DRAM level at 4 KiB, and the 49 kB
    // point's 400 GB/s above the 31 GB/s roof
    refused([](ceilings& e) { e.cache_level_bytes = {1024}; },
            "the sweep's point at 49152 B, in the DRAM level (from 4096 B), reads 400 GB/s, above the DRAM roof 31 GB/s");
    c.cold_bandwidth_gbs = 0;  // not measured: allowed
    EXPECT_EQ(backend_api::implausible_ceilings(c), "");
}
