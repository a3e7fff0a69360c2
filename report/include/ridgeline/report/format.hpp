#pragma once
// Number formatting and aligned text tables for the console reports.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/core/error.hpp"

namespace ridgeline::report {

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

/// Fixed decimals: fixed(12.345, 2) -> "12.35".
std::string fixed(double v, int decimals);

/// Time in the best unit: 0.000012 ms -> "12.0 ns", 0.0123 -> "12.30 us", 3.2 -> "3.200 ms", 1500 -> "1.500 s".
std::string time_ms(double ms);

/// Control characters shown as code points ("[U+000A]"; core::printable): every table cell and XML text goes
/// through it, so one name stays one cell and cannot move the terminal's cursor.
using core::printable;

/// A console table: columns with a header and an alignment; rows of cells; rendered with one space
/// of padding and a rule under the header (and above a totals row when one is marked).
class text_table {
public:
    enum class align { left, right };
    void add_column(std::string header, align a);
    void add_row(std::vector<std::string> cells);
    /// Draws a rule before the next row added.
    void add_rule();
    [[nodiscard]] std::string render() const;

private:
    std::vector<std::string> headers_;
    std::vector<align> aligns_;
    std::vector<std::vector<std::string>> rows_;  // an empty row is a rule
};

/// RFC 4180 quoting of one CSV field (quotes only when needed).
std::string csv_field(std::string_view s);

/// Writes `content` to `path` atomically: a temporary file in the same folder, flushed, then renamed
/// over the target, so a crash never leaves a truncated file under the real name.
/// Throws core::error naming the path and the system's reason.
void write_file_atomic(const std::string& path, std::string_view content);

/// The checks write_file_atomic makes before writing (the folder exists, `path` is not a folder), for
/// commands that run for minutes and should fail at once rather than at the end. Throws like it.
void check_output_path(const std::string& path);

}  // namespace ridgeline::report
