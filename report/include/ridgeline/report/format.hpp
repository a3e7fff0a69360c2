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

/// The width the console reports fit (terminal columns): default_table_width unless set, 0 for no limit (`--wide`).
/// A process-wide setting of the presentation, set by each command line.
inline constexpr std::size_t default_table_width = 120;
std::size_t table_width();
void set_table_width(std::size_t columns);

/// A console table: columns with a header and an alignment; rows of cells; rendered with two spaces between columns
/// and a rule under the header (and above a totals row when one is marked). It fits `width` columns (table_width()
/// by default) in three steps, each only while it is still too wide: columns with a drop rank are left out, the
/// highest rank first (the report names where they are: --wide, CSV, JSON); the `shrink` column (a layer's name)
/// loses its middle to an ellipsis, down to 16 columns; the `wrap` column (the last, a sentence) wraps its cells onto
/// lines of their own under it.
class text_table {
public:
    enum class align { left, right };
    struct fit {
        int drop = 0;         // 0: never dropped; else dropped before columns of lower rank
        bool shrink = false;  // the column that gives up its width when the rest cannot
        bool wrap = false;    // the last column: its cells wrap
    };
    void add_column(std::string header, align a, fit f);
    void add_column(std::string header, align a) { add_column(std::move(header), a, fit{}); }
    void add_row(std::vector<std::string> cells);
    /// Draws a rule before the next row added.
    void add_rule();
    [[nodiscard]] std::string render(std::size_t width) const;
    [[nodiscard]] std::string render() const { return render(table_width()); }
    /// The headers of the columns a render at `width` leaves out ("" when none).
    [[nodiscard]] std::string dropped(std::size_t width) const;

private:
    [[nodiscard]] std::vector<bool> kept(std::size_t width) const;
    std::vector<std::string> headers_;
    std::vector<align> aligns_;
    std::vector<fit> fits_;
    std::vector<std::vector<std::string>> rows_;  // an empty row is a rule
};

/// `text` with every line longer than `width` (0: none) broken at spaces, its continuations indented by two
/// spaces; lines that fit are left as they are.
std::string wrap_lines(const std::string& text, std::size_t width = table_width());

/// The columns a string takes on a terminal: its UTF-8 code points.
std::size_t display_columns(const std::string& s);

/// RFC 4180 quoting of one CSV field (quotes only when needed).
std::string csv_field(std::string_view s);

}  // namespace ridgeline::report
