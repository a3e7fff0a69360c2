#include "ridgeline/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ridgeline/core/error.hpp"

namespace ridgeline::core {

double percentile_sorted(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) throw error("percentile of an empty sample");
    const double h = (static_cast<double>(sorted.size()) - 1.0) * std::clamp(p, 0.0, 1.0);
    const auto lo = static_cast<std::size_t>(std::floor(h));
    const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

std::pair<std::size_t, std::size_t> median_ci_ranks(std::size_t n) {
    // P(B < j) = sum_{i=0}^{j-1} C(n, i) / 2^n; find the largest j with P <= 0.025.
    std::size_t j = 0;
    double cdf = 0.0;
    const double log_half_n = static_cast<double>(n) * std::log(0.5);
    for (std::size_t i = 0; i < n; ++i) {
        const double log_c = std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(i) + 1) -
                             std::lgamma(static_cast<double>(n - i) + 1);
        const double next = cdf + std::exp(log_c + log_half_n);  // P(B <= i) = P(B < i+1)
        if (next > 0.025) break;
        cdf = next;
        j = i + 1;
    }
    if (j < 1) return {1, n};
    return {j, n + 1 - j};
}

statistics summarize(std::vector<double> samples) {
    if (samples.empty()) throw error("statistics of an empty sample");
    std::sort(samples.begin(), samples.end());
    statistics s;
    const std::size_t n = samples.size();
    s.count = static_cast<std::int64_t>(n);
    s.min = samples.front();
    s.max = samples.back();
    s.median = percentile_sorted(samples, 0.5);
    s.p5 = percentile_sorted(samples, 0.05);
    s.p95 = percentile_sorted(samples, 0.95);
    s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
    double ss = 0.0;
    for (double x : samples) ss += (x - s.mean) * (x - s.mean);
    s.stddev = n > 1 ? std::sqrt(ss / static_cast<double>(n - 1)) : 0.0;
    s.cv = s.mean > 0 ? s.stddev / s.mean : 0.0;
    const auto [j, k] = median_ci_ranks(n);
    s.ci_exact = n >= 6;
    s.ci95_low = samples[j - 1];
    s.ci95_high = samples[k - 1];
    return s;
}

}  // namespace ridgeline::core
