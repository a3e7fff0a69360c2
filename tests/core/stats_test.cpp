#include <gtest/gtest.h>

#include <cmath>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/stats.hpp"

using namespace ridgeline::core;

TEST(Stats, KnownSample) {
    // 1..10 shuffled: median (5+6)/2 = 5.5; mean 5.5; sample variance sum((x-5.5)^2)/9 = 82.5/9 = 9.1667
    // p5 (type 7): h = 9*0.05 = 0.45 -> 1 + 0.45*(2-1) = 1.45; p95: h = 8.55 -> 9 + 0.55 = 9.55
    // 95% median CI for n = 10: ranks (2, 9) -> [2, 9] (P(B<2) = 11/1024 <= 0.025 < P(B<3) = 56/1024)
    const statistics s = summarize({7, 3, 10, 1, 5, 9, 2, 8, 6, 4});
    EXPECT_EQ(s.count, 10);
    EXPECT_DOUBLE_EQ(s.median, 5.5);
    EXPECT_DOUBLE_EQ(s.mean, 5.5);
    EXPECT_NEAR(s.stddev, std::sqrt(82.5 / 9.0), 1e-12);
    EXPECT_DOUBLE_EQ(s.min, 1);
    EXPECT_DOUBLE_EQ(s.max, 10);
    EXPECT_NEAR(s.p5, 1.45, 1e-12);
    EXPECT_NEAR(s.p95, 9.55, 1e-12);
    EXPECT_NEAR(s.cv, std::sqrt(82.5 / 9.0) / 5.5, 1e-12);
    EXPECT_DOUBLE_EQ(s.ci95_low, 2);
    EXPECT_DOUBLE_EQ(s.ci95_high, 9);
    EXPECT_TRUE(s.ci_exact);
    EXPECT_NEAR(s.relative_ci_width(), 7.0 / 5.5, 1e-12);
}

TEST(Stats, MedianIntervalRanksMatchConoverTable) {
    // Conover, Practical Nonparametric Statistics, Table A3 (alpha = 0.05, two-sided):
    // n=6 -> (1,6); n=10 -> (2,9); n=20 -> (6,15); n=30 -> (10,21); n=100 -> (40,61)
    EXPECT_EQ(median_ci_ranks(6), (std::pair<std::size_t, std::size_t>{1, 6}));
    EXPECT_EQ(median_ci_ranks(10), (std::pair<std::size_t, std::size_t>{2, 9}));
    EXPECT_EQ(median_ci_ranks(20), (std::pair<std::size_t, std::size_t>{6, 15}));
    EXPECT_EQ(median_ci_ranks(30), (std::pair<std::size_t, std::size_t>{10, 21}));
    EXPECT_EQ(median_ci_ranks(100), (std::pair<std::size_t, std::size_t>{40, 61}));
    // too few samples for 95%: the whole range, flagged
    EXPECT_EQ(median_ci_ranks(5), (std::pair<std::size_t, std::size_t>{1, 5}));
    EXPECT_FALSE(summarize({1, 2, 3, 4, 5}).ci_exact);
}

TEST(Stats, OddCountAndSingleValue) {
    const statistics s = summarize({3, 1, 2});
    EXPECT_DOUBLE_EQ(s.median, 2);
    const statistics one = summarize({4.0});
    EXPECT_DOUBLE_EQ(one.median, 4.0);
    EXPECT_DOUBLE_EQ(one.stddev, 0.0);
    EXPECT_THROW((void)summarize({}), error);
}
