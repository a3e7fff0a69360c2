#pragma once
// Statistics of timing samples.
//
// - percentiles: linear interpolation between order statistics (Hyndman & Fan type 7, NumPy's default);
// - 95% confidence interval of the median: distribution-free, from order statistics x(j) <= median <= x(k)
//   with j the largest rank such that P(B < j) <= 0.025 for B ~ Binomial(n, 1/2), and k = n + 1 - j
//   (Conover, "Practical Nonparametric Statistics", 3rd ed., section 3.2). With fewer than 6 samples no
//   such j exists and the interval is [min, max] (reported, and never "narrow enough").
// - stddev: sample standard deviation (n - 1); cv = stddev / mean.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ridgeline::core {

struct statistics {
    std::int64_t count = 0;
    double median = 0, mean = 0, stddev = 0, min = 0, max = 0, p5 = 0, p95 = 0;
    double cv = 0;  // coefficient of variation
    double ci95_low = 0, ci95_high = 0;
    bool ci_exact = false;  // false when n < 6 and the interval is [min, max]

    /// (ci95_high - ci95_low) / median: the relative width the stopping rule compares with --max-noise.
    [[nodiscard]] double relative_ci_width() const { return median > 0 ? (ci95_high - ci95_low) / median : 0.0; }
};

/// Throws core::error for an empty sample.
statistics summarize(std::vector<double> samples);

/// p in [0, 1] of sorted values (type 7). Throws core::error when empty.
double percentile_sorted(const std::vector<double>& sorted, double p);

/// 1-based ranks (j, k) of the 95% median interval for n samples; (1, n) when n < 6.
std::pair<std::size_t, std::size_t> median_ci_ranks(std::size_t n);

}  // namespace ridgeline::core
