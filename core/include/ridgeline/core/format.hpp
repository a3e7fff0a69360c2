#pragma once
// Numbers as ridgeline writes them in tables, messages and warnings: thousands separated, SI prefixes with four
// significant digits, fixed decimals, times in their best unit. Pure C++ (printf's digits), shared by the report,
// the profiler's messages and the backends.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ridgeline::core {

/// The parts of `s` between the separators `sep`, empty parts kept: split("1x2x", 'x') -> {"1", "2", ""};
/// split("", 'x') -> {""}. Views into `s`.
std::vector<std::string_view> split(std::string_view s, char sep);

/// 11689512 -> "11,689,512".
std::string with_commas(std::int64_t v);

/// A count and its noun, plural unless the count is 1: counted(1, "layer") -> "1 layer",
/// counted(1234, "layer") -> "1,234 layers".
std::string counted(std::int64_t n, std::string_view noun);

/// SI prefix with 4 significant digits: 1814073344 -> "1.814 G", 411648 -> "411.6 k", 12 -> "12".
/// `unit` is appended after the prefix ("B" gives "411.6 kB").
std::string si(double v, std::string_view unit = {});

/// Shortest text that reads back as the same double (std::to_chars).
std::string shortest(double v);

/// printf's %.*g: `digits` significant digits, trailing zeros dropped: significant(-1e-10, 6) -> "-1e-10",
/// significant(0.0123456, 3) -> "0.0123".
std::string significant(double v, int digits);

/// Fixed decimals: fixed(12.345, 2) -> "12.35".
std::string fixed(double v, int decimals);

/// Time in the best unit: 0.000012 ms -> "12.0 ns", 0.0123 -> "12.30 us", 3.2 -> "3.200 ms", 1500 -> "1.500 s".
std::string time_ms(double ms);

}  // namespace ridgeline::core
