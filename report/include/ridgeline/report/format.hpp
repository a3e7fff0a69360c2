#pragma once
// Number formatting and aligned text tables for the console reports.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/format.hpp"

namespace ridgeline::report {

/// Numbers as ridgeline writes them (core/format.hpp): with_commas, counted, si, shortest, fixed, time_ms.
using core::counted;
using core::fixed;
using core::shortest;
using core::si;
using core::time_ms;
using core::with_commas;

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

}  // namespace ridgeline::report
