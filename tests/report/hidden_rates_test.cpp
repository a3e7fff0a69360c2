// One rule for every format: a mistrusted layer (its time beats a roof) and a disturbed one (other work took its
// samples) show no rate anywhere: not in the table, the CSV, the JSON, the HTML table or the roofline chart. A
// trusted layer beside them shows its rates in each, so the test would see a format that drops every rate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "../support/measured_layer.hpp"
#include "ridgeline/report/chart.hpp"
#include "ridgeline/report/profile.hpp"

using namespace ridgeline;

namespace {

/// x 64x1024 -> linear 1024->1024 "trusted" -> relu "liar" -> relu "busy", each measured at `median` ms.
profiler::profile_result three_layers() {
    profiler::profile_result r = test::chain_profile(
        "three", {64, 1024}, {{"trusted", "linear:in_features=1024,out_features=1024"}, {"liar", "relu"}, {"busy", "relu"}});
    const double median[] = {1.0, 3e-6, 0.05};  // the liar: 65,536 FLOPs in 3 ns would be 21,845 GFLOP/s
    for (std::size_t i = 0; i < 3; ++i) {
        profiler::layer_profile p = test::measured_layer(r.analysis.layers[i], median[i]);
        p.verification.state = profiler::verification_state::passed;
        core::roofline_point v;
        v.bound = i == 1 ? core::bound_class::mistrusted : core::bound_class::compute;
        v.roof_fraction = 0.5;
        v.compute_ms = 0.5 * median[i];
        p.roofline = v;
        if (i == 2) {  // disturbed: its samples lost too much to other work; no verdict
            p.time->disturbed = true;
            p.time->disturbed_samples = 10;
            p.roofline.reset();
        }
        r.layers.push_back(p);
        r.sum_of_layers_ms += median[i];  // as profile_model sums it: every median, a disturbed one too
    }
    return r;
}

/// The line of `text` that starts with `name` (after spaces, or a "<tr><td>" for HTML).
std::string row_of(const std::string& text, const std::string& name) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        const auto first = line.find_first_not_of(' ');
        if (first != std::string::npos && line.compare(first, name.size() + 1, name + " ") == 0) return line;
        if (line.rfind("<tr><td>" + name + "</td>", 0) == 0 || line.rfind(name + ",", 0) == 0) return line;
    }
    return {};
}

std::vector<std::string> csv_fields(const std::string& line) {
    std::vector<std::string> out;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) out.push_back(f);
    if (!line.empty() && line.back() == ',') out.emplace_back();
    return out;
}

}  // namespace

TEST(HiddenRates, NoFormatShowsTheRateOfAMistrustedOrDisturbedLayer) {
    const auto r = three_layers();
    // the trusted layer's rates: 134,283,264 executed FLOPs (2 * 64 * 1024 * 1024 + 65,536 bias adds) in 1 ms
    ASSERT_NEAR(r.layers[0].achieved_gflops(), 134.283264, 1e-9);
    ASSERT_TRUE(std::isfinite(r.layers[1].achieved_gflops()));  // a number exists: every format must hide it

    // JSON: null rates and %roof
    const auto j = report::profile_json(r, report::run_info{});
    EXPECT_NEAR(j["layers"][0]["achieved_gflops"].get<double>(), 134.283264, 1e-6);
    for (int i : {1, 2}) {
        SCOPED_TRACE(i);
        EXPECT_TRUE(j["layers"][i]["achieved_gflops"].is_null());
        EXPECT_TRUE(j["layers"][i]["achieved_gbs"].is_null());
        EXPECT_TRUE(j["layers"][i]["roof_fraction"].is_null());
    }

    // CSV: empty rate fields
    const std::string csv = report::profile_csv(r);
    const auto header = csv_fields(csv.substr(0, csv.find('\n')));
    auto column = [&](const std::string& n) {
        return static_cast<std::size_t>(std::find(header.begin(), header.end(), n) - header.begin());
    };
    const std::size_t g = column("achieved_gflops"), b = column("achieved_gbs"), f = column("roof_fraction");
    ASSERT_LT(f, header.size());
    EXPECT_NE(csv_fields(row_of(csv, "trusted")).at(g), "");
    for (const char* name : {"liar", "busy"}) {
        const auto row = csv_fields(row_of(csv, name));
        ASSERT_EQ(row.size(), header.size()) << name;
        EXPECT_EQ(row.at(g), "") << name;
        EXPECT_EQ(row.at(b), "") << name;
        EXPECT_EQ(row.at(f), "") << name;
    }

    // table and HTML table: "?" where the rates would be
    const std::string table = report::profile_table(r), html = report::profile_table_html(r);
    EXPECT_EQ(row_of(table, "trusted").find('?'), std::string::npos) << row_of(table, "trusted");
    EXPECT_NE(row_of(html, "trusted").find("<td>134.28</td>"), std::string::npos) << row_of(html, "trusted");
    for (const char* name : {"liar", "busy"}) {
        EXPECT_NE(row_of(table, name).find(" ? "), std::string::npos) << row_of(table, name);
        EXPECT_NE(row_of(html, name).find("<td>?</td><td>?</td>"), std::string::npos) << row_of(html, name);
    }
    // the total sums every median, the disturbed "busy" (0.05 ms) too: marked !, with its share named
    // (1 + 3e-6 + 0.05 = 1.050003 ms)
    EXPECT_NE(row_of(table, "total").find("1.050 ms!"), std::string::npos) << row_of(table, "total");
    EXPECT_NE(table.find("! the total holds 50.00 us of disturbed layers' medians"), std::string::npos) << table;
    EXPECT_DOUBLE_EQ(j["sum_of_layers_disturbed_ms"].get<double>(), 0.05);
    EXPECT_EQ(table.find("21,845"), std::string::npos);  // the liar's impossible rate, in any spelling used
    EXPECT_EQ(table.find("21.85 k"), std::string::npos);

    // the roofline chart: a point for the trusted layer only
    report::chart c;
    report::add_profile(c, r, "cpu");
    ASSERT_EQ(c.points.size(), 1U);
    EXPECT_EQ(c.points[0].label, "trusted");
    const std::string svg = report::render_svg(c);
    EXPECT_NE(svg.find("data-layer=\"trusted\""), std::string::npos);
    EXPECT_EQ(svg.find("data-layer=\"liar\""), std::string::npos);
    EXPECT_EQ(svg.find("data-layer=\"busy\""), std::string::npos);
}
