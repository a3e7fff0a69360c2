#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "ridgeline/report/chart.hpp"
#include "ridgeline/report/format.hpp"
#include "ridgeline/report/profile.hpp"
#include "../support/scratch.hpp"

using namespace ridgeline::report;

TEST(Format, ThousandsSeparators) {
    EXPECT_EQ(with_commas(0), "0");
    EXPECT_EQ(with_commas(999), "999");
    EXPECT_EQ(with_commas(1000), "1,000");
    EXPECT_EQ(with_commas(11689512), "11,689,512");
    EXPECT_EQ(with_commas(-1234567), "-1,234,567");
    // one of a thing is singular, every other count plural (0 included), with its thousands separated
    EXPECT_EQ(counted(1, "layer"), "1 layer");
    EXPECT_EQ(counted(0, "layer"), "0 layers");
    EXPECT_EQ(counted(2, "thread"), "2 threads");
    EXPECT_EQ(counted(1234, "layer"), "1,234 layers");
    EXPECT_EQ(with_commas(INT64_MIN), "-9,223,372,036,854,775,808");
}

TEST(Format, SiPrefixesKeepFourDigits) {
    EXPECT_EQ(si(1814073344.0), "1.814 G");
    EXPECT_EQ(si(411648.0, "B"), "411.6 kB");
    EXPECT_EQ(si(12.0), "12");
    EXPECT_EQ(si(0.0, "B"), "0 B");
    EXPECT_EQ(si(15470264320.0), "15.47 G");
    EXPECT_EQ(si(999960.0), "1.000 M");  // rounds up across the prefix boundary, not "1000.0 k"
}

TEST(Format, TimesPickAUnit) {
    EXPECT_EQ(time_ms(3.2), "3.200 ms");
    EXPECT_EQ(time_ms(0.0123), "12.30 us");
    EXPECT_EQ(time_ms(0.000012), "12.0 ns");
    EXPECT_EQ(time_ms(1500.0), "1.500 s");
}

TEST(Format, TableAlignsColumns) {
    text_table t;
    t.add_column("name", text_table::align::left);
    t.add_column("n", text_table::align::right);
    t.add_row({"a", "1"});
    t.add_row({"bbb", "1,000"});
    t.add_rule();
    t.add_row({"total", "1,001"});
    EXPECT_EQ(t.render(),
              "name       n\n"
              "------------\n"
              "a          1\n"
              "bbb    1,000\n"
              "------------\n"
              "total  1,001\n");
}

TEST(Format, ControlCharactersInANameStayInItsCell) {
    // a layer named "a\nb\x1b[2J" (an ONNX node name, a report's name) is one cell, shown by code points
    EXPECT_EQ(printable("a\nb\x1b[2J\x7f"), "a[U+000A]b[U+001B][2J[U+007F]");
    EXPECT_EQ(printable("conv\xc3\xa9"), "conv\xc3\xa9");  // UTF-8 stays as it is
    EXPECT_EQ(printable("nel\xc2\x85" "x\xc2\xa0"), "nel[U+0085]x\xc2\xa0");  // C1 NEL shown; no-break space kept
    // a byte outside valid UTF-8 (a lone 0x9B is CSI to an 8-bit terminal; an overlong 0xC0 0x8A hides a newline)
    EXPECT_EQ(printable("a\x9b" "31m" "\xc0\x8a"), "a[0x9B]31m[0xC0][0x8A]");
    // the bidirectional overrides that reorder a line (U+202E, UTF-8 E2 80 AE; U+2066, E2 81 A6) are shown; a
    // character of three bytes that is not one stays (U+20AC, the euro sign)
    EXPECT_EQ(printable("x\xe2\x80\xae" "y\xe2\x81\xa6" "\xe2\x82\xac"), "x[U+202E]y[U+2066]\xe2\x82\xac");
    EXPECT_EQ(printable("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");  // U+1F600: four bytes, kept
    text_table t;
    t.add_column("name", text_table::align::left);
    t.add_row({"a\nb"});
    EXPECT_EQ(t.render(), "name\n----------\na[U+000A]b\n");
    // and in XML (SVG, HTML): XML 1.0 has no control characters even as references; the bidi overrides as before
    EXPECT_EQ(xml_escape("x\x01<y>"), "x[U+0001]&lt;y&gt;");
    EXPECT_EQ(xml_escape("a\xc2\x85" "b"), "a[U+0085]b");
    EXPECT_EQ(xml_escape("a\xe2\x80\xae" "b"), "a[U+202E]b");
}

TEST(Format, CsvQuotesOnlyWhenNeeded) {
    EXPECT_EQ(csv_field("plain"), "plain");
    EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
    EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
}


// What fusing saves, where no group has clean times (every fused kernel or member disturbed, as under a load of 6 on
// 2 cores): the line says so instead of summing nothing ("0 groups: 0.0 ns as their members, 0.0 ns fused").
TEST(Format, FusionSavingsWithNoCleanGroupComparesNone) {
    ridgeline::profiler::profile_result r;
    r.fusion.emplace();
    r.fusion->groups.resize(3);  // no fused time, members_ms NaN: nothing clean
    const std::string text = ridgeline::report::fusion_savings_text(r);
    EXPECT_NE(text.find("what fusing saves (3 groups a deployment fuses"), std::string::npos) << text;
    EXPECT_NE(text.find("; no group to compare (3 left out: not timed, disturbed, or a member without a time)"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("0 groups"), std::string::npos) << text;
}
